"""Judgments on the rows of a votes table: :func:`align` (a person's, or
``[aggregate] gold_queries``'s from :func:`gold_judgments`) gives each row its judgment and inclusion probability
and each query its weight (:class:`Judged`), as the judged decisions read them; :func:`judged_totals` what a decision
estimates from them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from weakrank.evaluation.sampled_map import Totals, query_totals
from weakrank.judged.judgments import DESIGN, KEY, Judgments


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


def judged_totals(votes: pd.DataFrame, scored: pd.DataFrame, judged: Judged) -> Totals:
    """Each candidate's estimated totals (columns of ``scored``, a score per row of ``votes``;
    :func:`~weakrank.evaluation.sampled_map.query_totals`) on each judged query."""
    rows = votes["query_id"].isin(set(judged.queries)).to_numpy()
    return query_totals(scored[rows].reset_index(drop=True), votes["query_id"].to_numpy()[rows], judged.gold[rows],
                        judged.inclusion[rows])
