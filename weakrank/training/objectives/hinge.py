"""Pairwise hinge: max(0, margin − s+ + s−) per triplet."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from weakrank.training.data import Batch
from weakrank.training.losses import hinge, weighted_mean
from weakrank.training.objectives.base import Objective, check, pair_scores, triplet_weights
from weakrank.training.rankers import Ranker


@dataclass(frozen=True)
class Hinge(Objective):
    """The pairwise hinge loss of each triplet (weighted by its confidence when ``noise_aware``)."""

    margin: float = 1.0
    noise_aware: bool = False

    def __post_init__(self) -> None:
        check(self.margin >= 0, "Hinge", f"margin = {self.margin!r} must be >= 0")

    def __call__(self, model: Ranker, batch: Batch, step: int, total: int) -> torch.Tensor:
        k = len(batch.queries)
        scores = pair_scores(model, batch)
        weights = triplet_weights(batch, model.device) if self.noise_aware else None
        return weighted_mean(hinge(scores[:k], scores[k:], self.margin), weights)
