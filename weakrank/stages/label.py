"""The label stage: the configured LFs applied to the ingested dataset (where ``[label] engine`` says), their votes
written to ``votes.parquet`` with each score column's declaration (:mod:`weakrank.votes_file`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.engines import engine_config, label_dataset
from weakrank.labeling import cache_key
from weakrank.lf import RankingLF
from weakrank.paths import RunPaths
from weakrank.registry import resolve_lfs
from weakrank.similarity import kept_encodings
from weakrank.stages.stage import stage
from weakrank.votes_file import Declaration, VotesInfo, write_votes


@stage("label")
def label(
    cfg: PipelineConfig, progress: bool = True, force: bool = False, engine: str | None = None,
    lfs: Sequence[RankingLF] | None = None, **engine_options: Any
) -> pd.DataFrame:
    """Apply the configured LFs to the ingested dataset and write ``votes.parquet``, with each score column's
    declaration (what the fusion label model weighs: later stages read it there, and build no LF).

    ``engine`` (default: ``[label] engine``) picks where they run; ``engine_options`` override ``[label.<engine>]``;
    ``lfs``: the LFs of ``[label] lfs`` already built (:func:`weakrank.pipeline.run` builds them once), else built here.
    """
    paths = RunPaths(cfg.run_dir)
    dataset = Dataset.load(paths.dataset, name=cfg.name)
    lfs = list(lfs) if lfs is not None else resolve_lfs(cfg.label.lfs, cfg.label.lf_options)
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
    declarations = {lf.name: Declaration(spec, cfg.label.fingerprint(spec), cfg.label.overrides(spec), lf.family,
                                         lf.prior) for lf, spec in zip(lfs, cfg.label.lfs)}
    write_votes(votes, paths.votes, VotesInfo([lf.name for lf in lfs], [repr(lf.rule) for lf in lfs], runner.name,
                                              declarations))
    return votes
