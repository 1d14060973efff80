"""What every training objective is: a small frozen dataclass of its settings, checked when it is built, that turns
a batch into its mean loss (like sentence-transformers' ``losses/`` modules); the parts the objectives share.

An objective also declares its ``[train]`` options (``options``: a dataclass of fields whose ``metadata`` carries
their help, as :mod:`weakrank.training.config` reads them), the ``loss`` name that picks it, and its rules
(:meth:`Objective.check_config`). The ``[train]`` options are built from these modules before any training runs
(``weakrank train --help`` included), so they import torch, the losses and the rankers only where a loss is
computed."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from weakrank.errors import ConfigError
from weakrank.training.batches import Batch, ListBatch

if TYPE_CHECKING:
    import torch

    from weakrank.ranker.bi_encoder import BiEncoder
    from weakrank.ranker.cross_encoder import CrossEncoderRanker

    Ranker = CrossEncoderRanker | BiEncoder

PAIR_MODES = ("pairwise", "pointwise")
# a [train] configuration (weakrank.training.config.TrainConfig, which is built from the objectives' options: not
# imported here)
TrainSettings = Any


@dataclass
class TargetOptions:
    """The ``[train]`` options of the smoothed and relaxed targets (``target``: ls/tls/wsls/twsls, relax), which
    several objectives share: their meaning and their ranges, checked here once (:func:`check_targets`)."""

    epsilon: float = field(default=0.1, metadata={
        "group": "objective", "help": "label-smoothing mass ε of ls/tls/wsls/twsls, in [0, 1]"})
    alpha: float = field(default=0.1, metadata={
        "group": "objective", "help": "label relaxation: the credal set p(+) ≥ 1 − alpha, in [0, 1)"})
    two_stage_fraction: float = field(default=0.5, metadata={
        "group": "objective", "help": "tls/twsls: share of the steps that smooth (then ε = 0), in [0, 1]"})


TARGET_RANGES = {  # option: (whether a value is in its range, the range)
    "epsilon": (lambda v: 0 <= v <= 1, "[0, 1]"),
    "alpha": (lambda v: 0 <= v < 1, "[0, 1)"),
    "two_stage_fraction": (lambda v: 0 <= v <= 1, "[0, 1]"),
}


def check_targets(settings: Any, who: str) -> None:
    """Refuse ε or the two-stage fraction outside [0, 1], or α outside [0, 1), of ``settings`` (an objective or
    a ``[train]`` configuration, whichever of them it has; ``who`` names it in the error)."""
    for name, (ok, bounds) in TARGET_RANGES.items():
        if hasattr(settings, name):
            value = getattr(settings, name)
            check(ok(value), who, f"{name} = {value!r} must be in {bounds}")


def plain_target(cfg: TrainSettings) -> str:
    """``[train] target``, with noise_aware read as the plain target (its weighting is ``noise_aware``)."""
    return "plain" if cfg.target == "noise_aware" else cfg.target


class Objective(ABC):
    """The loss a :class:`~weakrank.training.trainer.Trainer` minimises.

    ``objective(model, batch, step, total)`` is the mean loss of ``batch`` at optimiser step ``step`` of
    ``total`` (a schedule, such as two-stage smoothing, may depend on them). ``listwise`` objectives train on
    :class:`ListBatch` groups, the others on :class:`Batch` triplets.
    """

    listwise: ClassVar[bool] = False
    # what a registered objective (weakrank.training.objectives.OBJECTIVES) declares; one passed to the trainer
    # directly needs none of it
    loss: ClassVar[str] = ""  # the [train] loss that picks it
    options: ClassVar[type | None] = None  # its own [train] options (a dataclass), if any

    @classmethod
    def selects(cls, cfg: TrainSettings) -> bool:
        """Whether ``[train]`` (its mode, loss, target) describes this objective."""
        return False

    @classmethod
    def from_config(cls, cfg: TrainSettings) -> Objective:
        """This objective with ``[train]``'s settings."""
        raise NotImplementedError(f"{cls.__name__} is not built from [train]")

    @classmethod
    def check_config(cls, cfg: TrainSettings) -> None:
        """Refuse ``[train]`` settings this objective cannot take (its rules, as :class:`ConfigError`\ s
        starting ``[train]``); called for every registered objective when a configuration is built."""

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
        """Refuse a target outside ``targets``, or ε, α, the two-stage fraction outside their ranges."""
        name = type(self).__name__
        check(self.target in targets, name, f"target = {self.target!r}; choose one of {targets}")
        check_targets(self, name)

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
    """Refuse a setting: a :class:`ConfigError` naming the objective (or the ``[train]`` section) and what is
    wrong, unless ``ok``."""
    if not ok:
        raise ConfigError(f"{objective} {problem}" if objective == "[train]" else f"{objective}: {problem}")


def refuse(ok: bool, problem: str) -> None:
    """Refuse a ``[train]`` configuration: a :class:`ConfigError` saying ``problem``, unless ``ok``."""
    if not ok:
        raise ConfigError(problem)


def check_mode(objective: str, mode: str) -> None:
    """Refuse a pair mode other than pairwise (triplets) or pointwise (each pair alone)."""
    check(mode in PAIR_MODES, objective, f"mode = {mode!r}; choose one of {PAIR_MODES}")


def pair_scores(model: Ranker, batch: Batch) -> torch.Tensor:
    """Scores of the batch's k positives, then of its k negatives, in one forward pass."""
    return model.score(batch.queries + batch.queries, batch.positives + batch.negatives).float()


def triplet_weights(batch: Batch, device: torch.device) -> torch.Tensor:
    """Each triplet's confidence (noise-aware weighting, Xu et al., BERT-PR, Eq. 4)."""
    import torch

    return torch.as_tensor(batch.confidence, device=device)


def pair_weights(batch: Batch, device: torch.device) -> torch.Tensor:
    """Each pair's confidence, positives then negatives (the order of :func:`pair_scores`)."""
    import torch

    return torch.as_tensor(batch.pos_confidence.tolist() + batch.neg_confidence.tolist(), device=device)
