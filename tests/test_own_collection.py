"""Issue 15: your own collection — per-split TREC files (train without qrels) and unlabelled BEIR queries."""

import json
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from weakrank.cli import main
from weakrank.commands.train import student_warning
from weakrank.config import load_config
from weakrank.io import read_qrels, read_run
from weakrank.loaders import load_dataset
from weakrank.paths import RunPaths
from weakrank.ranker import load_ranker
from weakrank.training.start_check import StartCheck

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "data" / "fixtures" / "own_collection"


@pytest.fixture
def one_torch_thread():
    """Batches of a few pairs gain nothing from more threads, and on a busy machine 2 threads are ~3× slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_own_trec_collection_runs_end_to_end_with_training(tmp_path, monkeypatch, capsys, one_torch_thread):
    """`weakrank run` on the README's own-made collection: ingest, label, aggregate, analyze, then train on the
    unjudged train split (early stopping on dev), rerank test and evaluate it against BM25."""
    monkeypatch.chdir(tmp_path)  # the config's paths are relative to its own folder: any working directory works
    cfg = load_config(OWN / "pipeline.toml")
    assert cfg.dataset.path == OWN.resolve() and cfg.run_dir == (ROOT / "data" / "own_collection").resolve()
    assert main(["run", str(OWN / "pipeline.toml"), "--run-dir", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("--- ")] == [
        f"--- {stage}" for stage in ("ingest", "label", "aggregate", "analyze", "train", "rerank", "evaluate")]
    timings = json.loads((tmp_path / "timings.json").read_text())  # where the time went, also printed
    assert list(timings) == ["ingest", "label", "aggregate", "analyze", "train", "rerank", "evaluate"]
    assert all(t["seconds"] > 0 and t["peak_rss_mib"] > 100 for t in timings.values())
    assert timings["train"]["seconds"] > timings["aggregate"]["seconds"] and "time per stage" in out
    paths = RunPaths(tmp_path)
    queries = pd.read_parquet(paths.dataset / "queries.parquet")
    assert queries.groupby("split", sort=False).size().to_dict() == {"train": 4, "dev": 2, "test": 2}
    cands = pd.read_parquet(paths.dataset / "candidates.parquet")
    assert cands.loc[cands["split"] == "train", "gold"].isna().all()  # no qrels: no gold
    assert cands.loc[cands["split"] != "train", "gold"].notna().all()
    assert set(pd.read_parquet(paths.dataset / "qrels.parquet")["query_id"]) == {"vq1", "vq2", "sq1", "sq2"}
    assert set(read_qrels(paths.dataset / "qrels.trec")["query_id"]) == {"vq1", "vq2", "sq1", "sq2"}
    labels = pd.read_parquet(paths.labels)
    assert labels.loc[labels["split"] == "train", "p_relevant"].notna().all()  # weak labels without any gold
    assert (paths.analysis / "quality.csv").exists()

    # trained on the 4 unjudged train queries, evaluated every 2 steps (early stopping kept model/best) on both
    # dev queries: agreement with the teacher on every list, MAP on the lists with a pseudo-positive
    model = paths.root / "model"
    history = pd.read_csv(model / "history.csv")
    assert history["step"].tolist() == [2, 4] and history["dev_agreement"].between(0, 1).all()
    assert (history["dev_agreement_queries"] == 2).all() and history["dev_map_queries"].between(0, 2).all()
    assert (model / "final").is_dir() and (model / "best").is_dir()
    assert "| train queries | 4 |" in (model / "best" / "README.md").read_text()  # the model card
    # the student kept is the mix of start and fine-tuned weights that agrees best with the teacher on the dev lists,
    # said at the train stage, and again last where it ended at its start or earned less than its full share
    assert (model / "start_check.json").exists()
    check = StartCheck.load(model)
    assert set(check.scores) == {0.0, 0.5, 1.0} and check.kept == max(check.scores.values())
    assert f"student: dev_agreement {check.kept:.3f} on held-out lists" in out
    warning = student_warning(model / "best")
    assert warning is None or warning in out.split("time per stage")[1]

    # every test pair scored, by the model that loads back from its folder with the same scores
    run = read_run(paths.runs / "model.trec")
    test_pairs = cands.loc[cands["split"] == "test", ["query_id", "passage_id"]]
    assert sorted(zip(run["query_id"], run["passage_id"])) == sorted(zip(test_pairs["query_id"], test_pairs["passage_id"]))
    text = dict(zip(queries["query_id"], queries["text"]))
    passages = pd.read_parquet(paths.dataset / "passages.parquet").set_index("passage_id")["text"]
    ranker = load_ranker(model / "best", device="cpu")
    scores = ranker.predict([(text[q], passages[p]) for q, p in zip(run["query_id"], run["passage_id"])])
    assert np.allclose(scores, run["score"], atol=1e-5)

    # the trained ranker side by side with BM25, the other LFs, RRF and the labels, on the 2 judged test queries
    evaluation = pd.read_csv(paths.runs / "evaluation.csv", index_col=0)
    assert list(evaluation.index) == ["first stage (your run)", "bm25 (weakrank)", "tfidf", "word_overlap", "fusion-rrf",
                                "fusion-combsum", "labels-fusion",
                                "model"]
    assert (evaluation["queries"] == 2).all() and evaluation[["MAP", "MRR", "nDCG@10"]].stack().between(0, 1).all()


def test_the_readme_shows_the_config_the_test_runs():
    """README, "Train on your own collection": its TOML block is data/fixtures/own_collection/pipeline.toml,
    abridged as it says: a bare ``[train]`` (the defaults) where the fixture sets a toy budget, and no ``[analyze]``."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Train on your own collection"):]
    block = section[section.index("```toml\n") + 8:]
    fixture = tomllib.loads((OWN / "pipeline.toml").read_text())
    assert fixture.pop("analyze") == {"splits": ["test"]} and fixture["train"]
    assert tomllib.loads(block[:block.index("```")]) == {**fixture, "train": {}}


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


def test_the_readme_python_example_runs_every_stage(tmp_path, one_torch_thread):
    """README, "From Python": every stage is a function of the config in ``weakrank.pipeline``, evaluation
    included, and each returns what it wrote."""
    from weakrank import pipeline

    cfg = load_config(OWN / "pipeline.toml", run_dir=tmp_path)
    for stage in (pipeline.ingest, pipeline.label, pipeline.aggregate, pipeline.analyze):
        stage(cfg)
    model = pipeline.train(cfg, progress=False)
    assert model == tmp_path / "model" / "best" and (model / "weakrank_fusion.json").exists()  # it carries its teacher
    assert pipeline.rerank(cfg) == tmp_path / "runs" / "model.trec"
    table = pipeline.evaluate(cfg)
    assert list(table.index) == ["first stage (your run)", "bm25 (weakrank)", "tfidf", "word_overlap", "fusion-rrf",
                                "fusion-combsum", "labels-fusion",
                                "model"]
    assert pd.read_csv(tmp_path / "runs" / "evaluation.csv", index_col=0).index.equals(table.index)
    # the first stage's row is the user's own run file, as `weakrank evaluate CONFIG test.run` measures it
    first = table.loc["first stage (your run)"]
    mine = pipeline.evaluate_runs(cfg, [OWN / "test.run"]).loc["test"]
    metrics = ["MAP", "MRR", "P@1", "P@5", "nDCG@10", "R_10@1", "queries"]
    assert first[metrics].tolist() == pytest.approx(mine[metrics].tolist())
    assert table.attrs["baseline"] == "first stage (your run)" and np.isnan(first["MAP p"])
