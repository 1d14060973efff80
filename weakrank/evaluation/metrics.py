"""IR metrics of a run against qrels, per query and averaged, through ir-measures.

ir-measures is the metric library (it runs trec_eval's own C code through pytrec_eval where that is
installed, and its own implementations otherwise), so figures match the ones papers report. As in
trec_eval, ties in score are broken by passage id. R_n@k (seed paper 000) is not a trec_eval measure
and is computed here; its test checks it against ir-measures' Success@1.
"""

from __future__ import annotations

from collections.abc import Sequence

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import AP, RR, P, nDCG

from weakrank.errors import DataError

MEASURES = {"MAP": AP, "MRR": RR, "P@1": P @ 1, "P@5": P @ 5, "nDCG@10": nDCG @ 10}


def judged_queries(qrels: pd.DataFrame, require: str = "both") -> set[str]:
    """Queries to evaluate: ``both`` (≥1 relevant and ≥1 non-relevant judged), ``relevant`` (≥1), ``all``."""
    rel = qrels["relevance"] > 0
    has_rel = set(qrels.loc[rel, "query_id"])
    if require == "all":
        return set(qrels["query_id"])
    if require == "relevant":
        return has_rel
    if require == "both":
        return has_rel & set(qrels.loc[~rel, "query_id"])
    raise ValueError(f"require must be 'both', 'relevant' or 'all', got {require!r}")


def r_n_at_k(run: pd.DataFrame, qrels: pd.DataFrame, n: int = 10, k: int = 1, seed: int = 0) -> pd.Series:
    """R_n@k per query: for each relevant passage, rank it among ``n − 1`` non-relevant candidates of the
    same query drawn at random (all of them when fewer); 1 if it lands in the top ``k``. Averaged over
    the query's relevant passages. Ties count against the relevant passage."""
    judged = qrels.set_index(["query_id", "passage_id"])["relevance"]
    out = {}
    rng = np.random.default_rng(seed)
    for qid, g in run.groupby("query_id", sort=True):
        rel = judged.reindex(list(zip(g["query_id"], g["passage_id"]))).fillna(0).to_numpy() > 0
        scores = g["score"].to_numpy()
        pos, neg = scores[rel], scores[~rel]
        if not len(pos) or not len(neg):
            continue
        hits = []
        for s in pos:
            drawn = neg if len(neg) <= n - 1 else rng.choice(neg, size=n - 1, replace=False)
            hits.append(float((drawn >= s).sum() < k))
        out[qid] = float(np.mean(hits))
    return pd.Series(out, name=f"R_{n}@{k}", dtype=float)


def evaluate_run(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    require: str = "both",
    rn: Sequence[tuple[int, int]] = ((10, 1),),
    seed: int = 0,
) -> pd.DataFrame:
    """Per-query metrics (rows: query_id; columns: MAP, MRR, P@1, P@5, nDCG@10, R_n@k…).

    ``run``: query_id, passage_id, score. ``qrels``: query_id, passage_id, relevance.
    """
    for col in ("query_id", "passage_id", "score"):
        if col not in run.columns:
            raise DataError("run lacks a column", field=col)
    keep = judged_queries(qrels, require) & set(run["query_id"])
    if not keep:
        raise DataError("no query of the run has judgements to evaluate against", field="query_id")
    run = run[run["query_id"].isin(keep)]
    qrels = qrels[qrels["query_id"].isin(keep)]
    measures = {str(m): name for name, m in MEASURES.items()}
    rows = [
        (m.query_id, measures[str(m.measure)], m.value)
        for m in ir_measures.iter_calc(
            list(MEASURES.values()),
            qrels.rename(columns={"passage_id": "doc_id"}).astype({"relevance": int}),
            run.rename(columns={"passage_id": "doc_id"}).astype({"score": float}),
        )
    ]
    table = pd.DataFrame(rows, columns=["query_id", "measure", "value"]).pivot(index="query_id", columns="measure", values="value")
    table = table[list(MEASURES)]
    for n, k in rn:
        table[f"R_{n}@{k}"] = r_n_at_k(run, qrels, n, k, seed).reindex(table.index)
    return table.sort_index()

