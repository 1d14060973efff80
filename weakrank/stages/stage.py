"""How a stage is declared: :func:`stage` names the stage's own check, runs it on what a stage function reads of
the config before it writes anything (or takes what ``run`` checked up front) and runs it under the run-dir lock,
the same for every stage; :func:`train_config` reads ``[train]`` (plus
the command line's overrides) once, for the stages that read it."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Collection
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, TypeVar

from weakrank.config import PipelineConfig
from weakrank.lock import run_dir_lock
from weakrank.validation import check_inputs

if TYPE_CHECKING:
    from weakrank.training.config import TrainConfig

F = TypeVar("F", bound=Callable[..., Any])
UNCHECKED = object()  # no ``parsed=`` handed in: the stage checks itself


def train_config(cfg: PipelineConfig, **overrides: Any) -> TrainConfig:
    """The ``[train]`` section of ``cfg`` with ``overrides`` (None values ignored), checked without torch; the
    trainer plug-ins are loaded here (:mod:`weakrank.training.plugins`), by the stages that read ``[train]``."""
    from weakrank.training.config import TrainConfig

    values = dict(cfg.train or {})
    values.update({k: v for k, v in overrides.items() if v is not None})
    return TrainConfig.from_dict(values, cfg.source)  # it checks what the objectives check


def stage(name: str, check: Callable[..., Any] | None = None, *, reads_train: bool = False, torchrun: bool = False,
          **names: str) -> Callable[[F], F]:
    """Decorate a stage ``func(cfg, ...)``: what it reads of ``cfg`` is checked before it writes anything (once per
    call: :func:`~weakrank.validation.check_inputs`, then the stage's own ``check(cfg, plan, **values)``, each of
    ``names`` mapping an argument of ``check`` to the parameter of ``func`` that gives it, its default included),
    then it runs under the run-dir lock (:func:`~weakrank.lock.run_dir_lock`: within :func:`weakrank.pipeline.run`,
    under its one hold). What the check returns (what it parsed: the judgments ``aggregate`` reads) is handed to
    ``func`` as ``parsed=`` where it takes one. The decorated stage's ``check(cfg, plan, *args, **kwargs)`` runs
    the stage's own check alone and returns what it parsed: :func:`weakrank.pipeline.run` checks each of its stages
    so, once, before the first, and hands the result in (``parsed=``), which the stage does not check again. With
    ``reads_train``, ``func``'s second parameter ``tc`` is the ``[train]`` config: the decorated stage takes it
    (``tc=``, as ``run`` passes the one it read) or reads it from ``cfg`` with the keyword arguments ``func`` does
    not name as overrides (:func:`train_config`), and its train split is checked too. With ``torchrun``, a process
    of rank other than 0 takes no lock (under torchrun only rank 0 writes)."""

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        takes_parsed = "parsed" in signature.parameters

        def bound(cfg: PipelineConfig, args: tuple, kwargs: dict) -> tuple[tuple, dict, dict[str, Any]]:
            """``args`` with the ``[train]`` config first (``reads_train``), ``kwargs`` less its overrides, and the
            values of ``check``'s arguments."""
            if reads_train:
                tc = kwargs.pop("tc", None)
                overrides = {key: kwargs.pop(key) for key in list(kwargs) if key not in signature.parameters}
                if tc is not None and overrides:
                    raise TypeError(f"{name}: give tc or [train] overrides, not both ({sorted(overrides)})")
                args = (tc or train_config(cfg, **overrides), *args)
            given = signature.bind(cfg, *args, **kwargs)
            given.apply_defaults()
            values = {key: given.arguments.get(param) for key, param in names.items()}
            if reads_train and check is not None and "train_split" in inspect.signature(check).parameters:
                values["train_split"] = args[0].train_split
            return args, kwargs, values

        def own_check(cfg: PipelineConfig, plan: Collection[str], *args: Any, **kwargs: Any) -> Any:
            return check(cfg, plan, **bound(cfg, args, dict(kwargs))[2]) if check is not None else None

        @functools.wraps(func)
        def checked(cfg: PipelineConfig, *args: Any, parsed: Any = UNCHECKED, **kwargs: Any) -> Any:
            args, kwargs, values = bound(cfg, args, kwargs)
            if parsed is UNCHECKED:
                check_inputs(cfg, (name,))
                parsed = check(cfg, (name,), **values) if check is not None else None
            if takes_parsed:
                kwargs["parsed"] = parsed
            writes = not torchrun or int(os.environ.get("RANK", "0")) == 0
            with run_dir_lock(cfg.run_dir, name) if writes else nullcontext():
                return func(cfg, *args, **kwargs)

        checked.check = own_check  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]

    return decorate
