"""Training objectives, one small class per loss (as sentence-transformers' ``losses/``), each checking its
settings when built; :func:`objective_from_config` maps ``[train]`` (mode, loss, target, …) to one.

========================  =====================================================================
:class:`Hinge`            pairwise hinge (``loss = "hinge"``)
:class:`SoftCrossEntropy` pairwise or pointwise cross-entropy, plain / LS / T-LS / WSLS / T-WSLS targets
:class:`LabelRelaxation`  pairwise or pointwise label relaxation (``target = "relax"``)
:class:`ListwiseKL`       listwise distillation of the label model's scores (``mode = "listwise"``)
:class:`InBatch`          the bi-encoder's in-batch PR / LS / T-LS / relaxation (``mode = "in_batch"``)
========================  =====================================================================

A new objective subclasses :class:`Objective` (a frozen dataclass with ``__call__(model, batch, step, total)``)
and is passed to :class:`~weakrank.training.trainer.Trainer` directly.
"""

from __future__ import annotations

from weakrank.training.config import TrainConfig
from weakrank.training.objectives.base import Objective, SmoothedObjective
from weakrank.training.objectives.hinge import Hinge
from weakrank.training.objectives.in_batch import InBatch
from weakrank.training.objectives.listwise import ListwiseKL
from weakrank.training.objectives.relaxation import LabelRelaxation
from weakrank.training.objectives.soft_cross_entropy import SoftCrossEntropy

__all__ = [
    "Hinge", "InBatch", "LabelRelaxation", "ListwiseKL", "Objective", "SmoothedObjective", "SoftCrossEntropy",
    "objective_from_config",
]


def objective_from_config(cfg: TrainConfig) -> Objective:
    """The objective ``[train]`` describes: ``mode`` and ``loss`` pick the class, ``target`` its target
    (``noise_aware`` is the plain target with ``noise_aware = true``), and ``epsilon``, ``alpha``, ``margin``,
    ``temperature``, ``anchor``, ``two_stage_fraction`` its settings."""
    target = "plain" if cfg.target == "noise_aware" else cfg.target
    if cfg.mode == "listwise":
        return ListwiseKL(cfg.temperature, cfg.anchor)
    if cfg.mode == "in_batch":
        return InBatch(target, cfg.epsilon, cfg.alpha, cfg.two_stage_fraction, cfg.noise_aware)
    if cfg.loss == "hinge":
        return Hinge(cfg.margin, cfg.noise_aware)
    if target == "relax":
        return LabelRelaxation(cfg.mode, cfg.alpha, cfg.noise_aware)
    return SoftCrossEntropy(cfg.mode, target, cfg.epsilon, cfg.two_stage_fraction, cfg.noise_aware)
