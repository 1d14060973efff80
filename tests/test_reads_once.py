"""Each stage is checked once, and what its check parsed is handed in: a judging file is read once per command,
``labels.parquet`` once per training; in one run each LF is built once, the fusion label model fitted once (in
judged mode once more where the judgments move its priors) and the evaluation sample read once."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

import weakrank.io
import weakrank.judged.judging_file
import weakrank.judged.judgments
import weakrank.registry
from tests.conftest import OWN
from weakrank import pipeline
from weakrank.cli import main
from weakrank.config import load_config
from weakrank.judged.judging_file import write_judging_file
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.label_models.labels_file import read_labels_info
from weakrank.paths import RunPaths
from weakrank.votes_file import read_votes_info


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
    assert read_labels_info(labels).params.record.estimates  # and there was an estimate to take


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


def test_a_plain_run_builds_each_lf_once_and_fits_the_fusion_model_once(tmp_path, monkeypatch):
    cfg = load_config(OWN / "pipeline.toml", run_dir=tmp_path / "run")  # the config's check builds them: not counted
    stage, builds, fits = ["plan"], [], []
    real_build, real_fit = weakrank.registry._call_factory, ScoreFusionModel.fit

    def build(spec, *args):
        builds.append((stage[-1], spec))
        return real_build(spec, *args)

    def fit(model, *args, **kwargs):
        fits.append(stage[-1])
        return real_fit(model, *args, **kwargs)

    monkeypatch.setattr(weakrank.registry, "_call_factory", build)
    monkeypatch.setattr(ScoreFusionModel, "fit", fit)
    pipeline.run(cfg, progress=False, on_start=stage.append, on_plan=lambda *_: None)  # as `weakrank run` plans
    # the label stage's LFs, built once for it and the plan; aggregate, analyze and evaluate read the LFs'
    # declarations from the votes (train ships the LFs in its teacher, rerank rebuilds that teacher from the model)
    assert Counter(spec for where, spec in builds if where not in ("train", "rerank")) == dict.fromkeys(cfg.label.lfs, 1)
    assert {where for where, _ in builds} - {"train", "rerank"} == {"plan"}
    assert fits == ["aggregate"]  # its advice and analyze take the model it fitted
    declared = read_votes_info(RunPaths(cfg.run_dir).votes).declarations
    assert {name: d.priors() for name, d in declared.items()} == weakrank.registry.lf_priors(cfg.label.lfs, cfg.label.lf_options)


def test_a_judged_run_fits_the_fusion_model_before_the_judgments_once_and_again_only_if_they_move_it(tmp_path,
                                                                                                    monkeypatch):
    judging, fits, real_fit = dev_judging_file(tmp_path / "judging.tsv"), [], ScoreFusionModel.fit

    def fit(model, *args, **kwargs):
        fits.append(dict(model.priors))
        return real_fit(model, *args, **kwargs)

    monkeypatch.setattr(ScoreFusionModel, "fit", fit)
    cfg = load_config(OWN / "pipeline.toml", run_dir=tmp_path / "run")
    pipeline.run(cfg, ["ingest", "label", "aggregate", "analyze"], progress=False, judgments=judging)
    update = read_labels_info(RunPaths(cfg.run_dir).labels).params.record
    moved = len(update.estimates) == 2  # the estimate with the update is kept only where it moved the priors
    assert len(fits) == 1 + moved and fits[0] == dict(cfg.label_model("fusion", cfg.lf_priors()).priors)
    # the fit under the declared priors serves the labels' estimate, aggregate's advice and analyze: fitted once


def test_evaluate_reads_the_evaluation_sample_once(tmp_path, monkeypatch):
    from tests.test_no_qrels import judge_as_a_person, own_config

    monkeypatch.chdir(tmp_path)
    own_config(tmp_path, qrels=False)
    assert main(["run", "pipeline.toml", "--run-dir", "run", "--stages", "ingest,label,aggregate", "--quiet"]) == 0
    assert main(["select", "pipeline.toml", "--run-dir", "run", "--evaluation", "--against", "tfidf"]) == 0
    sample = tmp_path / "pipeline.judgments" / "evaluation-judging.tsv"
    judge_as_a_person(sample)
    reads = [counted(monkeypatch, module, "read_utf8", sample)
             for module in (weakrank.judged.judgments, weakrank.judged.judging_file, weakrank.io)]
    assert main(["run", "pipeline.toml", "--run-dir", "run", "--stages", "evaluate", "--quiet"]) == 0
    assert sum(len(r) for r in reads) == 1  # by evaluate's check, handed to the run's plan and to evaluate
    assert (tmp_path / "run" / "runs" / "evaluation-sample.md").exists()  # and it measured
