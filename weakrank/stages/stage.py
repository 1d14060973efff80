"""How a stage is declared: :func:`stage` checks what a stage function reads of the config before it writes
anything and runs it under the run-dir lock, the same for every stage; :func:`train_config` reads ``[train]`` (plus
the command line's overrides) once, for the stages that read it."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, TypeVar

from weakrank.config import PipelineConfig
from weakrank.lock import run_dir_lock
from weakrank.validation import check_config

if TYPE_CHECKING:
    from weakrank.training.config import TrainConfig

F = TypeVar("F", bound=Callable[..., Any])


def train_config(cfg: PipelineConfig, **overrides: Any) -> TrainConfig:
    """The ``[train]`` section of ``cfg`` with ``overrides`` (None values ignored), checked without torch; the
    trainer plug-ins are loaded here (:mod:`weakrank.training.plugins`), by the stages that read ``[train]``."""
    from weakrank.training.config import TrainConfig

    values = dict(cfg.train or {})
    values.update({k: v for k, v in overrides.items() if v is not None})
    return TrainConfig.from_dict(values, cfg.source)  # it checks what the objectives check


def stage(name: str, stages: tuple[str, ...] | None = None, *, reads_train: bool = False, torchrun: bool = False,
          **names: str) -> Callable[[F], F]:
    """Decorate a stage ``func(cfg, ...)``: what it reads of ``cfg`` is checked before it writes anything
    (:func:`~weakrank.validation.check_config` of ``stages``, default ``(name,)``; each of ``names`` maps an
    argument of ``check_config`` to the parameter of ``func`` that gives it, its default included), then it runs
    under the run-dir lock (:func:`~weakrank.lock.run_dir_lock`: within :func:`weakrank.pipeline.run`, under its
    one hold). With ``reads_train``, ``func``'s second parameter ``tc`` is the ``[train]`` config: the decorated
    stage takes it (``tc=``, as ``run`` passes the one it read) or reads it from ``cfg`` with the keyword arguments
    ``func`` does not name as overrides (:func:`train_config`), and its train split is checked too. With
    ``torchrun``, a process of rank other than 0 takes no lock (under torchrun only rank 0 writes)."""

    def decorate(func: F) -> F:
        signature = inspect.signature(func)

        @functools.wraps(func)
        def checked(cfg: PipelineConfig, *args: Any, **kwargs: Any) -> Any:
            if reads_train:
                tc = kwargs.pop("tc", None)
                overrides = {key: kwargs.pop(key) for key in list(kwargs) if key not in signature.parameters}
                if tc is not None and overrides:
                    raise TypeError(f"{name}: give tc or [train] overrides, not both ({sorted(overrides)})")
                args = (tc or train_config(cfg, **overrides), *args)
            given = signature.bind(cfg, *args, **kwargs)
            given.apply_defaults()
            values = {key: given.arguments.get(param) for key, param in names.items()}
            if reads_train:
                values["train_split"] = args[0].train_split
            check_config(cfg, (name,) if stages is None else stages, **values)
            writes = not torchrun or int(os.environ.get("RANK", "0")) == 0
            with run_dir_lock(cfg.run_dir, name) if writes else nullcontext():
                return func(cfg, *args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate
