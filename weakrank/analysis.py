"""LF analysis: Snorkel's summary (polarity, coverage, overlaps, conflicts) and the quality table of
Xu et al.'s (BERT-PR) Table 2 — P@1, R@1 and AUC of each LF and of each aggregate against gold
labels.

Quality is measured per query on queries with at least one relevant and one non-relevant candidate,
then averaged. Ties are broken at random *in expectation*: when k pairs share the top score, P@1 is the
share of relevant pairs among them, so an LF or label model gains nothing from tied scores.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from weakrank.fusion_state import FusionState
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import SCORE, lf_names, score_matrix, vote_matrix
from weakrank.lists import informative_rows
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


def query_quality(pairs: pd.DataFrame, scorers: Mapping[str, str]) -> pd.DataFrame:
    """P@1, R@1 and AUC of each ``name → score column`` of ``pairs`` against ``gold``, per query (a row per
    scorer and query with a relevant and a non-relevant candidate): what paired tests between scorers need. AUC is
    the Mann–Whitney statistic over the query's list, tied scores sharing their mean rank (scikit-learn's
    ``roc_auc_score`` per query is the reference, in a test), computed for all queries at once."""
    assessed = pairs.dropna(subset=["gold"])
    assessed = assessed.assign(gold=assessed["gold"].astype(int))
    stats = assessed.groupby("query_id")["gold"].agg(["sum", "size"])
    usable = stats.index[(stats["sum"] > 0) & (stats["sum"] < stats["size"])]
    assessed = assessed[assessed["query_id"].isin(usable)]
    key = assessed["query_id"].to_numpy()

    def summed(values: np.ndarray) -> pd.Series:  # per query, in the order the queries come
        return pd.Series(values).groupby(key, sort=False).sum()

    gold = assessed["gold"].to_numpy(float)
    relevant = summed(gold)
    pairs_ranked = relevant * (summed(np.ones(len(gold))) - relevant)
    frames = []
    for name, column in scorers.items():
        values = assessed[column].astype(float)
        scores = values.groupby(key, sort=False)
        top = (values == scores.transform("max")).to_numpy(float)
        p_at_1 = summed(gold * top) / summed(top)
        auc = (summed(scores.rank(method="average").to_numpy() * gold) - relevant * (relevant + 1) / 2) / pairs_ranked
        frames.append(pd.DataFrame({"scorer": name, "query_id": relevant.index, "P@1": p_at_1.to_numpy(),
                                    "R@1": (p_at_1 / relevant).to_numpy(), "AUC": auc.to_numpy()}))
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


QUALITY_LEGEND = (
    "P@1, R@1: precision and recall of a scorer's first candidate (tied firsts share it), AUC: of its whole "
    "ranking, per query, averaged. Rows: each LF; each label model fitted on all the votes without gold; "
    "fusion:rrf and fusion:combsum, the LFs' rankings fused without labels; labels.parquet, what aggregate wrote")


def lf_scorers(votes: pd.DataFrame) -> dict[str, str]:
    """``name → raw score column`` of every LF of a votes table."""
    return {name: SCORE + name for name in lf_names(votes)}



LEXICAL = ("bm25", "tfidf", "word_overlap")  # LFs of shared words
SEMANTIC = ("embedding_cosine", "bert_cosine")  # LFs of sentence vectors
FUSED = "fused"  # the column of the fused score's agreement in :func:`fusion_views`


def view_kind(lfs: Sequence[str]) -> str:
    """``lexical`` or ``semantic`` where every LF of a view is (:data:`LEXICAL`, :data:`SEMANTIC`), else ``other``."""
    return next((kind for kind, names in (("lexical", LEXICAL), ("semantic", SEMANTIC)) if set(lfs) <= set(names)),
                "other")


def first_agreement(scores: np.ndarray, ranks: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """k × k: for each pair of columns of ``scores``, the share of the groups (queries) both rank (``ranks``: n × k,
    whether a column ranks the row's group) on which they put the same row first (tied firsts count as the same);
    NaN where they rank no group together."""
    frame = pd.DataFrame(scores)
    first = (scores >= frame.groupby(groups, sort=False).transform("max").to_numpy() - 1e-12).astype(np.int8)
    lists = pd.DataFrame(ranks).groupby(groups, sort=False).any().to_numpy()
    k = scores.shape[1]
    agreement = np.full((k, k), np.nan)
    for a in range(k):
        for b in range(a, k):
            both = lists[:, a] & lists[:, b]
            same = pd.Series(first[:, a] & first[:, b]).groupby(groups, sort=False).any().to_numpy()
            agreement[a, b] = agreement[b, a] = same[both].mean() if both.any() else np.nan
    return agreement


def fusion_views(votes: pd.DataFrame, model: ScoreFusionModel) -> pd.DataFrame:
    """The views of ``model`` (a fusion label model fitted on ``votes``' LFs), a row each named by its LFs joined by
    ``+``: ``kind`` (:func:`view_kind`), ``loading`` on the latent relevance factor, the loading ``agreement`` alone
    gives it (the same where no LF declared a prior), share of the fused score's ``weight``, then the top-1 agreement (:func:`first_agreement`) of the view with each view and with the fused
    score (column :data:`FUSED`) over ``votes``' lists; ``attrs["lists"]``: how many lists."""
    names, groups = lf_names(votes), votes["query_id"].to_numpy()
    scores = score_matrix(votes)
    views, state = model.scaled_views(scores, groups), model.fitted()
    weights = np.asarray(state.weights)
    ranks = np.column_stack([informative_rows(scores, groups)[:, list(c)].any(axis=1) for c in state.clusters])
    agreement = first_agreement(np.column_stack([views, views @ weights]),
                                np.column_stack([ranks, ranks.any(axis=1)]), groups)
    labels = ["+".join(names[i] for i in cluster) for cluster in state.clusters]
    alone = {w.lf: w.agreement for w in state.lfs}  # what agreement alone gave, where priors were declared
    table = pd.DataFrame({"kind": [view_kind(label.split("+")) for label in labels], "loading": state.loadings,
                          "agreement": [alone.get(names[c[0]], loading) for c, loading in zip(state.clusters,
                                                                                             state.loadings)],
                          "weight": weights / weights.sum()}, index=pd.Index(labels, name="view"))
    table[[*labels, FUSED]] = agreement[: len(labels)]
    table.attrs["lists"] = len(set(groups))
    return table


def lf_weights(state: FusionState, lfs: Sequence[str] = ()) -> pd.DataFrame:
    """What the fusion fit made of each LF (``state.lfs``), a row each: its declared ``family`` and ``prior``, the
    loading ``agreement`` alone gave it, the ``loading`` used, its share of the fused score's ``weight`` and what
    ``decided`` the loading (``prior`` or ``agreement``); each LF of ``lfs`` (the votes') that the fit left out, at
    weight 0 and why (:data:`CONSTANT`); empty where no LF declared a family or prior."""
    rows = [{"lf": w.lf, "family": w.family or "(own)", "prior": "—" if w.prior is None else f"{w.prior:.2f}",
             "agreement": w.agreement,
             "loading": w.loading, "weight": w.weight, "decided": "prior" if w.prior_decided else "agreement"}
            for w in state.lfs]
    fitted = {w.lf for w in state.lfs}
    rows += [{"lf": name, "family": "—", "prior": "—", "agreement": 0.0, "loading": 0.0, "weight": 0.0,
              "decided": CONSTANT} for name in lfs if state.lfs and name not in fitted]
    return pd.DataFrame(rows, columns=["lf", "family", "prior", "agreement", "loading", "weight", "decided"]
                        ).set_index("lf")


CONSTANT = "constant: ties within every list"  # why the fit left an LF out: it ranks no list

LF_WEIGHTS_LEGEND = (
    "Rows: the LFs. family and prior: what each declares (ranking_lf family=, prior=; a built-in's prior is measured "
    "on the train splits of seven collections); agreement: the loading on relevance the LFs' agreement alone gives; "
    "loading: the one used, agreement across families weighed against the prior; weight: share of the fused score; "
    "decided: prior where the prior moved the loading by 0.1 or more (two families that agree alike: agreement "
    f"cannot say which is right); \"{CONSTANT}\": an LF that ranks no list, left out of the fit at weight 0")


VIEWS_LEGEND = (
    "Rows: the views of the fusion label model, fitted on all the votes without gold (an LF, or LFs it merged as "
    "near copies): kind, loading on its latent relevance factor (agreement weighed against the declared priors), "
    "agreement: the loading agreement alone gives it, weight: share of the fused score. The other "
    "columns: of the lists both rank, the share on which the row and the column (a view, or the fused score) "
    "put the same candidate first")
