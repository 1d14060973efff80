"""``weakrank train`` and ``weakrank rerank``."""

from __future__ import annotations

import argparse
import os
from dataclasses import fields

from weakrank.commands import AddCommand, pipeline_config
from weakrank.training import TrainConfig, rerank, train
from weakrank.training.distributed import teardown


def _overrides(args: argparse.Namespace) -> dict:
    return {f.name: getattr(args, f.name) for f in fields(TrainConfig) if getattr(args, f.name, None) is not None}


def cmd_train(args: argparse.Namespace) -> None:
    cfg = pipeline_config(args)
    try:
        progress = train(cfg, resume=args.resume, progress=not args.quiet, **_overrides(args))
    finally:
        teardown()  # leaves the torchrun process group, if any
    out = cfg.run_dir / (args.output or cfg.sections.get("train", {}).get("output", "model"))
    if int(os.environ.get("RANK", "0")) == 0:  # once under torchrun
        print(f"trained {progress.step} steps (best dev MAP {progress.best:.4f}) → {out}")


def cmd_rerank(args: argparse.Namespace) -> None:
    cfg = pipeline_config(args)
    path = rerank(cfg, model=args.model, split=args.split, name=args.name)
    print(f"wrote {path}")


def register(add: AddCommand) -> None:
    """Add ``train`` (every [train] key is also a flag) and ``rerank``."""
    p = add("train", cmd_train, "fine-tune a BERT-PR cross-encoder on the pseudo-labels (or gold with --supervised)")
    p.add_argument("--resume", action="store_true", help="continue from <output>/checkpoint.pt")
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type == "bool":
            p.add_argument(flag, action="store_true", default=None, dest=f.name)
        elif f.name == "mixed_probabilities":
            p.add_argument(flag, type=float, nargs=2, dest=f.name)
        else:
            p.add_argument(flag, type={"int": int, "float": float}.get(f.type, str), dest=f.name)
    p = add("rerank", cmd_rerank, "score a split's candidates with a trained model and write a TREC run")
    p.add_argument("--model", help="model directory (default: <run_dir>/model/best or final)")
    p.add_argument("--split", default="test")
    p.add_argument("--name", help="run name (file runs/<name>.trec and TREC tag)")
