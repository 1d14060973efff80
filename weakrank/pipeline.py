"""The pipeline's stages, one module each in :mod:`weakrank.stages` (``ingest``, ``label``, ``aggregate``,
``analyze``, ``train``, ``rerank``, ``evaluate``, and ``select``, ``index``, ``corrupt``), named here as the Python
API, and :func:`run`, which runs them in order as ``weakrank run`` does. Each stage is a function of the config,
declared with :func:`~weakrank.stages.stage.stage`: what it reads of the config is checked
(:mod:`weakrank.validation`) before it takes the run-dir lock; it reads and writes files of the run directory (its
layout: :mod:`weakrank.paths`) and returns what it wrote; the ``weakrank`` commands parse arguments, call one of
these and print."""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weakrank.config import PipelineConfig
from weakrank.errors import WeakrankError, did_you_mean
from weakrank.estimates import Estimate, estimate
from weakrank.io import write_text
from weakrank.lock import run_dir_lock
from weakrank.pace import Say, pacing, rerank_ahead
from weakrank.paths import RunPaths
from weakrank.registry import resolve_lfs
from weakrank.stages.aggregate import aggregate
from weakrank.stages.analyze import analyze
from weakrank.stages.corrupt import corrupt, undo_corrupt
from weakrank.stages.evaluate import evaluable, evaluate, evaluate_runs, unmeasured
from weakrank.stages.index import index
from weakrank.stages.ingest import ingest
from weakrank.stages.label import label
from weakrank.stages.rerank import rerank
from weakrank.stages.select import select, select_evaluation
from weakrank.stages.stage import stage, train_config
from weakrank.stages.train import teacher_alone, train
from weakrank.validation import check_inputs

__all__ = ["STAGES", "RunResult", "Skipped", "aggregate", "analyze", "corrupt", "evaluate", "evaluate_runs", "index",
           "ingest", "label", "rerank", "run", "select", "select_evaluation", "stage", "train", "undo_corrupt"]


@dataclass
class Skipped:
    """A stage :func:`run` left out, and why (``reason``, one line)."""

    reason: str


TRAIN_STAGES = ("train", "rerank", "evaluate")  # they read [train]
STAGES = ("ingest", "label", "aggregate", "analyze", *TRAIN_STAGES)  # what `run` runs, in this order


@dataclass
class RunResult:
    """What :func:`run` did: the value each stage returned (``results``, by stage, in the order they ran), and
    each one's seconds and the process's peak memory after it (``timings``, in MiB), as written to
    ``timings_file``; where the plan was made, each stage's ``estimated_s`` from the work (rerank's also
    ``teacher_alone_s``, where the student earns no weight) and, for label and train once their first batches were
    timed and for rerank as it starts, ``paced_s`` (the time they then said in all)."""

    results: dict[str, Any]
    timings: dict[str, dict[str, float]]
    timings_file: Path


