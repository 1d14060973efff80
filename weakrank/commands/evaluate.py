"""``weakrank evaluate`` (metrics of run files) and ``weakrank experiment`` (the grid and its report)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING

from weakrank.commands import AddCommand, pipeline_config
from weakrank.errors import ConfigError, did_you_mean
from weakrank.sections import REQUIRE

if TYPE_CHECKING:
    import pandas as pd

    from weakrank.paths import RunPaths


def print_table(table: pd.DataFrame, require: str) -> None:
    """An evaluation table as the terminal shows it, with MAP's p-values, the queries it counts and its legend
    (what each row is, where the table's ``attrs`` say)."""
    from weakrank.evaluation.summary import rows_legend
    from weakrank.evaluation.tables import format_table, queries_note, table_legend

    print(format_table(table, p_for="MAP").to_string())
    print(queries_note(table, require))
    print(table_legend(table, p_for="MAP"))
    if table.attrs.get("roles"):
        print(rows_legend(table))


def print_sample(table: pd.DataFrame, paths: RunPaths) -> None:
    """An evaluation by sample as the terminal shows it: each system's estimated MAP and its difference from
    the baseline (the first stage), with intervals, its legend, the trained ranker's line and where it went; of a
    pooled sample, its exact top-k lines (no MAP) and its closing line."""
    from weakrank.judged.report import format_sample_table, sample_legend, sample_line

    if "topk" in table.attrs:
        print("\n".join([*table.attrs["topk"], sample_line(table)]))
        print(f"→ {paths.runs}: evaluation-topk.csv, evaluation-sample.md")
        return
    print(format_sample_table(table).to_string())
    print(sample_legend(table))
    print(sample_line(table))
    print(f"→ {paths.runs}: evaluation-sample.csv, evaluation-sample.md")


def cmd_evaluate(args: argparse.Namespace) -> None:
    """Against ``--qrels`` every positional is a run file; with ``--judgments`` (a judged sample of the evaluated
    split) the run directory's systems are measured on it; else the runs against the run directory's qrels, and
    R_n@k with its BM25 scores (``evaluation.csv`` is written beside the runs)."""
    if args.judgments:
        from weakrank import pipeline
        from weakrank.paths import RunPaths

        if args.qrels:
            raise ConfigError("--judgments measures the run directory's systems (and the run files given): "
                              "give no --qrels")
        cfg = pipeline_config(args)
        print_sample(pipeline.evaluate(cfg, judgments=args.judgments, runs=args.run), RunPaths(cfg.run_dir))
        return
    if args.qrels:
        from weakrank.evaluation.tables import runs_table
        from weakrank.io import read_qrels

        require = args.require or "both"
        table = runs_table([args.config, *args.run], read_qrels(args.qrels), require)
    else:
        from weakrank import pipeline

        if not args.run:
            raise ConfigError("no run file given (or, without a config, pass --qrels FILE)")
        cfg = pipeline_config(args)
        require = args.require or cfg.evaluate.require
        table = pipeline.evaluate_runs(cfg, args.run, require)
    print_table(table, require)


def add_require_flag(p: argparse.ArgumentParser) -> None:
    """``--require``: which queries are scored (overrides ``[evaluate] require``)."""
    p.add_argument("--require", choices=REQUIRE, help="score the queries with a relevant and a non-relevant judgement "
                   "(both), a relevant one (relevant: qrels that list relevant passages only, as BEIR's) or any (all); "
                   "default: [evaluate] require, else both")


def cmd_experiment(args: argparse.Namespace) -> None:
    from weakrank.evaluation.tables import format_table, queries_note, results_table, table_legend
    from weakrank.reproduction.grid import plan_experiment, run_experiment
    from weakrank.reproduction.report import build_report

    cfg = pipeline_config(args)
    if args.grid:
        if args.grid not in cfg.grids:
            raise ConfigError(f"{args.config} has no [experiment_{args.grid}] section{did_you_mean(args.grid, cfg.grids)}")
        cfg = replace(cfg, name=f"{cfg.name}_{args.grid}", experiment=cfg.grids[args.grid])
    if args.dry_run:
        print_plan(plan_experiment(cfg, args.pairs_per_second))
        return
    results = run_experiment(cfg, progress=not args.quiet)
    table = results_table(results)
    print(format_table(table).to_string())
    print(f"{queries_note(table, cfg.experiment.require)}, {cfg.experiment.split} split")
    print(table_legend(table))
    print(f"\nreport: {build_report(cfg, results)}")


def print_plan(plan: pd.DataFrame) -> None:
    """The trained cells of a grid, cached or not, with their minutes, and what is left to run."""
    shown = plan.assign(minutes=["?" if m != m else f"{m:.1f}" + ("" if measured else " (est.)")
                                 for m, measured in zip(plan["minutes"], plan["measured"])],
                        cached=plan["cached"].map({True: "yes", False: ""}))
    print(shown[["row", "seed", "cached", "minutes", "key"]].to_string(index=False))
    left = plan[~plan["cached"]]
    rate, cells = plan.attrs.get("pairs_per_second"), plan.attrs.get("rate_cells", 0)
    if not len(left) or rate:
        where = f"measured on {cells} cell{'s' * (cells != 1)} trained here" if cells else "--pairs-per-second"
        cost = f", about {left['minutes'].sum():.0f} minutes at {rate:.1f} pairs/s ({where})" if len(left) else ""
    else:
        cost = ("; their minutes are unknown until a cell of this run directory is trained (or say how fast the "
                "trainer is here with --pairs-per-second)")
    print(f"\n{len(plan)} trained cells, {plan['cached'].sum()} cached; left: {len(left)} cells{cost}")


def register(add: AddCommand) -> None:
    """Add the evaluation sub-commands."""
    p = add("evaluate", cmd_evaluate, "metrics of TREC runs against the dataset's qrels (or a TREC qrels file: "
            "weakrank evaluate --qrels QRELS RUN...), with t-tests vs the first")
    p.add_argument("run", nargs="*", help="TREC run files; the first is the baseline (with --judgments: runs "
                   "measured beside the run directory's systems, against its first stage)")
    p.set_defaults(more_positionals="run")  # `evaluate CONFIG --judgments FILE RUN...`: runs after the flags too
    p.add_argument("--qrels", metavar="FILE", help="TREC qrels file to score against; then no config is read and "
                   "every positional argument is a run file")
    p.add_argument("--judgments", metavar="FILE", help="a judged sample of the evaluated split to measure with, "
                   "never to train on (weakrank select CONFIG --evaluation, then weakrank judge): each system's difference "
                   "from the first stage, with intervals, exact at the top (RR@k, P@k, nDCG@k) of a pooled sample, "
                   "MAP estimated from a --design today one (no qrels needed)")
    add_require_flag(p)
    p = add("experiment", cmd_experiment, "run the [experiment] grid (cached per cell) and write the report")
    p.add_argument("--grid", help="run the [experiment_<GRID>] section instead (report under report/<name>_<GRID>)")
    p.add_argument("--dry-run", action="store_true", help="print the trained cells, which are cached and their "
                   "(estimated) minutes; run nothing")
    p.add_argument("--pairs-per-second", type=float, default=None, metavar="N", help="how fast the trainer is on "
                   "this machine (pairs of 64 tokens a second) for the --dry-run estimates (default: measured on "
                   "the cells of this run directory already trained)")
