"""Training options: the ``[train]`` section of a pipeline config, overridable from the CLI (read from a pipeline
config by :func:`weakrank.stages.stage.train_config`).

The options are declared by concern, each once: the ranker's and the training loop's in
:mod:`weakrank.training.options` (:class:`ModelOptions`, :class:`LoopOptions`), what every objective reads
(:class:`ObjectiveOptions`: labels, mode, loss, target) here, and each objective's own options and rules in its module of :mod:`weakrank.training.objectives`
(``options``, ``check_config``), the trainer plug-ins' in theirs (:mod:`weakrank.training.plugins`: AC-IR's in
:mod:`weakrank.reproduction.acir.options`). :class:`TrainConfig` composes them into the one flat ``[train]`` table users
write, the CLI's flags and the guide's table (:func:`option_fields`)."""

from __future__ import annotations

import warnings
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any

from weakrank.errors import ConfigError, did_you_mean, located
from weakrank.keys import check_keys, schema
from weakrank.training.objectives import OBJECTIVES, TargetOptions, losses, option_classes, selected
from weakrank.training.objectives.base import check_targets
from weakrank.training.options import AUTO as AUTO  # where max_length is read from the pairs
from weakrank.training.options import LoopOptions, ModelOptions
from weakrank.training.plugins import check_plugins, driven_samplers, refuse_clashes

MODES = ("pairwise", "pointwise", "listwise", "in_batch")
TARGET_ALIASES = {"lr": "relax"}  # deprecated names: "lr" (label relaxation) read like the learning rate
SAMPLERS = ("bm25", "uniform", "random", "mixed", *driven_samplers())  # the plug-ins' (AC-IR's) last
GROUPS = {  # each option's "group": a section of `weakrank train --help`, a column of the guide's table
    "model": "the ranker that is trained",
    "objective": "what the ranker learns from: labels, instances, loss, targets, negatives",
    "loop": "how it trains: batches, optimiser, steps, evaluation, checkpoints",
}


@dataclass
class ObjectiveOptions:
    """What every objective reads: which labels, which training instances (mode), which loss and target; the
    options of each loss are its objective's (:func:`weakrank.training.objectives.option_classes`)."""

    supervised: bool = field(default=False, metadata={
        "group": "objective", "help": "train on the gold labels instead of the pseudo-labels"})
    labels: str = field(default="", metadata={
        "group": "objective", "help": "labels Parquet file to train on ('': <run_dir>/labels.parquet)"})
    mode: str = field(default="listwise", metadata={
        "group": "objective", "choices": MODES,
        "help": "training instances: listwise (a group per query: distil the label model's ranking), pairwise "
                "(q, p+, p−), pointwise (q, p) or in_batch (bi-encoder: in-batch negatives)"})
    loss: str = field(default="kl", metadata={
        "group": "objective", "choices": losses(),
        "help": "kl (listwise distillation), hinge (pairwise, hard targets) or ce (cross-entropy; soft targets)"})
    target: str = field(default="plain", metadata={
        "group": "objective", "choices": ("plain", "noise_aware", "ls", "tls", "wsls", "twsls", "relax"),
        "deprecated": TARGET_ALIASES,
        "help": "plain, noise_aware (confidence-weighted), ls/tls (label smoothing, two-stage), wsls/twsls "
                "(weakly-supervised label smoothing), relax (label relaxation; 'lr' is its deprecated name)"})
    noise_aware: bool = field(default=False, metadata={
        "group": "objective", "help": "weight each instance's loss by its label confidence"})


@dataclass
class InstanceOptions:
    """Which training instances an epoch holds: the share of the lists, the judged queries' weight and timing, and
    the negatives (how many, drawn by which sampler)."""

    list_fraction: float = field(default=1.0, metadata={
        "group": "objective", "help": "train on this share of the lists, those the label model is surest of (its "
                                      "top-1 margin), in (0, 1]"})
    judged_share: float = field(default=0.3, metadata={
        "group": "objective", "help": "judged mode: the judged queries' lists (or anchors) are repeated until they "
                                      "are this share of an epoch, so a handful of judgments weigh against thousands "
                                      "of pseudo-labels (0: each once), in [0, 1)"})
    judged_after: float = field(default=0.7, metadata={
        "group": "objective", "help": "judged mode: the judged queries join training after this share of its "
                                      "steps; the student saved then, which has not seen them, chooses on them its "
                                      "weight in the shipped ranker (0: they train from the start, the weight "
                                      "stays 0.5), in [0, 1)"})
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


CORE = (InstanceOptions, *reversed(option_classes()), TargetOptions, ObjectiveOptions, LoopOptions, ModelOptions)
PLUGINS = refuse_clashes({f.name for options in CORE for f in fields(options)})  # those that redefine one left out


@dataclass
class TrainConfig(*reversed([plugin.options for plugin in PLUGINS.plugins]), *CORE):
    """Everything a training run depends on (see README, "Training"): the flat ``[train]`` table, composed of the
    model's, the loop's, the objectives', the instances' and negatives' options and, last, the trainer plug-ins'
    (:mod:`weakrank.training.plugins`: AC-IR's, from the reproduction). Each
    option is declared once, in the module of what it configures: its default and, in ``metadata``, its
    ``help``, its ``group`` (see :data:`GROUPS`), and where it has them its ``choices`` (with ``deprecated``
    names still read), its Hugging Face Trainer name (``alias``, a flag beside ours) and ``metavar``; the
    checks, the CLI flags and the guide's table are built from them. Each objective checks its own rules
    (``check_config``), once, when the configuration is built."""

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
        for objective in OBJECTIVES:
            objective.check_config(self)
        if selected(self) is None:
            raise ConfigError(f"[train] mode = {self.mode!r} with loss = {self.loss!r}: no objective takes them")
        self.check_model()
        self.check_loop()
        check_targets(self, "[train]")
        if not 0 < self.list_fraction <= 1:
            raise ConfigError("[train] list_fraction must be in (0, 1]")
        if not 0 <= self.judged_share < 1:
            raise ConfigError("[train] judged_share must be in [0, 1)")
        if not 0 <= self.judged_after < 1:
            raise ConfigError("[train] judged_after must be in [0, 1)")
        if not 0 <= self.min_confidence <= 1:
            raise ConfigError("[train] min_confidence must be in [0, 1]")
        if self.target == "noise_aware":
            self.noise_aware = True

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: Path | None = None) -> TrainConfig:
        """Build from a TOML section (+ overrides) of file ``source``; an unknown key or a value of the wrong
        type is an error naming the file and the key (and the known key closest to it); so is a trainer plug-in
        left out (:func:`~weakrank.training.plugins.check_plugins`): nothing trains without it."""
        check_plugins(PLUGINS.broken)
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
            self.sampler in ("bm25", "mixed", *driven_samplers()) or self.target in ("wsls", "twsls")
        )


def option_fields(cls: type = TrainConfig) -> list[Field]:
    """The ``[train]`` options of ``cls`` in the order users see them (the CLI's ``--help``, the guide's table):
    by group (:data:`GROUPS`), in the order of their declarations within each."""
    order = list(GROUPS)
    return sorted(fields(cls), key=lambda f: order.index(f.metadata["group"]))
