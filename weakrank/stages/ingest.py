"""The ingest stage: the configured dataset loaded, validated and written as the run directory's canonical tables."""

from __future__ import annotations

from weakrank.config import PipelineConfig, check_max_queries
from weakrank.dataset import Dataset, check_replaceable
from weakrank.loaders import load_dataset
from weakrank.paths import RunPaths
from weakrank.stages.stage import stage


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

