"""Training options: the ``[train]`` section of a pipeline config, overridable from the CLI (read from a pipeline
config by :func:`weakrank.stages.training.train_config`)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from weakrank.encoders import POOLINGS
from weakrank.errors import ConfigError, did_you_mean, located
from weakrank.keys import check_keys, schema
from weakrank.training.policy.rewards import REWARDS

MODES = ("pairwise", "pointwise", "listwise", "in_batch")
TARGET_ALIASES = {"lr": "relax"}  # deprecated names: "lr" (label relaxation) read like the learning rate
SAMPLERS = ("bm25", "uniform", "random", "mixed", "policy", "random_policy")
AUTO = "auto"  # max_length read from the training pairs (weakrank.training.lengths)
GROUPS = {  # each option's "group": a section of `weakrank train --help`, a column of the guide's table
    "model": "the ranker that is trained",
    "objective": "what the ranker learns from: labels, instances, loss, targets, negatives",
    "loop": "how it trains: batches, optimiser, steps, evaluation, checkpoints",
}


@dataclass
class TrainConfig:
    """Everything a training run depends on (see README, "Training"). Each option is declared once, here:
    its default and, in ``metadata``, its ``help``, its ``group`` (see :data:`GROUPS`), and where it has them
    its ``choices`` (with ``deprecated`` names still read), its Hugging Face Trainer name (``alias``, a flag
    beside ours) and ``metavar``; the checks, the CLI flags and the guide's table are built from them."""

    encoder: str = field(default="minilm", metadata={
        "group": "model", "help": "pretrained encoder: 'minilm' (packaged), a Hugging Face name or a local path"})
    architecture: str = field(default="cross-encoder", metadata={
        "group": "model", "choices": ("cross-encoder", "bi-encoder"),
        "help": "cross-encoder (BERT-PR: query [SEP] passage → score) or bi-encoder (scale · cos of the separately "
                "embedded query and passage)"})
    pooling: str = field(default="cls", metadata={
        "group": "model", "choices": POOLINGS,
        "help": "cross-encoder: the head reads the [CLS] vector (cls) or the tokens' mean (mean)"})
    scale: float = field(default=20.0, metadata={
        "group": "model", "help": "bi-encoder: cosine → logit factor (sentence-transformers' MNRL default)"})
    interpolate: float = field(default=1.0, metadata={
        "group": "model", "help": "bi-encoder: the saved weights are this share of the fine-tuned ones, the rest the "
                                  "start encoder's (WiSE-FT; 1: plain fine-tuning)"})
    max_length: int | str = field(default=AUTO, metadata={
        "group": "model", "help": "max tokens of query + passage, or auto: 3 of 4 training pairs whole, at most 128 "
                                  "(weakrank.training.lengths)"})
    fuse_lfs: bool = field(default=True, metadata={
        "group": "model", "help": "rerank: average the model's scores with the LFs' fusion label model (a second "
                                  "round)"})

    supervised: bool = field(default=False, metadata={
        "group": "objective", "help": "train on the gold labels instead of the pseudo-labels"})
    labels: str = field(default="", metadata={
        "group": "objective", "help": "labels Parquet file to train on ('': <run_dir>/labels.parquet)"})
    mode: str = field(default="listwise", metadata={
        "group": "objective", "choices": MODES,
        "help": "training instances: listwise (a group per query: distil the label model's ranking), pairwise "
                "(q, p+, p−), pointwise (q, p) or in_batch (bi-encoder: in-batch negatives)"})
    loss: str = field(default="kl", metadata={
        "group": "objective", "choices": ("hinge", "ce", "kl"),
        "help": "kl (listwise distillation), hinge (pairwise, hard targets) or ce (cross-entropy; soft targets)"})
    target: str = field(default="plain", metadata={
        "group": "objective", "choices": ("plain", "noise_aware", "ls", "tls", "wsls", "twsls", "relax"),
        "deprecated": TARGET_ALIASES,
        "help": "plain, noise_aware (confidence-weighted), ls/tls (label smoothing, two-stage), wsls/twsls "
                "(weakly-supervised label smoothing), relax (label relaxation; 'lr' is its deprecated name)"})
    noise_aware: bool = field(default=False, metadata={
        "group": "objective", "help": "weight each instance's loss by its label confidence"})
    epsilon: float = field(default=0.1, metadata={
        "group": "objective", "help": "label-smoothing mass ε of ls/tls/wsls/twsls, in [0, 1]"})
    alpha: float = field(default=0.1, metadata={
        "group": "objective", "help": "label relaxation: the credal set p(+) ≥ 1 − alpha, in [0, 1)"})
    two_stage_fraction: float = field(default=0.5, metadata={
        "group": "objective", "help": "tls/twsls: share of the steps that smooth (then ε = 0), in [0, 1]"})
    margin: float = field(default=1.0, metadata={"group": "objective", "help": "hinge loss margin, >= 0"})
    group_size: int = field(default=8, metadata={
        "group": "objective", "help": "listwise: candidates per query in a group (the teacher's top one + random others)"})
    temperature: float = field(default=2.0, metadata={
        "group": "objective", "help": "listwise: temperature of the teacher's softmax over standardised scores"})
    anchor: float = field(default=0.0, metadata={
        "group": "objective", "help": "listwise bi-encoder: weight of a KL term to the list distribution of the "
                                      "model training started from (its zero-shot ranking), >= 0; 0: off"})
    list_fraction: float = field(default=1.0, metadata={
        "group": "objective", "help": "train on this share of the lists, those the label model is surest of (its "
                                      "top-1 margin), in (0, 1]"})
    min_confidence: float = field(default=0.0, metadata={
        "group": "objective", "help": "a pair labelled 0 is a negative only with at least this confidence (and a vote)"})
    negatives: int = field(default=1, metadata={"group": "objective", "help": "negatives per positive (pairwise)"})
    sampler: str = field(default="bm25", metadata={
        "group": "objective", "choices": SAMPLERS,
        "help": "negatives: bm25 (top-k of the list), uniform (any labelled negative), random (collection), mixed, "
                "policy (AC-IR) or random_policy"})
    bm25_top_k: int = field(default=5, metadata={
        "group": "objective", "help": "bm25 sampler: draw negatives from the top K of the list by the ns_lf score"})
    ns_lf: str = field(default="bm25", metadata={
        "group": "objective", "help": "the LF whose score drives the bm25 sampler and WSLS"})
    mixed_probabilities: tuple[float, float] = field(default=(0.5, 0.5), metadata={
        "group": "objective", "metavar": ("BM25", "RANDOM"), "help": "mixed sampler: probabilities of bm25 and random"})
    policy_every: int = field(default=20, metadata={
        "group": "objective", "help": "AC-IR: steps between two sampler choices"})
    policy_reward: str = field(default="diff", metadata={
        "group": "objective", "choices": REWARDS,
        "help": "AC-IR reward: change of validation MAP (diff), MAP (raw), MAP − ceiling (ceil) or MAP − best so far "
                "(ceil_running)"})
    policy_ceiling: float = field(default=1.0, metadata={
        "group": "objective", "help": "AC-IR: m_max of the ceil reward (R_ceil = MAP − m_max)"})
    policy_path: str = field(default="", metadata={
        "group": "objective", "help": "AC-IR: file to load the policy from and save it to ('': none)"})
    policy_val_queries: int = field(default=20, metadata={
        "group": "objective", "help": "AC-IR: dev queries of the reward's validation MAP"})

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
    max_steps: int = field(default=400, metadata={
        "group": "loop", "help": "train this many steps, over as many epochs as it takes (0: use the epochs)"})
    max_epochs: float = field(default=8, metadata={
        "group": "loop", "help": "but stop after this many epochs (0: no cap), so a small train split is not "
                                 "overfitted"})
    freeze_embeddings: bool = field(default=True, metadata={
        "group": "loop", "help": "keep the word-embedding matrix fixed (no optimiser state for it)"})
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
    eval_every: int = field(default=100, metadata={
        "group": "loop", "alias": "eval_steps",
        "help": "evaluate on dev queries every N steps, keeping the best model (0: once, at the end)"})
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

    def __post_init__(self) -> None:
        for f in fields(self):
            value, renamed, allowed = getattr(self, f.name), f.metadata.get("deprecated", {}), f.metadata.get("choices")
            if renamed and value in renamed:
                warnings.warn(f"[train] {f.name} = {value!r} is deprecated: use {renamed[value]!r}", FutureWarning,
                              stacklevel=3)
                value = renamed[value]
                setattr(self, f.name, value)
            if allowed and value not in allowed:
                raise ConfigError(f"[train] {f.name} = {value!r}; choose one of {allowed}")
        if self.loss == "hinge" and (self.mode != "pairwise" or self.target not in ("plain", "noise_aware")):
            raise ConfigError("hinge loss is pairwise and takes no soft target: use loss = 'ce' for LS/WSLS/relax")
        if (self.mode == "listwise") != (self.loss == "kl"):
            raise ConfigError(f"[train] mode = {self.mode!r} with loss = {self.loss!r}: mode = 'listwise' goes with "
                              "loss = 'kl' (distillation of the label model's scores), the other modes with 'hinge' or 'ce'")
        if self.mode == "listwise" and self.target != "plain":
            raise ConfigError("[train] listwise distillation takes target = 'plain' (its targets are the teacher's scores)")
        if self.max_length != AUTO and (isinstance(self.max_length, str) or self.max_length < 8):
            raise ConfigError(f"[train] max_length must be 'auto' or a whole number >= 8, got {self.max_length!r}")
        if self.max_epochs < 0 or self.max_steps < 0:
            raise ConfigError("[train] max_steps and max_epochs must be >= 0")
        if self.scale <= 0:
            raise ConfigError("[train] scale must be > 0")
        if not 0 <= self.average_weights < 1:
            raise ConfigError("[train] average_weights must be in [0, 1)")
        if not 0 < self.interpolate <= 1:
            raise ConfigError("[train] interpolate must be in (0, 1]")
        if self.interpolate < 1 and self.architecture != "bi-encoder":
            raise ConfigError("[train] interpolate < 1 (WiSE-FT) needs architecture = 'bi-encoder': a cross-encoder's "
                              "head starts untrained")
        if self.mode == "in_batch" and (self.architecture != "bi-encoder" or self.loss != "ce"):
            raise ConfigError("[train] mode = 'in_batch' (in-batch negatives) needs architecture = 'bi-encoder', loss = 'ce'")
        if self.mode == "in_batch" and self.target not in ("plain", "noise_aware", "ls", "tls", "relax"):
            raise ConfigError("[train] in_batch takes target plain, noise_aware, ls, tls or relax")
        if self.group_size < 2 or self.temperature <= 0:
            raise ConfigError("[train] group_size must be >= 2 and temperature > 0")
        if self.anchor < 0:
            raise ConfigError("[train] anchor must be >= 0")
        if self.anchor and (self.architecture != "bi-encoder" or self.mode != "listwise"):
            raise ConfigError("[train] anchor > 0 needs architecture = 'bi-encoder' and mode = 'listwise': a "
                              "cross-encoder starts from an untrained head, whose ranking is no anchor")
        if not 0 < self.list_fraction <= 1:
            raise ConfigError("[train] list_fraction must be in (0, 1]")
        if not 0 <= self.min_confidence <= 1:
            raise ConfigError("[train] min_confidence must be in [0, 1]")
        if self.grad_accum < 1 or self.batch_size < 1:
            raise ConfigError("[train] batch_size and grad_accum must be >= 1")
        if not 0 <= self.epsilon <= 1 or not 0 <= self.alpha < 1:
            raise ConfigError("[train] epsilon must be in [0, 1] and alpha in [0, 1)")
        if not 0 <= self.two_stage_fraction <= 1 or self.margin < 0:
            raise ConfigError("[train] two_stage_fraction must be in [0, 1] and margin >= 0")
        if self.target == "noise_aware":
            self.noise_aware = True

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: Path | None = None) -> TrainConfig:
        """Build from a TOML section (+ overrides) of file ``source``; an unknown key or a value of the wrong
        type is an error naming the file and the key (and the known key closest to it)."""
        known = schema(cls)
        for key in values:
            if key not in known:
                raise ConfigError(f"{located(source, 'unknown [train] key')} {key!r}{did_you_mean(key, known)}; "
                                  f"known: {', '.join(sorted(known))}")
        check_keys(values, known, "[train]", source)
        values = dict(values)
        if "mixed_probabilities" in values:
            values["mixed_probabilities"] = tuple(values["mixed_probabilities"])
        try:
            return cls(**values)
        except ConfigError as err:
            raise ConfigError(located(source, str(err))) from None

    @property
    def needs_ns_score(self) -> bool:
        """Whether the sampler or the target reads the negative-sampler score (``score_<ns_lf>``)."""
        return self.mode != "listwise" and (
            self.sampler in ("bm25", "mixed", "policy", "random_policy") or self.target in ("wsls", "twsls")
        )

    def total_steps(self, per_epoch: int) -> int:
        """Optimiser steps of a run whose epoch is ``per_epoch`` steps: ``max_steps`` (or ``epochs`` epochs),
        capped at ``max_epochs`` epochs."""
        steps = self.max_steps or per_epoch * self.epochs
        return min(steps, math.ceil(self.max_epochs * per_epoch)) if self.max_epochs else steps

