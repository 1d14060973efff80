"""``weakrank evaluate`` (metrics of run files) and ``weakrank experiment`` (the grid and its report)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from weakrank.commands import AddCommand, pipeline_config
from weakrank.datasets.trec import read_run
from weakrank.errors import ConfigError
from weakrank.evaluation.grid import bm25_negatives, run_experiment
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.report import build_report
from weakrank.evaluation.tables import format_table, results_table
from weakrank.io import read_parquet, write_text
from weakrank.pipeline import RunPaths


def cmd_evaluate(args: argparse.Namespace) -> None:
    cfg = pipeline_config(args)
    paths = RunPaths(cfg.run_dir)
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    negatives = bm25_negatives(read_parquet(paths.votes)) if paths.votes.exists() else None
    results = {Path(run).stem: [evaluate_run(read_run(Path(run)), qrels, require=args.require, negatives=negatives)]
               for run in args.run}
    table = results_table(results, baseline=Path(args.run[0]).stem)
    write_text(table.to_csv(), paths.root / "runs" / "evaluation.csv")
    print(format_table(table).to_string())


def cmd_experiment(args: argparse.Namespace) -> None:
    cfg = pipeline_config(args)
    if args.grid:
        section = f"experiment_{args.grid}"
        if section not in cfg.sections:
            raise ConfigError(f"{args.config} has no [{section}] section")
        cfg = replace(cfg, name=f"{cfg.name}_{args.grid}", sections={**cfg.sections, "experiment": cfg.sections[section]})
    results = run_experiment(cfg, progress=not args.quiet)
    print(format_table(results_table(results)).to_string())
    print(f"\nreport: {build_report(cfg, results)}")


def register(add: AddCommand) -> None:
    """Add the evaluation sub-commands."""
    p = add("evaluate", cmd_evaluate, "metrics of TREC runs against the dataset's qrels, with t-tests vs the first")
    p.add_argument("run", nargs="+", help="TREC run files; the first is the baseline")
    p.add_argument("--require", default="both", choices=["both", "relevant", "all"],
                   help="evaluate queries with a relevant and a non-relevant candidate (both), a relevant one, or all")
    p = add("experiment", cmd_experiment, "run the [experiment] grid (cached per cell) and write the report")
    p.add_argument("--grid", help="run the [experiment_<GRID>] section instead (report under report/<name>_<GRID>)")
