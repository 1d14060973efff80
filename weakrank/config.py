"""Declarative pipeline configs (TOML, one per dataset/experiment under ``pipelines/``).

Every section is a typed dataclass: a misspelt section or key, or a value of the wrong type, stops with a
:class:`ConfigError` naming the file, the section and the key, with the closest known name. ``[train]`` is
kept as a table and read into a :class:`~weakrank.training.config.TrainConfig` (as strictly) when training
starts, with the command line's overrides. Relative paths (``run_dir``, ``[dataset] path``, the BEIR loader's
``run``, ``path/to/file.py:function`` LFs, ``[train] labels`` and ``policy_path``) are resolved against the config
file's folder, so a config runs from any directory. Each section's dataclass, with the checks of its keys, is in
:mod:`weakrank.sections`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from weakrank.errors import ConfigError, did_you_mean
from weakrank.inputs import check_lfs, check_loader
from weakrank.keys import check_keys, path_keys
from weakrank.names import ENGINES
from weakrank.paths import RunPaths
from weakrank.sections import (
    AggregateConfig,
    AnalyzeConfig,
    DatasetConfig,
    EvaluateConfig,
    ExperimentConfig,
    LabelConfig,
    typed,
)

if TYPE_CHECKING:
    from weakrank.label_models.base import LabelModel
    from weakrank.votes_file import VotesInfo

@dataclass
class PipelineConfig:
    """One pipeline: a dataset, its LFs, a label model, the run directory its stages write to, and what
    ``train``, ``rerank``, ``evaluate`` and ``experiment`` read."""

    name: str
    run_dir: Path
    dataset: DatasetConfig
    label: LabelConfig
    aggregate: AggregateConfig = field(default_factory=AggregateConfig)
    analyze: AnalyzeConfig = field(default_factory=AnalyzeConfig)
    train: dict[str, Any] | None = None  # the [train] table (None: no training stages)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    experiment: ExperimentConfig = field(default_factory=ExperimentConfig)
    grids: dict[str, ExperimentConfig] = field(default_factory=dict)  # [experiment_<name>] by name
    source: Path | None = None

    def lf_priors(self, votes: VotesInfo | None = None) -> dict[str, dict[str, Any]]:
        """Each configured LF's declared family and prior by LF name (what the fusion label model weighs), as the
        votes' record ``votes`` keeps them (default: that of the run directory's ``votes.parquet``, where it exists):
        ``label`` wrote each score column's declaration there. Only where the votes keep none of these LFs with these
        options (votes of an earlier weakrank, or ``[label]`` changed since they were labelled) are the LFs built to
        read it (:func:`weakrank.registry.lf_priors`)."""
        from weakrank.registry import lf_priors
        from weakrank.votes_file import VotesInfo, read_votes_info  # pandas: imported when it runs

        if votes is None:
            path = RunPaths(self.run_dir).votes
            votes = read_votes_info(path) if path.exists() else VotesInfo()
        kept = list(votes.declarations.values())
        if [(d.spec, d.fingerprint, d.overrides) for d in kept] == [
                (spec, self.label.fingerprint(spec), self.label.overrides(spec)) for spec in self.label.lfs]:
            return {name: declared.priors() for name, declared in votes.declarations.items()}
        return lf_priors(self.label.lfs, self.label.lf_options)

    def fusion_options(self, priors: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """The fusion label model's options: ``[aggregate]``'s when it is the configured model, and the LFs'
        declared families and priors (``priors``, default :meth:`lf_priors`)."""
        return {**self.aggregate.options_for("fusion"), "priors": self.lf_priors() if priors is None else priors}

    def label_model(self, name: str | None = None, priors: Mapping[str, Mapping[str, Any]] | None = None) -> LabelModel:
        """The label model ``name`` (default: the configured one) as every stage fits it: ``[aggregate]``'s options,
        and for the fusion model the LFs' declarations (:meth:`fusion_options`, with ``priors``)."""
        from weakrank.label_models import make_label_model

        name = name or self.aggregate.model
        options = self.fusion_options(priors) if name == "fusion" else self.aggregate.options_for(name)
        return make_label_model(name, **options)


