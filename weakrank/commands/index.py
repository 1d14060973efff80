"""``weakrank index``: dense retrieval of a split's queries over the whole collection, evaluated."""

from __future__ import annotations

import argparse

from weakrank.commands import AddCommand, pipeline_config
from weakrank.encoders import DEFAULT_ENCODER
from weakrank.paths import RunPaths


def cmd_index(args: argparse.Namespace) -> None:
    from weakrank import pipeline
    from weakrank.evaluation.tables import format_table

    cfg = pipeline_config(args)
    out, table, cached = pipeline.index(cfg, args.model, args.split, k=args.k, batch_size=args.batch_size,
                                        name=args.name, progress=not args.quiet)
    name = table.index[0]
    print(f"{args.split}: {table.loc[name, 'queries']} queries with a relevant passage, top {args.k} of the "
          f"collection ({'cached' if cached else 'new'} index under {RunPaths(cfg.run_dir).index})")
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
