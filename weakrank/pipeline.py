"""Every stage of the pipeline as a function of the config: ``ingest``, ``label``, ``aggregate``, ``analyze``,
``train``, ``rerank``, ``evaluate`` (and ``select``, ``index``, ``corrupt``), and :func:`run`, which runs them in
order as ``weakrank run`` does. Each checks what it reads of the config (:mod:`weakrank.validation`) before it
takes the run-dir lock, reads and writes files of the run directory (its layout: :mod:`weakrank.paths`) and
returns what it wrote; the ``weakrank`` commands parse arguments, call one of these and print. (Over 300 lines:
one stage runner by design, every stage a function here; what they share lives in :mod:`weakrank.stages`.)"""

from __future__ import annotations

import functools
import inspect
import json
import os
import resource
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from weakrank.baselines import bm25_negatives, fusion_runs
from weakrank.config import PipelineConfig, check_max_queries, did_you_mean
from weakrank.dataset import Dataset, check_replaceable
from weakrank.encoders import DEFAULT_ENCODER
from weakrank.engines import engine_config, label_dataset
from weakrank.errors import ConfigError, DataError, WeakrankError
from weakrank.evaluation.metrics import RETRIEVAL_MEASURES, evaluate_run
from weakrank.evaluation.summary import EVALUATION_QUERIES, closing_line, judge_commands, measure_commands, rows_legend
from weakrank.evaluation.tables import format_table, queries_note, results_table, runs_table, table_legend, to_markdown
from weakrank.io import output_file, read_parquet, write_parquet, write_run, write_text
from weakrank.judged.checks import check_judgments
from weakrank.judged.judgments import align, gold_judgments, read_judgments, with_judgments
from weakrank.judged.selector import CombinationSelector
from weakrank.label_models import MODELS, fit_labels, fit_predict, usable
from weakrank.label_models.labels_file import LabelsInfo, read_labels_info, write_labels
from weakrank.labeling import cache_key, check_votes_table, lf_names
from weakrank.loaders import load_dataset
from weakrank.lock import locked, run_dir_lock
from weakrank.paths import RunPaths, shell_path
from weakrank.registry import resolve_lf
from weakrank.similarity import kept_encodings
from weakrank.stages.evaluation import BEFORE, evaluation_figure, judged_run, keep_before, sample_evaluation
from weakrank.stages.evaluation import systems as evaluation_systems
from weakrank.stages.training import model_dir, rerank_split, train_config, train_ranker
from weakrank.validation import check_config, evaluable, has_judgments, judged_splits

if TYPE_CHECKING:
    from weakrank.training.callbacks import TrainerCallback

F = TypeVar("F", bound=Callable[..., Any])


def stage(name: str, stages: tuple[str, ...] | None = None, **names: str) -> Callable[[F], F]:
    """Decorate a stage ``func(cfg, ...)``: what it reads of ``cfg`` is checked before it writes anything
    (:func:`~weakrank.validation.check_config` of ``stages``, default ``(name,)``; each of ``names`` maps an
    argument of ``check_config`` to the parameter of ``func`` that gives it), then it runs under the run-dir lock
    (:func:`~weakrank.lock.locked`: within :func:`run`, under its one hold)."""

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        held = locked(name)(func)

        @functools.wraps(func)
        def checked(cfg: PipelineConfig, *args: Any, **kwargs: Any) -> Any:
            given = signature.bind(cfg, *args, **kwargs).arguments
            check_config(cfg, (name,) if stages is None else stages, **{key: given.get(param)
                                                                       for key, param in names.items()})
            return held(cfg, *args, **kwargs)

        return checked  # type: ignore[return-value]

    return decorate


@stage("ingest")
def ingest(cfg: PipelineConfig) -> Dataset:
    """Load the configured dataset, validate it and write its canonical tables (all or nothing); a file in
    ``dataset/`` that weakrank did not write stops it first."""
    check_replaceable(RunPaths(cfg.run_dir).dataset)
    dataset = load_dataset(cfg.dataset.loader, cfg.dataset.path, **cfg.dataset.options)
    if cfg.dataset.max_queries is not None:
        dataset = dataset.subset(max_queries=check_max_queries(cfg.dataset.max_queries, "[dataset] max_queries"))
    dataset.save(RunPaths(cfg.run_dir).dataset)
    return dataset


