"""LF analysis: Snorkel's summary (polarity, coverage, overlaps, conflicts) and the quality table of
the BERT-PR paper's (seed 002) Table 2 — P@1, R@1 and AUC of each LF and of each aggregate against gold
labels.

Quality is measured per query on queries with at least one relevant and one non-relevant candidate,
then averaged. Ties are broken at random *in expectation*: when k pairs share the top score, P@1 is the
share of relevant pairs among them, so an LF or label model gains nothing from tied scores.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from weakrank.labeling import SCORE, lf_names, vote_matrix
from weakrank.voting import from_snorkel, to_snorkel


def lf_summary(votes: pd.DataFrame) -> pd.DataFrame:
    """Snorkel's ``LFAnalysis.lf_summary`` of the votes table (with empirical accuracy where gold exists).

    Polarity is given in the votes' own values (+1 relevant, −1 not relevant), as a list of plain integers
    (``[-1, 1]`` in a CSV, not numpy's reprs nor Snorkel's 0/1 labels).
    """
    from snorkel.labeling import LFAnalysis

    names = lf_names(votes)
    L = to_snorkel(vote_matrix(votes, names))
    gold = votes["gold"]
    y = gold.to_numpy(dtype=np.int64) if gold.notna().all() and len(gold) else None
    with warnings.catch_warnings():  # scipy's dtype FutureWarning raised inside Snorkel
        warnings.simplefilter("ignore", FutureWarning)
        summary = LFAnalysis(L).lf_summary(Y=y)
    summary.index = names
    summary["Polarity"] = summary["Polarity"].map(lambda values: sorted(int(v) for v in from_snorkel(np.asarray(values))))
    return summary


def _query_quality(scores: np.ndarray, gold: np.ndarray) -> tuple[float, float, float]:
    top = scores == scores.max()
    p_at_1 = gold[top].mean()
    return p_at_1, p_at_1 / gold.sum(), roc_auc_score(gold, scores)


def query_quality(pairs: pd.DataFrame, scorers: Mapping[str, str]) -> pd.DataFrame:
    """P@1, R@1 and AUC of each ``name → score column`` of ``pairs`` against ``gold``, per query (a row per
    scorer and query with a relevant and a non-relevant candidate): what paired tests between scorers need."""
    judged = pairs.dropna(subset=["gold"])
    judged = judged.assign(gold=judged["gold"].astype(int))
    stats = judged.groupby("query_id")["gold"].agg(["sum", "size"])
    usable = stats.index[(stats["sum"] > 0) & (stats["sum"] < stats["size"])]
    judged = judged[judged["query_id"].isin(usable)]
    groups = list(judged.groupby("query_id", sort=False))
    frames = [pd.DataFrame([_query_quality(g[column].to_numpy(), g["gold"].to_numpy()) for _, g in groups],
                           columns=["P@1", "R@1", "AUC"]).assign(scorer=name, query_id=[q for q, _ in groups])
              for name, column in scorers.items()]
    columns = ["scorer", "query_id", "P@1", "R@1", "AUC"]
    table = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    return table.assign(scorer=pd.Categorical(table["scorer"], categories=list(scorers)))  # a scorer without rows too


def quality_table(per_query: pd.DataFrame) -> pd.DataFrame:
    """P@1, R@1, AUC of each scorer: the means over queries of :func:`query_quality`'s table, and ``queries``:
    how many queries (with a relevant and a non-relevant candidate) they are averaged over (also
    ``attrs["queries"]``)."""
    table = per_query.groupby("scorer", observed=False)[["P@1", "R@1", "AUC"]].mean().astype(float)
    table.index = table.index.astype(str)
    queries = per_query["query_id"].nunique()
    table["queries"] = queries
    table.index.name = "scorer"
    table.attrs["queries"] = queries
    return table


def lf_scorers(votes: pd.DataFrame) -> dict[str, str]:
    """``name → raw score column`` of every LF of a votes table."""
    return {name: SCORE + name for name in lf_names(votes)}
