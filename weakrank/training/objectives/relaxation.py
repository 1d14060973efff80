"""Label relaxation (Sharma et al., label relaxation) over triplets or single pairs."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from weakrank.training.data import Batch
from weakrank.training.losses import relaxation, weighted_mean
from weakrank.training.objectives.base import Objective, check, check_mode, pair_scores, pair_weights, triplet_weights
from weakrank.training.rankers import Ranker


@dataclass(frozen=True)
class LabelRelaxation(Objective):
    """Zero loss while p̂(y) ≥ 1 − ``alpha``, else KL to the credal set's boundary; p̂ is σ(s+ − s−) with
    y = "the positive ranks first" (``pairwise``) or σ(s) per pair (``pointwise``). Weighted by confidence when
    ``noise_aware``."""

    mode: str = "pairwise"
    alpha: float = 0.1
    noise_aware: bool = False

    def __post_init__(self) -> None:
        check_mode("LabelRelaxation", self.mode)
        check(0 <= self.alpha < 1, "LabelRelaxation", f"alpha = {self.alpha!r} must be in [0, 1)")

    def __call__(self, model: Ranker, batch: Batch, step: int, total: int) -> torch.Tensor:
        k, device = len(batch.queries), model.device
        scores = pair_scores(model, batch)
        if self.mode == "pairwise":
            weights = triplet_weights(batch, device) if self.noise_aware else None
            return weighted_mean(relaxation(scores[:k] - scores[k:], torch.ones(k, device=device), self.alpha), weights)
        y = torch.cat([torch.ones(k, device=device), torch.zeros(k, device=device)])
        weights = pair_weights(batch, device) if self.noise_aware else None
        return weighted_mean(relaxation(scores, y, self.alpha), weights)
