"""The config's sections as typed dataclasses (``[dataset]``, ``[label]``, ``[aggregate]``, ``[analyze]``,
``[evaluate]``, ``[experiment]``), each beside the checks of its keys: a value of the wrong type or a name that is
not known stops with a :class:`ConfigError` naming the section and the key, with the closest known name.
:mod:`weakrank.config` reads a TOML file into them."""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

from weakrank.errors import ConfigError, did_you_mean, located
from weakrank.keys import check_keys, schema
from weakrank.names import LABEL_MODELS

if TYPE_CHECKING:
    from weakrank.label_models import LabelModel

T = TypeVar("T")


def typed(cls: type[T], values: Mapping[str, Any], section: str, source: Path | None) -> T:
    """``cls(**values)`` of section ``[section]`` once :func:`check_keys` passes; its own checks' errors are located too."""
    check_keys(values, schema(cls), f"[{section}]", source)
    try:
        return cls(**values)
    except ConfigError as err:
        raise ConfigError(f"{located(source, f'[{section}]')} {err}") from None


def check_label_model(name: str, where: str) -> None:
    """A :class:`ConfigError` unless ``name`` is a label model."""
    if name not in LABEL_MODELS:
        raise ConfigError(f"{where} unknown label model {name!r}{did_you_mean(name, LABEL_MODELS)}; choose from "
                          f"{sorted(LABEL_MODELS)}")


def label_model_options(name: str) -> dict[str, Any]:
    """Option name → type hint of label model ``name``'s constructor."""
    from weakrank.label_models import MODELS

    init = MODELS[name].__init__
    hints = get_type_hints(init) if init is not object.__init__ else {}
    params = inspect.signature(MODELS[name]).parameters
    return {p: hints.get(p, Any) for p in params}


@dataclass
class DatasetConfig:
    """Where the data comes from: a loader name, a path, loader options, an optional subset."""

    loader: str
    path: Path
    options: dict[str, Any] = field(default_factory=dict)
    max_queries: int | None = None


@dataclass
class LabelConfig:
    """Which LFs vote, with per-LF options (factory arguments and ``top_k``/``bottom_fraction``),
    and where they run: ``engine`` (one of :data:`weakrank.names.ENGINES`); ``engine_options`` holds the
    ``[label.<engine>]`` tables by engine name."""

    lfs: list[str]
    lf_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    engine: str = "local"
    engine_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def fingerprint(self, name: str) -> str:
        """A short hash of an LF's options: cached scores are reused only when it matches."""
        from weakrank.registry import DECLARATION_KEYS

        options = {k: v for k, v in self.lf_options.get(name, {}).items() if k not in DECLARATION_KEYS}
        blob = json.dumps({"lf": name, **options}, sort_keys=True)  # a declaration changes no score
        return hashlib.sha1(blob.encode()).hexdigest()[:12]

    def overrides(self, name: str) -> dict[str, Any]:
        """The declaration keys (``family``, ``prior``) that ``[label.options]`` gives LF ``name``."""
        from weakrank.registry import DECLARATION_KEYS

        return {k: v for k, v in self.lf_options.get(name, {}).items() if k in DECLARATION_KEYS}