def run(cfg: PipelineConfig, stages: Iterable[str] | None = None, *, progress: bool = True, force: bool = False,
        engine: str | None = None, engine_options: Mapping[str, Any] | None = None, model: str | None = None,
        judgments: str | Path | None = None, splits: list[str] | None = None, eval_split: str | None = None,
        require: str | None = None, resume: bool = False, on_start: Callable[[str], Any] | None = None,
        on_end: Callable[[str, Any], Any] | None = None,
        on_plan: Callable[[list[str], dict[str, float], float | None], Any] | None = None,
        on_pace: Say | None = None, flags: str | None = None, train_flags: str = "", **overrides: Any) -> RunResult:
    """The stages in order (``stages``, default: ingest, label, aggregate, analyze, and train, rerank, evaluate
    when the config has ``[train]``), what they all read checked before the first runs (a bad ``[train]``
    included), all under one hold of the run-dir lock; their times go to ``<run_dir>/timings.json``.

    Each stage takes its own options: label ``progress``, ``force``, ``engine`` and ``engine_options``; aggregate
    ``model`` and ``judgments``; analyze ``splits``; train ``resume`` and ``progress``; rerank and evaluate
    ``eval_split`` (their ``split``), evaluate ``require``, ``flags`` and ``train_flags`` (what its closing line's
    commands repeat); train, rerank and evaluate the ``[train]`` keys of ``overrides``. ``on_start(stage)`` and
    ``on_end(stage, result)`` are called around each stage (where ``weakrank run`` prints); ``on_plan(stages,
    seconds, teacher_rerank)`` before the first with the stages ahead and their rough seconds from the work
    (:func:`~weakrank.estimates.estimate`; empty before anything is ingested; rerank's also where the shipped ranker
    is its teacher alone, None where it has no teacher), and again after ``ingest`` with those of the stages left;
    ``on_pace(stage, seconds_left, factor)`` at most once in label and in train, once their first batches are timed
    (:func:`~weakrank.pace.pacing`: ``factor``, measured over estimated), and as rerank starts
    (:func:`~weakrank.pace.rerank_ahead`: what training kept; ``factor`` over the plan's figure for it).

    Work is done once and handed on: the LFs are built once (for label and the plan), the fusion label model that
    ``aggregate`` fitted is the one ``analyze`` reads, and the evaluation sample is read once, by evaluate's check.

    A split without qrels nor a judged evaluation sample (:func:`~weakrank.stages.evaluate.evaluable`, known before the
    first stage from the config and again once ingested) is not evaluated: ``evaluate`` returns :class:`Skipped`,
    with the reason. (Long: it is the one place that owns the order, the one hold of the lock, the times and what one
    stage hands the next; split, each piece would need all of them.)"""
    available = STAGES if cfg.train is not None else STAGES[: -len(TRAIN_STAGES)]
    stages = tuple(stages or available)
    if cfg.train is None and set(stages) & set(TRAIN_STAGES):
        raise WeakrankError(f"{cfg.source} has no [train] section: stages {list(TRAIN_STAGES)} need one")
    unknown = [s for s in stages if s not in available]
    if unknown:
        raise WeakrankError(f"unknown stage(s) {unknown}{did_you_mean(unknown[0], available)}; "
                            f"stages are {list(available)}")
    tc = train_config(cfg, **overrides) if set(stages) & set(TRAIN_STAGES) else None  # read once; a bad one stops here
    funcs: dict[str, Any] = {"ingest": ingest, "label": label, "aggregate": aggregate, "analyze": analyze,
                             "train": train, "rerank": rerank, "evaluate": evaluate}
    given: dict[str, dict[str, Any]] = {
        "ingest": {}, "label": dict(progress=progress, force=force, engine=engine, **(engine_options or {})),
        "aggregate": dict(model=model, judgments=judgments, eval_split=eval_split), "analyze": dict(splits=splits),
        "train": dict(tc=tc, resume=resume, progress=progress), "rerank": dict(tc=tc, split=eval_split),
        "evaluate": dict(tc=tc, split=eval_split, require=require, flags=flags, train_flags=train_flags),
    }
    check_inputs(cfg, stages)  # then each stage's own check, once, before the first runs: what it parsed is handed in
    parsed = {name: funcs[name].check(cfg, stages, **given[name]) for name in stages}
    lfs = resolve_lfs(cfg.label.lfs, cfg.label.lf_options) if "label" in stages else None  # once: label's, the plan's
    given["label"]["lfs"] = lfs
    split = eval_split or cfg.evaluate.split
    sample = parsed.get("evaluate")  # the evaluation sample's rows, read once by evaluate's check (or None)
    measured = "evaluate" not in stages or evaluable(cfg, split, ingested="ingest" not in stages, sample=sample)

    def call(name: str) -> Any:
        if name == "evaluate" and not (measured and evaluable(cfg, split, sample=sample)):
            return Skipped(unmeasured(cfg, split))
        handed = {"fusion": results["aggregate"].attrs["fusion"]} if name == "analyze" and "aggregate" in results else {}
        return funcs[name](cfg, parsed=parsed[name], **given[name], **handed)  # analyze: aggregate's fitted model

    results: dict[str, Any] = {}
    timings: dict[str, dict[str, float]] = {}
    with run_dir_lock(cfg.run_dir, "run"):  # one hold for every stage: no other writer comes in between
        told = on_plan or on_pace  # the estimates are made for someone to read
        plan = estimate(cfg, stages, tc, split, force, lfs) if told and "ingest" not in stages else Estimate({})
        if on_plan:
            on_plan(list(stages), plan.seconds, plan.teacher_rerank)
        said: dict[str, float] = {}
        factors: dict[str, float] = {}

        def say(stage: str, left: float, factor: float) -> None:  # on_pace, and what it said kept for timings.json
            said[stage], factors[stage] = round(time.perf_counter() - started + left, 1), factor
            if on_pace:
                on_pace(stage, left, factor)

        for name in stages:
            if on_start:
                on_start(name)
            started = time.perf_counter()
            paced = on_pace and name in ("label", "train") and name in plan.seconds
            step, steps = (plan.step, plan.steps * plan.step) if name == "train" else (1.0, None)
            if on_pace and name == "rerank" and plan.seconds.get(name):  # what training kept is known now
                alone = plan.teacher_rerank is not None and teacher_alone(cfg, tc)
                planned = plan.teacher_rerank if alone else plan.seconds[name]
                ahead = rerank_ahead(planned, alone, factors)
                say(name, ahead, ahead / planned if planned else 1.0)  # over the plan's figure for what was kept
            with pacing(name, plan.seconds[name], say, step, steps) if paced else nullcontext():
                results[name] = call(name)
            if name == "label":  # its LFs now hold what they fitted on the dataset: not kept through training
                lfs = given["label"]["lfs"] = None
            timings[name] = {"seconds": round(time.perf_counter() - started, 2), "peak_rss_mib": peak_rss_mib()}
            if name in plan.seconds:
                timings[name]["estimated_s"] = round(plan.seconds[name], 1)
            if name == "rerank" and name in plan.seconds and plan.teacher_rerank is not None:
                timings[name]["teacher_alone_s"] = round(plan.teacher_rerank, 1)
            if name in said:
                timings[name]["paced_s"] = said[name]
            if on_end:
                on_end(name, results[name])
            if told and name == "ingest" and name != stages[-1]:
                left = list(stages[stages.index(name) + 1:])
                plan = estimate(cfg, left, tc, split, force, lfs)
                if on_plan:
                    on_plan(left, plan.seconds, plan.teacher_rerank)
        path = write_text(json.dumps(timings, indent=1) + "\n", RunPaths(cfg.run_dir).root / "timings.json")
    return RunResult(results, timings, path)


def peak_rss_mib() -> float:
    """The process's peak resident memory so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)
