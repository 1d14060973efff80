"""``weakrank train`` and ``weakrank rerank``; ``weakrank run`` trains and reranks through the same functions."""

from __future__ import annotations

import argparse
import os
from dataclasses import fields
from pathlib import Path
from typing import Any

from weakrank.commands import AddCommand, pipeline_config
from weakrank.config import PipelineConfig
from weakrank.encoders import POOLINGS
from weakrank.errors import ConfigError
from weakrank.paths import RunPaths
from weakrank.training.config import (
    ARCHITECTURES,
    LOSSES,
    MODES,
    PRECISIONS,
    SAMPLERS,
    TARGET_ALIASES,
    TARGETS,
    TrainConfig,
)
from weakrank.training.policy.rewards import REWARDS


def train_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The ``[train]`` keys given as flags."""
    return {f.name: getattr(args, f.name) for f in fields(TrainConfig) if getattr(args, f.name, None) is not None}


def train_stage(cfg: PipelineConfig, overrides: dict[str, Any], resume: bool = False, quiet: bool = False) -> None:
    """Train as ``[train]`` with ``overrides`` says, leave the torchrun process group (if any) however it ends,
    and say where the model went (once under torchrun)."""
    from weakrank.training.distributed import teardown
    from weakrank.training.run import train, train_config

    try:
        progress = train(cfg, resume=resume, progress=not quiet, **overrides)
    finally:
        teardown()
    tc = train_config(cfg, **overrides)
    out = RunPaths(cfg.run_dir).models(tc.output)
    if int(os.environ.get("RANK", "0")) == 0:
        dev = f"best dev {'MAP' if tc.supervised else 'agreement'} {progress.best:.4f}" if progress.best >= 0 else "no dev figure"
        print(f"trained {progress.step} steps ({dev}) → {out}")


def rerank_stage(cfg: PipelineConfig, overrides: dict[str, Any], split: str | None = None,
                 model: str | None = None, name: str | None = None, int8: bool = False) -> Path:
    """Score ``split``'s candidates (default: ``[evaluate] split``) with ``model`` (default: the trained one
    of ``[train]`` with ``overrides``) into ``runs/<name>.trec``."""
    from weakrank.training.run import rerank

    path = rerank(cfg, model=model, split=split or cfg.evaluate.split, name=name, int8=int8, **overrides)
    print(f"wrote {path}")
    return path


def cmd_train(args: argparse.Namespace) -> None:
    train_stage(pipeline_config(args), train_overrides(args), resume=args.resume, quiet=args.quiet)


def cmd_rerank(args: argparse.Namespace) -> None:
    if args.run:  # queries never labelled: a TREC run, its queries and its collection
        from weakrank.training.run import rerank_trec

        missing = [flag for flag, value in (("--model-dir", args.model), ("--queries", args.queries),
                                            ("--collection", args.collection)) if not value]
        if missing:
            raise ConfigError(f"rerank --run also needs {', '.join(missing)}")
        out = Path(args.output or Path(args.run).with_suffix(".reranked.trec"))
        print(f"wrote {rerank_trec(args.model, args.run, args.queries, args.collection, out, int8=args.int8)}")
    elif args.config is None:
        raise ConfigError("rerank needs a pipeline config, or --run with --model-dir, --queries and --collection")
    else:
        rerank_stage(pipeline_config(args), {}, split=args.split, model=args.model, name=args.name, int8=args.int8)


# Each [train] key's flag: help text, and the Hugging Face Trainer / sentence-transformers name first where
# one exists (today's name stays an alias).
HELP = {
    "encoder": "pretrained encoder: 'minilm' (packaged), a Hugging Face name or a local path",
    "architecture": "cross-encoder (BERT-PR: query [SEP] passage → score) or bi-encoder (scaled cosine)",
    "pooling": "cross-encoder: the head reads the [CLS] vector (cls) or the tokens' mean (mean)",
    "scale": "bi-encoder: cosine → logit factor",
    "interpolate": "bi-encoder: the saved weights are this share of the fine-tuned ones, the rest the start "
                   "encoder's (WiSE-FT; 1: plain fine-tuning)",
    "mode": "training instances: pairwise (q, p+, p−), pointwise (q, p) or listwise (a group per query)",
    "loss": "hinge (pairwise), ce (cross-entropy; soft targets) or kl (listwise distillation)",
    "target": "plain, noise_aware (confidence-weighted), ls/tls (label smoothing, two-stage), "
              "wsls/twsls (weakly-supervised label smoothing), relax (label relaxation; 'lr' is its deprecated name)",
    "noise_aware": "weight each instance's loss by its label confidence",
    "epsilon": "label-smoothing mass ε of ls/tls/wsls/twsls, in [0, 1]",
    "alpha": "label relaxation: the credal set p(+) ≥ 1 − alpha, in [0, 1)",
    "two_stage_fraction": "tls/twsls: share of the steps that smooth (then ε = 0)",
    "margin": "hinge loss margin",
    "sampler": "negatives: bm25 (top-k of the list), uniform (any labelled negative), random (collection), "
               "mixed, policy (AC-IR) or random_policy",
    "bm25_top_k": "bm25 sampler: draw negatives from the top K of the list by the ns_lf score",
    "ns_lf": "the LF whose score drives the bm25 sampler and WSLS",
    "min_confidence": "a pair labelled 0 is a negative only with at least this confidence",
    "list_fraction": "train on this share of the lists, those whose label-model top-1 stands out most (0, 1]",
    "group_size": "listwise: candidates per query in a group (the teacher's top one + random others)",
    "temperature": "listwise: temperature of the teacher's softmax over standardised scores",
    "mixed_probabilities": "mixed sampler: probabilities of bm25 and random",
    "negatives": "negatives per positive (pairwise)",
    "batch_size": "effective batch per optimiser step (anchors, or queries when listwise), whatever the processes",
    "grad_accum": "micro-batches per step on each process",
    "lr": "AdamW learning rate",
    "head_lr": "learning rate of the fresh MLP head (0: the learning rate)",
    "weight_decay": "AdamW weight decay (not on biases and norms)",
    "warmup": "share of the steps with linear warm-up (then linear decay)",
    "epochs": "passes over the training queries (used only when max-steps is 0)",
    "max_steps": "train this many steps, over as many epochs as it takes (0: use the epochs)",
    "max_epochs": "but stop after this many epochs (0: no cap), so a small train split is not overfitted",
    "max_length": "max tokens of query + passage, or auto: 3 of 4 training pairs whole, at most 128",
    "freeze_embeddings": "keep the word-embedding matrix fixed (no optimiser state for it)",
    "average_weights": "the saved weights are their mean over this last share of the steps (stochastic weight "
                       "averaging; 0: the last step's)",
    "grad_clip": "clip the gradient norm to this value",
    "seed": "random seed (data order, negatives, initialisation)",
    "precision": "auto: bf16 autocast on CUDA (fp16 without bf16), fp32 on CPU",
    "checkpoint_every": "write checkpoint.pt every N steps for --resume (0: none while training)",
    "keep_checkpoint": "keep checkpoint.pt once training has finished (it holds the optimiser state: about 3× the "
                       "model); by default a finished run keeps best/ and final/ only",
    "eval_every": "evaluate on dev queries every N steps, keeping the best model (0: once, at the end)",
    "patience": "stop after N evaluations without a better dev MAP",
    "dev_queries": "dev queries per evaluation (0: every dev query)",
    "track_train_queries": "also evaluate on N training queries (the memorisation gap)",
    "train_split": "split to train on",
    "dev_split": "split for early stopping ('' for none)",
    "supervised": "train on the gold labels instead of the pseudo-labels",
    "labels": "labels Parquet file to train on ('': <run_dir>/labels.parquet)",
    "output": "model directory, relative to run_dir: <output>/best, final, checkpoint.pt",
    "fuse_lfs": "rerank: average the model's scores with the LFs' fusion label model (a second round)",
    "policy_every": "AC-IR: steps between two sampler choices",
    "policy_reward": "AC-IR reward: change of validation MAP (diff), MAP (raw), MAP − ceiling (ceil) or "
                     "MAP − best so far (ceil_running)",
    "policy_ceiling": "AC-IR: m_max of the ceil reward",
    "policy_path": "AC-IR: file to load the policy from and save it to ('': none)",
    "policy_val_queries": "AC-IR: dev queries of the reward's validation MAP",
}
HF_NAMES = {
    "lr": "--learning-rate", "epochs": "--num-train-epochs", "warmup": "--warmup-ratio", "grad_clip": "--max-grad-norm",
    "eval_every": "--eval-steps", "checkpoint_every": "--save-steps", "output": "--output-dir",
}
CHOICES = {
    "architecture": ARCHITECTURES, "pooling": POOLINGS, "mode": MODES, "loss": LOSSES, "target": (*TARGETS, *TARGET_ALIASES),
    "sampler": SAMPLERS, "precision": PRECISIONS, "policy_reward": REWARDS,
}


def int_or_auto(text: str) -> int | str:
    """A flag value that is a whole number or ``auto``."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or 'auto', got {text!r}") from None


