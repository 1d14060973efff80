"""The index stage: dense retrieval of a split's queries over the whole collection with a bi-encoder, its run and
metrics written under ``runs/``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.encoders import DEFAULT_ENCODER
from weakrank.errors import ConfigError, DataError
from weakrank.evaluation.metrics import RETRIEVAL_MEASURES, evaluate_run
from weakrank.evaluation.tables import results_table
from weakrank.io import write_run, write_text
from weakrank.paths import RunPaths
from weakrank.stages.stage import stage


@stage("index")
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

