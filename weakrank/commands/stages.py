"""Stage commands: ``ingest``, ``label``, ``aggregate``, ``analyze`` and ``run``: each parses its flags, calls
its stage of :mod:`weakrank.pipeline` and prints what it returned."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from weakrank.commands import (
    AddCommand,
    add_engine_arguments,
    defer,
    engine_overrides,
    evaluate,
    pipeline_config,
    repeated_flags,
)
from weakrank.commands.train import add_train_flags, print_trained, student_warning, train_flags, train_overrides
from weakrank.config import PipelineConfig
from weakrank.names import LABEL_MODELS
from weakrank.pace import print_pace, print_plan
from weakrank.paths import RunPaths

if TYPE_CHECKING:
    import pandas as pd

    from weakrank.dataset import Dataset
    from weakrank.pipeline import Skipped


def _print_tables(tables: dict[str, pd.DataFrame]) -> None:
    import pandas as pd

    pd.set_option("display.width", 160)
    for name, table in tables.items():
        print(f"\n== {name} ==")
        print(table.to_string(float_format=lambda v: f"{v:.3f}"))
        if table.attrs.get("legend"):
            print(table.attrs["legend"])


def show_ingested(cfg: PipelineConfig, ds: Dataset) -> None:
    print(
        f"ingested {cfg.name}: {len(ds.queries)} queries, {len(ds.passages)} passages, "
        f"{len(ds.candidates)} candidates → {RunPaths(cfg.run_dir).dataset}"
    )


def show_labelled(cfg: PipelineConfig, votes: pd.DataFrame) -> None:
    print(f"labeled {len(votes)} pairs with {len(cfg.label.lfs)} LFs → {RunPaths(cfg.run_dir).votes}")


def overlooked_line(warning: str, cfg: PipelineConfig, args: argparse.Namespace) -> str:
    """An LF weighted near zero that disagrees with the labels (:func:`weakrank.fusion_checks.overlooked`), with the
    commands that tell who is right: judge a few queries and run again with them."""
    from weakrank.judged.report import JUDGE_QUERIES

    return f"{warning} — judge {JUDGE_QUERIES} queries: {judge_commands(args, cfg)}"


def show_aggregated(cfg: PipelineConfig, labels: pd.DataFrame, args: argparse.Namespace) -> None:
    """What the labels say, in words: the pairs labelled relevant (P(relevant) > 0.5, the hard label) and how
    many relevant candidates a list holds on average by the probabilities (a fusion's are spread thin: few pairs
    pass 0.5 while each list still sums to about one)."""
    path = RunPaths(cfg.run_dir).labels
    relevant, per_list = int(labels["label"].sum()), labels.groupby("query_id")["p_relevant"].sum().mean()
    print(f"{relevant} of {len(labels)} pairs labelled relevant (p > 0.5); on average {per_list:.1f} relevant "
          f"candidate{'' if round(per_list, 1) == 1 else 's'} per list by the labels' probabilities → {path}")
    if labels.attrs.get("judgments"):  # what of the judgments was used, and what was left out
        print(labels.attrs["judgments"])
    _print_lf_weights(labels.attrs.get("state"), labels.attrs.get("lfs", ()))
    _print_judged_choice(labels.attrs.get("state"), cfg)
    if labels.attrs.get("overlooked"):
        print(f"warning: {overlooked_line(labels.attrs['overlooked'], cfg, args)}")


def _print_lf_weights(params: object, lfs: Sequence[str]) -> None:
    """What the fusion label model made of each LF (``params``, its fitted state as aggregate wrote it; ``lfs``: the
    votes' LFs, one the fit left out listed at weight 0 with why): its prior, what agreement said, the weight used
    and what decided it (nothing where no LF declared a family or prior)."""
    from weakrank.analysis import lf_weights
    from weakrank.fusion_state import FusionState

    if not isinstance(params, FusionState) or not params.lfs:
        return
    print("  LF                 family     prior  agreement  loading  weight  decided by")
    for lf, w in lf_weights(params, lfs).iterrows():
        print(f"  {lf:<18} {w['family']:<10} {w['prior']:>5}  {w['agreement']:9.2f}  {w['loading']:7.2f}  "
              f"{w['weight']:6.1%}  {w['decided']}")


def cmd_ingest(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = pipeline_config(args)
    show_ingested(cfg, pipeline.ingest(cfg))


def cmd_label(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = pipeline_config(args)
    show_labelled(cfg, pipeline.label(cfg, progress=not args.quiet, force=args.force, engine=args.engine,
                                      **engine_overrides(args)))


def cmd_aggregate(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = pipeline_config(args)
    show_aggregated(cfg, pipeline.aggregate(cfg, model=args.model, judgments=getattr(args, "judgments", None)), args)


def _print_judged_choice(params: object, cfg: PipelineConfig) -> None:
    """In judged mode (``params``: the fusion state as aggregate wrote it), what the judged sample did and why, as its
    record says (:meth:`~weakrank.records.PriorUpdateRecord.lines`: the LFs' priors it moved, or
    :meth:`~weakrank.records.ChoiceRecord.lines`: the combination it chose, each with the estimated MAP over the pool),
    and how to judge more queries: when too few had a relevant passage to move anything, or when about how many more
    would tell whether the leader is ahead (:meth:`~weakrank.records.ChoiceRecord.queries_to_tell`)."""
    from weakrank.fusion_state import FusionState
    from weakrank.paths import program, shell_path
    from weakrank.records import ChoiceRecord

    judged = params.record if isinstance(params, FusionState) else None
    if judged:
        for line in judged.lines():
            print(line)
        needed = judged.queries_to_tell() if isinstance(judged, ChoiceRecord) else None
        if judged.queries < judged.rule["min_queries"]:
            print(f"  to judge more: {program()} select {shell_path(cfg.source)} --more --queries 5 (adds them to "
                  f"the judging file), {program()} judge it, then run again")
        elif needed:
            print(f"  to tell whether {judged.best} is ahead: about {needed} judged queries with a relevant passage "
                  f"(now {judged.queries}); {program()} select {shell_path(cfg.source)} --more --queries "
                  f"{needed - judged.queries} adds queries to the judging file, {program()} judge it, then run again")


def show_analysis(cfg: PipelineConfig, tables: dict[str, pd.DataFrame], args: argparse.Namespace) -> str | None:
    """``weakrank analyze`` less its last line: when the label model cannot tell the views apart, the line that
    says so and how to judge a few queries (``run`` prints it at its end)."""
    per_query = ("quality_per_query", "view_agreement")  # a row per query
    _print_tables({name: table for name, table in tables.items() if name not in per_query})
    print(f"\nwritten to {RunPaths(cfg.run_dir).analysis}")
    return analysis_advice(cfg, tables, args)


def analysis_advice(cfg: PipelineConfig, tables: dict[str, pd.DataFrame], args: argparse.Namespace) -> str | None:
    """The lines that say the label model cannot tell the views apart, or weights near zero an LF that disagrees
    with the labels, and how to judge a few queries; or None."""
    from weakrank.judged.report import JUDGE_QUERIES

    views = tables["views"].attrs
    lines = [f"{views['advice']} — judge {JUDGE_QUERIES} queries: {judge_commands(args, cfg)}"] if views.get("advice") else []
    if views.get("overlooked"):
        lines.append(f"warning: {overlooked_line(views['overlooked'], cfg, args)}")
    return "\n".join(lines) or None


def cmd_analyze(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = pipeline_config(args)
    advice = show_analysis(cfg, pipeline.analyze(cfg, splits=args.split), args)
    if advice:
        print(f"\n{advice}")


def show_evaluation(cfg: PipelineConfig, result: pd.DataFrame | Skipped, args: argparse.Namespace) -> None:
    """The evaluate stage's table (the trained ranker against BM25, every other LF, the RRF and CombSUM
    fusions and its labels; or their MAP estimated from a judged sample) and where it went, or why it was
    skipped."""
    from weakrank.pipeline import Skipped

    if isinstance(result, Skipped):
        print(f"skipped: {result.reason}")
    elif "low" in result.columns:  # estimated from a judged sample
        evaluate.print_sample(result, RunPaths(cfg.run_dir))
    else:
        evaluate.print_table(result, args.require or cfg.evaluate.require)
        print(f"→ {RunPaths(cfg.run_dir).runs}: evaluation.csv, evaluation.md, evaluation.png")


def judge_commands(args: argparse.Namespace, cfg: PipelineConfig, more: bool = False) -> str:
    """The commands that judge a few queries of this run and run it again with the flags it was given
    (``--run-dir``, ``--max-queries``, the ``[train]`` flags); ``more``: add them to the judgments it read."""
    from weakrank.judged.judging_file import JUDGING, judging_path
    from weakrank.judged.report import judge_commands as commands
    from weakrank.paths import shell_path

    judging = shell_path(judging_path(cfg.source, cfg.run_dir, JUDGING))
    return commands(shell_path(args.config), judging, repeated_flags(args), train_flags(args), more)


def final_line(cfg: PipelineConfig, result: pd.DataFrame | Skipped, args: argparse.Namespace) -> str:
    """What ``run`` says last of its evaluation: the closing line (its commands as evaluation.md has them), the
    estimate from a judged sample, or why nothing was measured and the commands that measure it."""
    from weakrank.evaluation.summary import BM25_ROW, closing_line
    from weakrank.judged.judging_file import EVALUATION_JUDGING, judging_path
    from weakrank.judged.report import EVALUATION_QUERIES, measure_commands, sample_line
    from weakrank.loaders import first_stage
    from weakrank.paths import shell_path
    from weakrank.pipeline import Skipped

    if isinstance(result, Skipped):
        sample = judging_path(cfg.source, cfg.run_dir, EVALUATION_JUDGING)
        commands = measure_commands(shell_path(args.config), shell_path(sample), repeated_flags(args))
        first = first_stage(cfg.dataset.loader, cfg.dataset.path, cfg.evaluate.split, **cfg.dataset.options)
        return (f"{result.reason} — to measure it against {first or BM25_ROW} on {EVALUATION_QUERIES} judged "
                f"queries: {commands}")
    if "low" in result.columns:
        return sample_line(result)
    return closing_line(result, advice=result.attrs.get("advice") or "")


def cmd_run(args: argparse.Namespace) -> None:
    import time

    from weakrank import pipeline

    cfg = pipeline_config(args)
    shows: dict[str, Callable[[Any], Any]] = {
        "ingest": lambda ds: show_ingested(cfg, ds), "label": lambda votes: show_labelled(cfg, votes),
        "aggregate": lambda labels: show_aggregated(cfg, labels, args),
        "analyze": lambda tables: show_analysis(cfg, tables, args), "train": print_trained,
        "rerank": lambda path: print(f"wrote {path}"), "evaluate": lambda table: show_evaluation(cfg, table, args),
    }
    started: dict[str, float] = {}

    def start(stage: str) -> None:
        started[stage] = time.perf_counter()
        print(f"--- {stage}", flush=True)

    def end(stage: str, result: Any) -> None:
        shows[stage](result)
        print(f"    {stage} done in {time.perf_counter() - started[stage]:.1f} s", flush=True)

    done = pipeline.run(
        cfg, args.stages.split(",") if args.stages else None, progress=not args.quiet, force=args.force,
        engine=args.engine, engine_options=engine_overrides(args), model=args.model, judgments=args.judgments,
        splits=args.split, eval_split=args.eval_split, require=args.require, resume=args.resume,
        on_start=start, on_end=end, on_plan=print_plan, on_pace=print_pace, flags=repeated_flags(args),
        train_flags=train_flags(args), **train_overrides(args),
    )
    print(f"\ntime per stage (→ {done.timings_file}):")
    for stage, t in done.timings.items():
        print(f"  {stage:<10}{t['seconds']:>9.1f} s   peak memory so far {t['peak_rss_mib']:>7.0f} MiB")
    print(f"  {'in all':<10}{sum(t['seconds'] for t in done.timings.values()):>9.1f} s")
    def aggregated(labels: pd.DataFrame) -> str | None:  # said again last, where analyze does not say it
        warning = labels.attrs.get("overlooked")
        return f"warning: {overlooked_line(warning, cfg, args)}" if warning and "analyze" not in done.results else None

    lines = {"aggregate": aggregated, "analyze": lambda tables: analysis_advice(cfg, tables, args),
             "train": student_warning, "evaluate": lambda result: final_line(cfg, result, args)}
    said = [lines[stage](result) for stage, result in done.results.items() if stage in lines]  # printed last
    commands, shown = judge_commands(args, cfg) if any(said) else "", False
    for line in filter(None, said):  # the judging commands once
        print(f"\n{line.replace(commands, 'the commands above') if shown else line}")
        shown = shown or commands in line


def add_judgments_flag(parser: argparse.ArgumentParser) -> None:
    """``--judgments FILE`` (overrides ``[aggregate] judgments``)."""
    parser.add_argument("--judgments", metavar="FILE", help="judged queries to train on (a judging file of `weakrank "
                        "judge`, or TREC qrels): they move the LFs' quality priors and teach the student "
                        "(overrides [aggregate] judgments); to measure without training: weakrank evaluate "
                        "CONFIG --judgments")


def add_label_model_flag(parser: argparse.ArgumentParser) -> None:
    """``--label-model`` (overrides ``[aggregate] model``)."""
    parser.add_argument("--label-model", "--model", dest="model", metavar="MODEL",
                        help=f"label model (overrides [aggregate] model): {', '.join(LABEL_MODELS)}")


def register(add: AddCommand) -> None:
    """Add the stage sub-commands."""
    add("ingest", cmd_ingest, "load a dataset and write its canonical Parquet tables")
    p = add("label", cmd_label, "apply the labeling functions and write votes.parquet")
    p.add_argument("--force", action="store_true", help="recompute LF scores even when cached")
    add_engine_arguments(p)
    p = add("aggregate", cmd_aggregate, "fit the label model and write labels.parquet")
    add_label_model_flag(p)
    add_judgments_flag(p)
    p = add("analyze", cmd_analyze, "LF summary and P@1/R@1/AUC quality table against gold")
    p.add_argument("--split", action="append", help="restrict to a split (repeatable; default: [analyze] splits)")
    p = add("run", cmd_run, "run the stages in order (ingest, label, aggregate, analyze; then train, rerank, "
            "evaluate against BM25 when the config has [train]); the train flags override [train] as in `train`")
    p.add_argument("--resume", action="store_true", help="continue training from its checkpoint")
    p.add_argument("--stages", help="comma-separated subset of stages")
    p.add_argument("--force", action="store_true", help="recompute LF scores even when cached")
    add_label_model_flag(p)
    add_judgments_flag(p)
    p.add_argument("--split", action="append", help="restrict analysis to a split (repeatable)")
    p.add_argument("--eval-split", help="split that rerank scores and evaluate reports (default: [evaluate] split, "
                   "else test)")
    evaluate.add_require_flag(p)
    add_engine_arguments(p)
    defer(p, add_train_flags)
