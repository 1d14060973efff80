"""The ranker's options and the training loop's (as sentence-transformers' training arguments, apart from the
loss): two groups of the ``[train]`` table (:class:`weakrank.training.config.TrainConfig` composes them with the
objectives'), each field declared once with its default and, in ``metadata``, its help and group, and each group
checking its own ranges. Loads without torch: the CLI's flags are built from it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from weakrank.encoders import POOLINGS
from weakrank.errors import ConfigError
from weakrank.names import ARCHITECTURES

AUTO = "auto"  # max_length read from the training pairs (weakrank.training.lengths)


@dataclass
class ModelOptions:
    """The ranker that is trained: its architecture, its start encoder, its input length."""

    encoder: str = field(default="minilm", metadata={
        "group": "model", "help": "pretrained encoder: 'minilm' (packaged), a Hugging Face name or a local path"})
    architecture: str = field(default="bi-encoder", metadata={
        "group": "model", "choices": ARCHITECTURES,
        "help": "cross-encoder (BERT-PR: query [SEP] passage → score) or bi-encoder (scale · cos of the separately "
                "embedded query and passage)"})
    pooling: str = field(default="cls", metadata={
        "group": "model", "choices": POOLINGS,
        "help": "cross-encoder: the head reads the [CLS] vector (cls) or the tokens' mean (mean)"})
    scale: float = field(default=20.0, metadata={
        "group": "model", "help": "bi-encoder: cosine → logit factor (sentence-transformers' MNRL default)"})
    interpolate: float | str = field(default=AUTO, metadata={
        "group": "model", "help": "bi-encoder: the saved weights are this share of the fine-tuned ones, the rest the "
                                  "start encoder's (WiSE-FT; 1: plain fine-tuning), or auto: the share of 0, 0.25, "
                                  "0.5, 0.75, 1 that agrees best with the teacher on the dev lists (0: the start "
                                  "itself, so the student never ends below where it started)"})
    max_length: int | str = field(default=AUTO, metadata={
        "group": "model", "help": "max tokens of query + passage, or auto: 3 of 4 training pairs whole, at most 128 "
                                  "(weakrank.training.lengths)"})
    fuse_lfs: bool = field(default=True, metadata={
        "group": "model", "help": "rerank: average the model's scores with the LFs' fusion label model (a second "
                                  "round)"})

    def check_model(self) -> None:
        if self.max_length != AUTO and (isinstance(self.max_length, str) or self.max_length < 8):
            raise ConfigError(f"[train] max_length must be 'auto' or a whole number >= 8, got {self.max_length!r}")
        if self.scale <= 0:
            raise ConfigError("[train] scale must be > 0")
        if self.interpolate == AUTO:
            return
        if isinstance(self.interpolate, str) or not 0 < self.interpolate <= 1:
            raise ConfigError(f"[train] interpolate must be 'auto' or in (0, 1], got {self.interpolate!r}")
        if self.interpolate < 1 and self.architecture != "bi-encoder":
            raise ConfigError("[train] interpolate < 1 (WiSE-FT) needs architecture = 'bi-encoder': a cross-encoder's "
                              "head starts untrained")


@dataclass
class LoopOptions:
    """How it trains: batches, optimiser, steps, evaluation, checkpoints, seed."""

    batch_size: int = field(default=4, metadata={
        "group": "loop", "help": "effective batch per optimiser step (anchors, or queries when listwise), whatever "
                                 "the processes"})
    grad_accum: int = field(default=1, metadata={
        "group": "loop", "help": "micro-batches per step on each process (torchrun also splits the batch over "
                                 "the processes)"})
    lr: float = field(default=5e-5, metadata={"group": "loop", "alias": "learning_rate", "help": "AdamW learning rate"})
    head_lr: float = field(default=1e-3, metadata={
        "group": "loop", "help": "learning rate of the fresh MLP head, faster than the pretrained encoder's "
                                 "(0: the learning rate)"})
    weight_decay: float = field(default=0.01, metadata={
        "group": "loop", "help": "AdamW weight decay (not on biases and norms)"})
    warmup: float = field(default=0.1, metadata={
        "group": "loop", "alias": "warmup_ratio", "help": "share of the steps with linear warm-up (then linear decay)"})
    epochs: int = field(default=1, metadata={
        "group": "loop", "alias": "num_train_epochs",
        "help": "passes over the training queries (used only when max-steps is 0)"})
    max_steps: int = field(default=200, metadata={
        "group": "loop", "help": "train this many steps, over as many epochs as it takes (0: use the epochs)"})
    max_epochs: float = field(default=8, metadata={
        "group": "loop", "help": "but stop after this many epochs (0: no cap), so a small train split is not "
                                 "overfitted"})
    freeze_embeddings: bool = field(default=True, metadata={
        "group": "loop", "help": "keep the word-embedding matrix fixed (no optimiser state for it)"})
    freeze_layers: int = field(default=0, metadata={
        "group": "loop", "help": "keep the embeddings and the encoder's first N transformer layers fixed: no "
                                 "gradients through them, so a step does less work (0: train every layer)"})
    average_weights: float = field(default=0.0, metadata={
        "group": "loop", "help": "the saved weights are their mean over this last share of the steps (stochastic "
                                 "weight averaging; 0: the last step's)"})
    grad_clip: float = field(default=1.0, metadata={
        "group": "loop", "alias": "max_grad_norm", "help": "clip the gradient norm to this value"})
    seed: int = field(default=0, metadata={
        "group": "loop", "help": "random seed (data order, negatives, initialisation)"})
    precision: str = field(default="auto", metadata={
        "group": "loop", "choices": ("auto", "fp32", "bf16", "fp16"),
        "help": "auto: bf16 autocast on CUDA (fp16 without bf16), fp32 on CPU"})
    train_split: str = field(default="train", metadata={"group": "loop", "help": "split to train on"})
    dev_split: str = field(default="dev", metadata={
        "group": "loop", "help": "split for early stopping ('' for none)"})
    eval_every: int = field(default=0, metadata={
        "group": "loop", "alias": "eval_steps",
        "help": "evaluate on dev queries every N steps, keeping the best model (0: once, at the end, where a "
                "bi-encoder's check against its start chooses what is saved)"})
    patience: int = field(default=3, metadata={
        "group": "loop", "help": "stop after N evaluations without a better dev MAP"})
    dev_queries: int = field(default=0, metadata={
        "group": "loop", "help": "dev queries per evaluation (0: every dev query)"})
    track_train_queries: int = field(default=0, metadata={
        "group": "loop", "help": "also evaluate on N training queries (the memorisation gap)"})
    output: str = field(default="model", metadata={
        "group": "loop", "alias": "output_dir",
        "help": "model directory, relative to run_dir: <output>/best, final, checkpoint.pt"})
    checkpoint_every: int = field(default=100, metadata={
        "group": "loop", "alias": "save_steps",
        "help": "write checkpoint.pt every N steps for --resume (0: none while training)"})
    keep_checkpoint: bool = field(default=False, metadata={
        "group": "loop", "help": "keep checkpoint.pt once training has finished (it holds the optimiser state: about "
                                 "3× the model); by default a finished run keeps best/ and final/ only"})

    def check_loop(self) -> None:
        if self.max_epochs < 0 or self.max_steps < 0:
            raise ConfigError("[train] max_steps and max_epochs must be >= 0")
        if not 0 <= self.average_weights < 1:
            raise ConfigError("[train] average_weights must be in [0, 1)")
        if self.freeze_layers < 0:
            raise ConfigError("[train] freeze_layers must be >= 0")
        if self.grad_accum < 1 or self.batch_size < 1:
            raise ConfigError("[train] batch_size and grad_accum must be >= 1")

    def total_steps(self, per_epoch: int) -> int:
        """Optimiser steps of a run whose epoch is ``per_epoch`` steps: ``max_steps`` (or ``epochs`` epochs),
        capped at ``max_epochs`` epochs."""
        steps = self.max_steps or per_epoch * self.epochs
        return min(steps, math.ceil(self.max_epochs * per_epoch)) if self.max_epochs else steps
