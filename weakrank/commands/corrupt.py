"""``weakrank corrupt``: semantic-aware label noise on labels.parquet, logged and undoable."""

from __future__ import annotations

import argparse
from pathlib import Path

from weakrank.commands import AddCommand, pipeline_config
from weakrank.paths import RunPaths


def cmd_corrupt(args: argparse.Namespace) -> None:
    from weakrank.dataset import Dataset
    from weakrank.io import read_parquet, write_parquet
    from weakrank.noise import corrupt_labels, sentence_encoder, undo_corruption

    cfg = pipeline_config(args)
    paths = RunPaths(cfg.run_dir)
    source = Path(args.labels) if args.labels else paths.labels
    labels = read_parquet(source)
    if args.undo:
        restored = undo_corruption(labels, read_parquet(args.undo))
        out = Path(args.out or source.with_name(source.stem + "_restored.parquet"))
        write_parquet(restored, out)
        print(f"restored {read_parquet(args.undo)['passage_id'].nunique()} pairs → {out}")
        return
    passages = Dataset.load(paths.dataset).passages
    noisy, log = corrupt_labels(
        labels, passages, args.ratio, sentence_encoder(args.model), seed=args.seed, split=args.split, column=args.column
    )
    tag = f"noise{args.ratio:g}_seed{args.seed}"
    out = Path(args.out or paths.root / f"labels_{tag}.parquet")
    log_path = out.with_name(out.stem + "_log.parquet")
    write_parquet(log, log_path)
    write_parquet(noisy, out, metadata={"noise_ratio": args.ratio, "seed": args.seed, "source": str(source)})
    print(f"corrupted {log['query_id'].nunique()} {args.split!r} queries → {out} (log: {log_path})")


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
