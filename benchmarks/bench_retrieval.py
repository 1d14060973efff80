"""Dense retrieval over a whole collection: Faiss beside a brute-force numpy baseline, and the quality of models.

For each dataset (SciFact: its test queries over the 5,183-abstract corpus; WikiQA: its test queries over
all 26k answer sentences; both from the run directories of ``pipelines/<name>.toml``, ingested first) and
each model (zero-shot ``minilm`` always, plus every ``--models`` directory or name):

* ``encode_passages_s``: encoding the collection (0 work when the run directory's index cache is reused:
  ``cached`` says so; ``--no-cache`` encodes into a temporary directory), ``encode_queries_s``;
* ``faiss_build_s``: building the ``IndexFlatIP`` from the embeddings (what the brute-force baseline does not
  need); ``faiss_qps`` and ``numpy_qps``: queries per second of the top-k search over the same embeddings
  (best of ``--repeats``), asserted to give the same top k (the same passages up to tied scores; ``ids_equal``:
  the share of identical passages rank by rank);
* MRR@10, R@10, MAP, nDCG@10 of the run (ir-measures, queries with a relevant passage).

Rows go to ``benchmarks/retrieval.csv`` with the date and the machine.

Run: ``python benchmarks/bench_retrieval.py [--models data/scifact/model_bi/best ...] [--datasets scifact,wikiqa]``;
a smoke test: ``--max-queries 20 --max-passages 500 --no-cache`` (then the metrics are not comparable).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import faiss
import numpy as np
import pandas as pd
import torch

from weakrank.config import load_config
from weakrank.dataset import Dataset
from weakrank.encoders import content_hash
from weakrank.evaluation.metrics import RETRIEVAL_MEASURES, evaluate_run
from weakrank.paths import RunPaths
from weakrank.progress import configure
from weakrank.retrieval import (
    DenseIndex,
    encode_texts,
    flat_index,
    load_encoder,
    model_key,
    numpy_search,
    passage_index,
)

ROOT = Path(__file__).resolve().parents[1]
CSV_PATH = Path(__file__).resolve().parent / "retrieval.csv"


def machine() -> str:
    """The GPU if any, the CPU model and the cores this process may use."""
    cpuinfo = Path("/proc/cpuinfo")
    models = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
              if line.startswith("model name")] if cpuinfo.exists() else []
    gpu = f"{torch.cuda.get_device_name()} + " if torch.cuda.is_available() else ""
    return f"{gpu}{models[0] if models else platform.machine()} ({len(os.sched_getaffinity(0))} cores)"


def load_split(name: str, split: str, max_queries: int | None, max_passages: int | None) -> tuple[Dataset, Path]:
    """The dataset of ``pipelines/<name>.toml``'s run directory restricted to ``split`` (and the smoke limits)."""
    run_dir = ROOT / load_config(ROOT / "pipelines" / f"{name}.toml").run_dir
    ds = Dataset.load(RunPaths(run_dir).dataset).subset(splits=[split], max_queries=max_queries)
    if max_passages is not None:  # the judged passages of the kept queries and the first N others
        judged = ds.passages["passage_id"].isin(ds.qrels["passage_id"])
        ds = replace(ds, passages=ds.passages[judged | ((~judged).cumsum() <= max_passages)])
    return ds, run_dir


def best_time(search, repeats: int) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = search()
        times.append(time.perf_counter() - start)
    return min(times), result


def same_top_k(embeddings: np.ndarray, queries: np.ndarray, faiss_ids: np.ndarray, numpy_scores: np.ndarray) -> bool:
    """Faiss's passages score (exactly recomputed) as numpy's top k does, rank by rank: the same top k up to ties."""
    exact = np.einsum("qd,qkd->qk", queries, embeddings[faiss_ids])
    return bool(np.allclose(exact, numpy_scores, atol=1e-5))


