"""Pairwise hinge: max(0, margin − s+ + s−) per triplet (``loss = "hinge"``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from weakrank.training.batches import Batch
from weakrank.training.objectives.base import (
    Objective,
    TrainSettings,
    check,
    pair_scores,
    refuse,
    triplet_weights,
)

if TYPE_CHECKING:
    import torch

    from weakrank.training.objectives.base import Ranker


@dataclass
class HingeOptions:
    """The ``[train]`` options of the hinge loss."""

    margin: float = field(default=1.0, metadata={"group": "objective", "help": "hinge loss margin, >= 0"})


def check_margin(margin: float, who: str) -> None:
    check(margin >= 0, who, f"margin = {margin!r} must be >= 0")


@dataclass(frozen=True)
class Hinge(Objective):
    """The pairwise hinge loss of each triplet (weighted by its confidence when ``noise_aware``)."""

    loss = "hinge"
    options = HingeOptions
    margin: float = 1.0
    noise_aware: bool = False

    def __post_init__(self) -> None:
        check_margin(self.margin, "Hinge")

    @classmethod
    def selects(cls, cfg: TrainSettings) -> bool:
        return cfg.loss == "hinge"

    @classmethod
    def from_config(cls, cfg: TrainSettings) -> Hinge:
        return cls(cfg.margin, cfg.noise_aware)

    @classmethod
    def check_config(cls, cfg: TrainSettings) -> None:
        refuse(cfg.loss != "hinge" or (cfg.mode == "pairwise" and cfg.target in ("plain", "noise_aware")),
               "hinge loss is pairwise and takes no soft target: use loss = 'ce' for LS/WSLS/relax")
        check_margin(cfg.margin, "[train]")

    def __call__(self, model: Ranker, batch: Batch, step: int, total: int) -> torch.Tensor:
        from weakrank.training.losses import hinge, weighted_mean

        k = len(batch.queries)
        scores = pair_scores(model, batch)
        weights = triplet_weights(batch, model.device) if self.noise_aware else None
        return weighted_mean(hinge(scores[:k], scores[k:], self.margin), weights)
