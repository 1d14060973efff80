"""Ranking labeling functions as a user writes them: :func:`ranking_lf`, a decorator that turns a scoring function
into an LF (a :class:`RankingLF`, :mod:`weakrank.lf_scorer`), and :func:`lf_factory`, the mark of a function a config
may call to build one.

An LF scores query–passage pairs; :mod:`weakrank.voting` turns each query's scores into votes
(+1 relevant, −1 not relevant, 0 abstain). Two signatures are accepted::

    @ranking_lf()                                                 # or bare: @ranking_lf
    def overlap(query: str, passage: str) -> float: ...          # one pair at a time

    @ranking_lf(batched=True, fit=build_index)
    def bm25(pairs: PairBatch, index) -> np.ndarray: ...          # all pairs at once

``fit(dataset)`` (optional) builds a resource once per dataset (an index, a model); it is passed to the
scorer as second argument. The raw scores are kept next to the votes (WSLS needs them).

A trained model directory carries its LFs (:mod:`weakrank.ranker.teacher`), to score queries and passages
that were never labelled. An LF without ``fit``, or whose resource depends only on its options
(``per_process=True``: a model), travels as its name and options; one fitted on the collection travels when
it can ``export`` its resource as arrays (``dict[str, np.ndarray]``) that ``restore`` turns back into a resource
scoring any passage's text (BM25's and TF-IDF's collection statistics)::

    @ranking_lf(batched=True, fit=build_index, export=lambda index: index.state(), restore=BM25Index.from_state)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

import numpy as np

from weakrank.lf_declaration import check_declaration
from weakrank.lf_scorer import PairBatch, RankingLF, VoteRule

if TYPE_CHECKING:
    from weakrank.dataset import Dataset

__all__ = ["PairBatch", "RankingLF", "VoteRule", "factory_precisions", "is_lf_factory", "lf_factory", "ranking_lf"]


@overload
def ranking_lf(name: Callable[..., Any], /) -> RankingLF: ...


@overload
def ranking_lf(
    name: str | None = None,
    *,
    batched: bool = False,
    fit: Callable[[Dataset], Any] | None = None,
    top_k: int = 1,
    bottom_fraction: float = 0.5,
    per_process: bool = False,
    export: Callable[[Any], dict[str, np.ndarray]] | None = None,
    restore: Callable[[dict[str, np.ndarray]], Any] | None = None,
    models: Sequence[str] = (),
    family: str | None = None,
    prior: float | None = None,
) -> Callable[[Callable[..., Any]], RankingLF]: ...


def ranking_lf(
    name: str | Callable[..., Any] | None = None,
    *,
    batched: bool = False,
    fit: Callable[[Dataset], Any] | None = None,
    top_k: int = 1,
    bottom_fraction: float = 0.5,
    per_process: bool = False,
    export: Callable[[Any], dict[str, np.ndarray]] | None = None,
    restore: Callable[[dict[str, np.ndarray]], Any] | None = None,
    models: Sequence[str] = (),
    family: str | None = None,
    prior: float | None = None,
    precision: str = "fp32",
) -> Callable[[Callable[..., Any]], RankingLF] | RankingLF:
    """Decorate a scoring function into a :class:`RankingLF` (named after the function by default); a bare
    ``@ranking_lf`` is ``@ranking_lf()``.

    ``per_process=True`` says the ``fit`` resource depends only on the LF's options (a model), not on
    the dataset: distributed engines then load it once per worker process instead of shipping it.
    ``export`` / ``restore``: the resource as arrays and back, so a trained model can carry the LF (module doc).
    ``models``: the names or paths of the models it reads (as :func:`weakrank.encoders.resolve_model` takes them):
    its cached scores are reused only while their files are unchanged. ``precision``: what those models run at
    (:data:`weakrank.names.PRECISIONS`): scores cached at one precision are never read back at another.
    ``family`` and ``prior``: what the LF is (``"lexical"``, ``"semantic"``, ``"heuristic"``, or any name: LFs of one
    family share their errors) and a prior on its quality, a loading in (0, 1) on the latent relevance (the
    built-ins' are measured: ``benchmarks/teacher_priors.csv``); the fusion label model weighs them against the LFs'
    agreement (:mod:`weakrank.label_models.family_factor`). Without them the LF is neutral: a family of its own, no
    prior.
    """

    caller = sys._getframe(1)  # the user's decorator line: a bad declaration is reported there
    where = f"{caller.f_code.co_filename}:{caller.f_lineno}"

    def decorate(fn: Callable[..., Any]) -> RankingLF:
        check_declaration(name if isinstance(name, str) else fn.__name__, family, prior, where)
        return RankingLF(
            fn,
            name or fn.__name__,
            batched=batched,
            fit=fit,
            rule=VoteRule(top_k=top_k, bottom_fraction=bottom_fraction),
            per_process=per_process,
            export=export,
            restore=restore,
            models=models,
            family=family,
            prior=prior,
            precision=precision,
        )

    if callable(name):  # a bare @ranking_lf: name is the decorated function
        fn, name = name, None
        return decorate(fn)
    return decorate


_FACTORY, _PRECISIONS = "__weakrank_lf_factory__", "__weakrank_lf_precisions__"

F = TypeVar("F", bound=Callable[..., RankingLF])


@overload
def lf_factory(fn: F, /) -> F: ...


@overload
def lf_factory(*, precisions: Sequence[str] = ("fp32",)) -> Callable[[F], F]: ...


def lf_factory(fn: F | None = None, /, *, precisions: Sequence[str] = ("fp32",)) -> F | Callable[[F], F]:
    """Mark ``fn`` as a factory ``(**options) -> RankingLF`` that a config may call with its options; a bare
    ``@lf_factory`` is ``@lf_factory()``.

    Configs call nothing else: a config naming an unmarked callable is refused before it runs. ``precisions``:
    those its ``precision`` option takes (a model LF that also runs at int8 declares ``("fp32", "int8")``, of
    :data:`weakrank.names.PRECISIONS`); a shipped ranker loaded at one of them builds the LF at it too.
    """

    def mark(fn: F) -> F:
        setattr(fn, _FACTORY, True)
        setattr(fn, _PRECISIONS, tuple(precisions))
        return fn

    return mark if fn is None else mark(fn)


def is_lf_factory(obj: object) -> bool:
    """True for a callable marked with :func:`lf_factory`."""
    return callable(obj) and getattr(obj, _FACTORY, False) is True


def factory_precisions(obj: object) -> tuple[str, ...]:
    """The precisions LF factory ``obj`` declares (:func:`lf_factory`); fp32 alone for anything else."""
    return getattr(obj, _PRECISIONS, ("fp32",))
