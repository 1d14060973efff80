"""The Dask engine: one dask.dataframe partition per pairs partition, labelled by ``map_partitions``.

Without an ``address`` a ``distributed.LocalCluster`` is started (``workers`` processes of
``threads`` threads each); with one (``tcp://host:8786``) the run goes to that scheduler, whose
workers must have weakrank (and the LFs' modules) installed and see ``pairs_dir``/``out_dir``.
The fitted LFs are scattered to every worker once (``broadcast=True``), not sent with each task.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from weakrank.engines.bundle import LFBundle
from weakrank.engines.partitions import pairs_dataset, part_ids, read_part, write_votes_part
from weakrank.progress import tqdm


def _label_and_write(pairs: pd.DataFrame, bundle: LFBundle, out_dir: str) -> pd.DataFrame:
    votes = bundle.label(pairs)
    write_votes_part(votes, out_dir, int(votes["part"].iloc[0]))
    return pd.DataFrame({"part": votes["part"].iloc[:1], "pairs": [len(votes)]})


def run(
    pairs_dir: Path,
    out_dir: Path,
    bundle: LFBundle,
    *,
    address: str | None = None,
    workers: int = 2,
    threads: int = 1,
    client=None,
    progress: bool = True,
) -> None:
    """Label every partition of ``pairs_dir`` on a Dask cluster; each task writes its votes part."""
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, as_completed

    own_cluster = own_client = None
    if client is None:
        if address:
            client = own_client = Client(address)
        else:
            own_cluster = LocalCluster(
                n_workers=workers, threads_per_worker=threads, processes=True, dashboard_address=None
            )
            client = own_client = Client(own_cluster)
    try:
        shipped = client.scatter(bundle, broadcast=True)
        parts = part_ids(pairs_dir)
        empty = pairs_dataset(pairs_dir).schema.empty_table().to_pandas()
        frame = dd.from_map(read_part, [str(pairs_dir)] * len(parts), parts, meta=empty, enforce_metadata=False)
        meta = pd.DataFrame({"part": pd.Series(dtype="int32"), "pairs": pd.Series(dtype="int64")})
        done = frame.map_partitions(_label_and_write, shipped, str(out_dir), meta=meta)
        futures = client.compute(done.to_delayed())
        with tqdm(total=len(parts), desc="labeling (dask)", unit="part", disable=not progress) as bar:
            for future in as_completed(futures):
                future.result()  # re-raises a worker's error here
                bar.update(1)
    finally:
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()
