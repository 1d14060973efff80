"""Losses and soft targets of the ranker, each a small function of scores, targets and weights.

A pair's score s is the logit of P(relevant) = σ(s). A triplet's scores (s+, s−) give the 2-class
distribution softmax(s+, s−) whose class 0 is "the positive ranks first".

Targets (the probability given to "relevant" / "positive first"):
* plain: 1 for positives (0 for pointwise negatives);
* LS: smoothing ε spread uniformly over the 2 classes: 1 − ε/2 (and ε/2 for negatives);
* WSLS (Penha & Hauff, WSLS): a negative's smoothing mass follows its min-max-normalised
  negative-sampler score ŝ ∈ [0, 1]: target ε·ŝ for a pointwise negative, 1 − ε·ŝ for a triplet; positives
  (and negatives without a score) fall back to uniform LS.
Label relaxation (Sharma et al., label relaxation) replaces the target by the credal set
{p : p(y) ≥ 1 − α}: zero loss inside, KL(p_r ‖ p̂) to its boundary p_r(y) = 1 − α outside.
Noise-aware weighting (Xu et al., BERT-PR, Eq. 4) multiplies each instance's loss by its label
confidence.
In-batch (bi-encoder, Sharma et al., label relaxation): each query's positive against every passage
of the batch (the other queries' positives and all hard negatives), a softmax over the batch's C candidates: PR is its
cross-entropy, LS spreads ε uniformly (target (1 − ε)·y + ε/C), label relaxation takes the credal set
{p : p(y) ≥ 1 − α} with the projection p_r(y) = 1 − α, p_r(k) ∝ p̂(k) elsewhere.
Listwise distillation passes on the label model's whole ranking of a group of a query's candidates:
KL(softmax(teacher / T) ‖ softmax(student)), the student's scores standardised over the group first where
``scale_free`` (only the teacher's order and relative gaps are passed on).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def hinge(pos: torch.Tensor, neg: torch.Tensor, margin: float = 1.0) -> torch.Tensor:
    """Per-triplet pairwise hinge: max(0, margin − s+ + s−)."""
    return F.relu(margin - pos + neg)


def smoothed_target(y: torch.Tensor, epsilon: float, ns_score: torch.Tensor | None = None) -> torch.Tensor:
    """P(relevant) target of hard labels ``y`` (1/0) with LS, or WSLS when ``ns_score`` is given.

    ``ns_score`` (NaN where unknown) only changes negatives: their target becomes ε·ŝ instead of ε/2.
    """
    target = y * (1 - epsilon) + epsilon / 2
    if ns_score is not None:
        weak = ((y == 0) & ~torch.isnan(ns_score)).to(target.dtype)
        target = target + weak * (epsilon * torch.nan_to_num(ns_score) - epsilon / 2)
    return target


def soft_cross_entropy(logit: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-instance 2-class cross-entropy of σ(logit) against a soft P(class 1) target."""
    return F.binary_cross_entropy_with_logits(logit, target, reduction="none")


def relaxation(logit: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    """Per-instance label-relaxation loss: 0 when p̂(y) ≥ 1 − α, else KL((1 − α, α) ‖ (p̂(y), 1 − p̂(y)))."""
    log_p1, log_p0 = F.logsigmoid(logit), F.logsigmoid(-logit)
    log_py = torch.where(y == 1, log_p1, log_p0)
    log_pother = torch.where(y == 1, log_p0, log_p1)
    keep = 1.0 - alpha
    kl = keep * (torch.log(torch.tensor(keep)) - log_py)
    if alpha > 0:
        kl = kl + alpha * (torch.log(torch.tensor(alpha)) - log_pother)
    return torch.where(log_py.exp() >= keep, torch.zeros_like(kl), kl)


def weighted_mean(losses: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    """Mean of per-instance losses, each multiplied by its confidence when ``weights`` is given."""
    return losses.mean() if weights is None else (losses * weights).mean()


def standardized(scores: torch.Tensor) -> torch.Tensor:
    """``scores`` less their mean, over their standard deviation (one group; a constant group stays 0)."""
    centred = scores - scores.mean()
    return centred / centred.pow(2).mean().add(1e-12).sqrt()


def listwise_kl(student: torch.Tensor, teacher: torch.Tensor, temperature: float = 1.0,
                start: torch.Tensor | None = None, anchor: float = 0.0, scale_free: bool = False) -> torch.Tensor:
    """KL(softmax(teacher / T) ‖ softmax(student)) over one group of candidates; with ``start`` (the scores of
    the model training began from) plus ``anchor`` · KL(softmax(start) ‖ softmax(student)), written as one KL
    to the mixed target (up to a constant and the factor 1 + ``anchor``). ``scale_free``: the student's scores
    are standardised over the group and divided by T, as the teacher's are, so only their order and relative
    gaps are distilled, not their spread (a pretrained bi-encoder's cosines need not shrink to the teacher's)."""
    view = (lambda s: standardized(s) / temperature) if scale_free else (lambda s: s)
    target = F.softmax(teacher / temperature, dim=-1)
    if start is not None and anchor > 0:
        target = (target + anchor * F.softmax(view(start), dim=-1)) / (1 + anchor)
    logits = view(student)
    return F.kl_div(F.log_softmax(logits, dim=-1), target, reduction="sum")


def in_batch_cross_entropy(logits: torch.Tensor, target: torch.Tensor, epsilon: float = 0.0) -> torch.Tensor:
    """Per-row softmax cross-entropy of ``logits`` (rows × candidates, −inf = masked) against the column
    ``target`` of each row, with label smoothing ε spread over the row's unmasked candidates."""
    log_p = F.log_softmax(logits, dim=-1)
    nll = -log_p.gather(1, target[:, None])[:, 0]
    if epsilon == 0:
        return nll
    valid = torch.isfinite(logits)
    uniform = -torch.where(valid, log_p, torch.zeros_like(log_p)).sum(-1) / valid.sum(-1)
    return (1 - epsilon) * nll + epsilon * uniform


def in_batch_relaxation(logits: torch.Tensor, target: torch.Tensor, alpha: float) -> torch.Tensor:
    """Per-row label relaxation over the row's candidates: 0 when p̂(y) ≥ 1 − α, else KL(p_r ‖ p̂) with
    p_r(y) = 1 − α and the rest α · p̂(k) / (1 − p̂(y)) (the closest member of the credal set)."""
    log_p = F.log_softmax(logits, dim=-1)
    log_py = log_p.gather(1, target[:, None])[:, 0]
    keep = 1.0 - alpha
    # KL(p_r ‖ p̂) = keep·(log keep − log p̂(y)) + α·(log α − log(1 − p̂(y))): the other classes' ratio is p̂'s
    kl = keep * (torch.log(torch.tensor(keep)) - log_py)
    if alpha > 0:
        log_rest = torch.log1p(-log_py.exp().clamp(max=1 - 1e-7))
        kl = kl + alpha * (torch.log(torch.tensor(alpha)) - log_rest)
    return torch.where(log_py.exp() >= keep, torch.zeros_like(kl), kl)
