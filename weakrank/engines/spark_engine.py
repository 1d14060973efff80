"""The Spark engine: the pairs dataset grouped by partition, each group labelled by ``applyInPandas``.

``master`` is ``local[*]`` by default, or a cluster URL (``spark://host:7077``, ``yarn``, ``k8s://…``)
whose executors must have weakrank installed and see ``pairs_dir``/``out_dir``. The fitted LFs travel
as one broadcast variable, unpickled once per Python worker process.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import cloudpickle
import pandas as pd

from weakrank.engines.bundle import LFBundle, spark_schema
from weakrank.engines.partitions import part_ids

_BUNDLES: dict[str, LFBundle] = {}  # per Python worker process: run key → unpickled LFs


def session(master: str = "local[*]", progress: bool = True):
    """A SparkSession on ``master`` (the active one is reused); workers run this Python."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master(master)
        .appName("weakrank-label")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", str(progress).lower())
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )


def _bundle(broadcast, key: str) -> LFBundle:
    # module-level (pickled by reference), so the cache is this process's, not a copy per task
    if key not in _BUNDLES:
        _BUNDLES[key] = cloudpickle.loads(broadcast.value)
    return _BUNDLES[key]


def _labeller(broadcast, key: str):
    def label(pairs: pd.DataFrame) -> pd.DataFrame:
        return _bundle(broadcast, key).label(pairs)

    return label


def run(
    pairs_dir: Path, out_dir: Path, bundle: LFBundle, *, master: str = "local[*]", spark=None, progress: bool = True
) -> None:
    """Label every partition of ``pairs_dir`` with Spark and write the votes into ``out_dir``."""
    own = spark is None
    spark = spark or session(master, progress)
    try:
        n_parts = len(part_ids(pairs_dir))
        spark.conf.set("spark.sql.shuffle.partitions", str(n_parts))
        broadcast = spark.sparkContext.broadcast(cloudpickle.dumps(bundle))
        pairs = spark.read.parquet(str(pairs_dir))
        votes = pairs.groupBy("part").applyInPandas(
            _labeller(broadcast, uuid.uuid4().hex), schema=spark_schema([lf.name for lf in bundle.lfs])
        )
        votes.write.mode("overwrite").parquet(str(out_dir))
        broadcast.unpersist()
    finally:
        if own:
            spark.stop()
