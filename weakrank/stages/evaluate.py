"""The evaluate stage: the trained ranker's run side by side with what a user already has (each LF, the fusions,
the labels), against the qrels (``runs/evaluation.{csv,md,png}``; a judged rerun keeps the earlier evaluation as
``runs/evaluation-before.*``) or, without qrels, estimated from a judged sample of the evaluated split
(``runs/evaluation-sample.{csv,md}``; :mod:`weakrank.judged.evaluation`)."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from weakrank.baselines import bm25_negatives
from weakrank.config import PipelineConfig
from weakrank.errors import ConfigError
from weakrank.evaluation.summary import BM25_ROW, closing_line, rows_legend
from weakrank.evaluation.tables import format_table, queries_note, runs_table, significance_legend, table_legend
from weakrank.io import read_parquet, read_run_file, write_run, write_text
from weakrank.judged.judging_file import EVALUATION_JUDGING, JUDGING, judged, judging_path, read_judging_file
from weakrank.judged.report import judge_advice, judge_commands, measure_commands
from weakrank.label_models.labels_file import read_labels_info
from weakrank.loaders import first_stage
from weakrank.paths import RunPaths, program, shell_path
from weakrank.run_models import check_model_apart, model_dir
from weakrank.stages.stage import stage
from weakrank.stages.systems import evaluated_systems
from weakrank.validation import check_scored, qrels_splits

if TYPE_CHECKING:
    from weakrank.training.config import TrainConfig

BEFORE = "evaluation-before"  # runs/<BEFORE>.{csv,md,png}: the evaluation of the run before the judgments


FILES = {BM25_ROW: "bm25"}  # a row's run file under runs/ where its name is no file name


def run_file(name: str) -> str:
    """The stem of row ``name``'s run file under ``runs/`` (``first-stage.trec``, ``bm25.trec``, ``tfidf.trec``)."""
    return "first-stage" if name.startswith("first stage") else FILES.get(name, name)


def judged_run(paths: RunPaths) -> bool:
    """Whether the labels of this run came from judged queries (``--judgments``, ``[aggregate] judgments``)."""
    return paths.labels.exists() and bool(read_labels_info(paths.labels).judgments)


def keep_before(paths: RunPaths) -> dict[str, float]:
    """Before a judged run's evaluation is written: the earlier one (``runs/evaluation.*``) kept as
    ``runs/evaluation-before.*`` unless one is kept already (the first run before any judgment stays); returns its
    MAP by row (empty when there is none)."""
    runs = paths.runs
    if not (runs / f"{BEFORE}.csv").exists() and (runs / "evaluation.csv").exists():
        for suffix in (".csv", ".png"):
            if (runs / f"evaluation{suffix}").exists():
                os.replace(runs / f"evaluation{suffix}", runs / f"{BEFORE}{suffix}")
        if (runs / "evaluation.md").exists():
            text = (runs / "evaluation.md").read_text(encoding="utf-8")
            write_text(text.replace("(evaluation.png)", f"({BEFORE}.png)"), runs / f"{BEFORE}.md")
    if not (runs / f"{BEFORE}.csv").exists():
        return {}
    return pd.read_csv(runs / f"{BEFORE}.csv", index_col=0)["MAP"].to_dict()


def evaluation_figure(table: pd.DataFrame, path: Path, title: str) -> Path:
    """``runs/evaluation.png``: one panel of MAP, the trained ranker, the baseline and the best other LF where the
    table's roles say which they are (else every row), each marked † / ‡ where significantly better / worse."""
    from weakrank.plots import marked_bars  # matplotlib: imported when it draws

    roles, baseline = table.attrs.get("roles", {}), table.attrs["baseline"]
    rows = list(table.index)
    if roles:
        lfs = [row for row, role in roles.items() if role == "lf" and row != baseline]
        trained = [row for row, role in roles.items() if role == "trained"]
        rows = [*trained, baseline, *([max(lfs, key=lambda row: table.loc[row, "MAP"])] if lfs else [])]
    marks = {row: {"+": "†", "−": "‡"}.get(table.loc[row, "MAP sig"], "") for row in rows}
    note = significance_legend(baseline, table.attrs.get("alpha", 0.05))
    return marked_bars(table.loc[rows, "MAP"], marks, path, title, "MAP", note)


def has_judgments(path: Path, rows: pd.DataFrame | None = None) -> bool:
    """Whether judging file ``path`` exists and holds a judged row (``rows``: its rows, where it was read already:
    :func:`check_evaluate`'s)."""
    if rows is None:
        if not path.exists():
            return False
        rows = read_judging_file(path)
    return bool(judged(rows).any())


def evaluable(cfg: PipelineConfig, split: str, ingested: bool = True, sample: pd.DataFrame | None = None) -> bool:
    """Whether ``evaluate`` can measure the systems on ``split``: it has qrels (:func:`qrels_splits`), or the run
    directory's evaluation sample (``select --evaluation``; ``sample``: its rows where they were read already)
    holds judgments."""
    return split in qrels_splits(cfg, ingested) or has_judgments(evaluation_sample(cfg), sample)


