"""The label stage: the configured LFs applied to the ingested dataset (where ``[label] engine`` says), their votes
written to ``votes.parquet``."""

from __future__ import annotations

from typing import Any

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.engines import engine_config, label_dataset
from weakrank.io import write_parquet
from weakrank.labeling import cache_key
from weakrank.paths import RunPaths
from weakrank.registry import resolve_lf
from weakrank.similarity import kept_encodings
from weakrank.stages.stage import stage


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
