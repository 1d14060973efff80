"""The loss of one batch, assembled from :mod:`weakrank.training.losses` as the config says."""

from __future__ import annotations

import torch

from weakrank.training.config import TrainConfig
from weakrank.training.data import Batch, ListBatch
from weakrank.training.losses import (
    hinge,
    in_batch_cross_entropy,
    in_batch_relaxation,
    listwise_kl,
    relaxation,
    smoothed_target,
    soft_cross_entropy,
    weighted_mean,
)
from weakrank.training.rankers import Ranker


def list_loss(model: Ranker, batch: ListBatch, cfg: TrainConfig) -> torch.Tensor:
    """Mean over queries of KL(softmax(teacher / T) ‖ softmax(student)) over each query's group."""
    sizes = [len(p) for p in batch.passages]
    queries = [q for q, n in zip(batch.queries, sizes) for _ in range(n)]
    scores = model.score(queries, [p for group in batch.passages for p in group]).float()
    losses = [
        listwise_kl(s, torch.as_tensor(t, device=scores.device), cfg.temperature)
        for s, t in zip(torch.split(scores, sizes), batch.teacher)
    ]
    return torch.stack(losses).mean()


def in_batch_loss(model: Ranker, batch: Batch, cfg: TrainConfig, epsilon: float) -> torch.Tensor:
    """The label-relaxation paper's (seed 004) bi-encoder loss: each query's positive against all of the
    batch's positives and negatives (another anchor's positive of the same query is masked); PR, LS or
    label relaxation over them."""
    k = len(batch.queries)
    module = getattr(model, "module", model)
    logits = model(**module.tokenize_all(batch.queries, batch.positives + batch.negatives)).float()
    same = torch.tensor([[a == b for b in batch.queries] for a in batch.queries], device=logits.device)
    same_positive = same & ~torch.eye(k, dtype=torch.bool, device=logits.device)
    mask = torch.cat([same_positive, torch.zeros_like(same_positive)], dim=1)
    logits = logits.masked_fill(mask, float("-inf"))
    target = torch.arange(k, device=logits.device)
    weights = torch.as_tensor(batch.pos_confidence, device=logits.device) if cfg.noise_aware else None
    if cfg.target == "relax":
        return weighted_mean(in_batch_relaxation(logits, target, cfg.alpha), weights)
    return weighted_mean(in_batch_cross_entropy(logits, target, epsilon), weights)


def batch_loss(model: Ranker, batch: Batch | ListBatch, cfg: TrainConfig, epsilon: float) -> torch.Tensor:
    """Mean (optionally confidence-weighted) loss of ``batch`` under ``cfg``'s mode, loss and target."""
    if isinstance(batch, ListBatch):
        return list_loss(model, batch, cfg)
    if cfg.mode == "in_batch":
        return in_batch_loss(model, batch, cfg, epsilon)
    k = len(batch.queries)
    device = model.device
    # one forward pass over positives and negatives together
    scores = model.score(batch.queries + batch.queries, batch.positives + batch.negatives).float()
    pos, neg = scores[:k], scores[k:]
    ns = torch.as_tensor(batch.ns_score, device=device)
    wsls = cfg.target in ("wsls", "twsls")
    if cfg.mode == "pairwise":
        weights = torch.as_tensor(batch.confidence, device=device) if cfg.noise_aware else None
        if cfg.loss == "hinge":
            return weighted_mean(hinge(pos, neg, cfg.margin), weights)
        margin = pos - neg  # logit of "the positive ranks first"
        ones = torch.ones(k, device=device)
        if cfg.target == "relax":
            return weighted_mean(relaxation(margin, ones, cfg.alpha), weights)
        target = 1 - epsilon * ns if wsls else smoothed_target(ones, epsilon)
        return weighted_mean(soft_cross_entropy(margin, target), weights)
    y = torch.cat([torch.ones(k, device=device), torch.zeros(k, device=device)])
    weights = None
    if cfg.noise_aware:
        weights = torch.as_tensor(batch.pos_confidence.tolist() + batch.neg_confidence.tolist(), device=device)
    if cfg.target == "relax":
        return weighted_mean(relaxation(scores, y, cfg.alpha), weights)
    ns_all = torch.cat([torch.full((k,), float("nan"), device=device), ns]) if wsls else None
    return weighted_mean(soft_cross_entropy(scores, smoothed_target(y, epsilon, ns_all)), weights)
