"""What the trainer measures at each evaluation, as objects handed to it (sentence-transformers' ``evaluator=``):
each one is called with the model as it stands and returns its metrics (named ``dev_...``), one of which,
``primary_metric``, chooses the checkpoint; ``describe`` says what the model card shows of them and against what.

- :class:`GoldMapEvaluator`: MAP against the gold labels of the dev lists (supervised);
- :class:`AgreementEvaluator`: agreement of the model's order with its teacher's on the dev lists (weak labels).

A new evaluator is a class with ``primary_metric``, ``__call__`` and ``describe``, handed to the trainer."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from weakrank.training.config import TrainConfig
from weakrank.training.data import TrainingData
from weakrank.training.measures import agreements, list_measures, ranking_metrics
from weakrank.training.rankers import Ranker

GOLD_NOTE = "Measured against the gold labels of the dev queries."
AGREEMENT_NOTE = ("Measured against the pseudo-labels (no gold was read): agreement is the nDCG of the model's order "
                  "of each dev list against its teacher's, the label model (1: the same order). It says how well the "
                  "student learned its labels, not how relevant its ranking is.")


class Evaluator(Protocol):
    """What the trainer calls at each evaluation."""

    primary_metric: str  # the metric, of those returned, that chooses the checkpoint (higher is better)

    def __call__(self, model: Ranker, temperature: float) -> dict[str, float]:
        """The metrics of ``model`` as it stands (``temperature``: the teacher's, for agreement)."""
        ...

    def describe(self, figures: dict[str, float]) -> tuple[dict[str, float], str]:
        """What the model card shows of an evaluation's ``figures`` (``train_...`` ones included), and against what
        they are measured."""
        ...


class ListEvaluator:
    """:func:`~weakrank.training.measures.ranking_metrics` of the first ``queries`` lists of ``data`` (all: None),
    each metric as ``dev_<name>``."""

    def __init__(self, data: TrainingData, queries: int | None = None) -> None:
        self.data, self.queries = data, list(data.lists)[: queries or None]

    def list_metrics(self, model: Ranker, queries: int | None = None, temperature: float = 1.0) -> dict[str, float]:
        """The metrics of the first ``queries`` of the evaluated lists (all: None), unprefixed."""
        return ranking_metrics(model, self.data, self.queries[:queries], temperature=temperature)

    def __call__(self, model: Ranker, temperature: float) -> dict[str, float]:
        """:meth:`list_metrics` of every evaluated list, as ``dev_<name>``."""
        return {f"dev_{k}": v for k, v in self.list_metrics(model, temperature=temperature).items()}


class GoldMapEvaluator(ListEvaluator):
    """Gold MAP of the dev lists (``data`` read with gold labels): the checkpoint with the best one is kept."""

    primary_metric = "dev_map"

    @staticmethod
    def describe(figures: dict[str, float]) -> tuple[dict[str, float], str]:
        """Every figure, against gold."""
        return figures, GOLD_NOTE


class AgreementEvaluator(ListEvaluator):
    """Agreement with the teacher on the dev lists (weak labels): the checkpoint that ranks them most as the label
    model does is kept; the card shows no MAP against pseudo-labels that reads as one against gold."""

    primary_metric = "dev_agreement"
    per_list_: np.ndarray | None = None  # the agreement of each list at the last call

    def __call__(self, model: Ranker, temperature: float) -> dict[str, float]:
        """Every metric of the evaluated lists as ``dev_<name>``; the agreement of each list kept as
        :attr:`per_list_`."""
        metrics, self.per_list_ = list_measures(model, self.data, self.queries, temperature=temperature)
        return {f"dev_{k}": v for k, v in metrics.items()}

    def per_list(self, model: Ranker, temperature: float) -> np.ndarray:
        """The agreement of each evaluated list that the teacher ranks (their mean is ``dev_agreement``)."""
        return agreements(model, self.data, self.queries, temperature=temperature)

    @staticmethod
    def describe(figures: dict[str, float]) -> tuple[dict[str, float], str]:
        """The agreement figures alone."""
        return {k: v for k, v in figures.items() if k.startswith(("dev_agreement", "train_agreement"))}, AGREEMENT_NOTE


def dev_evaluator(data: TrainingData, args: TrainConfig) -> ListEvaluator:
    """The evaluator of dev lists ``data`` (the first ``args.dev_queries``): gold MAP when they carry gold (or the run
    is supervised), else agreement with the teacher."""
    kind = GoldMapEvaluator if args.supervised or data.supervised else AgreementEvaluator
    return kind(data, args.dev_queries)

