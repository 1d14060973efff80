"""Label models: aggregate LF outputs into P(relevant) per pair.

Every label model follows one protocol, :class:`LabelModel`, on a votes table: ``fit_table(votes, gold=None)
-> self``, ``predict_table(votes) -> (n,)``, ``labels_table(votes)`` and, out of core, ``fit_streaming(chunks)``.
Underneath, vote models take the n × m vote matrix (+1/−1/0) in the scikit-learn shape (``fit(V) -> self``,
``predict_proba(V)``); the score model (``fusion``) takes the LFs' raw scores and each pair's query
(``fit(S, groups)``, ``predict_proba(S, groups)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from weakrank.errors import ConfigError
from weakrank.label_models.base import LabelModel, LabelModelBase, check_votes, labels_from_proba, with_labels
from weakrank.label_models.dawid_skene import DawidSkeneModel
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.label_models.generative import GenerativeModel
from weakrank.label_models.majority import MajorityVote
from weakrank.label_models.snorkel import SnorkelLabelModel

# the registry: the label models of weakrank.names.LABEL_MODELS (same names, same order)
MODELS: dict[str, type[LabelModel]] = {
    "majority": MajorityVote,
    "snorkel": SnorkelLabelModel,
    "generative": GenerativeModel,
    "dawid_skene": DawidSkeneModel,
    "fusion": ScoreFusionModel,
}


def make_label_model(name: str, **options: Any) -> LabelModel:
    """The label model called ``name`` (one of :data:`MODELS`) with ``options``."""
    if name not in MODELS:
        raise ConfigError(f"unknown label model {name!r}; choose one of {sorted(MODELS)}")
    try:
        return MODELS[name](**options)
    except TypeError as err:
        raise ConfigError(f"[aggregate] options of label model {name!r}: {err}") from None


def usable(name: str, n_lfs: int) -> bool:
    """Whether label model ``name`` can run on ``n_lfs`` LFs."""
    return n_lfs >= MODELS[name].min_lfs


def fit_predict(votes: pd.DataFrame, model: LabelModel) -> np.ndarray:
    """P(relevant) of every row of ``votes`` from ``model`` fitted on it (no gold read)."""
    return model.fit_table(votes).predict_table(votes)


def fit_labels(votes: pd.DataFrame, model: LabelModel) -> pd.DataFrame:
    """The labels table (votes + p_relevant, label, confidence, score) of ``model`` fitted on ``votes`` (no gold
    read). ``score``, what a ranker distils, is the fused score of the score model and the log-odds of P(relevant)
    for vote models."""
    return model.fit_table(votes).labels_table(votes)


__all__ = [
    "MODELS",
    "LabelModel",
    "DawidSkeneModel",
    "GenerativeModel",
    "LabelModelBase",
    "MajorityVote",
    "ScoreFusionModel",
    "SnorkelLabelModel",
    "fit_labels",
    "fit_predict",
    "usable",
    "check_votes",
    "labels_from_proba",
    "with_labels",
    "make_label_model",
]