@stage("label")
def label(
    cfg: PipelineConfig, progress: bool = True, force: bool = False, engine: str | None = None, **engine_options: Any
) -> pd.DataFrame:
    """Apply the configured LFs to the ingested dataset and write ``votes.parquet``.

    ``engine`` (default: ``[label] engine``) picks where they run; ``engine_options`` override ``[label.<engine>]``.
    """
    paths = RunPaths(cfg.run_dir)
    dataset = Dataset.load(paths.dataset, name=cfg.name)
    lfs = [resolve_lf(spec, cfg.label.lf_options.get(spec)) for spec in cfg.label.lfs]
    name = engine or cfg.label.engine
    options = {**cfg.label.engine_options.get(name, {}), **engine_options}
    runner = engine_config(name, options)
    data_key = dataset.fingerprint()
    with kept_encodings(paths.encodings, reuse=not force):  # an LF added later encodes no text others encoded
        votes = label_dataset(
            dataset,
            lfs,
            runner,
            paths.partitioned,
            cache_dir=paths.lf_scores,
            fingerprints={lf.name: cache_key(lf, cfg.label.fingerprint(spec), data_key)
                          for lf, spec in zip(lfs, cfg.label.lfs)},
            progress=progress,
            reuse=not force,
        )
    meta = {"lfs": [lf.name for lf in lfs], "rules": [repr(lf.rule) for lf in lfs], "engine": runner.name}
    write_parquet(votes, paths.votes, metadata=meta)
    return votes


@stage("aggregate", label_model="model", judgments="judgments", eval_split="eval_split")
def aggregate(cfg: PipelineConfig, model: str | None = None, judgments: str | Path | None = None,
              eval_split: str | None = None) -> pd.DataFrame:
    """Fit the label model on all votes and write ``labels.parquet``. No gold is read, but in few-shot mode that of
    the judged queries: those of ``judgments`` (default ``[aggregate] judgments``: a judging file or TREC qrels),
    or the first ``[aggregate] gold_queries`` of ``gold_split``. They choose how the fusion model combines the LFs
    (:mod:`weakrank.judged`), their judged pairs' labels become their judgments (``judged``), and
    the file's metadata keeps their ids (training picks its checkpoint by their MAP when they are in dev).
    Judgments are checked first (:func:`~weakrank.judged.checks.check_judgments`: none of ``eval_split``,
    default ``[evaluate] split``); ``attrs["judgments"]`` counts what was used."""
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    check_votes_table(votes, paths.votes)
    name = model or cfg.aggregate.model
    label_model = cfg.aggregate.label_model(name)
    judgments = judgments or (cfg.aggregate.judgments if name == cfg.aggregate.model else None)
    if judgments and name != "fusion":
        raise ConfigError(f"judgments choose how the fusion label model combines the LFs; label model {name!r} "
                          "reads none")
    note = check_judgments(judgments, votes, paths.dataset, eval_split or cfg.evaluate.split) if judgments else None
    if judgments:
        judged = align(votes, read_judgments(judgments))
        labels = with_judgments(CombinationSelector(label_model).fit(votes, judged).model.labels_table(votes),
                                judged)
        queries = list(dict.fromkeys(votes.loc[judged.gold > 0, "query_id"]))
    elif cfg.aggregate.gold_queries and name == cfg.aggregate.model:
        found = gold_judgments(votes, cfg.aggregate.gold_split, cfg.aggregate.gold_queries)
        queries = found.queries
        if len(queries) < cfg.aggregate.gold_queries:
            raise DataError(f"[aggregate] gold_queries = {cfg.aggregate.gold_queries}, but split "
                            f"{cfg.aggregate.gold_split!r} has {len(queries)} queries judged with a relevant and a "
                            "non-relevant candidate", file=paths.votes, field="gold")
        labels = CombinationSelector(label_model).fit(votes, align(votes, found)).model.labels_table(votes)
    else:
        queries, labels = [], fit_labels(votes, label_model)
    write_labels(labels, paths.labels, LabelsInfo(name, lf_names(votes), label_model.state(), queries,
                                                  Path(judgments).name if judgments else None))
    labels.attrs["judgments"] = note
    return labels


