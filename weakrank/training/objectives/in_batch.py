"""The bi-encoder's in-batch loss (Sharma et al., label relaxation): PR, LS or label relaxation
(``mode = "in_batch"``, ``loss = "ce"``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from weakrank.training.batches import Batch
from weakrank.training.objectives.base import SmoothedObjective, TrainSettings, plain_target, refuse

if TYPE_CHECKING:
    import torch

    from weakrank.training.objectives.base import Ranker

TARGETS = ("plain", "ls", "tls", "relax")


@dataclass(frozen=True)
class InBatch(SmoothedObjective):
    """Each query's positive against all of the batch's positives and negatives (another anchor's positive of
    the same query is masked): cross-entropy (``target`` plain: PR), with label smoothing (ls, two-stage tls)
    or label relaxation (relax, ``alpha``) over them. Weighted by the positive's confidence when ``noise_aware``.
    Needs a :class:`~weakrank.ranker.bi_encoder.BiEncoder` (its ``tokenize_all``)."""

    loss = "ce"
    target: str = "plain"
    epsilon: float = 0.1
    alpha: float = 0.1
    two_stage_fraction: float = 0.5
    noise_aware: bool = False

    def __post_init__(self) -> None:
        self.check_smoothing(TARGETS)

    @classmethod
    def selects(cls, cfg: TrainSettings) -> bool:
        return cfg.mode == "in_batch"

    @classmethod
    def from_config(cls, cfg: TrainSettings) -> InBatch:
        return cls(plain_target(cfg), cfg.epsilon, cfg.alpha, cfg.two_stage_fraction, cfg.noise_aware)

    @classmethod
    def check_config(cls, cfg: TrainSettings) -> None:
        if cfg.mode != "in_batch":
            return
        refuse(cfg.architecture == "bi-encoder" and cfg.loss == "ce",
               "[train] mode = 'in_batch' (in-batch negatives) needs architecture = 'bi-encoder', loss = 'ce'")
        refuse(cfg.target in ("noise_aware", *TARGETS), "[train] in_batch takes target plain, noise_aware, ls, tls or relax")

    def __call__(self, model: Ranker, batch: Batch, step: int, total: int) -> torch.Tensor:
        import torch

        from weakrank.training.losses import in_batch_cross_entropy, in_batch_relaxation, weighted_mean

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
