"""Which queries, and which of their passages, a person should judge: those whose judgments tell apart the ways
of combining the LFs that few-shot mode chooses among (:mod:`weakrank.label_models.few_shot`). No gold is read.

Every candidate combination (the label-free weighting, CombSUM, RRF, each LF alone) ranks every query of the pool.
Where they all put the same passage first, a judgment cannot tell them apart; where their firsts differ, it can.
But a query none of whose candidates is relevant tells nothing either, and on collections with many such queries
(WikiQA: 6 in 10) the queries whose combinations disagree most are mostly those: measured, 2 of the 10 most
disagreeing WikiQA queries had a relevant passage. So among the queries whose combinations put at least two
different passages first, those that look answerable come first: the best candidate's raw score under each LF,
as a percentile over the pool's queries, averaged with the label-free weights (no gold read; on WikiQA's train
split this separates queries with a relevant passage at AUC 0.7). A query whose words nearly repeat one already
taken is skipped (near-duplicates tell little more). For each query only the passages that decide its AP under
the combinations are asked about: each combination's first, then each one's second, and so on, up to
``per_query`` passages.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd

from weakrank.label_models.few_shot import candidates, combined
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names, score_matrix
from weakrank.lists import informative_rows, standardize_within

NEAR_DUPLICATE = 0.6  # word-set Jaccard of two query texts above which the second adds little


def rankings(votes: pd.DataFrame, options: dict | None = None) -> tuple[dict[str, list[list[str]]], pd.Series]:
    """Per query of ``votes`` with two candidates or more, its passage ids as each candidate combination ranks them
    (the fusion model fitted without gold on every row of ``votes``, with ``options``), and how answerable each
    query looks (module doc)."""
    scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
    model = ScoreFusionModel(**(options or {})).fit(scores, groups)
    z, informative = standardize_within(scores, groups), informative_rows(scores, groups)
    weights = model.lf_weights(scores.shape[1])
    found = candidates(weights, informative.any(axis=0), lf_names(votes))
    scored = pd.DataFrame({name: combined(z, groups, informative, c) for name, c in found.items()})
    scored.insert(0, "passage_id", votes["passage_id"].to_numpy())
    by = scored.groupby(groups, sort=False)
    ranked = {qid: [rows.sort_values(name, ascending=False, kind="stable")["passage_id"].tolist() for name in found]
              for qid, rows in by if len(rows) > 1}
    best = pd.DataFrame(scores).groupby(groups, sort=False).max().rank(pct=True)
    answerable = best @ (weights / weights.sum() if weights.sum() > 0 else np.full(len(weights), 1 / len(weights)))
    return ranked, answerable


def informative_order(ranked: dict[str, list[list[str]]], answerable: pd.Series, texts: dict[str, str],
                      seed: int = 0) -> list[str]:
    """The queries of ``ranked`` in the order to judge them (module doc), near-duplicates of an earlier query left
    out; ``seed`` breaks ties."""
    strength = {qid: (len({r[0] for r in lists}) > 1, answerable[qid]) for qid, lists in ranked.items()}
    shuffled = list(ranked)
    np.random.default_rng(seed).shuffle(shuffled)
    order: list[str] = []
    words: list[set[str]] = []
    for qid in sorted(shuffled, key=lambda q: strength[q], reverse=True):
        mine = set(texts.get(qid, "").lower().split())
        if not any(len(mine & other) / max(len(mine | other), 1) > NEAR_DUPLICATE for other in words):
            order.append(qid)
            words.append(mine)
    return order


def asked(lists: list[list[str]], per_query: int) -> list[str]:
    """The passages of one query to ask about: each ranking's first, then each one's second, … up to ``per_query``."""
    found: list[str] = []
    for depth in range(max(map(len, lists))):
        for ranking in lists:
            if depth < len(ranking) and ranking[depth] not in found and len(found) < per_query:
                found.append(ranking[depth])
    return sorted(found)


def select_pairs(votes: pd.DataFrame, texts: dict[str, str], split: str, queries: int, per_query: int = 6,
                 seed: int = 0, options: dict | None = None, skip: Collection[str] = ()) -> pd.DataFrame:
    """The ``queries`` queries of ``split`` (``texts``: query id → text; none of ``skip``) and up to ``per_query``
    candidates each that a person should judge (module doc): ``query_id, passage_id, disagreement`` in judging
    order."""
    ranked, answerable = rankings(votes[votes["split"] == split], options)
    skip = set(skip)
    order = [qid for qid in informative_order(ranked, answerable, texts, seed) if qid not in skip]
    rows = [{"query_id": qid, "passage_id": pid, "disagreement": len({r[0] for r in ranked[qid]})}
            for qid in order[:queries] for pid in asked(ranked[qid], per_query)]
    return pd.DataFrame(rows, columns=["query_id", "passage_id", "disagreement"])