@stage("select", stages=())
def select(cfg: PipelineConfig, queries: int = 10, split: str = "train", per_query: int = 6, seed: int = 0,
           output: str | Path | None = None, more: bool = False, force: bool = False) -> tuple[Path, pd.DataFrame]:
    """Draw a sample of ``queries`` queries of ``split`` (never ``[evaluate] split``) and up to ``per_query`` of
    their candidates for a person to judge (:mod:`weakrank.judged.design`: a stratified random sample, each pair's
    inclusion probability written beside it; no gold is read) and write them as a judging file (default
    ``<run_dir>/judging.tsv``; one that holds judgments already is kept, not overwritten). With ``more`` the file's
    sample grows by ``queries`` queries (the same design and seed, read from the file): its rows and judgments are
    kept, the new queries' rows added after them. Returns the file and the pairs added now.
    It is written through :func:`~weakrank.io.output_file`: one weakrank did not write, or one changed since (a
    person's skips or notes), is replaced only with ``force``."""
    from weakrank.judged.design import select_pairs
    from weakrank.judged.judging_file import judged, read_judging_file, write_judging_file

    paths = RunPaths(cfg.run_dir)
    out = Path(output) if output else paths.root / "judging.tsv"
    if split == cfg.evaluate.split:
        raise ConfigError(f"split {split!r} is the one [evaluate] scores: judging its queries would choose what is "
                          "then measured; select from another split (default train)")
    if queries < 1 or per_query < 2:
        raise ConfigError(f"--queries must be >= 1 and --per-query >= 2, got {queries} and {per_query}")
    kept = read_judging_file(out) if out.exists() else None
    if kept is not None and not more and judged(kept).any():
        raise DataError("holds judgments already: judge it to the end, add queries to it with --more, or name "
                        "another --output", file=out)
    if more and kept is None:
        raise DataError("no judging file to add queries to: run select without --more first", file=out)
    if more and not {"query_inclusion", "sample_seed"} <= set(kept.columns):
        raise DataError("has no sample design (columns query_inclusion, sample_seed): it was not written by this "
                        "select; start a new file with --output", file=out)
    if more and len(kept):
        if not kept["sample_seed"].str.fullmatch("[0-9]+").all() or kept["sample_seed"].nunique() > 1:
            raise DataError("sample_seed differs between rows or is not a whole number: it was changed by hand; leave "
                            "it as select wrote it, or start a new file with --output", file=out, field="sample_seed")
        seed = int(kept["sample_seed"].iloc[0])
    votes = read_parquet(paths.votes)
    check_votes_table(votes, paths.votes)
    if split not in set(votes["split"]):
        raise DataError(f"no split {split!r}{did_you_mean(split, set(votes['split']))} in the votes; splits are "
                        f"{sorted(set(votes['split']))}", file=paths.votes, field="split")
    dataset = Dataset.load(paths.dataset)
    texts = dataset.queries.set_index("query_id")["text"].to_dict()
    earlier = list(dict.fromkeys(kept["query_id"])) if more else []
    pairs = select_pairs(votes, texts, split, queries, per_query, seed, cfg.aggregate.options_for("fusion"), earlier)
    missing = sorted(set(earlier) - set(pairs["query_id"]))
    if missing:
        raise DataError(f"its query {missing[0]!r} is not in this pool's sample with seed {seed} (LFs, split or "
                        "collection changed since it was written?): start a new file with --output", file=out)
    rows = judging_rows(pairs, dataset, seed)
    if more:  # the earlier queries' rows and judgments as they are; their inclusion now that the sample is larger
        inclusion = rows.groupby("query_id")["query_inclusion"].first()
        kept = kept.assign(query_inclusion=kept["query_id"].map(inclusion))
        rows = pd.concat([kept, rows[~rows["query_id"].isin(set(earlier))]], ignore_index=True)
    with nullcontext() if more else output_file(out, {}, force):  # --more keeps the rows a person has
        write_judging_file(rows, out)
    added = pairs[~pairs["query_id"].isin(set(earlier))]
    return out, added


