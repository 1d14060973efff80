"""Label models: aggregate LF outputs into P(relevant) per pair.

Every label model follows one protocol, :class:`LabelModel`, on a votes table: ``fit_table(votes, gold=None)
-> self``, ``predict_table(votes) -> (n,)``, ``labels_table(votes)`` and, out of core, ``fit_streaming(chunks)``.
Underneath, vote models take the n × m vote matrix (+1/−1/0) in the scikit-learn shape (``fit(V) -> self``,
``predict_proba(V)``); the score model (``fusion``) takes the LFs' raw scores and each pair's query
(``fit(S, groups)``, ``predict_proba(S, groups)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from weakrank.errors import ConfigError, DataError
from weakrank.label_models.base import LabelModel, LabelModelBase, check_votes, labels_from_proba, with_labels
from weakrank.label_models.dawid_skene import DawidSkeneModel
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.label_models.generative import GenerativeModel
from weakrank.label_models.majority import MajorityVote
from weakrank.label_models.snorkel import SnorkelLabelModel
from weakrank.lists import standardize_within

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
    return n_lfs >= MODELS[name].min_lfs


def few_shot_queries(votes: pd.DataFrame, split: str, n: int) -> list[str]:
    """The first ``n`` queries of ``split`` (in table order) whose candidates are judged, with a relevant one and
    a non-relevant one: the few a user judged for few-shot mode."""
    rows = votes[(votes["split"] == split) & votes["gold"].notna()]
    both = rows.groupby("query_id", sort=False)["gold"].agg(lambda g: 0 < g.astype(float).mean() < 1)
    return both.index[both.to_numpy(dtype=bool)][:n].tolist()


def gold_of(votes: pd.DataFrame, query_ids: Sequence[str]) -> np.ndarray:
    """Gold (1/0) of the rows of ``query_ids``, NaN elsewhere: the only gold a few-shot label model reads."""
    gold = pd.to_numeric(votes["gold"], errors="coerce").astype(float).to_numpy()
    return np.where(votes["query_id"].isin(set(query_ids)).to_numpy(), gold, np.nan)


def judged_gold(votes: pd.DataFrame, qrels: pd.DataFrame, source: str | Path) -> np.ndarray:
    """Relevance (1/0) of the rows of ``votes`` that ``qrels`` (query_id, passage_id, relevance) judges, NaN
    elsewhere; a judged query that is not in the votes is a :class:`DataError` naming ``source``. Judged pairs that
    are not candidates are left out (no list ranks them)."""
    unknown = sorted(set(qrels["query_id"]) - set(votes["query_id"]))
    if unknown:
        raise DataError(f"judged query {unknown[0]!r} is not in the votes ({len(unknown)} such queries): judgments "
                        "of another collection or config?", file=source, field="query_id")
    judged = qrels.assign(relevance=(qrels["relevance"].astype(int) > 0).astype(float))
    keys = votes[["query_id", "passage_id"]].merge(judged[["query_id", "passage_id", "relevance"]],
                                                   on=["query_id", "passage_id"], how="left", validate="one_to_one")
    return keys["relevance"].to_numpy(dtype=float)


JUDGED_LEAD = 3.0  # standard deviations of a list's label score that a judged pair is put above (below) the rest


def with_judgments(labels: pd.DataFrame, gold: np.ndarray) -> pd.DataFrame:
    """A labels table whose judged pairs (``gold`` 1/0, NaN unjudged) carry their judgments: ``judged`` holds them,
    their label and P(relevant) become them with confidence 1, and their ``score`` (what a student distils) puts a
    relevant pair :data:`JUDGED_LEAD` list standard deviations above the list's best pseudo-labelled score and a
    non-relevant one as far below its worst."""
    judged = np.isfinite(gold)
    z = standardize_within(labels["score"].to_numpy(float).reshape(-1, 1), labels["query_id"].to_numpy())[:, 0]
    by = pd.Series(z).groupby(labels["query_id"].to_numpy(), sort=False)
    top, bottom = by.transform("max").to_numpy(), by.transform("min").to_numpy()
    score = np.where(judged, np.where(gold > 0, top + JUDGED_LEAD, bottom - JUDGED_LEAD), z)
    return labels.assign(
        judged=gold, score=score,
        p_relevant=np.where(judged, gold, labels["p_relevant"]),
        label=np.where(judged, gold, labels["label"]).astype(labels["label"].dtype),
        confidence=np.where(judged, 1.0, labels["confidence"]),
    )


def _fitted(votes: pd.DataFrame, model: LabelModel, gold_queries: Sequence[str] = ()) -> LabelModel:
    """``model`` fitted on a votes table; no gold is read but that of ``gold_queries`` (few-shot mode, which
    only the score model takes)."""
    return model.fit_table(votes, gold_of(votes, gold_queries) if len(gold_queries) else None)


def fit_predict(votes: pd.DataFrame, model: LabelModel, gold_queries: Sequence[str] = ()) -> np.ndarray:
    """P(relevant) of every row of ``votes`` from ``model`` fitted on it (gold: see :func:`_fitted`)."""
    return _fitted(votes, model, gold_queries).predict_table(votes)


def fit_labels(votes: pd.DataFrame, model: LabelModel, gold_queries: Sequence[str] = ()) -> pd.DataFrame:
    """The labels table (votes + p_relevant, label, confidence, score) of ``model`` fitted on ``votes`` (gold: see
    :func:`_fitted`). ``score``, what a ranker distils, is the fused score of the score model and the log-odds of
    P(relevant) for vote models."""
    return _fitted(votes, model, gold_queries).labels_table(votes)


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
    "judged_gold",
    "with_judgments",
    "few_shot_queries",
    "usable",
    "check_votes",
    "labels_from_proba",
    "with_labels",
    "make_label_model",
]
