"""Which queries, and which of their passages, a person should judge: those whose judgments tell apart the ways
of combining the LFs that few-shot mode chooses among (:mod:`weakrank.label_models.few_shot`). No gold is read.

Every candidate combination (the label-free weighting, CombSUM, RRF, each LF alone) ranks every query of the pool.
Where they all put the same passages on top, a judgment cannot tell them apart; where their top passages differ, it
can. So queries are taken in the order of how many distinct passages the combinations put first (then in their
top 3), skipping a query whose words nearly repeat one already taken (near-duplicates tell little more), ties
broken by a seeded shuffle. For each query only the passages that decide its AP under the combinations are asked
about: each combination's first, then each one's second, and so on, up to ``per_query`` passages.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from weakrank.label_models.few_shot import candidates, combined
from weakrank.label_models.fusion import ScoreFusionModel, standardize_within
from weakrank.labeling import informative_rows, lf_names, score_matrix

NEAR_DUPLICATE = 0.6  # word-set Jaccard of two query texts above which the second adds little


def combination_scores(votes: pd.DataFrame, options: dict | None = None) -> pd.DataFrame:
    """One column per candidate combination: each row's score under it (the fusion model fitted without gold on
    every row of ``votes``, with ``options``)."""
    scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
    model = ScoreFusionModel(**(options or {})).fit(scores, groups)
    z, informative = standardize_within(scores, groups), informative_rows(scores, groups)
    found = candidates(model.lf_weights(scores.shape[1]), informative.any(axis=0), lf_names(votes))
    return pd.DataFrame({name: combined(z, groups, informative, c) for name, c in found.items()}, index=votes.index)


def rankings(votes: pd.DataFrame, options: dict | None = None) -> dict[str, list[list[str]]]:
    """Per query of ``votes`` with two candidates or more, its passage ids as each combination ranks them."""
    scored = pd.concat([votes[["query_id", "passage_id"]], combination_scores(votes, options)], axis=1)
    names = list(scored.columns[2:])
    return {qid: [rows.sort_values(name, ascending=False, kind="stable")["passage_id"].tolist() for name in names]
            for qid, rows in scored.groupby("query_id", sort=False) if len(rows) > 1}


def informative_order(ranked: dict[str, list[list[str]]], texts: dict[str, str], seed: int = 0) -> list[str]:
    """The queries of ``ranked`` from the most to the least informative to judge (module doc), near-duplicates of
    an earlier query left out."""
    strength = {qid: (len({r[0] for r in lists}), len({p for r in lists for p in r[:3]})) for qid, lists in ranked.items()}
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
                 seed: int = 0, options: dict | None = None) -> pd.DataFrame:
    """The ``queries`` queries of ``split`` (``texts``: query id → text) and up to ``per_query`` candidates each
    that a person should judge (module doc): ``query_id, passage_id, disagreement`` in judging order."""
    ranked = rankings(votes[votes["split"] == split], options)
    rows = [{"query_id": qid, "passage_id": pid, "disagreement": len({r[0] for r in ranked[qid]})}
            for qid in informative_order(ranked, texts, seed)[:queries] for pid in asked(ranked[qid], per_query)]
    return pd.DataFrame(rows, columns=["query_id", "passage_id", "disagreement"])
