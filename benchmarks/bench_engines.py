"""Label throughput (pairs/s) and peak memory of the local, Dask and Spark engines.

Pairs: SciFact queries × their BM25 top-N passages (N = pairs / queries), written once as a
partitioned Parquet dataset; each engine streams it partition by partition with the cheap LFs
(bm25, tfidf, word_overlap) into a partitioned votes dataset, so memory stays bounded by a partition
whatever the number of pairs. Peak memory is the RSS of the driver plus all its child processes
(Dask workers, the Spark JVM and its Python workers), sampled every 0.1 s. Cluster start-up is
timed apart. Reference: ``local``, the same partitions labelled one after another in this process
(:class:`~weakrank.engines.bundle.LFBundle`, as a Dask worker labels them; the ``local`` engine of
``weakrank label`` holds all pairs in memory instead), measured in the same run (ratios vs local).

Run: ``python benchmarks/bench_engines.py --pairs 1000000 [--pairs 4000000] [--engines local,dask,spark]``.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
from matplotlib.figure import Figure

from labeling_functions import make_bm25, make_tfidf, word_overlap
from weakrank.dataset import Dataset
from weakrank.engines import EngineConfig, run_engine
from weakrank.engines.bundle import bundle_lfs
from weakrank.engines.partitions import iter_votes, part_ids, read_part, vote_columns, write_pairs, write_votes_part
from weakrank.files import atomic_dir
from weakrank.loaders import load_dataset
from weakrank.plots import save_figure

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
RESULTS = Path(__file__).resolve().parent / "results"


class PeakRSS:
    """Peak RSS (MB) of process ``pid`` and all its descendants, sampled in a thread."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        self.pid, self.every, self.peak, self._stop = pid, every, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> float:
        try:
            root = psutil.Process(self.pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return 0.0
        total = 0
        for proc in tree:
            try:
                total += proc.memory_info().rss
            except psutil.Error:
                pass
        return total / 2**20

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            self._stop.wait(self.every)

    def __enter__(self) -> PeakRSS:
        self.peak = self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def write_scifact_pairs(n_pairs: int, pairs_dir: Path, part_rows: int) -> int:
    """Write SciFact (train + test queries) × BM25 top-N (N for about ``n_pairs`` pairs) as a pairs dataset."""
    probe = load_dataset("beir", SHARED / "scifact", k=1)
    k = math.ceil(n_pairs / len(probe.queries))
    if k > len(probe.passages):
        raise SystemExit(f"{n_pairs} pairs need more than the {len(probe.passages)} SciFact passages per query")
    dataset = load_dataset("beir", SHARED / "scifact", k=k)
    write_pairs(dataset, pairs_dir, part_rows)
    return len(dataset.candidates)


def engine_options(name: str, workers: int) -> tuple[dict, object]:
    """Options with a started cluster (start-up timed apart) and the object to close after."""
    if name == "dask":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        return {"client": client}, lambda: (client.close(), cluster.close())
    if name == "spark":
        from weakrank.engines.spark_engine import session

        spark = session(f"local[{workers}]", progress=False)
        return {"spark": spark}, spark.stop
    return {}, lambda: None


def vote_counts(votes_dir: Path) -> tuple[int, np.ndarray]:
    """Rows and per-LF (+1, −1) vote counts of a votes dataset, read chunk by chunk (a cheap equality check)."""
    rows, counts = 0, 0
    for chunk in iter_votes(votes_dir, vote_columns(votes_dir)):
        rows += len(chunk)
        counts = counts + np.stack([(chunk == 1).sum().to_numpy(), (chunk == -1).sum().to_numpy()])
    return rows, counts


def label_in_process(pairs_dir: Path, out_dir: Path, lfs: list, dataset: Dataset) -> None:
    """The reference: every partition labelled in this process, one after another (memory: one partition)."""
    bundle = bundle_lfs(lfs, dataset)
    with atomic_dir(out_dir) as tmp:
        for part in part_ids(pairs_dir):
            write_votes_part(bundle.label(read_part(pairs_dir, part)), tmp, part)


def measure(name: str, pairs_dir: Path, out_dir: Path, workers: int, part_rows: int, started, done, result) -> None:
    """In a fresh process: start the engine, label ``pairs_dir`` between ``started``/``done``, report the times."""
    probe = load_dataset("beir", SHARED / "scifact", k=1)
    lite = Dataset(probe.name, probe.queries, probe.passages, probe.candidates.iloc[:0])  # what the LFs fit on
    t0 = time.perf_counter()
    options, close = engine_options(name, workers)
    startup = time.perf_counter() - t0
    try:
        started.set()
        t0 = time.perf_counter()
        lfs = [make_bm25(), make_tfidf(), word_overlap]
        if name == "local":
            label_in_process(pairs_dir, out_dir, lfs, lite)
        else:
            run_engine(EngineConfig(name, options, part_rows=part_rows), pairs_dir, out_dir, lfs, lite, progress=False)
        seconds = time.perf_counter() - t0
        done.set()
    finally:
        close()
    result.put((startup, seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, action="append", help="pairs to label (repeatable; default 1,000,000)")
    parser.add_argument("--engines", default="local,dask,spark")
    parser.add_argument("--workers", type=int, default=2, help="Dask worker processes / Spark local[N] threads")
    parser.add_argument("--part-rows", type=int, default=100_000, help="pairs per partition")
    args = parser.parse_args()
    engines = args.engines.split(",")
    spawn = multiprocessing.get_context("spawn")
    rows = []
    for n_pairs in args.pairs or [1_000_000]:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="bench_engines.") as tmp:
            pairs_dir = Path(tmp) / "pairs"
            with ProcessPoolExecutor(1, mp_context=spawn) as pool:
                n = pool.submit(write_scifact_pairs, n_pairs, pairs_dir, args.part_rows).result()
            print(f"{n:,} SciFact pairs written as partitioned Parquet in {time.perf_counter() - started:.1f}s")
            reference = None
            for name in engines:
                # each engine in a fresh process: its memory is the RSS of that process tree while labeling
                on, off, result = spawn.Event(), spawn.Event(), spawn.Queue()
                votes_dir = Path(tmp) / f"votes_{name}"
                proc = spawn.Process(
                    target=measure, args=(name, pairs_dir, votes_dir, args.workers, args.part_rows, on, off, result)
                )
                proc.start()
                on.wait()
                with PeakRSS(proc.pid) as memory:
                    while not off.wait(0.2) and proc.is_alive():
                        pass
                startup, seconds = result.get()
                proc.join()
                counts = vote_counts(votes_dir)
                reference = reference or counts
                same = counts[0] == reference[0] and bool((counts[1] == reference[1]).all())
                rows.append(
                    {
                        "pairs": n,
                        "engine": name,
                        "start-up s": startup,
                        "label s": seconds,
                        "pairs/s": n / seconds,
                        "peak MB": memory.peak,
                        "same votes": same,
                    }
                )
                print(
                    f"  {name:<6} {seconds:8.1f}s  {n / seconds:>10,.0f} pairs/s  peak {memory.peak:,.0f} MB  "
                    f"(start-up {startup:.1f}s, votes as local: {same})",
                    flush=True,
                )
    table = pd.DataFrame(rows)
    local = table[table["engine"] == "local"].set_index("pairs")
    if not local.empty:
        table["speed vs local"] = table["pairs/s"] / table["pairs"].map(local["pairs/s"])
        table["memory vs local"] = table["peak MB"] / table["pairs"].map(local["peak MB"])
    print(
        f"\nlabel engines, cheap LFs (bm25, tfidf, word_overlap), {args.workers} workers, "
        f"{args.part_rows:,} pairs per partition, {psutil.cpu_count()} CPU cores\n"
    )
    print(table.to_markdown(index=False, floatfmt=",.2f"))
    RESULTS.mkdir(parents=True, exist_ok=True)
    table.to_csv(RESULTS / "engines.csv", index=False)
    plot(table, RESULTS / "engines.png")
    print(f"\nwritten {RESULTS / 'engines.csv'} and {RESULTS / 'engines.png'}")


def plot(table: pd.DataFrame, path: Path) -> None:
    """Throughput and peak memory per engine and size, side by side."""
    labels = [f"{e} @ {p:,} pairs" for e, p in zip(table["engine"], table["pairs"])]
    fig = Figure(figsize=(10, 0.5 * len(table) + 1.5))
    axes = fig.subplots(1, 2)
    for ax, column in zip(axes, ("pairs/s", "peak MB")):
        ax.barh(labels, table[column], color="tab:blue")
        ax.set_title(column)
        ax.invert_yaxis()
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"label engines on SciFact pairs ({psutil.cpu_count()}-core CPU)")
    save_figure(fig, path)


if __name__ == "__main__":
    main()
