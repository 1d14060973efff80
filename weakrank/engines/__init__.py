"""Where ``label`` runs: ``local`` (in-process, :func:`weakrank.labeling.apply_lfs`), ``dask`` or ``spark``.

There is one labeling path, :func:`label_dataset`: every engine goes through
:func:`~weakrank.labeling.apply_lfs`, which reads the per-LF score cache (``<run_dir>/lf_scores``, keyed by
:func:`~weakrank.labeling.cache_key`), scores only the LFs it lacks, caches their scores and votes on the
driver. ``local`` scores them in process; ``dask`` and ``spark`` score them on partitions of whole query lists
(the same :class:`~weakrank.lf_scorer.RankingLF` objects, the same LF calls, the same scores), going through a
partitioned Parquet pairs dataset and a partitioned votes dataset (see :mod:`weakrank.engines.partitions`), so
a worker's memory stays bounded by a partition; switching engines recomputes nothing that is cached.
:func:`label_to_parquet` runs a distributed engine and leaves its votes on disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.engines.bundle import bundle_lfs
from weakrank.engines.partitions import read_votes, write_pairs
from weakrank.errors import ConfigError, did_you_mean
from weakrank.files import atomic_dir
from weakrank.labeling import CHUNK_SIZE, SCORE, apply_lfs
from weakrank.lf_scorer import RankingLF
from weakrank.names import ENGINES

# the registry: each engine of weakrank.names.ENGINES (same names, same order) and the options of its [label.<engine>]
ENGINE_OPTIONS: dict[str, set[str]] = {"local": set(), "dask": {"address", "workers", "threads", "client"},
                                       "spark": {"master", "spark"}}


@dataclass(frozen=True)
class EngineConfig:
    """An engine and its options: ``address``/``workers``/``threads`` (dask), ``master`` (spark),
    ``part_rows`` (pairs per partition, made of whole ``chunk_size`` LF calls as in ``apply_lfs``);
    ``client``/``spark`` reuse a running Dask client / SparkSession."""

    name: str = "local"
    options: dict[str, Any] = field(default_factory=dict)
    part_rows: int = 100_000
    chunk_size: int = CHUNK_SIZE

    def __post_init__(self) -> None:
        if self.name not in ENGINES:
            raise ConfigError(f"unknown label engine {self.name!r}{did_you_mean(self.name, ENGINES)}; "
                              f"choose one of {list(ENGINES)}")
        unknown = sorted(set(self.options) - ENGINE_OPTIONS[self.name])
        if unknown:
            raise ConfigError(f"unknown [label.{self.name}] option(s) {unknown}; allowed: "
                              f"{sorted(ENGINE_OPTIONS[self.name])}")


def engine_config(name: str, options: dict[str, Any] | None = None) -> EngineConfig:
    """An :class:`EngineConfig` from a ``[label.<engine>]`` table (``part_rows``/``chunk_size`` included)."""
    options = dict(options or {})
    sizes = {k: int(options.pop(k)) for k in ("part_rows", "chunk_size") if k in options}
    return EngineConfig(name, options, **sizes)


def _distributed(engine: EngineConfig) -> None:
    if engine.name == "local":
        raise ConfigError("the local engine labels in process, through label_dataset; this runs dask or spark")


def run_engine(
    engine: EngineConfig,
    pairs_dir: Path,
    out_dir: Path,
    lfs: Sequence[RankingLF],
    dataset: Dataset,
    progress: bool = True,
) -> Path:
    """Label the pairs dataset ``pairs_dir`` with the Dask or Spark ``engine`` into the votes dataset ``out_dir``
    (atomically); ``local`` labels in process, through :func:`label_dataset`."""
    _distributed(engine)
    bundle = bundle_lfs(lfs, dataset, engine.chunk_size)
    with atomic_dir(out_dir) as tmp:
        if engine.name == "dask":
            from weakrank.engines import dask_engine

            dask_engine.run(pairs_dir, tmp, bundle, progress=progress, **engine.options)
        else:
            from weakrank.engines import spark_engine

            spark_engine.run(pairs_dir, tmp, bundle, progress=progress, **engine.options)
    return Path(out_dir)


def label_to_parquet(
    dataset: Dataset, lfs: Sequence[RankingLF], engine: EngineConfig, work_dir: str | Path, progress: bool = True
) -> Path:
    """Write ``<work_dir>/pairs`` and label it with the Dask or Spark ``engine`` into ``<work_dir>/votes``
    (partitioned Parquet); returns the latter. No cache is read or written: see :func:`label_dataset`."""
    _distributed(engine)
    work_dir = Path(work_dir)
    names = [lf.name for lf in lfs]
    if len(set(names)) != len(names):
        raise ConfigError(f"LF names must be unique, got {names}")
    pairs_dir = write_pairs(dataset, work_dir / "pairs", engine.part_rows, engine.chunk_size)
    return run_engine(engine, pairs_dir, work_dir / "votes", lfs, dataset, progress)


def label_dataset(
    dataset: Dataset,
    lfs: Sequence[RankingLF],
    engine: EngineConfig,
    work_dir: str | Path,
    progress: bool = True,
    *,
    cache_dir: str | Path | None = None,
    fingerprints: Mapping[str, str] | None = None,
    reuse: bool = True,
) -> pd.DataFrame:
    """The votes table of ``dataset`` (the columns and order of :func:`~weakrank.labeling.apply_lfs`) with the LFs
    the cache ``cache_dir`` lacks (``fingerprints``: their :func:`~weakrank.labeling.cache_key`; ``reuse=False``
    recomputes all) scored by ``engine``: in process (``local``), or on ``<work_dir>/pairs`` by Dask or Spark,
    whose scores are then cached as the local ones are."""

    def on_engine(missing: Sequence[RankingLF]) -> dict[str, Any]:
        votes = read_votes(label_to_parquet(dataset, missing, engine, work_dir, progress))
        return {lf.name: votes[SCORE + lf.name].to_numpy() for lf in missing}

    return apply_lfs(dataset, lfs, cache_dir=cache_dir, fingerprints=fingerprints, progress=progress,
                     chunk_size=engine.chunk_size, reuse=reuse, scorer=None if engine.name == "local" else on_engine)


__all__ = [
    "ENGINES",
    "ENGINE_OPTIONS",
    "EngineConfig",
    "engine_config",
    "label_dataset",
    "label_to_parquet",
    "run_engine",
]
