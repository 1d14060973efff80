import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from labeling_functions import bm25, tfidf, word_overlap
from weakrank.analysis import lf_summary, quality_table, query_quality
from weakrank.labeling import apply_lfs


def test_quality_table_by_hand():
    pairs = pd.DataFrame(
        {
            "query_id": ["a"] * 4 + ["b"] * 3 + ["c"] * 2,
            "gold": [1, 0, 0, 1, 0, 1, 0, 0, 0],  # query c has no relevant pair: skipped
            "s": [0.9, 0.9, 0.1, 0.2, 0.5, 0.4, 0.1, 1.0, 0.0],
        }
    )
    per_query = query_quality(pairs.assign(t=-pairs["s"]), {"s": "s", "flipped": "t"})
    table = quality_table(per_query)
    # a: top tie {0.9 rel, 0.9 not} → P@1 = 0.5, R@1 = 0.5/2; b: top is not relevant → 0
    assert table.loc["s", "P@1"] == pytest.approx((0.5 + 0.0) / 2)
    assert table.loc["s", "R@1"] == pytest.approx((0.25 + 0.0) / 2)
    auc_a = roc_auc_score([1, 0, 0, 1], [0.9, 0.9, 0.1, 0.2])
    auc_b = roc_auc_score([0, 1, 0], [0.5, 0.4, 0.1])
    assert table.loc["s", "AUC"] == pytest.approx((auc_a + auc_b) / 2)
    assert table.attrs["queries"] == 2
    assert table["queries"].tolist() == [2, 2]  # the table states how many queries it averages over
    # per query, in the same queries for every scorer (flipped: each query's top is now a non-relevant pair)
    flipped = per_query[per_query["scorer"] == "flipped"].set_index("query_id")
    assert per_query[per_query["scorer"] == "s"]["query_id"].tolist() == ["a", "b"]
    assert flipped.loc["a", "P@1"] == 0.0 and flipped.loc["b", "P@1"] == 0.0
    assert flipped.loc["a", "AUC"] == pytest.approx(1 - auc_a)


def test_query_quality_is_scikit_learn_s_auc_and_the_top_s_share_per_query():
    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 15, size=60)
    pairs = pd.DataFrame({"query_id": np.repeat([f"q{i}" for i in range(60)], sizes),
                          "gold": rng.integers(0, 2, size=sizes.sum()),
                          "s": rng.integers(0, 4, size=sizes.sum()).astype(float)})  # many ties
    per_query = query_quality(pairs, {"s": "s"}).set_index("query_id")
    for qid, rows in pairs.groupby("query_id"):
        if 0 < rows["gold"].sum() < len(rows):
            top = rows["s"] == rows["s"].max()
            assert per_query.loc[qid, "AUC"] == pytest.approx(roc_auc_score(rows["gold"], rows["s"]))
            assert per_query.loc[qid, "P@1"] == pytest.approx(rows.loc[top, "gold"].mean())
        else:
            assert qid not in per_query.index


def test_quality_figure_labels_bars_and_draws_the_auc_chance_line():
    from weakrank.plots import quality_figure

    table = pd.DataFrame({"P@1": [0.5, 0.75], "R@1": [0.25, 0.5], "AUC": [0.625, 0.875], "queries": [12, 12]},
                         index=["bm25", "majority"])
    fig = quality_figure(table, "LF quality")
    assert [ax.get_ylabel() for ax in fig.axes] == ["P@1", "R@1", "AUC"]  # the queries column is not drawn
    assert [t.get_text() for t in fig.axes[2].texts if t.get_text() in ("0.62", "0.88")] == ["0.62", "0.88"]
    assert all(len(ax.containers) == 1 and len(ax.texts) >= 2 for ax in fig.axes)  # every bar labelled
    chance = [line for line in fig.axes[2].get_lines() if line.get_label() == "chance"]
    assert len(chance) == 1 and chance[0].get_ydata()[0] == 0.5 and chance[0].get_linestyle() == "--"
    assert not any(line.get_label() == "chance" for line in fig.axes[0].get_lines())
    assert "12 queries" in fig.get_suptitle()