def judging_rows(pairs: pd.DataFrame, dataset: Dataset, seed: int) -> pd.DataFrame:
    """The rows of a judging file for a sample's ``pairs`` (``query_id, passage_id``, the inclusion probabilities
    and stratum of :mod:`weakrank.judged.design`): with their texts and the sample's ``seed``."""
    texts = dataset.queries.set_index("query_id")["text"]
    passages = dataset.passages.set_index("passage_id")["text"]
    rows = pairs.assign(query=pairs["query_id"].map(texts), passage=pairs["passage_id"].map(passages),
                        sample_seed=seed)
    return rows[["query_id", "passage_id", "query", "passage", "query_inclusion", "passage_inclusion", "stratum",
                 "sample_seed"]]


EVALUATION_USE = "evaluation"  # the use column of select_evaluation's judging file: judge's hint reads it


@stage("select", stages=("evaluate",), eval_split="split")
def select_evaluation(cfg: PipelineConfig, queries: int = EVALUATION_QUERIES, per_query: int = 6, seed: int = 0,
                      split: str | None = None, output: str | Path | None = None,
                      force: bool = False) -> tuple[Path, pd.DataFrame]:
    """Draw a simple random sample of ``queries`` queries of the evaluated split (``split``, default ``[evaluate]
    split``) and up to ``per_query`` of their candidates, for a person to judge so that :func:`evaluate` can
    estimate each system's MAP without qrels (:func:`weakrank.judged.evaluation.evaluation_pairs`: inclusion
    probabilities beside each pair), into a judging file (default ``<run_dir>/evaluation-judging.tsv``, through
    :func:`~weakrank.io.output_file`; one that holds judgments is kept). These judgments never train: ``aggregate``
    refuses judgments of the evaluated split; a last column, ``use``, says :data:`EVALUATION_USE`. Returns the file
    and its pairs."""
    from weakrank.judged.evaluation import evaluation_pairs
    from weakrank.judged.judging_file import judged, read_judging_file, write_judging_file

    paths = RunPaths(cfg.run_dir)
    split = split or cfg.evaluate.split
    out = Path(output) if output else paths.evaluation_judging
    if queries < 1 or per_query < 2:
        raise ConfigError(f"--queries must be >= 1 and --per-query >= 2, got {queries} and {per_query}")
    if out.exists() and judged(read_judging_file(out)).any():
        raise DataError("holds judgments already: judge it to the end and evaluate with it (weakrank evaluate CONFIG "
                        "--judgments FILE), or name another --output", file=out)
    votes = read_parquet(paths.votes)
    check_votes_table(votes, paths.votes)
    if split not in set(votes["split"]):
        raise DataError(f"no split {split!r}{did_you_mean(split, set(votes['split']))} in the votes; splits are "
                        f"{sorted(set(votes['split']))}", file=paths.votes, field="split")
    pairs = evaluation_pairs(votes, split, queries, per_query, seed, cfg.aggregate.options_for("fusion"))
    with output_file(out, {}, force):
        write_judging_file(judging_rows(pairs, Dataset.load(paths.dataset), seed).assign(use=EVALUATION_USE), out)
    return out, pairs


