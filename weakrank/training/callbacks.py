"""The hooks a :class:`~weakrank.training.trainer.Trainer` calls, as in transformers' ``TrainerCallback``.

A callback subclasses :class:`TrainerCallback` and overrides the hooks it needs; each receives the trainer
(its ``progress``, ``model``, ``objective``, ``sampler``, ``args``, ``out_dir``, …). The AC-IR policy
(:class:`weakrank.training.policy.callback.PolicyCallback`) is one.
"""

from __future__ import annotations

from typing import Any


class TrainerCallback:
    """Does nothing at every hook; override the ones you need."""

    def on_step(self, trainer: Any, batch: Any, loss: float, grad_norm: float) -> None:
        """After each optimisation step: its batch, loss and gradient norm (of the head, when there is one)."""

    def on_evaluate(self, trainer: Any, metrics: dict[str, float]) -> None:
        """After each evaluation, with its metrics (``step``, ``dev_map``, …)."""

    def on_end(self, trainer: Any) -> None:
        """When the training loop ends, before the final evaluation and save."""