# the raw keys of the sections that are not read one to one into a dataclass
DATASET_KEYS = {"loader": str, "path": str, "options": dict, "max_queries": Any, "splits": Any}  # max_queries: check_max_queries
LABEL_KEYS = {"lfs": list[str], "options": dict, "engine": str, **dict.fromkeys(ENGINES, dict)}
SECTIONS = ("name", "run_dir", "dataset", "label", "aggregate", "analyze", "train", "evaluate", "experiment")
GRID = "experiment_"  # [experiment_<name>]: one more grid


def _section(raw: dict, key: str, source: Path, required: bool = True) -> dict:
    value = raw.get(key)
    if value is None:
        if required:
            raise ConfigError(f"{source}: missing [{key}] section")
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [{key}] must be a table")
    return value


def _check_sections(raw: dict, source: Path) -> None:
    for key in raw:
        if key not in SECTIONS and not key.startswith(GRID):
            raise ConfigError(f"{source}: unknown section or key {key!r}{did_you_mean(key, SECTIONS)}; "
                              f"known: {', '.join(SECTIONS)}, {GRID}<name>")
    for key in ("name", "run_dir"):
        if key in raw and not isinstance(raw[key], str):
            raise ConfigError(f"{source}: {key} must be a string, got {raw[key]!r}")


def _require(section: dict, key: str, where: str, source: Path) -> Any:
    if key not in section:
        raise ConfigError(f"{source}: missing key {key!r} in [{where}]")
    return section[key]


def check_max_queries(value: Any, where: str) -> int:
    """``value`` if it is a positive integer, else a :class:`ConfigError` saying so."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where} must be a positive integer (the first N queries of each split), got {value!r}")
    return value


TRAIN_PATHS = ("labels", "policy_path")  # [train] keys that name files
DATASET_PATHS = {"beir": ("run",)}  # loader → its options that name files (the trec loader's are under its path)


def relative_to(folder: Path, section: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``section`` with its non-empty relative file paths under ``keys`` resolved against ``folder``."""
    return {k: str(folder / v) if k in keys and isinstance(v, str) and v else v for k, v in section.items()}


def lf_spec_relative_to(folder: Path, spec: str) -> str:
    """An LF name ``path.py:attr`` with a relative ``path.py`` resolved against ``folder``; other names unchanged."""
    target, colon, attr = spec.rpartition(":")
    if not colon or not target.endswith(".py") or Path(target).is_absolute():
        return spec
    return f"{folder / target}:{attr}"


def check_unique_lfs(lfs: list[str], specs: Mapping[str, str], source: Path) -> None:
    """A :class:`ConfigError` naming the first LF that ``[label] lfs`` lists twice (``specs``: each as resolved
    against the config's folder, so ``a.py:f`` and ``./a.py:f`` are one): its scores and votes would be one column."""
    seen: dict[str, str] = {}
    for spec in lfs:
        if specs[spec] in seen:
            again = "" if seen[specs[spec]] == spec else f" (as {seen[specs[spec]]!r} and {spec!r})"
            raise ConfigError(f"{source}: [label] lfs lists LF {spec!r} twice{again}; give each LF once")
        seen[specs[spec]] = spec


