"""Each stage is checked once, and what its check parsed is handed in: a judging file is read once per command,
``labels.parquet`` once per training."""

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

import weakrank.io
import weakrank.judged.judging_file
import weakrank.judged.judgments
from tests.conftest import OWN
from weakrank import pipeline
from weakrank.cli import main
from weakrank.config import load_config
from weakrank.judged.judging_file import write_judging_file
from weakrank.label_models.labels_file import read_labels_info
from weakrank.paths import RunPaths


def dev_judging_file(path: Path) -> Path:
    """The own collection's dev queries as a judging file, judged from its dev qrels."""
    texts = lambda name: dict(line.rstrip("\n").split("\t", 1) for line in (OWN / name).read_text().splitlines())
    queries, passages = texts("dev-queries.tsv"), texts("collection.tsv")
    qrels = pd.read_csv(OWN / "dev.qrels", sep=" ", names=["query_id", "zero", "passage_id", "relevance"], dtype=str)
    rows = qrels.assign(query=qrels["query_id"].map(queries), passage=qrels["passage_id"].map(passages))
    return write_judging_file(rows[["query_id", "passage_id", "query", "passage", "relevance"]], path)


def counted(monkeypatch, module, name: str, path: Path) -> list:
    """Replace ``module.name`` with a spy that notes each call whose first argument is ``path``."""
    calls, real = [], getattr(module, name)

    def spy(target, *args, **kwargs):
        if Path(target).resolve() == path.resolve():
            calls.append(name)
        return real(target, *args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_run_checks_each_stage_once_and_reads_the_judging_file_once(tmp_path, monkeypatch):
    judging = dev_judging_file(tmp_path / "judging.tsv")
    reads = []
    for module in (weakrank.judged.judgments, weakrank.judged.judging_file, weakrank.io):
        reads += [counted(monkeypatch, module, "read_utf8", judging)]
    run = tmp_path / "run"
    assert main(["run", str(OWN / "pipeline.toml"), "--run-dir", str(run), "--stages", "ingest,label,aggregate",
                 "--judgments", str(judging), "--quiet"]) == 0
    assert sum(len(r) for r in reads) == 1  # checked up front by aggregate's check, handed in: not read again
    assert read_labels_info(RunPaths(run).labels).judged_queries == ["vq1", "vq2"]  # the judgments were used


def test_aggregate_reads_back_none_of_the_labels_it_writes(tmp_path, monkeypatch):
    run = tmp_path / "run"
    judging = dev_judging_file(tmp_path / "judging.tsv")
    labels = RunPaths(run).labels
    reads = [counted(monkeypatch, pq, name, labels) for name in ("read_table", "read_schema", "ParquetFile")]
    assert main(["run", str(OWN / "pipeline.toml"), "--run-dir", str(run), "--stages", "ingest,label,aggregate",
                 "--judgments", str(judging), "--quiet"]) == 0
    assert sum(len(r) for r in reads) == 0  # what the judged sample estimated is taken from the state just fitted
    assert read_labels_info(labels).params.judged.estimates  # and there was an estimate to take


def test_training_reads_the_labels_and_the_dataset_once(tmp_path, monkeypatch):
    run = tmp_path / "run"
    judging = dev_judging_file(tmp_path / "judging.tsv")
    assert main(["run", str(OWN / "pipeline.toml"), "--run-dir", str(run), "--stages", "ingest,label,aggregate",
                 "--judgments", str(judging), "--quiet"]) == 0
    labels = RunPaths(run).labels
    reads = [counted(monkeypatch, pq, name, labels) for name in ("read_table", "read_schema", "ParquetFile")]
    passages = counted(monkeypatch, pq, "read_table", RunPaths(run).dataset / "passages.parquet")
    cfg = replace(load_config(OWN / "pipeline.toml"), run_dir=run)
    model = pipeline.train(cfg, progress=False)
    assert sum(len(r) for r in reads) == 1  # the trainer, the judged evaluator, the teacher, the student's weight
    assert len(passages) == 1  # the trainer, the teacher's BM25 and TF-IDF, the judged lists the weight is graded on
    assert (model / "weakrank_fusion.json").exists()  # a teacher and a weight were made
    assert (model.parent / "history.csv").read_text().startswith("step,dev_judged_map,dev_judged_queries\n")
