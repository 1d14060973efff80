"""The bi-encoder's in-batch loss (Sharma et al., label relaxation): PR, LS or label relaxation."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from weakrank.training.data import Batch
from weakrank.training.losses import in_batch_cross_entropy, in_batch_relaxation, weighted_mean
from weakrank.training.objectives.base import SmoothedObjective, check
from weakrank.training.rankers import Ranker

TARGETS = ("plain", "ls", "tls", "relax")


@dataclass(frozen=True)
class InBatch(SmoothedObjective):
    """Each query's positive against all of the batch's positives and negatives (another anchor's positive of
    the same query is masked): cross-entropy (``target`` plain: PR), with label smoothing (ls, two-stage tls)
    or label relaxation (relax, ``alpha``) over them. Weighted by the positive's confidence when ``noise_aware``.
    Needs a :class:`~weakrank.ranker.bi_encoder.BiEncoder` (its ``tokenize_all``)."""

    target: str = "plain"
    epsilon: float = 0.1
    alpha: float = 0.1
    two_stage_fraction: float = 0.5
    noise_aware: bool = False

    def __post_init__(self) -> None:
        self.check_smoothing(TARGETS)
        check(0 <= self.alpha < 1, "InBatch", f"alpha = {self.alpha!r} must be in [0, 1)")

    def __call__(self, model: Ranker, batch: Batch, step: int, total: int) -> torch.Tensor:
        k = len(batch.queries)
        module = getattr(model, "module", model)
        logits = model(**module.tokenize_all(batch.queries, batch.positives + batch.negatives)).float()
        same = torch.tensor([[a == b for b in batch.queries] for a in batch.queries], device=logits.device)
        same_positive = same & ~torch.eye(k, dtype=torch.bool, device=logits.device)
        mask = torch.cat([same_positive, torch.zeros_like(same_positive)], dim=1)
        logits = logits.masked_fill(mask, float("-inf"))
        target = torch.arange(k, device=logits.device)
        weights = torch.as_tensor(batch.pos_confidence, device=logits.device) if self.noise_aware else None
        if self.target == "relax":
            return weighted_mean(in_batch_relaxation(logits, target, self.alpha), weights)
        return weighted_mean(in_batch_cross_entropy(logits, target, self.epsilon_at(step, total)), weights)