def bench(dataset: str, ds: Dataset, cache_root: Path, model: str, args: argparse.Namespace) -> dict:
    encoder = load_encoder(model)
    start = time.perf_counter()
    index = passage_index(encoder, content_hash(model), ds.passages, cache_root / model_key(model), args.batch_size,
                          progress=not args.quiet)
    encode_passages_s = time.perf_counter() - start
    start = time.perf_counter()
    queries = encode_texts(encoder, ds.queries["text"].tolist(), args.batch_size, not args.quiet, "encoding queries")
    encode_queries_s = time.perf_counter() - start

    start = time.perf_counter()
    built = flat_index(index.embeddings)
    faiss_build_s = time.perf_counter() - start
    k, n = min(args.k, len(ds.passages)), len(queries)
    faiss_s, (_, faiss_ids) = best_time(lambda: built.search(queries, k), args.repeats)
    numpy_s, (numpy_scores, numpy_ids) = best_time(lambda: numpy_search(index.embeddings, queries, k), args.repeats)
    assert same_top_k(index.embeddings, queries, faiss_ids, numpy_scores), f"{dataset}/{model}: Faiss ≠ numpy top-{k}"

    run = DenseIndex(index.passage_ids, index.embeddings, built).search(queries, ds.queries["query_id"].tolist(), k)
    metrics = evaluate_run(run, ds.qrels, require="relevant", measures=RETRIEVAL_MEASURES)
    return {
        "date": datetime.date.today().isoformat(), "machine": machine(), "dataset": dataset, "model": model,
        "passages": len(ds.passages), "queries": n, "evaluated": len(metrics), "k": k, "dim": index.embeddings.shape[1],
        "cached": index.cached, "encode_passages_s": round(encode_passages_s, 2), "encode_queries_s": round(encode_queries_s, 2),
        "faiss_build_s": round(faiss_build_s, 4), "faiss_qps": round(n / faiss_s, 1), "numpy_qps": round(n / numpy_s, 1),
        "ids_equal": round(float((faiss_ids == numpy_ids).mean()), 4),
        **{m: round(float(v), 4) for m, v in metrics.mean().items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="scifact,wikiqa", help="comma-separated pipelines/<name>.toml names")
    parser.add_argument("--models", nargs="*", default=[], help="bi-encoder directories or names besides minilm")
    parser.add_argument("--split", default="test", help="split whose queries are retrieved for")
    parser.add_argument("--k", type=int, default=100, help="passages retrieved per query")
    parser.add_argument("--batch-size", type=int, default=64, help="texts per encoding batch")
    parser.add_argument("--repeats", type=int, default=3, help="timed searches per system (best is kept)")
    parser.add_argument("--max-queries", type=int, help="smoke test: the first N queries of the split")
    parser.add_argument("--max-passages", type=int, help="smoke test: the judged passages and the first N others")
    parser.add_argument("--no-cache", action="store_true", help="encode into a temporary directory (time the encoding)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--out", type=Path, default=CSV_PATH, help="CSV written")
    args = parser.parse_args()
    configure(quiet=args.quiet)
    print(f"{datetime.date.today()} on {machine()}; faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads")

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in args.datasets.split(","):
            ds, run_dir = load_split(dataset, args.split, args.max_queries, args.max_passages)
            cache_root = Path(tmp) / dataset if args.no_cache else RunPaths(run_dir).index
            for model in ["minilm", *args.models]:
                rows.append(bench(dataset, ds, cache_root, model, args))
                print(pd.DataFrame([rows[-1]]).drop(columns=["date", "machine"]).to_string(index=False), flush=True)

    table = pd.DataFrame(rows)
    print("\n" + table.drop(columns=["date", "machine"]).to_string(index=False))
    if args.out.exists():  # rows of (dataset, model) pairs not measured this time are kept from earlier runs
        old = pd.read_csv(args.out, dtype=str)
        measured = set(zip(table["dataset"], table["model"]))
        kept = old[[pair not in measured for pair in zip(old["dataset"], old["model"])]]
        table = pd.concat([kept, table.astype(str)], ignore_index=True)
    table.sort_values(["dataset"], kind="stable").to_csv(args.out, index=False)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
