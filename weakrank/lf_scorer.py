"""The LF as an object: a named scorer of query–passage pairs (:class:`RankingLF`), the pairs it is handed
(:class:`PairBatch`) and the rule that turns its scores into votes (:class:`VoteRule`). Users build one with
:func:`weakrank.lf.ranking_lf` and import all three from :mod:`weakrank.lf` (its docstring: the two signatures,
``fit``, ``export`` and ``restore``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from weakrank.errors import LFError
from weakrank.io import read_npz, write_npz
from weakrank.lf_declaration import check_declaration

if TYPE_CHECKING:
    from weakrank.dataset import Dataset

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class PairBatch:
    """Aligned query–passage pairs handed to a batched LF (one entry per candidate)."""

    query_id: np.ndarray
    passage_id: np.ndarray
    query: Sequence[str]
    passage: Sequence[str]

    def __len__(self) -> int:
        return len(self.query_id)


@dataclass(frozen=True)
class VoteRule:
    """Per-query voting rule: the ``top_k`` best pairs vote +1, the worst ``bottom_fraction`` vote −1.

    Ties never straddle a boundary: a group of equal scores votes +1 only if all of it fits in the
    top ``top_k``, and −1 only if all of it fits in the bottom part; otherwise it abstains.
    """

    top_k: int = 1
    bottom_fraction: float = 0.5

    def __post_init__(self) -> None:
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0, got {self.top_k}")
        if not 0.0 <= self.bottom_fraction <= 1.0:
            raise ValueError(f"bottom_fraction must be in [0, 1], got {self.bottom_fraction}")


class RankingLF:
    """A named scorer of query–passage pairs plus the rule that turns its scores into votes."""

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str,
        *,
        batched: bool = False,
        fit: Callable[[Dataset], Any] | None = None,
        rule: VoteRule = VoteRule(),
        per_process: bool = False,
        export: Callable[[Any], dict[str, np.ndarray]] | None = None,
        restore: Callable[[dict[str, np.ndarray]], Any] | None = None,
        models: Sequence[str] = (),
        family: str | None = None,
        prior: float | None = None,
        precision: str = "fp32",
    ) -> None:
        if not _NAME.match(name):
            raise ValueError(f"LF name {name!r} must be a Python identifier (it becomes a column name)")
        check_declaration(name, family, prior)
        self.family, self.prior = family, prior
        self.fn, self.name, self.batched, self.fit_fn, self.rule = fn, name, batched, fit, rule
        self.per_process = per_process
        if (export is None) != (restore is None):
            raise ValueError(f"LF {name!r}: export and restore go together")
        self.export_fn, self.restore_fn = export, restore
        self.models, self.precision = tuple(models), precision
        self.resource: Any = None
        self._fitted_on: Dataset | None = None
        self.__doc__ = fn.__doc__

    def __repr__(self) -> str:
        return f"RankingLF({self.name!r}, batched={self.batched}, rule={self.rule})"

    def with_rule(self, **changes: Any) -> RankingLF:
        """A copy of this LF with some :class:`VoteRule` fields changed."""
        return RankingLF(
            self.fn, self.name, batched=self.batched, fit=self.fit_fn, rule=replace(self.rule, **changes),
            per_process=self.per_process, export=self.export_fn, restore=self.restore_fn, models=self.models,
            family=self.family, prior=self.prior, precision=self.precision,
        )

    def declared(self, family: str | None = None, prior: float | None = None) -> RankingLF:
        """A copy of this LF declaring another ``family`` and/or ``prior`` (None keeps the LF's own)."""
        copy = self.with_rule()
        check_declaration(self.name, family, prior)
        copy.family = family if family is not None else self.family
        copy.prior = prior if prior is not None else self.prior
        return copy

    def __getstate__(self) -> dict[str, Any]:
        # Shipped to workers (pickled) without the dataset it was fitted on, and without a per-process
        # resource (a model), which each worker loads once itself (see weakrank.engines.bundle).
        state = dict(self.__dict__, _fitted_on=None)
        if self.per_process:
            state["resource"] = None
        return state

    def fit(self, dataset: Dataset) -> RankingLF:
        """Build the LF's resource (index, model) for ``dataset``, once; a no-op without ``fit``."""
        if self.fit_fn is not None and self._fitted_on is not dataset:
            self.resource = self.fit_fn(dataset)
            self._fitted_on = dataset
        return self

    @property
    def portable(self) -> bool:
        """Whether the fitted LF can be saved to score pairs beyond its dataset: no ``fit``, a ``fit`` of the
        options only (``per_process``), or an ``export``-able resource."""
        return self.fit_fn is None or self.per_process or self.export_fn is not None

    def save_state(self, path: str | Path) -> bool:
        """Write the fitted resource's arrays to ``path`` (``.npz``) when the LF exports one; False when it has
        none to write (it is rebuilt from its options)."""
        if self.export_fn is None:
            return False
        if self.resource is None:
            raise LFError(self.name, "is not fitted: nothing to save")
        write_npz(self.export_fn(self.resource), path)
        return True

    def load_state(self, path: str | Path | None = None) -> RankingLF:
        """Make the LF ready to score without its dataset: restore the resource saved at ``path`` (an
        ``export``-able LF), or build it from the options alone (``per_process``)."""
        if self.export_fn is not None:
            if path is None:
                raise LFError(self.name, "needs its saved state to score without its dataset")
            self.resource = self.restore_fn(read_npz(path))
        elif self.fit_fn is not None:
            if not self.per_process:
                raise LFError(self.name, "is fitted on its dataset and exports no state: it cannot score without "
                                         "the dataset (give ranking_lf export= and restore=)")
            self.resource = self.fit_fn(None)
        self._fitted_on = None
        return self

    def _call(self, *args: Any) -> Any:
        return self.fn(*args) if self.fit_fn is None else self.fn(*args, self.resource)

    def _raw_scores(self, pairs: PairBatch) -> np.ndarray:
        if self.batched:
            try:
                return np.asarray(self._call(pairs), dtype=np.float64).reshape(-1)
            except Exception as err:
                first = f" (first: {_pair(pairs, 0)})" if len(pairs) else ""
                raise LFError(self.name, f"raised {type(err).__name__}: {err} on a batch of {len(pairs)} pairs{first}") from err
        scores = np.empty(len(pairs), dtype=np.float64)
        for i, (query, passage) in enumerate(zip(pairs.query, pairs.passage)):
            try:
                scores[i] = self._call(query, passage)
            except Exception as err:
                raise LFError(self.name, f"raised {type(err).__name__}: {err} on {_pair(pairs, i)}") from err
        return scores

    def score(self, pairs: PairBatch) -> np.ndarray:
        """Scores of ``pairs`` as float64; raises :class:`LFError` naming the pair when the LF raises, and on a
        wrong length or NaN/inf."""
        scores = self._raw_scores(pairs)
        if scores.shape[0] != len(pairs):
            raise LFError(self.name, f"returned {scores.shape[0]} scores for {len(pairs)} pairs")
        bad = ~np.isfinite(scores)
        if bad.any():
            i = int(bad.argmax())
            raise LFError(self.name, f"score {scores[i]} (not finite) for {_pair(pairs, i)}")
        return scores

    def __call__(self, query: str, passage: str) -> float:
        """Score one pair (handy in notebooks and tests)."""
        batch = PairBatch(np.array(["q"]), np.array(["p"]), [query], [passage])
        return float(self.score(batch)[0])


def _pair(pairs: PairBatch, i: int) -> str:
    return f"query_id {pairs.query_id[i]!r}, passage_id {pairs.passage_id[i]!r} (pair {i})"
