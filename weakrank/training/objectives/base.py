"""What every training objective is: a small frozen dataclass of its settings, checked when it is built, that turns
a batch into its mean loss (like sentence-transformers' ``losses/`` modules); the parts the objectives share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import torch

from weakrank.errors import ConfigError
from weakrank.training.data import Batch, ListBatch
from weakrank.training.rankers import Ranker

PAIR_MODES = ("pairwise", "pointwise")


class Objective(ABC):
    """The loss a :class:`~weakrank.training.trainer.Trainer` minimises.

    ``objective(model, batch, step, total)`` is the mean loss of ``batch`` at optimiser step ``step`` of
    ``total`` (a schedule, such as two-stage smoothing, may depend on them). ``listwise`` objectives train on
    :class:`ListBatch` groups, the others on :class:`Batch` triplets.
    """

    listwise: ClassVar[bool] = False

    @abstractmethod
    def __call__(self, model: Ranker, batch: Batch | ListBatch, step: int, total: int) -> torch.Tensor:
        """The mean (optionally confidence-weighted) loss of ``batch``."""

    def smoothing_stage(self, step: int, total: int) -> bool:
        """True while a two-stage target still smooths after ``step`` steps: the trainer keeps no best model
        from then."""
        return False

    def begin(self, model: Ranker) -> None:
        """Called once by the trainer with the model as it is built, before any step or resume (nothing by
        default; an objective that compares the model with its start keeps what it needs)."""


class SmoothedObjective(Objective):
    """An objective with a smoothed target: ``target`` plain, LS or WSLS with ``epsilon`` throughout, or their
    two-stage forms T-LS/T-WSLS, ``epsilon`` for the first ``two_stage_fraction`` of the steps and 0 after."""

    target: str
    epsilon: float
    two_stage_fraction: float

    def check_smoothing(self, targets: tuple[str, ...]) -> None:
        """Refuse a target outside ``targets``, or ε / the two-stage fraction outside [0, 1]."""
        name = type(self).__name__
        check(self.target in targets, name, f"target = {self.target!r}; choose one of {targets}")
        check(0 <= self.epsilon <= 1, name, f"epsilon = {self.epsilon!r} must be in [0, 1]")
        fraction = self.two_stage_fraction
        check(0 <= fraction <= 1, name, f"two_stage_fraction = {fraction!r} must be in [0, 1]")

    @property
    def two_stage(self) -> bool:
        return self.target in ("tls", "twsls")

    def epsilon_at(self, step: int, total: int) -> float:
        """Smoothing ε at ``step``: constant for LS/WSLS, ε then 0 for the two-stage T-LS/T-WSLS, 0 otherwise."""
        if self.target in ("ls", "wsls"):
            return self.epsilon
        if self.two_stage:
            return self.epsilon if step < self.two_stage_fraction * total else 0.0
        return 0.0

    def smoothing_stage(self, step: int, total: int) -> bool:
        return self.two_stage and step <= self.two_stage_fraction * total


def check(ok: bool, objective: str, problem: str) -> None:
    """Refuse a setting: a :class:`ConfigError` naming the objective and what is wrong, unless ``ok``."""
    if not ok:
        raise ConfigError(f"{objective}: {problem}")


def check_mode(objective: str, mode: str) -> None:
    """Refuse a pair mode other than pairwise (triplets) or pointwise (each pair alone)."""
    check(mode in PAIR_MODES, objective, f"mode = {mode!r}; choose one of {PAIR_MODES}")


def pair_scores(model: Ranker, batch: Batch) -> torch.Tensor:
    """Scores of the batch's k positives, then of its k negatives, in one forward pass."""
    return model.score(batch.queries + batch.queries, batch.positives + batch.negatives).float()


def triplet_weights(batch: Batch, device: torch.device) -> torch.Tensor:
    """Each triplet's confidence (noise-aware weighting, Xu et al., BERT-PR, Eq. 4)."""
    return torch.as_tensor(batch.confidence, device=device)


def pair_weights(batch: Batch, device: torch.device) -> torch.Tensor:
    """Each pair's confidence, positives then negatives (the order of :func:`pair_scores`)."""
    return torch.as_tensor(batch.pos_confidence.tolist() + batch.neg_confidence.tolist(), device=device)
