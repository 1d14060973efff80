"""weakrank.pyterrier: a saved ranker as a PyTerrier reranker (``first_stage >> reranker(path)``), no Java."""

import sys

import numpy as np
import pandas as pd
import pytest

import weakrank.pyterrier as wpt
from weakrank.ranker import load_ranker
from weakrank.training import CrossEncoderRanker


def first_stage_results(tiny) -> pd.DataFrame:
    """The tiny dataset's candidates as a PyTerrier result frame (a stand-in for BM25's)."""
    c = tiny.candidates.merge(tiny.queries[["query_id", "text"]], on="query_id")
    c = c.merge(tiny.passages.rename(columns={"text": "passage"}), on="passage_id")
    return pd.DataFrame({"qid": c["query_id"], "query": c["text"], "docno": c["passage_id"], "text": c["passage"],
                         "score": -c["rank"].astype(float), "rank": c["rank"].astype(int)})


def test_a_saved_ranker_reranks_a_first_stage_in_a_pipeline(tiny, tmp_path):
    pt = pytest.importorskip("pyterrier")
    path = CrossEncoderRanker.from_encoder("minilm", max_length=32).save(tmp_path / "m")
    results = first_stage_results(tiny)
    pipeline = pt.Transformer.from_df(results) >> wpt.reranker(path)
    assert isinstance(pipeline[1], wpt.WeakrankReranker) and isinstance(pipeline[1], pt.Transformer)

    out = pipeline(tiny.queries.rename(columns={"query_id": "qid", "text": "query"})[["qid", "query"]])
    assert len(out) == len(results) and set(zip(out["qid"], out["docno"])) == set(zip(results["qid"], results["docno"]))
    expected = load_ranker(path).predict(list(zip(out["query"], out["text"])))
    assert np.allclose(out["score"], expected, atol=1e-5)  # the ranker's scores replace the first stage's
    for _, ranked in out.groupby("qid"):  # PyTerrier's ranks: 0 for each query's best score
        assert ranked.sort_values("rank")["score"].is_monotonic_decreasing
        assert sorted(ranked["rank"]) == list(range(len(ranked)))
    assert not pt.java.started()  # the pure-Python part only


def test_the_reranker_checks_its_columns_and_takes_a_loaded_ranker(tiny):
    pt = pytest.importorskip("pyterrier")

    class Length:  # longest passage first
        def predict(self, pairs, batch_size=64):
            return np.array([float(len(passage)) for _, passage in pairs])

    results = first_stage_results(tiny).rename(columns={"text": "body"})
    out = wpt.reranker(Length(), text_field="body")(results)
    assert out.loc[out["rank"] == 0].set_index("qid")["docno"].to_dict() == {"q1": "p3", "q2": "p4"}
    assert list(wpt.reranker(Length(), text_field="body")(results.iloc[:0]).columns)[-2:] == ["score", "rank"]
    with pytest.raises(pt.validate.InputValidationError, match="text"):
        wpt.reranker(Length())(results)  # no text column: say so, before scoring anything


def test_without_pyterrier_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyterrier", None)  # as if not installed
    wpt._reranker_class.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"weakrank\[pyterrier\]"):
            wpt.reranker("model")
        with pytest.raises(ImportError, match="python-terrier"):
            wpt.WeakrankReranker
    finally:
        wpt._reranker_class.cache_clear()