def evaluation_sample(cfg: PipelineConfig) -> Path:
    """The evaluation sample's judging file (``select --evaluation``'s), beside the config."""
    return judging_path(cfg.source, cfg.run_dir, EVALUATION_JUDGING)


def check_evaluate(cfg: PipelineConfig, plan: Collection[str], eval_split: str | None = None,
                   judgments: str | Path | None = None) -> pd.DataFrame | None:
    """``evaluate``'s check (:func:`check_scored`), and the rows of the evaluation sample it measures with where no
    ``judgments`` are given and the split has no qrels (as far as known before ``plan`` runs): read once here
    (:func:`~weakrank.judged.judgments.read_judged_file`) and returned, for ``evaluate`` and
    :func:`weakrank.pipeline.run` to read no more; None where it reads none."""
    check_scored(cfg, plan, eval_split)
    sample = evaluation_sample(cfg)
    if judgments is not None or not sample.exists() or \
            (eval_split or cfg.evaluate.split) in qrels_splits(cfg, ingested="ingest" not in plan):
        return None
    from weakrank.judged.judgments import read_judged_file

    return read_judged_file(sample)


@stage("evaluate")
def evaluate_runs(cfg: PipelineConfig, runs: Sequence[str | Path], require: str | None = None,
                  advice: str | None = None, names: Sequence[str] | None = None, **attrs: Any) -> pd.DataFrame:
    """Metrics of TREC run files against the run directory's qrels (t-tests against the first; R_n@k with its
    BM25 scores), written to ``runs/evaluation.csv``, with ``evaluation.md`` (the table and its legend) and
    ``evaluation.png`` (one panel of MAP: the trained ranker, the baseline and the best other LF, with their
    significance marks) beside it; ``require`` (default ``[evaluate] require``) says which queries count; ``names``
    name the rows (default: the files' stems).
    ``attrs`` (the ``roles`` of the rows and what the trained one is: see :mod:`weakrank.evaluation.summary`; with
    ``judged``, a run whose labels came from judgments: the evaluation before them is kept,
    :func:`~weakrank.stages.evaluate.keep_before`, and its MAP becomes ``attrs["before"]``) go into the table's
    ``attrs``, its legend and its closing line, which ends with ``advice`` where an LF is ahead (judging a few
    queries, and the commands: ``attrs["advice"]``)."""
    paths = RunPaths(cfg.run_dir)
    require = require or cfg.evaluate.require
    for run in runs:
        check_run_apart(paths, run)
    negatives = bm25_negatives(read_parquet(paths.votes)) if paths.votes.exists() else None
    table = runs_table(list(runs), read_parquet(paths.qrels), require, negatives, names)
    before = keep_before(paths) if attrs.get("judged") else {}
    table.attrs.update(attrs, before={row: value for row, value in before.items() if row in table.index},
                       changed="the judgments", advice=advice)
    write_text(table.to_csv(), paths.runs / "evaluation.csv")
    note = queries_note(table, require)
    figure = evaluation_figure(table, paths.runs / "evaluation.png", f"{cfg.name}: MAP\n{note}")
    text = [f"# Evaluation — {cfg.name}", "", f"{note}.", "", format_table(table, p_for="MAP").to_markdown(disable_numparse=True), "",
            f"{table_legend(table, p_for='MAP')}.", ""]
    if table.attrs.get("roles"):
        text += [f"- {line}" for line in rows_legend(table).splitlines()]
        text += ["", closing_line(table, advice=advice or ""), ""]
    if table.attrs["before"]:
        text += [f"Before the judgments: [{BEFORE}.md]({BEFORE}.md).", ""]
    write_text("\n".join([*text, f"![the runs side by side]({figure.name})", ""]), paths.runs / "evaluation.md")
    return table


