"""``weakrank corrupt``: semantic-aware label noise on labels.parquet, logged and undoable."""

from __future__ import annotations

import argparse

from weakrank.commands import AddCommand, pipeline_config
from weakrank.paths import RunPaths


def cmd_corrupt(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = pipeline_config(args)
    if args.undo:
        source = args.labels or RunPaths(cfg.run_dir).labels
        print(f"restored the pairs of {args.undo} → {pipeline.undo_corrupt(source, args.undo, args.out)}")
        return
    out, log = pipeline.corrupt(cfg, args.ratio, args.seed, args.split, args.column, args.model, args.labels, args.out)
    print(f"corrupted {args.ratio:g} of the {args.split!r} queries → {out} (log: {log})")


def register(add: AddCommand) -> None:
    """Add the ``corrupt`` sub-command."""
    p = add("corrupt", cmd_corrupt, "inject semantic-aware label noise into labels.parquet (or undo it)")
    p.add_argument("--ratio", type=float, default=0.02, help="share of the split's queries to corrupt")
    p.add_argument("--seed", type=int, default=0, help="random seed of the choice of queries (default: 0)")
    p.add_argument("--split", default="train", help="split whose queries are corrupted (default: train)")
    p.add_argument("--column", default="label", help="label column to corrupt: label (pseudo) or gold")
    p.add_argument("--encoder", "--model", dest="model", default="minilm",
                   help="sentence-transformers model for passage similarity (default: minilm)")
    p.add_argument("--labels", help="labels file to read (default: <run_dir>/labels.parquet)")
    p.add_argument("--out", help="output file (default: <run_dir>/labels_noise<r>_seed<s>.parquet)")
    p.add_argument("--undo", metavar="LOG", help="restore the values changed by this log instead")
