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


def select_pairs(votes: pd.DataFrame, texts: dict[str, str], split: str, queries: int, per_query: int = 6,
                 seed: int = 0, options: dict | None = None) -> pd.DataFrame:
    """The ``queries`` queries of ``split`` (``texts``: query id → text) and up to ``per_query`` candidates each
    that a person should judge (module doc): ``query_id, passage_id, disagreement`` in judging order."""
    pool = votes[votes["split"] == split]
    scored = combination_scores(pool, options)
    names = list(scored.columns)
    order = pd.concat([pool[["query_id", "passage_id"]], scored], axis=1)
    rankings: dict[str, list[list[str]]] = {}
    strength: dict[str, tuple[int, int]] = {}
    for qid, rows in order.groupby("query_id", sort=False):
        if len(rows) < 2:
            continue
        ranked = [rows.sort_values(name, ascending=False, kind="stable")["passage_id"].tolist() for name in names]
        rankings[qid] = ranked
        strength[qid] = (len({r[0] for r in ranked}), len({p for r in ranked for p in r[:3]}))
    rng = np.random.default_rng(seed)
    shuffled = list(rankings)
    rng.shuffle(shuffled)
    taken: list[str] = []
    words: list[set[str]] = []
    for qid in sorted(shuffled, key=lambda q: strength[q], reverse=True):
        mine = set(texts.get(qid, "").lower().split())
        if any(len(mine & other) / max(len(mine | other), 1) > NEAR_DUPLICATE for other in words):
            continue
        taken.append(qid)
        words.append(mine)
        if len(taken) == queries:
            break
    rows = []
    for qid in taken:
        asked: list[str] = []
        for depth in range(max(len(r) for r in rankings[qid])):
            for ranking in rankings[qid]:
                if depth < len(ranking) and ranking[depth] not in asked and len(asked) < per_query:
                    asked.append(ranking[depth])
        rows += [{"query_id": qid, "passage_id": pid, "disagreement": strength[qid][0]} for pid in sorted(asked)]
    return pd.DataFrame(rows, columns=["query_id", "passage_id", "disagreement"])
