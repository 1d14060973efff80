"""Issue 15: your own collection — per-split TREC files (train without qrels) and unlabelled BEIR queries."""

from pathlib import Path

import pandas as pd

from weakrank.cli import main
from weakrank.config import load_config
from weakrank.datasets import load_dataset
from weakrank.paths import RunPaths

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "data" / "fixtures" / "own_collection"


def test_own_trec_collection_runs_through_the_label_stages(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the config's paths are relative to its own folder: any working directory works
    cfg = load_config(OWN / "pipeline.toml")
    assert cfg.dataset.path == OWN.resolve() and cfg.run_dir == (ROOT / "data" / "own_collection").resolve()
    assert main(["run", str(OWN / "pipeline.toml"), "--run-dir", str(tmp_path), "--quiet"]) == 0
    paths = RunPaths(tmp_path)
    queries = pd.read_parquet(paths.dataset / "queries.parquet")
    assert queries.groupby("split", sort=False).size().to_dict() == {"train": 4, "dev": 2, "test": 2}
    cands = pd.read_parquet(paths.dataset / "candidates.parquet")
    assert cands.loc[cands["split"] == "train", "gold"].isna().all()  # no qrels: no gold
    assert cands.loc[cands["split"] != "train", "gold"].notna().all()
    assert set(pd.read_parquet(paths.dataset / "qrels.parquet")["query_id"]) == {"vq1", "vq2", "sq1", "sq2"}
    labels = pd.read_parquet(paths.labels)
    assert labels.loc[labels["split"] == "train", "p_relevant"].notna().all()  # weak labels without any gold
    assert (paths.analysis / "quality.csv").exists()


def test_beir_unlabelled_queries_form_a_split(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Apples", "text": "red apples are sweet"}\n{"_id": "d2", "text": "the sea is blue"}\n'
    )
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "sweet apples"}\n{"_id": "q2", "text": "blue sea"}\n{"_id": "q3", "text": "red sea"}\n'
    )
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    ds = load_dataset("beir", tmp_path, splits=("test",), unlabelled="train", k=2)
    assert ds.queries[["query_id", "split"]].values.tolist() == [["q1", "test"], ["q2", "train"], ["q3", "train"]]
    gold = ds.candidates.groupby("split")["gold"]
    assert gold.apply(lambda g: g.isna().all()).to_dict() == {"test": False, "train": True}
    assert load_dataset("beir", tmp_path, splits=("test",), k=2).queries["query_id"].tolist() == ["q1"]
