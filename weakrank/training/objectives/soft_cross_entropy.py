"""Soft cross-entropy against plain, LS, T-LS, WSLS or T-WSLS targets, over triplets or single pairs
(``loss = "ce"`` with a pair mode and a target other than relax)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from weakrank.training.batches import Batch
from weakrank.training.objectives.base import (
    PAIR_MODES,
    SmoothedObjective,
    TrainSettings,
    check_mode,
    pair_scores,
    pair_weights,
    plain_target,
    triplet_weights,
)

if TYPE_CHECKING:
    import torch

    from weakrank.training.objectives.base import Ranker

TARGETS = ("plain", "ls", "tls", "wsls", "twsls")


@dataclass(frozen=True)
class SoftCrossEntropy(SmoothedObjective):
    """Cross-entropy of σ(s+ − s−) (``pairwise``: "the positive ranks first") or of σ(s) per pair
    (``pointwise``) against a smoothed target; see :mod:`weakrank.training.losses` for LS and WSLS (Penha & Hauff,
    WSLS). Weighted by confidence when ``noise_aware``."""

    loss = "ce"
    mode: str = "pairwise"
    target: str = "plain"
    epsilon: float = 0.1
    two_stage_fraction: float = 0.5
    noise_aware: bool = False

    def __post_init__(self) -> None:
        check_mode("SoftCrossEntropy", self.mode)
        self.check_smoothing(TARGETS)

    @classmethod
    def selects(cls, cfg: TrainSettings) -> bool:
        return cfg.loss == "ce" and cfg.mode in PAIR_MODES and plain_target(cfg) != "relax"

    @classmethod
    def from_config(cls, cfg: TrainSettings) -> SoftCrossEntropy:
        return cls(cfg.mode, plain_target(cfg), cfg.epsilon, cfg.two_stage_fraction, cfg.noise_aware)

    def __call__(self, model: Ranker, batch: Batch, step: int, total: int) -> torch.Tensor:
        import torch

        from weakrank.training.losses import smoothed_target, soft_cross_entropy, weighted_mean

        epsilon = self.epsilon_at(step, total)
        k, device = len(batch.queries), model.device
        scores = pair_scores(model, batch)
        ns = torch.as_tensor(batch.ns_score, device=device)
        wsls = self.target in ("wsls", "twsls")
        if self.mode == "pairwise":
            weights = triplet_weights(batch, device) if self.noise_aware else None
            target = 1 - epsilon * ns if wsls else smoothed_target(torch.ones(k, device=device), epsilon)
            return weighted_mean(soft_cross_entropy(scores[:k] - scores[k:], target), weights)
        y = torch.cat([torch.ones(k, device=device), torch.zeros(k, device=device)])
        weights = pair_weights(batch, device) if self.noise_aware else None
        ns_all = torch.cat([torch.full((k,), float("nan"), device=device), ns]) if wsls else None
        return weighted_mean(soft_cross_entropy(scores, smoothed_target(y, epsilon, ns_all)), weights)
