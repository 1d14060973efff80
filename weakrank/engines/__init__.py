"""Where ``label`` runs: ``local`` (in-process, :func:`weakrank.labeling.apply_lfs`), ``dask`` or ``spark``.

Every engine runs the same :class:`~weakrank.lf.RankingLF` objects on partitions of whole query
lists and yields the same scores and votes. The distributed engines go through a partitioned
Parquet pairs dataset and write a partitioned votes dataset (see :mod:`weakrank.engines.partitions`),
so memory stays bounded by a partition; :func:`label_dataset` returns the votes table in memory,
:func:`label_to_parquet` leaves it on disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.engines.partitions import read_votes, write_pairs
from weakrank.engines.shipping import ship
from weakrank.errors import ConfigError, did_you_mean
from weakrank.io import atomic_dir
from weakrank.labeling import CHUNK_SIZE
from weakrank.lf import RankingLF

ENGINES = ("local", "dask", "spark")


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
        allowed = {"local": set(), "dask": {"address", "workers", "threads", "client"}, "spark": {"master", "spark"}}
        unknown = sorted(set(self.options) - allowed[self.name])
        if unknown:
            raise ConfigError(f"unknown [label.{self.name}] option(s) {unknown}; allowed: {sorted(allowed[self.name])}")


def engine_config(name: str, options: dict[str, Any] | None = None) -> EngineConfig:
    """An :class:`EngineConfig` from a ``[label.<engine>]`` table (``part_rows``/``chunk_size`` included)."""
    options = dict(options or {})
    sizes = {k: int(options.pop(k)) for k in ("part_rows", "chunk_size") if k in options}
    return EngineConfig(name, options, **sizes)


def run_engine(
    engine: EngineConfig,
    pairs_dir: Path,
    out_dir: Path,
    lfs: Sequence[RankingLF],
    dataset: Dataset,
    progress: bool = True,
) -> Path:
    """Label the pairs dataset ``pairs_dir`` with ``engine`` into the votes dataset ``out_dir`` (atomically)."""
    bundle = ship(lfs, dataset, engine.chunk_size)
    with atomic_dir(out_dir) as tmp:
        if engine.name == "dask":
            from weakrank.engines import dask_engine

            dask_engine.run(pairs_dir, tmp, bundle, progress=progress, **engine.options)
        elif engine.name == "spark":
            from weakrank.engines import spark_engine

            spark_engine.run(pairs_dir, tmp, bundle, progress=progress, **engine.options)
        else:
            from weakrank.engines import local

            local.run(pairs_dir, tmp, bundle, progress=progress)
    return Path(out_dir)


def label_to_parquet(
    dataset: Dataset, lfs: Sequence[RankingLF], engine: EngineConfig, work_dir: str | Path, progress: bool = True
) -> Path:
    """Write ``<work_dir>/pairs`` and label it into ``<work_dir>/votes`` (partitioned Parquet); returns the latter."""
    work_dir = Path(work_dir)
    names = [lf.name for lf in lfs]
    if len(set(names)) != len(names):
        raise ConfigError(f"LF names must be unique, got {names}")
    pairs_dir = write_pairs(dataset, work_dir / "pairs", engine.part_rows, engine.chunk_size)
    return run_engine(engine, pairs_dir, work_dir / "votes", lfs, dataset, progress)


def label_dataset(
    dataset: Dataset, lfs: Sequence[RankingLF], engine: EngineConfig, work_dir: str | Path, progress: bool = True
) -> pd.DataFrame:
    """The votes table of ``dataset`` computed by ``engine`` (same columns and order as ``apply_lfs``)."""
    return read_votes(label_to_parquet(dataset, lfs, engine, work_dir, progress))


__all__ = [
    "ENGINES",
    "EngineConfig",
    "engine_config",
    "label_dataset",
    "label_to_parquet",
    "run_engine",
]
