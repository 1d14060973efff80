"""Judgments on the rows of a votes table, as the judged decisions read them: :func:`align` (a person's, or
``[aggregate] gold_queries``'s from :func:`gold_judgments`) gives each row its judgment and inclusion probability
and each query its weight (:class:`Judged`); :func:`with_judgments` writes them into the labels they teach."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from weakrank.judged.judgments import DESIGN, KEY, Judgments
from weakrank.lists import standardize_within


def gold_judgments(votes: pd.DataFrame, split: str, n: int) -> Judgments:
    """``[aggregate] gold_queries``: the first ``n`` queries of ``split`` (in table order) whose candidates are
    judged, with a relevant one and a non-relevant one, every candidate judged (probability 1)."""
    rows = votes[(votes["split"] == split) & votes["gold"].notna()]
    both = rows.groupby("query_id", sort=False)["gold"].agg(lambda g: 0 < g.astype(float).mean() < 1)
    chosen = set(both.index[both.to_numpy(dtype=bool)][:n])
    table = rows[rows["query_id"].isin(chosen)]
    return Judgments(pd.DataFrame({"query_id": table["query_id"], "passage_id": table["passage_id"],
                                   "relevance": table["gold"].astype(float).astype(int), "query_inclusion": 1.0,
                                   "passage_inclusion": 1.0}).reset_index(drop=True))


@dataclass(frozen=True)
class Judged:
    """Judgments aligned with a votes table: ``gold`` (1/0 on judged rows, NaN elsewhere), ``inclusion`` (each
    judged row's probability, NaN elsewhere) and ``weights`` (1 / π_q by query id)."""

    gold: np.ndarray
    inclusion: np.ndarray
    weights: pd.Series

    @property
    def queries(self) -> list[str]:
        """The judged queries (those with a judged row), by query id."""
        return list(self.weights.index)


def align(votes: pd.DataFrame, judgments: Judgments) -> Judged:
    """``judgments`` on the rows of ``votes`` (a person's, checked against them first:
    :func:`~weakrank.judged.checks.check_judgments`); judged pairs that are not candidates are left out (no list
    ranks them)."""
    table = judgments.table[[*KEY, "relevance", *DESIGN]]
    keys = votes[["query_id", "passage_id"]].merge(
        table.assign(relevance=(table["relevance"] > 0).astype(float)), on=["query_id", "passage_id"], how="left",
        validate="many_to_one")
    gold = keys["relevance"].to_numpy(dtype=float)
    found = keys[np.isfinite(gold)]
    weights = (1.0 / found.groupby("query_id", sort=False)["query_inclusion"].first()).rename("weight")
    return Judged(gold, np.where(np.isfinite(gold), keys["passage_inclusion"].to_numpy(float), np.nan), weights)


JUDGED_LEAD = 3.0  # standard deviations of a list's label score that a judged pair is put above (below) the rest


def with_judgments(labels: pd.DataFrame, judged: Judged) -> pd.DataFrame:
    """A labels table whose judged pairs carry their judgments: ``judged`` holds them (1/0, NaN unjudged; with
    ``judged_inclusion`` and ``judged_weight``, the sample's design, for grading the student on them),
    their label and P(relevant) become them with confidence 1, and their ``score`` (what a student distils) puts a
    relevant pair :data:`JUDGED_LEAD` list standard deviations above the list's best pseudo-labelled score and a
    non-relevant one as far below its worst."""
    gold = judged.gold
    judged_rows = np.isfinite(gold)
    z = standardize_within(labels["score"].to_numpy(float).reshape(-1, 1), labels["query_id"].to_numpy())[:, 0]
    by = pd.Series(z).groupby(labels["query_id"].to_numpy(), sort=False)
    top, bottom = by.transform("max").to_numpy(), by.transform("min").to_numpy()
    score = np.where(judged_rows, np.where(gold > 0, top + JUDGED_LEAD, bottom - JUDGED_LEAD), z)
    return labels.assign(
        judged=gold, judged_inclusion=judged.inclusion,
        judged_weight=labels["query_id"].map(judged.weights).where(judged_rows).to_numpy(float), score=score,
        p_relevant=np.where(judged_rows, gold, labels["p_relevant"]),
        label=np.where(judged_rows, gold, labels["label"]).astype(labels["label"].dtype),
        confidence=np.where(judged_rows, 1.0, labels["confidence"]),
    )
