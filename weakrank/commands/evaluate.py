"""``weakrank evaluate`` (metrics of run files) and ``weakrank experiment`` (the grid and its report)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from weakrank.commands import AddCommand, pipeline_config
from weakrank.config import REQUIRE, did_you_mean
from weakrank.errors import ConfigError
from weakrank.paths import RunPaths

if TYPE_CHECKING:
    import pandas as pd


def runs_table(runs: Sequence[str | Path], qrels: pd.DataFrame, require: str = "both",
               negatives: pd.DataFrame | None = None) -> pd.DataFrame:
    """Metrics of TREC run files (rows named by file stem), t-tests against the first."""
    from weakrank.evaluation.metrics import evaluate_run
    from weakrank.evaluation.run_checks import checked_run
    from weakrank.evaluation.tables import results_table

    results = {Path(run).stem: [evaluate_run(checked_run(run, qrels), qrels, require=require, negatives=negatives)]
               for run in runs}
    return results_table(results, baseline=Path(runs[0]).stem)


def cmd_evaluate(args: argparse.Namespace) -> None:
    """Against ``--qrels`` every positional is a run file; else against the run directory's qrels, and
    R_n@k with its BM25 scores (``evaluation.csv`` is written beside the runs)."""
    from weakrank.evaluation.tables import format_table, queries_note
    from weakrank.experiment.grid import bm25_negatives
    from weakrank.io import read_parquet, read_qrels, write_text

    if args.qrels:
        runs, qrels, negatives, out = [args.config, *args.run], read_qrels(args.qrels), None, None
        require = args.require or "both"
    else:
        if not args.run:
            raise ConfigError("no run file given (or, without a config, pass --qrels FILE)")
        cfg = pipeline_config(args)
        paths = RunPaths(cfg.run_dir)
        runs, qrels, require = args.run, read_parquet(paths.qrels), args.require or cfg.evaluate.require
        negatives = bm25_negatives(read_parquet(paths.votes)) if paths.votes.exists() else None
        out = paths.runs / "evaluation.csv"
    table = runs_table(runs, qrels, require, negatives)
    if out:
        write_text(table.to_csv(), out)
    print(format_table(table).to_string())
    print(queries_note(table, require))


def add_require_flag(p: argparse.ArgumentParser) -> None:
    """``--require``: which queries are scored (overrides ``[evaluate] require``)."""
    p.add_argument("--require", choices=REQUIRE, help="score the queries with a relevant and a non-relevant judgement "
                   "(both), a relevant one (relevant: qrels that list relevant passages only, as BEIR's) or any (all); "
                   "default: [evaluate] require, else both")


def cmd_experiment(args: argparse.Namespace) -> None:
    from weakrank.evaluation.tables import format_table, queries_note, results_table
    from weakrank.experiment.grid import run_experiment
    from weakrank.experiment.report import build_report

    cfg = pipeline_config(args)
    if args.grid:
        if args.grid not in cfg.grids:
            raise ConfigError(f"{args.config} has no [experiment_{args.grid}] section{did_you_mean(args.grid, cfg.grids)}")
        cfg = replace(cfg, name=f"{cfg.name}_{args.grid}", experiment=cfg.grids[args.grid])
    results = run_experiment(cfg, progress=not args.quiet)
    table = results_table(results)
    print(format_table(table).to_string())
    print(f"{queries_note(table, cfg.experiment.require)}, {cfg.experiment.split} split")
    print(f"\nreport: {build_report(cfg, results)}")


def register(add: AddCommand) -> None:
    """Add the evaluation sub-commands."""
    p = add("evaluate", cmd_evaluate, "metrics of TREC runs against the dataset's qrels (or a TREC qrels file: "
            "weakrank evaluate --qrels QRELS RUN...), with t-tests vs the first")
    p.add_argument("run", nargs="*", help="TREC run files; the first is the baseline")
    p.add_argument("--qrels", metavar="FILE", help="TREC qrels file to score against; then no config is read and "
                   "every positional argument is a run file")
    add_require_flag(p)
    p = add("experiment", cmd_experiment, "run the [experiment] grid (cached per cell) and write the report")
    p.add_argument("--grid", help="run the [experiment_<GRID>] section instead (report under report/<name>_<GRID>)")