@stage("evaluate", check_evaluate, reads_train=True, eval_split="split", judgments="judgments")
def evaluate(cfg: PipelineConfig, tc: TrainConfig, split: str | None = None, require: str | None = None,
             judgments: str | Path | None = None, flags: str | None = None, train_flags: str = "",
             runs: Sequence[str | Path] = (), parsed: pd.DataFrame | None = None) -> pd.DataFrame:
    """The trained ranker's run (``rerank``'s) side by side with what a user already has: the first stage (the
    candidates' own order, the baseline of the t-tests and of every difference, where a run file or BM25 ranked
    them; else weakrank's BM25), weakrank's BM25, every other LF, the RRF and CombSUM fusions of the LFs, the labels
    it learned from and the user's other TREC ``runs``, on ``split`` (default ``[evaluate] split``); their runs are
    written beside it (see :func:`evaluate_runs`; the table's ``attrs`` say what each row is). The closing line's
    commands repeat this run with ``flags`` (default ``--run-dir``) and, for ``run``, ``train_flags``.

    Without qrels of ``split``, or with ``judgments`` (a judged sample of ``split``, default
    ``<config stem>.judgments/evaluation-judging.tsv`` where it holds judgments:
    :func:`~weakrank.stages.select.select_evaluation`), each system's MAP is estimated from the sample, with intervals
    (:func:`~weakrank.judged.evaluation.sample_evaluation`; the sample read once, by the stage's check, and checked
    before any run is written: :func:`~weakrank.judged.evaluation.read_sample`); without either it is a
    :class:`ConfigError` that says how to measure. (Long: the two ways of measuring share the systems, the checks made
    before anything is written and the runs written, in that order.)"""
    from weakrank.judged.evaluation import check_pooled, read_sample, sample_evaluation  # scipy: when it runs

    paths = RunPaths(cfg.run_dir)
    split = split or cfg.evaluate.split
    trained = Path(tc.output).name
    first = first_stage(cfg.dataset.loader, cfg.dataset.path, split, **cfg.dataset.options)
    if (paths.runs / f"{trained}.trec").exists() and any((paths.models(tc.output) / kept).is_dir()
                                                         for kept in ("best", "final")):
        check_model_apart(model_dir(cfg, tc.output), split)  # the model its trained run came from
    systems, roles = evaluated_systems(paths, split, trained, first)
    if judgments is None and split not in qrels_splits(cfg):
        sample = evaluation_sample(cfg)
        if not has_judgments(sample, parsed):
            raise ConfigError(f"{unmeasured(cfg, split)}; to measure it: "
                              f"{measure_commands(shell_path(cfg.source or 'CONFIG'), shell_path(sample), flags or '')}")
        judgments = sample  # its rows: the check's (parsed)
    queries = set(next(iter(systems.values()))["query_id"])
    found = None if judgments is None else read_sample(Path(judgments), paths.dataset, queries, split, parsed)
    given = {Path(run).stem: Path(run) for run in runs}
    if found is not None:  # the sample and the user's runs checked before anything is written
        sources = {name: paths.runs / f"{trained}.trec" if role == "trained" else paths.labels if role == "labels"
                   else paths.candidates if role == "first stage" else paths.votes for name, role in roles.items()}
        config, run_dir = shell_path(cfg.source or "CONFIG"), shell_path(cfg.run_dir)
        check_pooled(found, systems, sources, f"{program()} select {config} --run-dir {run_dir} --evaluation --seed N "
                                              f"--output NEW.tsv (a seed of your choice), then {program()} judge NEW.tsv")
        known = read_parquet(paths.dataset / "queries.parquet", columns=["query_id"])["query_id"]
        theirs = {name: read_run_file(path, queries, split, set(known)) for name, path in given.items()}
    for name, run in systems.items():
        if roles[name] != "trained":
            write_run(run, paths.runs / f"{run_file(name)}.trec", run_file(name))
    if found is not None:
        mine = {name: run for name, run in systems.items() if roles[name] != "trained"}
        last = {name: run for name, run in systems.items() if roles[name] == "trained"}
        systems = {**mine, **theirs, **last}  # the trained one last
        return sample_evaluation(cfg.name, paths.runs, systems, {**roles, **dict.fromkeys(given, "run")}, found, split)
    flags = f"--run-dir {shell_path(cfg.run_dir)}" if flags is None else flags
    rerun = judged_run(paths)  # with judgments read: the commands judge more
    judging = shell_path(judging_path(cfg.source, cfg.run_dir, JUDGING))
    commands = judge_commands(shell_path(cfg.source or "CONFIG"), judging, flags, train_flags, rerun)
    advice = judge_advice(commands, rerun)
    names = [name for name in systems if roles[name] != "trained"]
    files = [paths.runs / f"{run_file(name)}.trec" for name in names]
    return evaluate_runs(cfg, [*files, *given.values(), paths.runs / f"{trained}.trec"], require, advice=advice,
                         names=[*names, *given, trained], roles={**roles, **dict.fromkeys(given, "run"), trained: "trained"},
                         architecture=tc.architecture, shipped=tc.fuse_lfs and not tc.supervised, judged=rerun)


def check_run_apart(paths: RunPaths, run: str | Path) -> None:
    """TREC run file ``run`` ranks no query of a split whose judgments made the run directory's labels
    (:func:`~weakrank.apart.check_apart`): scored, they would measure what they chose."""
    from weakrank.apart import check_apart
    from weakrank.label_models.labels_file import TAUGHT_KEY, labels_taught_splits

    taught = labels_taught_splits(paths.labels) if paths.labels.exists() else set()
    if taught:
        queries = read_parquet(paths.dataset / "queries.parquet", columns=["query_id", "split"])
        ranked = set(read_run_file(run)["query_id"])
        scored = sorted(set(queries.loc[queries["query_id"].isin(ranked), "split"].astype(str)) & taught)
        if scored:
            check_apart(scored[0], taught, file=paths.labels, field=TAUGHT_KEY,
                        what=f"{run} ranks queries that it would score, but these labels were made from judgments of")


def unmeasured(cfg: PipelineConfig, split: str) -> str:
    """Why nothing measures the systems on ``split``: it has no qrels and no judged evaluation sample."""
    return (f"split {split!r} has no qrels and {EVALUATION_JUDGING} holds no judgments: nothing measures the "
            "ranker on it")
