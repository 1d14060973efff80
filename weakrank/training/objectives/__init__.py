"""Training objectives, one small module per loss (as sentence-transformers' ``losses/``), each declaring its
``[train]`` options and their rules beside the loss; :func:`objective_from_config` maps ``[train]`` (mode, loss,
target, …) to one.

========================  =====================================================================
:class:`Hinge`            pairwise hinge (``loss = "hinge"``)
:class:`SoftCrossEntropy` pairwise or pointwise cross-entropy, plain / LS / T-LS / WSLS / T-WSLS targets
:class:`LabelRelaxation`  pairwise or pointwise label relaxation (``target = "relax"``)
:class:`InBatch`          the bi-encoder's in-batch PR / LS / T-LS / relaxation (``mode = "in_batch"``)
:class:`ListwiseKL`       listwise distillation of the label model's scores (``mode = "listwise"``)
========================  =====================================================================

A new objective is one module here: a subclass of :class:`Objective` (a frozen dataclass with
``__call__(model, batch, step, total)``) that names its ``loss``, its ``options`` (a dataclass whose fields,
with their ``metadata``, become ``[train]`` keys, ``weakrank train`` flags and rows of the guide's table),
``selects``/``from_config`` (which ``[train]`` settings build it, and how) and ``check_config`` (its rules);
plus its line in :data:`OBJECTIVES`. It can also be passed to :class:`~weakrank.training.trainer.Trainer`
directly. These modules load without torch: the ``[train]`` options (:mod:`weakrank.training.config`) are built
from them.
"""

from __future__ import annotations

from weakrank.training.objectives.base import Objective, SmoothedObjective, TargetOptions, TrainSettings
from weakrank.training.objectives.hinge import Hinge
from weakrank.training.objectives.in_batch import InBatch
from weakrank.training.objectives.listwise import ListwiseKL
from weakrank.training.objectives.relaxation import LabelRelaxation
from weakrank.training.objectives.soft_cross_entropy import SoftCrossEntropy

__all__ = [
    "OBJECTIVES", "Hinge", "InBatch", "LabelRelaxation", "ListwiseKL", "Objective", "SmoothedObjective",
    "SoftCrossEntropy", "TargetOptions", "objective_from_config",
]

# the registry: the objectives [train] can describe, in the order of their losses and options in the CLI (their
# losses are weakrank.names.LOSSES, in that order)
OBJECTIVES: list[type[Objective]] = [Hinge, SoftCrossEntropy, LabelRelaxation, InBatch, ListwiseKL]


def losses() -> tuple[str, ...]:
    """The ``[train] loss`` names, in the registry's order."""
    return tuple(dict.fromkeys(objective.loss for objective in OBJECTIVES))


def option_classes() -> tuple[type, ...]:
    """The registered objectives' own option dataclasses, in the registry's order."""
    return tuple(dict.fromkeys(objective.options for objective in OBJECTIVES if objective.options))


def selected(cfg: TrainSettings) -> type[Objective] | None:
    """The registered objective ``[train]`` describes (the first that selects it), None if none does."""
    return next((objective for objective in OBJECTIVES if objective.selects(cfg)), None)


def objective_from_config(cfg: TrainSettings) -> Objective:
    """The objective ``[train]`` (a :class:`~weakrank.training.config.TrainConfig`) describes: ``mode`` and
    ``loss`` pick the class, ``target`` its target (``noise_aware`` is the plain target with ``noise_aware =
    true``), and its options its settings."""
    objective = selected(cfg)
    if objective is None:
        raise ValueError(f"no objective takes mode = {cfg.mode!r}, loss = {cfg.loss!r}")
    return objective.from_config(cfg)
