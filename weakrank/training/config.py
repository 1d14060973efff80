"""Training options: the ``[train]`` section of a pipeline config, overridable from the CLI."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weakrank.config import check_keys, did_you_mean, located, schema
from weakrank.encoders import POOLINGS
from weakrank.errors import ConfigError

MODES = ("pairwise", "pointwise", "listwise", "in_batch")
LOSSES = ("hinge", "ce", "kl")
TARGETS = ("plain", "noise_aware", "ls", "tls", "wsls", "twsls", "relax")
TARGET_ALIASES = {"lr": "relax"}  # deprecated names: "lr" (label relaxation) read like the learning rate
SAMPLERS = ("bm25", "uniform", "random", "mixed", "policy", "random_policy")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
ARCHITECTURES = ("cross-encoder", "bi-encoder")
AUTO = "auto"  # max_length read from the training pairs (weakrank.training.lengths)


@dataclass
class TrainConfig:
    """Everything a training run depends on (see README, "Training")."""

    encoder: str = "minilm"
    architecture: str = "cross-encoder"  # or "bi-encoder": scale · cos of separately embedded query and passage
    pooling: str = "cls"  # cross-encoder: the head reads the [CLS] vector or the tokens' mean ("mean")
    scale: float = 20.0  # bi-encoder: cosine → logit factor (sentence-transformers' MNRL default)
    interpolate: float = 1.0  # bi-encoder: saved weights = this × fine-tuned + the rest × the start encoder (WiSE-FT)
    mode: str = "listwise"  # listwise: distil the label model's ranking; pairwise, pointwise, in_batch
    loss: str = "kl"  # kl (listwise) | hinge (pairwise, hard targets) | ce
    target: str = "plain"
    noise_aware: bool = False
    epsilon: float = 0.1
    alpha: float = 0.1
    two_stage_fraction: float = 0.5
    margin: float = 1.0
    sampler: str = "bm25"
    bm25_top_k: int = 5
    ns_lf: str = "bm25"  # the LF whose score drives the BM25 sampler and WSLS
    min_confidence: float = 0.0  # negatives: pairs labelled 0 with at least this confidence (and a vote)
    list_fraction: float = 1.0  # train on this share of the lists: those the label model is surest of (top-1 margin)
    group_size: int = 8  # listwise: candidates per query in a group (the teacher's top one + random others)
    temperature: float = 2.0  # listwise: the teacher's softmax temperature over standardised scores (measured: 2 > 1 > 0.5)
    mixed_probabilities: tuple[float, float] = (0.5, 0.5)
    negatives: int = 1
    batch_size: int = 4  # the effective batch (queries when listwise, else anchors per optimiser step), whatever the processes
    grad_accum: int = 1  # micro-batches per step on each process (torchrun: the batch is also split over processes)
    lr: float = 5e-5
    head_lr: float = 1e-3  # the fresh MLP head learns faster than the pretrained encoder (0: lr)
    weight_decay: float = 0.01
    warmup: float = 0.1
    epochs: int = 1  # used only when max_steps = 0
    max_steps: int = 400  # > 0: train this many steps, over as many epochs as it takes (measured: SciFact 0.572 → 0.621)
    max_epochs: float = 8  # > 0: but never more than this many epochs (TrecQA's 93 train queries overfit at 17)
    max_length: int | str = "auto"  # tokens; "auto": read from the training pairs (weakrank.training.lengths)
    freeze_embeddings: bool = True  # keep the word-embedding matrix fixed (no optimiser state for it; MAP measured equal)
    average_weights: float = 0.0  # > 0: the saved weights are the mean over this last share of the steps (SWA)
    grad_clip: float = 1.0
    seed: int = 0
    precision: str = "auto"
    checkpoint_every: int = 100
    keep_checkpoint: bool = False  # a finished training keeps checkpoint.pt (else only best/ and final/ stay)
    eval_every: int = 100
    patience: int = 3
    dev_queries: int = 0  # dev lists an evaluation scores (0: all of them)
    track_train_queries: int = 0
    train_split: str = "train"
    dev_split: str = "dev"
    supervised: bool = False
    labels: str = ""
    output: str = "model"
    fuse_lfs: bool = True  # rerank: the trained ranker averaged with the fusion label model of the LFs (measured better)
    policy_every: int = 20
    policy_reward: str = "diff"
    policy_ceiling: float = 1.0  # m_max of the ceil reward (R_ceil = MAP − m_max)
    policy_path: str = ""
    policy_val_queries: int = 20

    def __post_init__(self) -> None:
        if self.target in TARGET_ALIASES:
            warnings.warn(f"[train] target = {self.target!r} is deprecated: use {TARGET_ALIASES[self.target]!r}",
                          FutureWarning, stacklevel=3)
            self.target = TARGET_ALIASES[self.target]
        for name, allowed in (
            ("architecture", ARCHITECTURES), ("pooling", POOLINGS), ("mode", MODES), ("loss", LOSSES), ("target", TARGETS), ("sampler", SAMPLERS), ("precision", PRECISIONS)
        ):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"[train] {name} = {getattr(self, name)!r}; choose one of {allowed}")
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
        if not 0 < self.list_fraction <= 1:
            raise ConfigError("[train] list_fraction must be in (0, 1]")
        if not 0 <= self.min_confidence <= 1:
            raise ConfigError("[train] min_confidence must be in [0, 1]")
        if self.grad_accum < 1 or self.batch_size < 1:
            raise ConfigError("[train] batch_size and grad_accum must be >= 1")
        if not 0 <= self.epsilon <= 1 or not 0 <= self.alpha < 1:
            raise ConfigError("[train] epsilon must be in [0, 1] and alpha in [0, 1)")
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