def test_lf_summary_uses_snorkel_analysis(tiny):
    votes = apply_lfs(tiny, [bm25, tfidf, word_overlap], progress=False)
    summary = lf_summary(votes)
    assert list(summary.index) == ["bm25", "tfidf", "word_overlap"]
    # Snorkel reads our abstain (0) as its abstain (−1): coverage is the share of non-zero votes
    expected = [(votes[f"vote_{n}"] != 0).mean() for n in summary.index]
    assert np.allclose(summary["Coverage"], expected)
    assert (summary["Coverage"] >= 1 / 3).all()  # at least the top-1 vote of each 3-candidate list
    assert (summary["Emp. Acc."] == 1.0).all()  # on this easy data every vote is right
    assert all(type(v) is int for p in summary["Polarity"] for v in p)  # plain in a CSV: "[-1, 1]"
    # in the votes' values (+1 / −1), not Snorkel's 0/1 labels
    assert "np.int64" not in summary.to_csv() and '"[-1, 1]"' in summary.to_csv()
    assert all(sorted(p) == sorted(set(votes[f"vote_{n}"]) - {0}) for n, p in summary["Polarity"].items())


def test_first_agreement_by_hand():
    from weakrank.analysis import first_agreement

    groups = np.array(["a", "a", "a", "b", "b", "c", "c"])
    scores = np.array([[3, 1], [1, 2], [0, 0], [5, 5], [4, 5], [1, 0], [1, 1]], dtype=float)
    ranks = np.ones_like(scores, dtype=bool)
    ranks[5:, 1] = False  # column 1 does not rank list c (it is left out of that list's agreement)
    agreement = first_agreement(scores, ranks, groups)
    # a: firsts differ; b: column 1 ties its first two, one of them column 0's first → the same; c: not shared
    assert agreement[0, 1] == agreement[1, 0] == 0.5
    assert agreement[0, 0] == agreement[1, 1] == 1.0


def score_votes(relevance: float, n_queries: int = 300, size: int = 8, seed: int = 0) -> pd.DataFrame:
    """A votes table of lists with one relevant candidate: a weak lexical LF and two semantic LFs that share a
    topic signal (so the fusion model loads both high and alike) and ``relevance`` · relevant."""
    rng = np.random.default_rng(seed)
    y = np.zeros(n_queries * size)
    y[np.arange(n_queries) * size + rng.integers(size, size=n_queries)] = 1
    topic = rng.normal(size=len(y))
    lfs = {"bm25": 0.5 * (relevance * y + topic) + rng.normal(size=len(y)),
           "embedding_cosine": relevance * y + topic + 0.6 * rng.normal(size=len(y)),
           "bert_cosine": relevance * y + topic + 0.6 * rng.normal(size=len(y))}
    return votes_table(lfs, n_queries, size)


def votes_table(lfs: dict[str, np.ndarray], n_queries: int, size: int) -> pd.DataFrame:
    """A votes table of ``n_queries`` lists of ``size`` candidates with each LF's scores of ``lfs`` and its votes
    (its top fifth +1, the rest −1)."""
    votes = pd.DataFrame({"query_id": np.repeat(np.arange(n_queries), size).astype(str),
                          "passage_id": np.arange(n_queries * size).astype(str)})
    for name, score in lfs.items():
        votes[f"score_{name}"] = score
        votes[f"vote_{name}"] = np.where(score > np.quantile(score, 0.8), 1, -1).astype(np.int8)
    return votes


def test_views_that_agree_need_no_judging_and_views_alike_that_disagree_do():
    """Issue 44: without gold, analyze reports the fusion model's views (loadings, weights, top-1 agreement) and
    says when it cannot tell two apart: loaded alike, yet often a different candidate first."""
    from weakrank.analysis import fusion_views
    from weakrank.fusion_checks import undecided_views
    from weakrank.label_models.fusion import ScoreFusionModel

    agree = score_votes(relevance=3.0)  # the relevant candidate stands out: the semantic views agree on it
    views = fusion_views(agree, ScoreFusionModel().fit_table(agree))
    assert list(views.index) == ["bm25", "embedding_cosine", "bert_cosine"]
    assert views["kind"].tolist() == ["lexical", "semantic", "semantic"]
    assert views["weight"].sum() == pytest.approx(1.0) and views.attrs["lists"] == 300
    assert views.loc["embedding_cosine", "bert_cosine"] > 0.75 and views.loc["bm25", "bm25"] == 1.0
    assert views.loc["bm25", "loading"] < views[["loading"]].iloc[1:].min().item() - 0.2  # bm25: not alike
    assert undecided_views(views) is None

    disagree = score_votes(relevance=0.5)  # mostly the shared topic: loaded alike, firsts often differ
    views = fusion_views(disagree, ScoreFusionModel().fit_table(disagree))
    assert views.loc["embedding_cosine", "bert_cosine"] < 0.6
    assert abs(views.loc["embedding_cosine", "loading"] - views.loc["bert_cosine", "loading"]) < 0.1
    advice = undecided_views(views)
    assert advice.startswith("the label model cannot tell embedding_cosine and bert_cosine apart")
    assert f"{1 - views.loc['embedding_cosine', 'bert_cosine']:.0%} of the lists" in advice
