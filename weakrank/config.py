"""Declarative pipeline configs (TOML, one per dataset/experiment under ``pipelines/``).

Relative paths are resolved against the current working directory (run from the repository root).
Sections other than those read here (``train``, ``evaluate``, …) are kept in ``sections`` for the
stages that use them.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weakrank.errors import ConfigError


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
    and where they run: ``engine`` (local, dask, spark); ``engine_options`` holds the ``[label.dask]`` and
    ``[label.spark]`` tables by engine name."""

    lfs: list[str]
    lf_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    engine: str = "local"
    engine_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def fingerprint(self, name: str) -> str:
        """A short hash of an LF's options: cached scores are reused only when it matches."""
        blob = json.dumps({"lf": name, **self.lf_options.get(name, {})}, sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:12]


@dataclass
class AggregateConfig:
    """The label model and its options."""

    model: str = "generative"
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class PipelineConfig:
    """One pipeline: a dataset, its LFs, a label model, the run directory its stages write to."""

    name: str
    run_dir: Path
    dataset: DatasetConfig
    label: LabelConfig
    aggregate: AggregateConfig = field(default_factory=AggregateConfig)
    analyze_splits: list[str] | None = None
    sections: dict[str, Any] = field(default_factory=dict)
    source: Path | None = None


def _section(raw: dict, key: str, source: Path, required: bool = True) -> dict:
    value = raw.get(key)
    if value is None:
        if required:
            raise ConfigError(f"{source}: missing [{key}] section")
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: [{key}] must be a table")
    return value


# the keys each section may hold; a misspelt key or section is an error, never silently ignored
KEYS = {
    "dataset": {"loader", "path", "options", "max_queries", "splits"},
    "label": {"lfs", "options", "engine", "local", "dask", "spark"},
    "aggregate": {"model", "options"},
    "analyze": {"splits"},
}
TOP_LEVEL = {"name", "run_dir", *KEYS, "train", "evaluate", "experiment"}  # and experiment_<grid>


def _check_keys(raw: dict, source: Path) -> None:
    unknown = [k for k in raw if k not in TOP_LEVEL and not k.startswith("experiment_")]
    if unknown:
        raise ConfigError(f"{source}: unknown section or key {unknown[0]!r}; known: {sorted(TOP_LEVEL)}, experiment_<grid>")
    for section, keys in KEYS.items():
        value = raw.get(section)
        extra = sorted(set(value) - keys) if isinstance(value, dict) else []
        if extra:
            raise ConfigError(f"{source}: [{section}] unknown key {extra[0]!r}; known: {sorted(keys)}")


def _require(section: dict, key: str, where: str, source: Path) -> Any:
    if key not in section:
        raise ConfigError(f"{source}: missing key {key!r} in [{where}]")
    return section[key]


def check_max_queries(value: Any, where: str) -> int:
    """``value`` if it is a positive integer, else a :class:`ConfigError` saying so."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where} must be a positive integer (the first N queries of each split), got {value!r}")
    return value


def load_config(path: str | Path) -> PipelineConfig:
    """Parse a pipeline TOML file; a missing or bad key raises :class:`ConfigError` naming it."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {path} not found")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    _check_keys(raw, path)
    ds = _section(raw, "dataset", path)
    lab = _section(raw, "label", path)
    agg = _section(raw, "aggregate", path, required=False)
    ana = _section(raw, "analyze", path, required=False)
    lfs = _require(lab, "lfs", "label", path)
    if not isinstance(lfs, list) or not lfs:
        raise ConfigError(f"{path}: [label] lfs must be a non-empty list")
    max_queries = ds.get("max_queries")
    if max_queries is not None:
        check_max_queries(max_queries, f"{path}: [dataset] max_queries")
    options = ds.get("options", {})
    if "splits" in ds:
        if "splits" in options:
            raise ConfigError(f"{path}: [dataset] splits given twice (also in [dataset.options])")
        options = {**options, "splits": ds["splits"]}
    name = raw.get("name", path.stem)
    known = {"name", "run_dir", "dataset", "label", "aggregate", "analyze"}
    return PipelineConfig(
        name=name,
        run_dir=Path(raw.get("run_dir", f"data/{name}")),
        dataset=DatasetConfig(
            loader=_require(ds, "loader", "dataset", path),
            path=Path(_require(ds, "path", "dataset", path)),
            options=options,
            max_queries=max_queries,
        ),
        label=LabelConfig(
            lfs=list(lfs),
            lf_options=lab.get("options", {}),
            engine=lab.get("engine", "local"),
            engine_options={k: lab[k] for k in ("local", "dask", "spark") if isinstance(lab.get(k), dict)},
        ),
        aggregate=AggregateConfig(model=agg.get("model", "generative"), options=agg.get("options", {})),
        analyze_splits=ana.get("splits"),
        sections={k: v for k, v in raw.items() if k not in known},
        source=path,
    )
