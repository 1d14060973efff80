"""IR metrics of a run against qrels, per query and averaged, through ir-measures.

ir-measures is the metric library (it runs trec_eval's own C code through pytrec_eval where that is
installed, and its own implementations otherwise), so figures match the ones papers report. Unlike
trec_eval, which orders tied scores by document id (an order that can correlate with relevance: in
WikiQA the first sentence of an article is relevant far more often than the others), ties are broken at
random with a seed, averaged over several draws. R_n@k (Penha & Hauff, WSLS) is not a trec_eval measure and
is computed here; its test checks it against ir-measures' Success@1.
"""

from __future__ import annotations

from collections.abc import Sequence

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import AP, RR, P, R, nDCG

from weakrank.errors import DataError

MEASURES = {"MAP": AP, "MRR": RR, "P@1": P @ 1, "P@5": P @ 5, "nDCG@10": nDCG @ 10}
RETRIEVAL_MEASURES = {"MRR@10": RR @ 10, "R@10": R @ 10, "MAP": AP, "nDCG@10": nDCG @ 10}  # of a top-k over a collection


def assessed_queries(qrels: pd.DataFrame, require: str = "both") -> set[str]:
    """Queries to evaluate: ``both`` (≥1 relevant and ≥1 non-relevant assessed), ``relevant`` (≥1), ``all``."""
    rel = qrels["relevance"] > 0
    has_rel = set(qrels.loc[rel, "query_id"])
    if require == "all":
        return set(qrels["query_id"])
    if require == "relevant":
        return has_rel
    if require == "both":
        return has_rel & set(qrels.loc[~rel, "query_id"])
    raise ValueError(f"require must be 'both', 'relevant' or 'all', got {require!r}")


def break_ties(run: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """``run`` with each query's scores replaced by distinct ones in the same order, tied scores ordered
    at random (seeded). trec_eval would order ties by document id, which can correlate with relevance."""
    key = np.random.default_rng(seed).random(len(run))
    order = np.lexsort((key, -run["score"].to_numpy(dtype=np.float64), run["query_id"].to_numpy()))
    ranked = run.iloc[order]
    position = ranked.groupby("query_id", sort=False).cumcount().to_numpy()
    return ranked.assign(score=-position.astype(np.float64)).loc[run.index]


def has_ties(run: pd.DataFrame) -> bool:
    """True when two candidates of one query share a score."""
    return bool(run.duplicated(subset=["query_id", "score"]).any())


def r_n_at_k(run: pd.DataFrame, qrels: pd.DataFrame, negatives: pd.DataFrame, n: int = 10, k: int = 1) -> pd.Series:
    """R_n@k per query (Penha & Hauff, WSLS): each relevant passage is ranked by the run among the ``n − 1``
    non-relevant candidates of its query with the highest ``negatives`` score (BM25: the hardest ones;
    all of them when fewer); 1 if it lands in the top ``k``. Averaged over the query's relevant passages.
    Ties in the run's scores count against the relevant passage (break them first: :func:`break_ties`)."""
    keys = ["query_id", "passage_id"]
    frame = run[[*keys, "score"]].merge(qrels[[*keys, "relevance"]], on=keys, how="left").merge(
        negatives[[*keys, "score"]].rename(columns={"score": "hard"}), on=keys, how="left")
    if frame["hard"].isna().any():
        missing = frame[frame["hard"].isna()].iloc[0]
        raise DataError(f"no negative-sampler score for candidate {missing['passage_id']!r} of query "
                        f"{missing['query_id']!r}", field="score")
    rel = frame["relevance"].fillna(0).to_numpy() > 0
    query = pd.factorize(frame["query_id"])[0]
    both = np.bincount(query, rel) * np.bincount(query, ~rel) > 0  # a relevant and a non-relevant candidate
    order = np.lexsort((-frame["hard"].to_numpy(dtype=np.float64), query))  # per query, hardest first (stable)
    negative = frame.iloc[order][~rel[order]]
    drawn = negative[negative.groupby("query_id", sort=False).cumcount().to_numpy() < n - 1]
    positive = frame[rel & both[query]][["query_id", "score"]].reset_index(names="row")
    pairs = positive.merge(drawn[["query_id", "score"]], on="query_id", suffixes=("", "_negative"))
    above = (pairs["score_negative"] >= pairs["score"]).groupby(pairs["row"]).sum()
    hits = positive.assign(hit=(above.reindex(positive["row"]).to_numpy() < k).astype(float))
    return hits.groupby("query_id")["hit"].mean().rename(f"R_{n}@{k}")


def _measure(run: pd.DataFrame, qrels: pd.DataFrame, measures: dict) -> pd.DataFrame:
    names = {str(m): name for name, m in measures.items()}
    rows = [
        (m.query_id, names[str(m.measure)], m.value)
        for m in ir_measures.iter_calc(
            list(measures.values()),
            qrels.rename(columns={"passage_id": "doc_id"}).astype({"relevance": int}),
            run.rename(columns={"passage_id": "doc_id"}).astype({"score": float}),
        )
    ]
    table = pd.DataFrame(rows, columns=["query_id", "measure", "value"])
    return table.pivot(index="query_id", columns="measure", values="value")[list(measures)]


def evaluate_run(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    require: str = "both",
    rn: Sequence[tuple[int, int]] = ((10, 1),),
    negatives: pd.DataFrame | None = None,
    seed: int = 0,
    tie_draws: int = 10,
    measures: dict | None = None,
) -> pd.DataFrame:
    """Per-query metrics (rows: query_id; columns: ``measures``' names, default MAP, MRR, P@1, P@5,
    nDCG@10; then R_n@k…).

    ``run``: query_id, passage_id, score. ``qrels``: query_id, passage_id, relevance. Tied scores are
    ordered at random, and a run with ties is scored as the mean over ``tie_draws`` seeded orders (an
    estimate of the expected value over ties). R_n@k needs ``negatives`` (query_id, passage_id, score:
    BM25 for Penha & Hauff's definition); without it those columns are left out.
    """
    for col in ("query_id", "passage_id", "score"):
        if col not in run.columns:
            raise DataError("run lacks a column", field=col)
    keep = assessed_queries(qrels, require) & set(run["query_id"])
    if not keep:
        raise DataError(f"no query of the run has the qrels rows require = {require!r} asks for (both: a relevant "
                        "and a non-relevant one); qrels that list relevant passages only (BEIR) need require = "
                        "'relevant' ([evaluate] require, or --require)", field="query_id")
    run = run[run["query_id"].isin(keep)]
    qrels = qrels[qrels["query_id"].isin(keep)]
    draws = [break_ties(run, seed + i) for i in range(tie_draws if has_ties(run) else 1)]
    tables = []
    for drawn in draws:
        table = _measure(drawn, qrels, measures or MEASURES)
        for n, k in rn if negatives is not None else ():
            table[f"R_{n}@{k}"] = r_n_at_k(drawn, qrels, negatives, n, k).reindex(table.index)
        tables.append(table)
    return (sum(tables) / len(tables)).sort_index()
