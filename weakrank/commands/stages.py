"""Stage commands: ``ingest``, ``label``, ``aggregate``, ``analyze`` and ``run``."""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from weakrank.commands import (
    AddCommand,
    add_engine_arguments,
    checked_config,
    engine_overrides,
    evaluate,
    pipeline_config,
)
from weakrank.commands.train import add_train_flags, rerank_stage, train_overrides, train_stage
from weakrank.config import did_you_mean
from weakrank.errors import WeakrankError
from weakrank.paths import RunPaths

if TYPE_CHECKING:
    import pandas as pd


def _print_tables(tables: dict[str, pd.DataFrame]) -> None:
    import pandas as pd

    pd.set_option("display.width", 160)
    for name, table in tables.items():
        print(f"\n== {name} ==")
        print(table.to_string(float_format=lambda v: f"{v:.3f}"))
        if table.attrs.get("legend"):
            print(table.attrs["legend"])


def cmd_ingest(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = checked_config(args, ("ingest",))
    ds = pipeline.ingest(cfg)
    print(
        f"ingested {cfg.name}: {len(ds.queries)} queries, {len(ds.passages)} passages, "
        f"{len(ds.candidates)} candidates → {RunPaths(cfg.run_dir).dataset}"
    )


def cmd_label(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = checked_config(args, ("label",))
    votes = pipeline.label(cfg, progress=not args.quiet, force=args.force, engine=args.engine, **engine_overrides(args))
    print(f"labeled {len(votes)} pairs with {len(cfg.label.lfs)} LFs → {RunPaths(cfg.run_dir).votes}")


def cmd_aggregate(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = checked_config(args, ("aggregate",), label_model=args.model)
    labels = pipeline.aggregate(cfg, model=args.model, judgments=getattr(args, "judgments", None))
    share = labels["label"].mean()
    path = RunPaths(cfg.run_dir).labels
    print(f"aggregated {len(labels)} pairs ({share:.1%} relevant) → {path}")
    _print_few_shot_choice(path)


def _print_few_shot_choice(labels: Path) -> None:
    """In few-shot mode, what the judged queries chose and why, with each candidate's MAP on them."""
    from weakrank.io import read_metadata

    params = read_metadata(labels).get("params") or {}
    maps = params.get("few_shot_map")
    if maps:
        print(f"few-shot: {params['few_shot_reason']}; the LFs are combined as {params['choice']!r}")
        print("  MAP on the judged queries: " + ", ".join(f"{name} {value:.3f}" for name, value in
                                                       sorted(maps.items(), key=lambda item: -item[1])))


def stage_analyze(args: argparse.Namespace) -> str | None:
    """``weakrank analyze`` less its last line: when the label model cannot tell the views apart, the line that
    says so and how to judge a few queries (``run`` prints it at its end)."""
    from weakrank import pipeline

    cfg = checked_config(args, ("analyze",), analyze_splits=args.split)
    tables = pipeline.analyze(cfg, splits=args.split)
    per_query = ("quality_per_query", "view_agreement")  # a row per query
    _print_tables({name: table for name, table in tables.items() if name not in per_query})
    print(f"\nwritten to {RunPaths(cfg.run_dir).analysis}")
    advice = tables["views"].attrs.get("advice")
    if not advice:
        return None
    from weakrank.evaluation.summary import JUDGE_QUERIES

    return f"{advice} — judge {JUDGE_QUERIES} queries: {judge_commands(args, cfg.run_dir)}"


def cmd_analyze(args: argparse.Namespace) -> None:
    advice = stage_analyze(args)
    if advice:
        print(f"\n{advice}")


def stage_train(args: argparse.Namespace) -> None:
    """``weakrank train`` with ``run``'s flags."""
    train_stage(pipeline_config(args), train_overrides(args), resume=args.resume, quiet=args.quiet)


def stage_rerank(args: argparse.Namespace) -> None:
    """``weakrank rerank`` of the model just trained, on ``--eval-split``."""
    rerank_stage(pipeline_config(args), train_overrides(args), split=args.eval_split)


def stage_evaluate(args: argparse.Namespace) -> str:
    """The trained ranker against BM25, every other LF, the RRF and CombSUM fusions and its labels; returns the
    line that says how it did (``run`` prints it at its end)."""
    from weakrank import pipeline
    from weakrank.evaluation.summary import closing_line

    cfg = pipeline_config(args)
    table = pipeline.evaluate(cfg, split=args.eval_split, require=args.require, **train_overrides(args))
    evaluate.print_table(table, args.require or cfg.evaluate.require)
    print(f"→ {RunPaths(cfg.run_dir).runs}: evaluation.csv, evaluation.md, evaluation.png")
    return closing_line(table, judge=judge_commands(args, cfg.run_dir))


def judge_commands(args: argparse.Namespace, run_dir: Path) -> str:
    """The commands that judge a few queries of this run and run it again (with its ``--run-dir`` and
    ``--max-queries``)."""
    from weakrank.evaluation.summary import judge_commands as commands

    flags = [f"--{flag.replace('_', '-')} {getattr(args, flag)}" for flag in ("run_dir", "max_queries")
             if getattr(args, flag, None)]
    return commands(args.config, str(run_dir), " ".join(flags))


STAGE_COMMANDS = {"ingest": cmd_ingest, "label": cmd_label, "aggregate": cmd_aggregate, "analyze": stage_analyze}
TRAIN_STAGES = {"train": stage_train, "rerank": stage_rerank, "evaluate": stage_evaluate}


def cmd_run(args: argparse.Namespace) -> None:
    cfg = pipeline_config(args)
    available = {**STAGE_COMMANDS, **(TRAIN_STAGES if cfg.train is not None else {})}
    stages = tuple(args.stages.split(",")) if args.stages else tuple(available)
    if cfg.train is None and set(stages) & set(TRAIN_STAGES):
        raise WeakrankError(f"{args.config} has no [train] section: stages {list(TRAIN_STAGES)} need one")
    unknown = [s for s in stages if s not in available]
    if unknown:
        raise WeakrankError(f"unknown stage(s) {unknown}{did_you_mean(unknown[0], available)}; "
                            f"stages are {list(available)}")
    train_split = None
    if set(stages) & set(TRAIN_STAGES):
        from weakrank.training.config import train_config

        train_split = train_config(cfg, **train_overrides(args)).train_split  # a bad [train] stops the run here
    checked_config(args, stages, analyze_splits=args.split, eval_split=args.eval_split, train_split=train_split,
                   label_model=args.model)
    from weakrank.io import write_text
    from weakrank.lock import run_dir_lock

    timings: dict[str, dict[str, float]] = {}
    said = []  # what analyze and evaluate say in a line: printed last
    with run_dir_lock(cfg.run_dir, "run"):  # one hold for every stage: no other writer comes in between
        for stage in stages:
            print(f"--- {stage}", flush=True)
            started = time.perf_counter()
            said.append(available[stage](args))
            timings[stage] = {"seconds": round(time.perf_counter() - started, 2), "peak_rss_mib": peak_rss_mib()}
        path = write_text(json.dumps(timings, indent=1) + "\n", RunPaths(cfg.run_dir).root / "timings.json")
    print(f"\ntime per stage (→ {path}):")
    for stage, t in timings.items():
        print(f"  {stage:<10}{t['seconds']:>9.1f} s   peak memory so far {t['peak_rss_mib']:>7.0f} MiB")
    commands, shown = judge_commands(args, cfg.run_dir) if any(said) else "", False
    for line in filter(None, said):  # the judging commands once
        print(f"\n{line.replace(commands, 'the commands above') if shown else line}")
        shown = shown or commands in line


def peak_rss_mib() -> float:
    """The process's peak resident memory so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)


def add_judgments_flag(parser: argparse.ArgumentParser) -> None:
    """``--judgments FILE`` (overrides ``[aggregate] judgments``)."""
    parser.add_argument("--judgments", metavar="FILE", help="judged queries (a judging file of `weakrank judge`, or "
                        "TREC qrels) that choose how the LFs are combined and teach the student (overrides "
                        "[aggregate] judgments)")


def register(add: AddCommand) -> None:
    """Add the stage sub-commands."""
    add("ingest", cmd_ingest, "load a dataset and write its canonical Parquet tables")
    p = add("label", cmd_label, "apply the labeling functions and write votes.parquet")
    p.add_argument("--force", action="store_true", help="recompute LF scores even when cached")
    add_engine_arguments(p)
    p = add("aggregate", cmd_aggregate, "fit the label model and write labels.parquet")
    p.add_argument("--label-model", "--model", dest="model", metavar="MODEL",
                   help="label model (overrides [aggregate] model): majority, generative, dawid_skene, snorkel, fusion")
    add_judgments_flag(p)
    p = add("analyze", cmd_analyze, "LF summary and P@1/R@1/AUC quality table against gold")
    p.add_argument("--split", action="append", help="restrict to a split (repeatable; default: [analyze] splits)")
    p = add("run", cmd_run, "run the stages in order (ingest, label, aggregate, analyze; then train, rerank, "
            "evaluate against BM25 when the config has [train]); the train flags override [train] as in `train`")
    p.add_argument("--resume", action="store_true", help="continue training from its checkpoint")
    p.add_argument("--stages", help="comma-separated subset of stages")
    p.add_argument("--force", action="store_true", help="recompute LF scores even when cached")
    p.add_argument("--label-model", "--model", dest="model", metavar="MODEL",
                   help="label model (overrides [aggregate] model): majority, generative, dawid_skene, snorkel, fusion")
    add_judgments_flag(p)
    p.add_argument("--split", action="append", help="restrict analysis to a split (repeatable)")
    p.add_argument("--eval-split", help="split that rerank scores and evaluate reports (default: [evaluate] split, "
                   "else test)")
    evaluate.add_require_flag(p)
    add_engine_arguments(p)
    add_train_flags(p)
