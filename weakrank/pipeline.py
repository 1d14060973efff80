"""The label stages (ingest, label, aggregate, analyze), each reading and writing files of the run
directory (its layout: :mod:`weakrank.paths`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from weakrank.analysis import lf_scorers, lf_summary, quality_table
from weakrank.baselines import fusion_runs
from weakrank.config import PipelineConfig, check_max_queries, did_you_mean
from weakrank.dataset import Dataset, check_replaceable
from weakrank.engines import engine_config, label_dataset
from weakrank.errors import DataError
from weakrank.io import read_metadata, read_parquet, to_markdown, write_parquet, write_text
from weakrank.label_models import MODELS, fit_labels, fit_predict, judged_queries, usable
from weakrank.labeling import apply_lfs, cache_key, check_votes_table, lf_names
from weakrank.loaders import load_dataset
from weakrank.lock import locked
from weakrank.paths import RunPaths
from weakrank.plots import quality_bars
from weakrank.registry import resolve_lf
from weakrank.similarity import kept_encodings


@locked("ingest")
def ingest(cfg: PipelineConfig) -> Dataset:
    """Load the configured dataset, validate it and write its canonical tables (all or nothing); a file in
    ``dataset/`` that weakrank did not write stops it first."""
    check_replaceable(RunPaths(cfg.run_dir).dataset)
    dataset = load_dataset(cfg.dataset.loader, cfg.dataset.path, **cfg.dataset.options)
    if cfg.dataset.max_queries is not None:
        dataset = dataset.subset(max_queries=check_max_queries(cfg.dataset.max_queries, "[dataset] max_queries"))
    dataset.save(RunPaths(cfg.run_dir).dataset)
    return dataset


@locked("label")
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
    if runner.name != "local":
        votes = label_dataset(dataset, lfs, runner, paths.partitioned, progress=progress)
        meta = {"lfs": [lf.name for lf in lfs], "rules": [repr(lf.rule) for lf in lfs], "engine": runner.name}
        write_parquet(votes, paths.votes, metadata=meta)
        return votes
    data_key = dataset.fingerprint()
    with kept_encodings(paths.encodings):  # a neural LF added later encodes no text the others encoded
        votes = apply_lfs(
            dataset,
            lfs,
            cache_dir=paths.lf_scores,
            fingerprints={lf.name: cache_key(lf, cfg.label.fingerprint(spec), data_key)
                          for lf, spec in zip(lfs, cfg.label.lfs)},
            progress=progress,
            reuse=not force,
        )
    write_parquet(votes, paths.votes, metadata={"lfs": [lf.name for lf in lfs], "rules": [repr(lf.rule) for lf in lfs]})
    return votes


@locked("aggregate")
def aggregate(cfg: PipelineConfig, model: str | None = None) -> pd.DataFrame:
    """Fit the label model on all votes and write ``labels.parquet``. No gold is read, but in few-shot mode
    (``[aggregate] gold_queries``) that of the first judged queries of ``gold_split``, whose ids the file's
    metadata keeps (training then picks its checkpoint by their gold MAP)."""
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    check_votes_table(votes, paths.votes)
    name = model or cfg.aggregate.model
    label_model = cfg.aggregate.label_model(name)
    gold = judged_queries(votes, cfg.aggregate.gold_split, cfg.aggregate.gold_queries) if name == cfg.aggregate.model else []
    if cfg.aggregate.gold_queries and len(gold) < cfg.aggregate.gold_queries:
        raise DataError(f"[aggregate] gold_queries = {cfg.aggregate.gold_queries}, but split "
                        f"{cfg.aggregate.gold_split!r} has {len(gold)} queries judged with a relevant and a "
                        "non-relevant candidate", file=paths.votes, field="gold")
    labels = fit_labels(votes, label_model, gold)
    write_parquet(labels, paths.labels, metadata={"model": name, "lfs": lf_names(votes), "params": label_model.params(),
                                                  "gold_queries": gold})
    return labels


@locked("analyze")
def analyze(cfg: PipelineConfig, splits: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """LF summary and quality table (each LF, every label model, the configured aggregate)."""
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
        scorers[f"labels.parquet ({read_metadata(paths.labels).get('model')})"] = "p_labels"
    if splits:
        unknown = sorted(set(splits) - set(votes["split"]))
        if unknown:
            raise DataError(f"no split {unknown[0]!r}{did_you_mean(unknown[0], set(votes['split']))} in the votes; "
                            f"splits are {sorted(set(votes['split']))}", file=paths.votes, field="split")
        scored = scored[scored["split"].isin(splits)]
    summary = lf_summary(scored)
    tables = {"lf_summary": summary}
    out = paths.analysis
    write_text(summary.to_csv(), out / "lf_summary.csv")
    if scored["gold"].notna().any():
        quality = quality_table(scored, scorers)
        tables["quality"] = quality
        where = ", ".join(splits) if splits else "all splits"
        write_text(quality.to_csv(), out / "quality.csv")
        write_text(
            f"# LF quality — {cfg.name} ({where}, {quality.attrs['queries']} queries)\n\n"
            + to_markdown(quality)
            + "\n",
            out / "quality.md",
        )
        quality_bars(quality, out / "quality.png", f"LF and label-model quality — {cfg.name} ({where})")
    return tables
