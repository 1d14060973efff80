"""The hooks a :class:`~weakrank.training.trainer.Trainer` calls, as in transformers' ``TrainerCallback``.

A callback subclasses :class:`TrainerCallback` and overrides the hooks it needs; each receives the trainer as
the :class:`TrainerView` below: what a callback may read of it. A callback that steers training holds what it
steers (the AC-IR policy, :class:`weakrank.reproduction.acir.callback.PolicyCallback`, holds its sampler).
A sampler that a callback drives is a trainer plug-in's (:mod:`weakrank.training.plugins`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class StepCounter(Protocol):
    """Where training stands (:class:`~weakrank.training.trainer.Progress`)."""

    step: int
    epoch: int
    batch_in_epoch: int


class TrainerView(Protocol):
    """What a hook may read of the :class:`~weakrank.training.trainer.Trainer` that calls it."""

    progress: StepCounter
    steps_per_epoch: int
    out_dir: Path
    dev_data: Any  # TrainingData | None: the dev lists its evaluator ranks (none where its evaluator ranks other lists)

    def dev_metrics(self, queries: int | None = None) -> dict[str, float]:
        """Dev-split metrics (``map``, …) of the model as it stands, on at most ``queries`` of the dev lists
        (:class:`~weakrank.training.evaluators.ListEvaluator`)."""
        ...


class TrainerCallback:
    """Does nothing at every hook; override the ones you need."""

    def on_step(self, trainer: TrainerView, batch: Any, loss: float, grad_norm: float) -> None:
        """After each optimisation step: its batch, loss and gradient norm (of the head, when there is one)."""

    def on_evaluate(self, trainer: TrainerView, metrics: dict[str, float]) -> None:
        """After each evaluation, with its metrics (``step`` and the evaluator's: ``dev_map``, …)."""

    def on_end(self, trainer: TrainerView) -> None:
        """When the training loop ends, before the final evaluation and save."""