@stage("analyze", analyze_splits="splits")
def analyze(cfg: PipelineConfig, splits: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """LF summary, the fusion label model's ``views`` (:func:`~weakrank.analysis.fusion_views`; no gold read: its
    ``attrs["advice"]`` says when judging a few queries would tell them apart, unless the labels already came
    from judged queries) and, with gold, the quality table (each LF, every label model, the configured
    aggregate), also per query (``quality_per_query``: for paired tests between scorers). Tables carry their
    ``attrs["legend"]``. (Long: it writes each of the analysis folder's files in turn, beside the table it
    came from.)"""
    from weakrank.analysis import (  # sklearn: imported when it runs, so `run` checks the config without it
        QUALITY_LEGEND,
        VIEWS_LEGEND,
        fusion_views,
        judging_advice,
        lf_scorers,
        lf_summary,
        quality_table,
        query_quality,
    )
    from weakrank.plots import quality_bars

    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    check_votes_table(votes, paths.votes)
    splits = splits or cfg.analyze.splits
    scored = votes.copy()
    scorers = lf_scorers(votes)
    for name in MODELS:
        if usable(name, len(lf_names(votes))):
            scored[f"p_{name}"] = fit_predict(votes, cfg.aggregate.label_model(name))
            scorers[name] = f"p_{name}"
    for name, run in fusion_runs(votes).items():
        scored[f"p_{name}"] = run["score"].to_numpy()
        scorers[name] = f"p_{name}"
    if paths.labels.exists():
        scored["p_labels"] = read_parquet(paths.labels, columns=["p_relevant"])["p_relevant"].to_numpy()
        scorers[f"labels.parquet ({read_labels_info(paths.labels).model})"] = "p_labels"
    if splits:
        unknown = sorted(set(splits) - set(votes["split"]))
        if unknown:
            raise DataError(f"no split {unknown[0]!r}{did_you_mean(unknown[0], set(votes['split']))} in the votes; "
                            f"splits are {sorted(set(votes['split']))}", file=paths.votes, field="split")
        scored = scored[scored["split"].isin(splits)]
    summary = lf_summary(scored)
    out = paths.analysis
    write_text(summary.to_csv(), out / "lf_summary.csv")
    views = fusion_views(scored, cfg.aggregate.label_model("fusion").fit_table(votes))
    judged = paths.labels.exists() and read_labels_info(paths.labels).gold_queries
    views.attrs.update(legend=VIEWS_LEGEND, advice=None if judged else judging_advice(views))
    write_text(views.to_csv(), out / "views.csv")
    write_text(f"# The label model's views — {cfg.name} ({views.attrs['lists']} lists)\n\n{to_markdown(views)}\n\n"
               f"{VIEWS_LEGEND}\n" + (f"\n{views.attrs['advice']}.\n" if views.attrs["advice"] else ""), out / "views.md")
    tables = {"lf_summary": summary, "views": views}
    if scored["gold"].notna().any():
        per_query = query_quality(scored, scorers)
        quality = quality_table(per_query)
        quality.attrs["legend"] = QUALITY_LEGEND
        tables.update(quality=quality, quality_per_query=per_query)
        where = ", ".join(splits) if splits else "all splits"
        write_text(quality.to_csv(), out / "quality.csv")
        write_text(per_query.to_csv(index=False), out / "quality_per_query.csv")
        write_text(
            f"# LF quality — {cfg.name} ({where}, {quality.attrs['queries']} queries)\n\n"
            + to_markdown(quality)
            + f"\n\n{QUALITY_LEGEND}\n",
            out / "quality.md",
        )
        quality_bars(quality, out / "quality.png", f"LF and label-model quality — {cfg.name} ({where})")
    return tables


def train(cfg: PipelineConfig, *, resume: bool = False, progress: bool = True,
          callbacks: list[TrainerCallback] | None = None, **overrides: Any) -> Path:
    """Train the ranker ``[train]`` (plus ``overrides``) describes on ``labels.parquet`` (gold with
    ``supervised``) and return its model directory (the best checkpoint, else the final model); with
    ``fuse_lfs`` it carries its teacher. ``[train]`` and its train split are checked first. A torchrun process
    group is left however training ends."""
    from weakrank.training.distributed import teardown

    tc = train_config(cfg, **overrides)
    check_config(cfg, ("train",), train_split=tc.train_split)
    main = int(os.environ.get("RANK", "0")) == 0  # under torchrun only rank 0 writes, so only it locks
    try:
        with run_dir_lock(cfg.run_dir, "train") if main else nullcontext():
            train_ranker(cfg, resume=resume, progress=progress, callbacks=callbacks, **overrides)
    finally:
        teardown()
    return model_dir(cfg, tc.output)


@stage("rerank", eval_split="split")
def rerank(cfg: PipelineConfig, model: str | Path | None = None, split: str | None = None, name: str | None = None,
           backend: str = "torch", trust_code: bool = False, **overrides: Any) -> Path:
    """Score ``split``'s candidates (default: ``[evaluate] split``) with ``model`` (default: the one ``[train]``
    plus ``overrides`` trained) into ``runs/<name>.trec``; ``backend``: how its student runs (PyTorch or
    ONNX Runtime, int8 or not); ``trust_code``: run the LF files another ``model`` carries
    (:func:`~weakrank.ranker.load_ranker`)."""
    return rerank_split(cfg, model=model, split=split or cfg.evaluate.split, name=name, backend=backend,
                        trust_code=trust_code, **overrides)


@locked("evaluate")
def evaluate_runs(cfg: PipelineConfig, runs: Sequence[str | Path], require: str | None = None,
                  judge: str | None = None, **attrs: Any) -> pd.DataFrame:
    """Metrics of TREC run files against the run directory's qrels (t-tests against the first; R_n@k with its
    BM25 scores), written to ``runs/evaluation.csv``, with ``evaluation.md`` (the table and its legend) and
    ``evaluation.png`` (one panel of MAP: the trained ranker, the baseline and the best other LF, with their
    significance marks) beside it; ``require`` (default ``[evaluate] require``) says which queries count.
    ``attrs`` (the ``roles`` of the rows and what the trained one is: see :mod:`weakrank.evaluation.summary`; with
    ``judged``, a run whose labels came from judgments: the evaluation before them is kept,
    :func:`~weakrank.stages.evaluation.keep_before`, and its MAP becomes ``attrs["before"]``) go into the table's
    ``attrs``, its legend and its closing line, which ends with ``judge`` (the commands that judge a few queries:
    ``attrs["judge"]``)."""
    paths = RunPaths(cfg.run_dir)
    require = require or cfg.evaluate.require
    negatives = bm25_negatives(read_parquet(paths.votes)) if paths.votes.exists() else None
    table = runs_table(list(runs), read_parquet(paths.qrels), require, negatives)
    before = keep_before(paths) if attrs.get("judged") else {}
    table.attrs.update(attrs, before={row: value for row, value in before.items() if row in table.index}, judge=judge)
    write_text(table.to_csv(), paths.runs / "evaluation.csv")
    note = queries_note(table, require)
    figure = evaluation_figure(table, paths.runs / "evaluation.png", f"{cfg.name}: MAP\n{note}")
    text = [f"# Evaluation — {cfg.name}", "", f"{note}.", "", format_table(table, p_for="MAP").to_markdown(disable_numparse=True), "",
            f"{table_legend(table, p_for='MAP')}.", ""]
    if table.attrs.get("roles"):
        text += [f"- {line}" for line in rows_legend(table).splitlines()] + ["", closing_line(table, judge=judge or ""), ""]
    if table.attrs["before"]:
        text += [f"Before the judgments: [{BEFORE}.md]({BEFORE}.md).", ""]
    write_text("\n".join([*text, f"![the runs side by side]({figure.name})", ""]), paths.runs / "evaluation.md")
    return table


@stage("evaluate", eval_split="split")
def evaluate(cfg: PipelineConfig, split: str | None = None, require: str | None = None,
             judgments: str | Path | None = None, flags: str | None = None, train_flags: str = "",
             **overrides: Any) -> pd.DataFrame:
    """The trained ranker's run (``rerank``'s) side by side with what a user already has: BM25 (the baseline
    of the t-tests), every other LF, the RRF and CombSUM fusions of the LFs and the labels it learned from, on ``split``
    (default ``[evaluate] split``); their runs are written beside it (see :func:`evaluate_runs`; the table's
    ``attrs`` say what each row is). The closing line's commands repeat this run with ``flags`` (default
    ``--run-dir``) and, for ``run``, ``train_flags``.

    Without qrels of ``split``, or with ``judgments`` (a judged sample of ``split``, default
    ``<run_dir>/evaluation-judging.tsv`` where it holds judgments: :func:`select_evaluation`), each system's MAP is
    estimated from the sample, with intervals (:func:`~weakrank.stages.evaluation.sample_evaluation`); without
    either it is a :class:`ConfigError` that says how to measure."""
    paths = RunPaths(cfg.run_dir)
    split = split or cfg.evaluate.split
    tc = train_config(cfg, **overrides)
    trained = Path(tc.output).name
    systems, roles = evaluation_systems(paths, split, trained)
    if judgments is None and split not in judged_splits(cfg):
        if not has_judgments(paths.evaluation_judging):
            raise ConfigError(f"{unmeasured(cfg, split)}; to measure it: "
                              f"{measure_commands(shell_path(cfg.source or 'CONFIG'), shell_path(cfg.run_dir), flags or '')}")
        judgments = paths.evaluation_judging
    for name, run in systems.items():
        if roles[name] != "trained":
            write_run(run, paths.runs / f"{name}.trec", name)
    if judgments is not None:
        return sample_evaluation(cfg.name, paths, systems, roles, judgments, split)
    flags = f"--run-dir {shell_path(cfg.run_dir)}" if flags is None else flags
    judged = judged_run(paths)
    judge = judge_commands(shell_path(cfg.source or "CONFIG"), shell_path(cfg.run_dir), flags, train_flags, judged)
    files = [paths.runs / f"{name}.trec" for name in systems if roles[name] != "trained"]
    return evaluate_runs(cfg, [*files, paths.runs / f"{trained}.trec"], require, judge=judge,
                         roles={**roles, trained: "trained"}, architecture=tc.architecture,
                         shipped=tc.fuse_lfs and not tc.supervised, judged=judged)


def unmeasured(cfg: PipelineConfig, split: str) -> str:
    """Why nothing measures the systems on ``split``: it has no qrels and no judged evaluation sample."""
    return (f"split {split!r} has no qrels and {RunPaths(cfg.run_dir).evaluation_judging.name} holds no judgments: "
            "nothing measures the ranker on it")


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
    ``timings_file``."""

    results: dict[str, Any]
    timings: dict[str, dict[str, float]]
    timings_file: Path


def run(cfg: PipelineConfig, stages: Iterable[str] | None = None, *, progress: bool = True, force: bool = False,
        engine: str | None = None, engine_options: Mapping[str, Any] | None = None, model: str | None = None,
        judgments: str | Path | None = None, splits: list[str] | None = None, eval_split: str | None = None,
        require: str | None = None, resume: bool = False, on_start: Callable[[str], Any] | None = None,
        on_end: Callable[[str, Any], Any] | None = None, flags: str | None = None, train_flags: str = "",
        **overrides: Any) -> RunResult:
    """The stages in order (``stages``, default: ingest, label, aggregate, analyze, and train, rerank, evaluate
    when the config has ``[train]``), what they all read checked before the first runs (a bad ``[train]``
    included), all under one hold of the run-dir lock; their times go to ``<run_dir>/timings.json``.

    Each stage takes its own options: label ``progress``, ``force``, ``engine`` and ``engine_options``; aggregate
    ``model`` and ``judgments``; analyze ``splits``; train ``resume`` and ``progress``; rerank and evaluate
    ``eval_split`` (their ``split``), evaluate ``require``, ``flags`` and ``train_flags`` (what its closing line's
    commands repeat); train, rerank and evaluate the ``[train]`` keys of ``overrides``. ``on_start(stage)`` and
    ``on_end(stage, result)`` are called around each stage (where ``weakrank run`` prints).

    A split without qrels nor a judged evaluation sample (:func:`~weakrank.validation.evaluable`, known before the
    first stage from the config and again once ingested) is not evaluated: ``evaluate`` returns :class:`Skipped`,
    with the reason."""
    available = STAGES if cfg.train is not None else STAGES[: -len(TRAIN_STAGES)]
    stages = tuple(stages or available)
    if cfg.train is None and set(stages) & set(TRAIN_STAGES):
        raise WeakrankError(f"{cfg.source} has no [train] section: stages {list(TRAIN_STAGES)} need one")
    unknown = [s for s in stages if s not in available]
    if unknown:
        raise WeakrankError(f"unknown stage(s) {unknown}{did_you_mean(unknown[0], available)}; "
                            f"stages are {list(available)}")
    train_split = None
    if set(stages) & set(TRAIN_STAGES):
        train_split = train_config(cfg, **overrides).train_split  # a bad [train] stops the run here
    check_config(cfg, stages, analyze_splits=splits, eval_split=eval_split, train_split=train_split,
                 label_model=model, judgments=judgments)
    split = eval_split or cfg.evaluate.split
    measured = "evaluate" not in stages or evaluable(cfg, split, ingested="ingest" not in stages)
    calls: dict[str, Callable[[], Any]] = {
        "ingest": lambda: ingest(cfg),
        "label": lambda: label(cfg, progress=progress, force=force, engine=engine, **(engine_options or {})),
        "aggregate": lambda: aggregate(cfg, model=model, judgments=judgments, eval_split=eval_split),
        "analyze": lambda: analyze(cfg, splits=splits),
        "train": lambda: train(cfg, resume=resume, progress=progress, **overrides),
        "rerank": lambda: rerank(cfg, split=eval_split, **overrides),
        "evaluate": lambda: (evaluate(cfg, split=eval_split, require=require, flags=flags, train_flags=train_flags,
                                      **overrides)
                             if measured and evaluable(cfg, split) else Skipped(unmeasured(cfg, split))),
    }
    results: dict[str, Any] = {}
    timings: dict[str, dict[str, float]] = {}
    with run_dir_lock(cfg.run_dir, "run"):  # one hold for every stage: no other writer comes in between
        for name in stages:
            if on_start:
                on_start(name)
            started = time.perf_counter()
            results[name] = calls[name]()
            timings[name] = {"seconds": round(time.perf_counter() - started, 2), "peak_rss_mib": peak_rss_mib()}
            if on_end:
                on_end(name, results[name])
        path = write_text(json.dumps(timings, indent=1) + "\n", RunPaths(cfg.run_dir).root / "timings.json")
    return RunResult(results, timings, path)


def peak_rss_mib() -> float:
    """The process's peak resident memory so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)


@locked("index")
def index(cfg: PipelineConfig, model: str = DEFAULT_ENCODER, split: str = "test", k: int = 100,
          batch_size: int = 64, name: str | None = None, progress: bool = True) -> tuple[Path, pd.DataFrame, bool]:
    """Dense retrieval of ``split``'s queries over the whole collection with a bi-encoder (its Faiss index cached
    under ``index/``): the top ``k`` of each query into ``runs/<name>.retrieval.trec`` and MRR@10, R@10, MAP and
    nDCG@10 beside it (``.csv``). Returns the run file, the metrics and whether the index was cached."""
    from weakrank.retrieval import retrieve

    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    paths = RunPaths(cfg.run_dir)
    dataset = Dataset.load(paths.dataset).subset(splits=[split], max_queries=cfg.dataset.max_queries)
    if dataset.queries.empty:
        raise DataError(f"split {split!r} has no queries", field="split")
    run, built = retrieve(model, dataset.passages, dataset.queries, paths.index, k=k, batch_size=batch_size,
                          progress=progress)
    name = name or run_name(model)
    out = write_run(run, paths.runs / f"{name}.retrieval.trec", name)
    table = results_table({name: [evaluate_run(run, dataset.qrels, require="relevant", measures=RETRIEVAL_MEASURES)]},
                          baseline=name)
    write_text(table.to_csv(), out.with_suffix(".csv"))
    return out, table, built.cached


def run_name(model: str | Path) -> str:
    """``minilm`` → ``minilm``; ``<run_dir>/model/best`` → ``model`` (as ``rerank`` names runs)."""
    path = Path(model)
    return path.parent.name if path.name in ("best", "final") else path.name


@locked("corrupt")
def corrupt(cfg: PipelineConfig, ratio: float = 0.02, seed: int = 0, split: str = "train", column: str = "label",
            encoder: str = DEFAULT_ENCODER, labels: str | Path | None = None, out: str | Path | None = None
            ) -> tuple[Path, Path]:
    """Semantic-aware label noise (:mod:`weakrank.noise`): the labels of ``ratio`` of ``split``'s queries in
    ``labels`` (default labels.parquet) swapped towards similar passages; writes the noisy table (default
    ``labels_noise<r>_seed<s>.parquet``) and its log. Returns both paths."""
    from weakrank.noise import corrupt_labels, sentence_encoder

    paths = RunPaths(cfg.run_dir)
    source = Path(labels) if labels else paths.labels
    passages = Dataset.load(paths.dataset).passages
    noisy, log = corrupt_labels(read_parquet(source), passages, ratio, sentence_encoder(encoder), seed=seed,
                                split=split, column=column)
    out = Path(out or paths.root / f"labels_noise{ratio:g}_seed{seed}.parquet")
    log_path = write_parquet(log, out.with_name(out.stem + "_log.parquet"))
    write_parquet(noisy, out, metadata={"noise_ratio": ratio, "seed": seed, "source": str(source)})
    return out, log_path


def undo_corrupt(labels: str | Path, log: str | Path, out: str | Path | None = None) -> Path:
    """``labels`` with the values a :func:`corrupt` log changed restored, into ``out`` (default
    ``<labels>_restored.parquet``)."""
    from weakrank.noise import undo_corruption

    labels = Path(labels)
    restored = undo_corruption(read_parquet(labels), read_parquet(log))
    return write_parquet(restored, Path(out or labels.with_name(labels.stem + "_restored.parquet")))
