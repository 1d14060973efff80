"""Issue 14: dense retrieval with a Faiss index, cached in the run directory, and `weakrank index`."""

from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.cli import main
from weakrank.paths import RunPaths
from weakrank.retrieval import DenseIndex, flat_index, numpy_search, passage_index

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "data" / "fixtures" / "own_collection"


class CountingEncoder:
    """Hashed bag of words, normalised; counts the texts it encodes."""

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts, batch_size=64):
        self.encoded += len(texts)
        out = np.zeros((len(texts), 32), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(map(ord, word)) % 32] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_faiss_top_k_equals_brute_force_cosine():
    rng = np.random.default_rng(0)
    raw_passages, raw_queries = rng.normal(size=(300, 16)), rng.normal(size=(25, 16))
    passages, queries = unit(raw_passages), unit(raw_queries)
    cosine = (raw_queries @ raw_passages.T) / np.outer(np.linalg.norm(raw_queries, axis=1), np.linalg.norm(raw_passages, axis=1))
    expected = np.argsort(-cosine, axis=1)[:, :10]
    ids = np.array([f"p{i}" for i in range(300)], dtype=object)
    run = DenseIndex(ids, passages, flat_index(passages)).search(queries, [f"q{i}" for i in range(25)], k=10)
    assert run.groupby("query_id", sort=False)["passage_id"].apply(list).tolist() == ids[expected].tolist()
    assert np.allclose(run["score"].to_numpy().reshape(25, 10), np.take_along_axis(cosine, expected, 1), atol=1e-5)
    scores, rows = numpy_search(passages, queries, 10)
    assert (rows == expected).all() and np.allclose(scores, np.take_along_axis(cosine, expected, 1), atol=1e-5)
    assert len(DenseIndex(ids[:5], passages[:5], flat_index(passages[:5])).search(queries[:2], ["a", "b"], k=10)) == 10


def test_index_is_reused_while_model_and_collection_are_unchanged(tiny, tmp_path):
    encoder, where = CountingEncoder(), tmp_path / "index" / "stub"
    first = passage_index(encoder, "model-a", tiny.passages, where, progress=False)
    assert encoder.encoded == 6 and np.allclose(first.embeddings, encoder.encode(tiny.passages["text"].tolist()))
    encoder.encoded = 0
    again = passage_index(encoder, "model-a", tiny.passages, where, progress=False)
    assert encoder.encoded == 0 and again.cached and not first.cached
    assert np.array_equal(again.embeddings, first.embeddings)
    query = encoder.encode(["capital of france"])
    assert again.search(query, ["q1"], k=1)["passage_id"].tolist() == ["p1"]
    encoder.encoded = 0

    changed = tiny.passages.assign(text=tiny.passages["text"].replace({"Bananas are rich in potassium.": "Bananas."}))
    passage_index(encoder, "model-a", changed, where, progress=False)
    assert encoder.encoded == 6  # the collection changed: encoded again
    passage_index(encoder, "model-b", changed, where, progress=False)
    assert encoder.encoded == 12  # the model changed: encoded again
    assert sorted(p.name for p in where.parent.iterdir()) == ["stub"]  # no temp directories left
    assert sorted(p.name for p in where.iterdir()) == ["embeddings.npy", "index.faiss", "manifest.json"]


def test_weakrank_index_retrieves_evaluates_and_writes_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # the config's paths are relative to the repository root
    config = str(OWN / "pipeline.toml")
    assert main(["ingest", config, "--run-dir", str(tmp_path)]) == 0
    assert main(["index", config, "--run-dir", str(tmp_path), "--k", "5", "--quiet"]) == 0
    paths = RunPaths(tmp_path)
    run = pd.read_csv(paths.root / "runs" / "minilm.retrieval.trec", sep=" ", header=None,
                      names=["query_id", "q0", "passage_id", "rank", "score", "tag"])
    assert run.groupby("query_id").size().to_dict() == {"sq1": 5, "sq2": 5}
    assert run[(run["query_id"] == "sq1") & (run["rank"] == 1)]["passage_id"].tolist() == ["d1"]  # Paris
    table = pd.read_csv(paths.root / "runs" / "minilm.retrieval.csv", index_col="system")
    assert {"MRR@10", "R@10", "MAP", "nDCG@10"} <= set(table.columns) and table.loc["minilm", "queries"] == 2
    assert 0 < table.loc["minilm", "MRR@10"] <= 1
    assert "MRR@10" in capsys.readouterr().out
    assert len(list((paths.index).iterdir())) == 1
    assert main(["index", config, "--run-dir", str(tmp_path), "--k", "5", "--quiet"]) == 0
    assert "cached index" in capsys.readouterr().out
