"""Label models: aggregate LF outputs into P(relevant) per pair.

Vote models take the n × m vote matrix (+1/−1/0) in the scikit-learn shape: ``fit(V) -> self``,
``predict_proba(V) -> (n,)``. The score model (``fusion``) takes the LFs' raw scores and each pair's
query: ``fit(S, groups)``, ``predict_proba(S, groups)``. :func:`fit_predict` runs either on a votes table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from weakrank.errors import ConfigError
from weakrank.label_models.base import LabelModelBase, check_votes, labels_from_proba, with_labels
from weakrank.label_models.dawid_skene import DawidSkeneModel
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.label_models.generative import GenerativeModel
from weakrank.label_models.majority import MajorityVote
from weakrank.label_models.snorkel import SnorkelLabelModel
from weakrank.labeling import score_matrix, vote_matrix

LabelModel = LabelModelBase | ScoreFusionModel

MODELS: dict[str, type[LabelModel]] = {
    "majority": MajorityVote,
    "snorkel": SnorkelLabelModel,
    "generative": GenerativeModel,
    "dawid_skene": DawidSkeneModel,
    "fusion": ScoreFusionModel,
}


def make_label_model(name: str, **options: Any) -> LabelModel:
    """The label model called ``name`` (majority, snorkel, generative, dawid_skene, fusion) with ``options``."""
    if name not in MODELS:
        raise ConfigError(f"unknown label model {name!r}; choose one of {sorted(MODELS)}")
    try:
        return MODELS[name](**options)
    except TypeError as err:
        raise ConfigError(f"[aggregate] options of label model {name!r}: {err}") from None


def usable(name: str, n_lfs: int) -> bool:
    """Whether label model ``name`` can run on ``n_lfs`` LFs."""
    return n_lfs >= getattr(MODELS[name], "min_lfs", 1)


def judged_queries(votes: pd.DataFrame, split: str, n: int) -> list[str]:
    """The first ``n`` queries of ``split`` (in table order) whose candidates are judged, with a relevant one and
    a non-relevant one: the few a user judged for few-shot mode."""
    rows = votes[(votes["split"] == split) & votes["gold"].notna()]
    both = rows.groupby("query_id", sort=False)["gold"].agg(lambda g: 0 < g.astype(float).mean() < 1)
    return both.index[both.to_numpy(dtype=bool)][:n].tolist()


def gold_of(votes: pd.DataFrame, query_ids: Sequence[str]) -> np.ndarray:
    """Gold (1/0) of the rows of ``query_ids``, NaN elsewhere: the only gold a few-shot label model reads."""
    gold = pd.to_numeric(votes["gold"], errors="coerce").astype(float).to_numpy()
    return np.where(votes["query_id"].isin(set(query_ids)).to_numpy(), gold, np.nan)


def fit_predict(votes: pd.DataFrame, model: LabelModel, gold_queries: Sequence[str] = ()) -> np.ndarray:
    """Fit ``model`` on a votes table and return P(relevant) of every row; no gold is read but that of
    ``gold_queries`` (few-shot mode, the score model only)."""
    if isinstance(model, ScoreFusionModel):
        scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
        gold = gold_of(votes, gold_queries) if len(gold_queries) else None
        return model.fit(scores, groups, gold).predict_proba(scores, groups)
    if len(gold_queries):
        raise ConfigError("few-shot mode (gold queries) needs the fusion label model")
    matrix = vote_matrix(votes)
    return model.fit(matrix).predict_proba(matrix)


def fit_labels(votes: pd.DataFrame, model: LabelModel, gold_queries: Sequence[str] = ()) -> pd.DataFrame:
    """The labels table (votes + p_relevant, label, confidence, score) of ``model`` fitted on ``votes``
    without gold (but that of ``gold_queries``, few-shot mode). ``score``, what a ranker distils, is the fused
    score of the score model and the log-odds of P(relevant) for vote models."""
    p_relevant = fit_predict(votes, model, gold_queries)
    fused = None
    if isinstance(model, ScoreFusionModel):
        fused = model.fused(score_matrix(votes), votes["query_id"].to_numpy())
    return with_labels(votes, p_relevant, fused)


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
    "gold_of",
    "judged_queries",
    "usable",
    "check_votes",
    "labels_from_proba",
    "with_labels",
    "make_label_model",
]