def toml_value(value: Any) -> str:
    """``value`` as a TOML config writes it (``true``, ``"auto"``, ``[0.5, 0.5]``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return f'"{value}"' if isinstance(value, str) else repr(value)


def options_table() -> str:
    """The Markdown table of every ``[train]`` key: its flag, its default (``TrainConfig()``) and its help; the
    README's configuration reference holds it verbatim (tested)."""
    rows = ["| `[train]` key | flag | default | meaning |", "|---|---|---|---|"]
    for f in fields(TrainConfig):
        flag = HF_NAMES.get(f.name, "--" + f.name.replace("_", "-"))
        rows.append(f"| `{f.name}` | `{flag}` | `{toml_value(f.default)}` | {HELP[f.name].replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def add_train_flags(p: argparse.ArgumentParser) -> None:
    """One flag per [train] key, overriding the config (absent: the config's value, else the default shown)."""
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        names = [HF_NAMES[f.name], flag] if f.name in HF_NAMES else [flag]
        options = {"dest": f.name, "help": f"{HELP[f.name]} (default: {toml_value(f.default)})"}
        if f.type == "bool":
            p.add_argument(*names, action=argparse.BooleanOptionalAction, default=None, **options)
        elif f.type == "int | str":
            p.add_argument(*names, type=int_or_auto, **options)
        elif f.name == "mixed_probabilities":
            p.add_argument(*names, type=float, nargs=2, metavar=("BM25", "RANDOM"), **options)
        else:
            p.add_argument(*names, type={"int": int, "float": float}.get(f.type, str), choices=CHOICES.get(f.name), **options)


def register(add: AddCommand) -> None:
    """Add ``train`` (every [train] key is also a flag) and ``rerank``."""
    p = add("train", cmd_train, "fine-tune a ranker on the pseudo-labels (or gold with --supervised); every flag "
            "overrides the config's [train] key of the same name")
    p.add_argument("--resume", action="store_true", help="continue from <output>/checkpoint.pt")
    add_train_flags(p)
    p = add("rerank", cmd_rerank, "score a split's candidates with a trained model and write a TREC run")
    p.add_argument("--model-dir", "--model", dest="model", help="trained model directory (default: <run_dir>/model/best or final)")
    p.add_argument("--split", help="split whose candidates are scored (default: [evaluate] split, else test)")
    p.add_argument("--name", help="run name (file runs/<name>.trec and TREC tag; default: the model's folder)")
    config = next(action for action in p._actions if action.dest == "config")
    config.nargs, config.default, config.help = "?", None, "pipeline config (none with --run)"
    p.add_argument("--run", help="rerank this TREC run of new queries instead of a split (no config, nothing labelled)")
    p.add_argument("--queries", help="with --run: the queries, query_id TAB text")
    p.add_argument("--collection", help="with --run: the passages, passage_id TAB text")
    p.add_argument("--output", help="with --run: the reranked TREC run (default: <run>.reranked.trec)")
    p.add_argument("--int8", action="store_true", help="CPU inference with the student's linear layers quantised "
                   "to int8 (faster; MAP in benchmarks/rerank.csv)")