@dataclass
class AggregateConfig:
    """The label model and its options (checked against its constructor); judged mode, off by default: the
    judged queries of ``judgments`` (a judging file of ``weakrank judge``, or TREC qrels), or the first
    ``gold_queries`` judged queries of ``gold_split``, move the fusion model's LF quality priors."""

    model: str = "generative"
    options: dict[str, Any] = field(default_factory=dict)
    gold_queries: int = 0
    gold_split: str = "dev"
    judgments: str | None = field(default=None, metadata={"path": True})

    def __post_init__(self) -> None:
        check_label_model(self.model, "model:")
        check_keys(self.options, label_model_options(self.model), f"options of label model {self.model!r}:", None)
        if isinstance(self.gold_queries, bool) or not isinstance(self.gold_queries, int) or self.gold_queries < 0:
            raise ConfigError(f"[aggregate] gold_queries must be a whole number >= 0, got {self.gold_queries!r}")
        if self.gold_queries and self.model != "fusion":
            raise ConfigError(f"[aggregate] gold_queries needs model = 'fusion' (it weights the LFs' scores), "
                              f"not {self.model!r}")
        if self.judgments is not None and self.model != "fusion":
            raise ConfigError(f"[aggregate] judgments needs model = 'fusion' (it weights the LFs' scores), "
                              f"not {self.model!r}")
        if self.judgments is not None and self.gold_queries:
            raise ConfigError("[aggregate] judgments and gold_queries: give one of them")

    def options_for(self, name: str) -> dict[str, Any]:
        """The options of label model ``name``: this section's when it is the configured model, else none."""
        return self.options if name == self.model else {}

    def label_model(self, name: str | None = None) -> LabelModel:
        """The label model ``name`` (default: the configured one) with :meth:`options_for` — what every stage fits."""
        from weakrank.label_models import make_label_model

        name = name or self.model
        return make_label_model(name, **self.options_for(name))


@dataclass
class AnalyzeConfig:
    """The splits ``analyze`` scores (default: all)."""

    splits: list[str] | None = None


REQUIRE = ("both", "relevant", "all")  # the queries scored: a relevant and a non-relevant qrels row, a relevant, any


@dataclass
class EvaluateConfig:
    """The split ``rerank`` scores and the ``evaluate`` stage reports, and the queries it scores: ``require``
    ``"both"`` (a relevant and a non-relevant qrels row), ``"relevant"`` (qrels that list relevant passages only,
    as BEIR's: unassessed candidates count as non-relevant) or ``"all"``."""

    split: str = "test"
    require: str = "both"

    def __post_init__(self) -> None:
        if self.require not in REQUIRE:
            raise ConfigError(f"require = {self.require!r}; choose one of {REQUIRE}{did_you_mean(self.require, REQUIRE)}")


@dataclass
class ExperimentConfig:
    """One grid of ``weakrank experiment`` (``[experiment]`` or ``[experiment_<name>]``), as written: unsupervised
    rows of ``label_models``; trained rows on the labels of ``train_label_models`` (default: the last label model;
    the papers' label sources, ``"gold"`` and ``"votes:<lf>"``, are read and checked by
    :mod:`weakrank.reproduction.labels` when the grid runs) × ``variants`` (default: all) × ``epsilons``/``alphas``
    × ``samplers`` × ``noise_ratios`` × ``seeds``; scored on ``split``'s queries with the qrels rows ``require``
    asks for (default: ``[evaluate] require``), R_n@k for each ``[n, k]`` of ``rn``; ``train`` overrides ``[train]`` in
    every trained cell."""

    label_models: list[str] = field(default_factory=lambda: ["majority", "generative"])
    train_label_models: list[str] | None = None
    variants: list[str] | None = None
    epsilons: list[float] = field(default_factory=lambda: [0.1])
    alphas: list[float] = field(default_factory=lambda: [0.1])
    samplers: list[str] = field(default_factory=lambda: ["bm25"])
    noise_ratios: list[float] = field(default_factory=lambda: [0.0])
    seeds: list[int] = field(default_factory=lambda: [0])
    supervised: bool = True
    split: str = "test"
    require: str = "both"
    rn: list[list[int]] = field(default_factory=lambda: [[10, 1]])
    train: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in self.label_models:
            check_label_model(name, "label_models:")
        if self.require not in REQUIRE:
            raise ConfigError(f"require = {self.require!r}; choose one of {REQUIRE}")
        if any(len(pair) != 2 or min(pair) < 1 for pair in self.rn):
            raise ConfigError(f"rn must hold [n, k] pairs of positive integers, got {self.rn!r}")

    @property
    def trained_label_models(self) -> list[str]:
        """The label models whose labels the trained rows learn from."""
        return self.label_models[-1:] if self.train_label_models is None else self.train_label_models