def with_overrides(raw: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` (a parsed config) with each ``section=table`` of ``overrides`` merged key by key into that
    section, and any other ``key=value`` (``name``) set."""
    raw = dict(raw)
    for key, value in overrides.items():
        both_tables = isinstance(value, Mapping) and isinstance(raw.get(key), dict)
        raw[key] = {**raw[key], **value} if both_tables else value
    return raw


def config_text(path: Path) -> str:
    """The text of a config file; one that is not UTF-8 (as TOML must be) is a :class:`ConfigError` at its line."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 (byte 0x{data[err.start]:02x}); TOML files are UTF-8") from None


def load_config(path: str | Path, *, run_dir: str | Path | None = None, max_queries: int | None = None,
                **overrides: Any) -> PipelineConfig:
    """Parse a pipeline TOML file; a missing, misspelt or mistyped section or key raises :class:`ConfigError` naming it,
    as do an unknown dataset loader or loader option and an LF that does not resolve (:mod:`weakrank.inputs`: its
    file or module is imported, nothing is called). What a stage reads (the dataset's files, the label model's LF
    count, the splits) is checked by that stage before it writes (:mod:`weakrank.validation`): a stage that does
    not read it, or a run directory already ingested, needs none of it. (Long: the sections are read and checked
    in the order a person reads the file, so that the first error reported is the first in the file.)

    From Python, as the command line's flags do: ``run_dir`` (relative to the current folder) replaces the file's,
    ``max_queries`` keeps the first N queries of each split at ingest, and each other keyword is a section whose
    keys replace the file's, checked as strictly::

        cfg = load_config("pipelines/wikiqa.toml", run_dir="/tmp/wikiqa50", max_queries=50,
                          train={"max_steps": 20}, evaluate={"split": "dev"})
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {path} not found")
    try:
        raw = with_overrides(tomllib.loads(config_text(path)), overrides)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    if max_queries is not None and isinstance(raw.get("dataset"), dict):
        raw["dataset"] = {**raw["dataset"], "max_queries": max_queries}
    _check_sections(raw, path)
    ds = _section(raw, "dataset", path)
    lab = _section(raw, "label", path)
    check_keys(ds, DATASET_KEYS, "[dataset]", path)
    check_keys(lab, LABEL_KEYS, "[label]", path)
    lfs = _require(lab, "lfs", "label", path)
    if not lfs:
        raise ConfigError(f"{path}: [label] lfs must be a non-empty list")
    max_queries = ds.get("max_queries")
    if max_queries is not None:
        check_max_queries(max_queries, f"{path}: [dataset] max_queries")
    loader = _require(ds, "loader", "dataset", path)
    here = path.resolve().parent  # relative paths in a config are relative to the config file's folder
    options = relative_to(here, ds.get("options", {}), DATASET_PATHS.get(loader, ()))
    if "splits" in ds:
        if "splits" in options:
            raise ConfigError(f"{path}: [dataset] splits given twice (also in [dataset.options])")
        options = {**options, "splits": ds["splits"]}
    name = raw.get("name", path.stem)
    specs = {spec: lf_spec_relative_to(here, spec) for spec in lfs}
    check_unique_lfs(lfs, specs, path)
    evaluate = typed(EvaluateConfig, _section(raw, "evaluate", path, required=False), "evaluate", path)

    def grid(key: str) -> ExperimentConfig:  # a grid scores the queries [evaluate] does unless it says otherwise
        return typed(ExperimentConfig, {"require": evaluate.require, **_section(raw, key, path, required=False)},
                     key, path)

    grids = {key.removeprefix(GRID): grid(key) for key in raw if key.startswith(GRID)}
    cfg = PipelineConfig(
        name=name,
        run_dir=Path(run_dir).resolve() if run_dir is not None else (here / raw.get("run_dir", f"data/{name}")).resolve(),
        dataset=DatasetConfig(
            loader=loader,
            path=(here / _require(ds, "path", "dataset", path)).resolve(),
            options=options,
            max_queries=max_queries,
        ),
        label=LabelConfig(
            lfs=list(specs.values()),
            lf_options={specs.get(spec, spec): options for spec, options in lab.get("options", {}).items()},
            engine=lab.get("engine", "local"),
            engine_options={k: lab[k] for k in ENGINES if k in lab},
        ),
        aggregate=typed(AggregateConfig, relative_to(here, _section(raw, "aggregate", path, required=False),
                                                     path_keys(AggregateConfig)), "aggregate", path),
        analyze=typed(AnalyzeConfig, _section(raw, "analyze", path, required=False), "analyze", path),
        train=relative_to(here, _section(raw, "train", path), TRAIN_PATHS) if "train" in raw else None,
        evaluate=evaluate,
        experiment=grid("experiment"),
        grids=grids,
        source=path,
    )
    check_loader(cfg.dataset.loader, cfg.dataset.options, path)
    check_lfs(cfg.label.lfs, cfg.label.lf_options, path)
    return cfg
