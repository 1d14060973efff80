"""Label relaxation (Sharma et al., label relaxation) over triplets or single pairs (``loss = "ce"`` with a pair
mode and ``target = "relax"``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from weakrank.training.batches import Batch
from weakrank.training.objectives.base import (
    PAIR_MODES,
    Objective,
    TrainSettings,
    check_mode,
    check_targets,
    pair_scores,
    pair_weights,
    plain_target,
    triplet_weights,
)

if TYPE_CHECKING:
    import torch

    from weakrank.training.objectives.base import Ranker


@dataclass(frozen=True)
class LabelRelaxation(Objective):
    """Zero loss while p̂(y) ≥ 1 − ``alpha``, else KL to the credal set's boundary; p̂ is σ(s+ − s−) with
    y = "the positive ranks first" (``pairwise``) or σ(s) per pair (``pointwise``). Weighted by confidence when
    ``noise_aware``."""

    loss = "ce"
    mode: str = "pairwise"
    alpha: float = 0.1
    noise_aware: bool = False

    def __post_init__(self) -> None:
        check_mode("LabelRelaxation", self.mode)
        check_targets(self, "LabelRelaxation")

    @classmethod
    def selects(cls, cfg: TrainSettings) -> bool:
        return cfg.loss == "ce" and cfg.mode in PAIR_MODES and plain_target(cfg) == "relax"

    @classmethod
    def from_config(cls, cfg: TrainSettings) -> LabelRelaxation:
        return cls(cfg.mode, cfg.alpha, cfg.noise_aware)

    def __call__(self, model: Ranker, batch: Batch, step: int, total: int) -> torch.Tensor:
        import torch

        from weakrank.training.losses import relaxation, weighted_mean

        k, device = len(batch.queries), model.device
        scores = pair_scores(model, batch)
        if self.mode == "pairwise":
            weights = triplet_weights(batch, device) if self.noise_aware else None
            return weighted_mean(relaxation(scores[:k] - scores[k:], torch.ones(k, device=device), self.alpha), weights)
        y = torch.cat([torch.ones(k, device=device), torch.zeros(k, device=device)])
        weights = pair_weights(batch, device) if self.noise_aware else None
        return weighted_mean(relaxation(scores, y, self.alpha), weights)
