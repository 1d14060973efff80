"""The hooks a :class:`~weakrank.training.trainer.Trainer` calls, as in transformers' ``TrainerCallback``.

A callback subclasses :class:`TrainerCallback` and overrides the hooks it needs; each receives the trainer as
the :class:`TrainerView` below: what a callback may read of it. A callback that steers training holds what it
steers (the AC-IR policy, :class:`weakrank.reproduction.acir.callback.PolicyCallback`, holds its sampler; a hold-out,
the queries it keeps out of the first steps).
A sampler that a callback drives is a trainer plug-in's (:mod:`weakrank.training.plugins`).
"""

from __future__ import annotations

from collections.abc import Collection
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
    total_steps: int
    out_dir: Path
    data: Any  # TrainingData: the training lists
    dist: Any  # DistEnv: ``is_main`` in the one process that writes
    dev_data: Any  # TrainingData | None: the dev lists its evaluator ranks (none where its evaluator ranks other lists)

    def dev_metrics(self, queries: int | None = None) -> dict[str, float]:
        """Dev-split metrics (``map``, …) of the model as it stands, on at most ``queries`` of the dev lists
        (:class:`~weakrank.training.evaluators.ListEvaluator`)."""
        ...

    def save_model(self, directory: Path) -> None:
        """Save the model as it stands, with its card, into ``directory``."""
        ...


class TrainerCallback:
    """Does nothing at every hook; override the ones you need."""

    def on_train_begin(self, trainer: TrainerView, resume: bool) -> None:
        """Before the first step: of a fresh run, or of one continued from its checkpoint (``resume``)."""

    def leaves_out(self, trainer: TrainerView) -> Collection[str]:
        """The training queries kept out of the epoch about to begin (none)."""
        return ()

    def on_batch_begin(self, trainer: TrainerView, empty: bool) -> bool:
        """Before each batch of an epoch, and once before an epoch without any (``empty``): True ends the epoch
        there, and a new one begins."""
        return False

    def on_step(self, trainer: TrainerView, batch: Any, loss: float, grad_norm: float) -> None:
        """After each optimisation step: its batch, loss and gradient norm (of the head, when there is one)."""

    def on_evaluate(self, trainer: TrainerView, metrics: dict[str, float]) -> None:
        """After each evaluation, with its metrics (``step`` and the evaluator's: ``dev_map``, …)."""

    def chooses(self, trainer: TrainerView) -> bool:
        """Whether the model as it stands may be kept as the best one and its evaluation stop training (yes)."""
        return True

    def card(self, trainer: TrainerView) -> dict[str, Any]:
        """What a saved model's card says of this callback (nothing)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """What a resumed run needs of this callback, saved with the checkpoint's progress (nothing)."""
        return {}

    def load_state_dict(self, progress: dict[str, Any]) -> None:
        """Continue from the checkpoint's ``progress``, which holds what :meth:`state_dict` saved."""

    def on_end(self, trainer: TrainerView) -> None:
        """When the training loop ends, before the final evaluation and save."""
