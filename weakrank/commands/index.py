"""``weakrank index``: dense retrieval of a split's queries over the whole collection, evaluated."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from weakrank.commands import AddCommand, pipeline_config
from weakrank.encoders import DEFAULT_ENCODER
from weakrank.errors import ConfigError, DataError
from weakrank.paths import RunPaths

if TYPE_CHECKING:
    import pandas as pd


def run_name(model: str) -> str:
    """``minilm`` → ``minilm``; ``<run_dir>/model/best`` → ``model`` (as ``weakrank rerank`` names runs)."""
    path = Path(model)
    return path.parent.name if path.name in ("best", "final") else path.name


def evaluate_retrieval(run: pd.DataFrame, qrels: pd.DataFrame, name: str) -> pd.DataFrame:
    """MRR@10, R@10, MAP and nDCG@10 of ``run`` over the queries with a relevant passage."""
    from weakrank.evaluation.metrics import RETRIEVAL_MEASURES, evaluate_run
    from weakrank.evaluation.tables import results_table

    return results_table({name: [evaluate_run(run, qrels, require="relevant", measures=RETRIEVAL_MEASURES)]},
                         baseline=name)


def cmd_index(args: argparse.Namespace) -> None:
    from weakrank.dataset import Dataset
    from weakrank.evaluation.tables import format_table
    from weakrank.io import write_run, write_text
    from weakrank.retrieval import retrieve

    if args.k < 1:
        raise ConfigError(f"--k must be at least 1, got {args.k}")
    cfg = pipeline_config(args)
    paths = RunPaths(cfg.run_dir)
    dataset = Dataset.load(paths.dataset).subset(splits=[args.split], max_queries=cfg.dataset.max_queries)
    if dataset.queries.empty:
        raise DataError(f"split {args.split!r} has no queries", field="split")
    run, index = retrieve(args.model, dataset.passages, dataset.queries, paths.index, k=args.k,
                          batch_size=args.batch_size, progress=not args.quiet)
    name = args.name or run_name(args.model)
    out = write_run(run, paths.root / "runs" / f"{name}.retrieval.trec", name)
    table = evaluate_retrieval(run, dataset.qrels, name)
    write_text(table.to_csv(), out.with_suffix(".csv"))
    print(f"{args.split}: {table.loc[name, 'queries']} queries with a relevant passage, top {args.k} of "
          f"{len(dataset.passages)} passages ({'cached' if index.cached else 'new'} index under {paths.index})")
    print(format_table(table).to_string())
    print(f"\nwrote {out} and {out.with_suffix('.csv')}")


def register(add: AddCommand) -> None:
    """Add ``index``."""
    p = add("index", cmd_index, "encode the collection with a bi-encoder into a Faiss index (cached under "
            "<run_dir>/index/), retrieve each query's top k and evaluate MRR@10, R@10, MAP, nDCG@10")
    p.add_argument("--model", default=DEFAULT_ENCODER,
                   help="bi-encoder: a trained model directory, 'minilm' (packaged, zero-shot), a Hugging Face "
                        "name or a local sentence-transformers path (default: minilm)")
    p.add_argument("--split", default="test", help="split whose queries are retrieved for (default: test)")
    p.add_argument("--k", type=int, default=100, help="passages retrieved per query (default: 100)")
    p.add_argument("--batch-size", type=int, default=64, help="texts per encoding batch (default: 64)")
    p.add_argument("--name", help="run name (file runs/<name>.retrieval.trec and TREC tag; default: the model's "
                   "folder)")
