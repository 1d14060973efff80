"""Use ranking LFs inside Snorkel: as ``LabelingFunction`` objects over rows of ``Dataset.pairs()``.

Snorkel labels a row at a time, but a ranking vote depends on the row's whole candidate list, so each
LF scores a query's list once (on the first row of that query it sees) and answers its rows from a
cache. Votes are converted to Snorkel's convention (1/0/−1 abstain) here, once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from snorkel.labeling import LabelingFunction

from weakrank.dataset import Dataset
from weakrank.lf_scorer import PairBatch, RankingLF
from weakrank.voting import rank_votes, to_snorkel


def to_snorkel_lf(lf: RankingLF, dataset: Dataset) -> LabelingFunction:
    """A Snorkel LF voting on rows with ``query_id`` and ``passage_id`` (fits ``lf`` on ``dataset``)."""
    lf.fit(dataset)
    lists = {qid: group for qid, group in dataset.pairs().groupby("query_id", sort=False)}
    cache: dict[str, dict[str, int]] = {}

    def vote(row: Any) -> int:
        qid = row.query_id
        if qid not in cache:
            group = lists[qid]
            batch = PairBatch(
                group["query_id"].to_numpy(), group["passage_id"].to_numpy(), list(group["query"]), list(group["passage"])
            )
            votes = rank_votes(lf.score(batch), np.zeros(len(group)), lf.rule)
            cache[qid] = dict(zip(group["passage_id"], to_snorkel(votes).tolist()))
        return cache[qid][row.passage_id]

    return LabelingFunction(name=lf.name, f=vote)
