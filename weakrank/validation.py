"""The whole config checked before the first stage runs, so that a wrong name stops a command before it
writes anything: the dataset loader and its options, the LF names and their options, the label model and
every split a stage reads, each with the closest known name."""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Iterable
from pathlib import Path

from weakrank.config import PipelineConfig, check_label_model, did_you_mean, located
from weakrank.errors import ConfigError
from weakrank.paths import RunPaths


def check_dataset(cfg: PipelineConfig) -> None:
    """``[dataset] loader`` names a loader and ``options`` are its keyword arguments."""
    from weakrank.loaders import LOADERS

    loader = cfg.dataset.loader
    if loader not in LOADERS:
        raise ConfigError(f"{located(cfg.source, '[dataset]')} unknown loader {loader!r}{did_you_mean(loader, LOADERS)};"
                          f" choose one of {sorted(LOADERS)}")
    known = [p for p in inspect.signature(LOADERS[loader]).parameters if p != "path"]
    for key in cfg.dataset.options:
        if key not in known:
            raise ConfigError(f"{located(cfg.source, '[dataset] options')} unknown option {key!r} of loader "
                              f"{loader!r}{did_you_mean(key, known)}; known: {', '.join(known)}")


def check_lfs(cfg: PipelineConfig) -> None:
    """Every LF is a built-in, an existing ``file.py:function`` or an importable ``module:function``, and every
    ``[label.options]`` table belongs to one of them (nothing is imported or called)."""
    from labeling_functions import BUILTIN

    where = located(cfg.source, "[label]")
    for spec in cfg.label.lfs:
        target, colon, attr = spec.rpartition(":")
        if not colon:
            if spec not in BUILTIN:
                raise ConfigError(f"{where} unknown LF {spec!r}{did_you_mean(spec, BUILTIN)}; built-ins are "
                                  f"{sorted(BUILTIN)}, or give your own as 'module:function' or 'file.py:function'")
        elif not attr:
            raise ConfigError(f"{where} LF {spec!r} names no function after the colon")
        elif target.endswith(".py") and not Path(target).is_file():
            raise ConfigError(f"{where} LF file {target} not found (from {spec!r}; relative to the config's folder)")
        elif not target.endswith(".py") and importlib.util.find_spec(target.split(".")[0]) is None:
            raise ConfigError(f"{where} LF module {target!r} not found (from {spec!r})")
    for name in cfg.label.lf_options:
        if name not in cfg.label.lfs:
            raise ConfigError(f"{located(cfg.source, '[label.options]')} options of {name!r}, which is not in lfs"
                              f"{did_you_mean(name, cfg.label.lfs)}")


def check_lf_count(cfg: PipelineConfig, label_model: str | None = None) -> None:
    """The label model (``label_model``, else ``[aggregate] model``) can run on as many LFs as ``[label] lfs`` names."""
    from weakrank.label_models import MODELS

    name = label_model or cfg.aggregate.model
    needs = MODELS[name].min_lfs
    if len(cfg.label.lfs) < needs:
        where = "--label-model" if label_model else "[aggregate] model"
        raise ConfigError(f"{located(cfg.source, where)} {name!r} needs at least {needs} LFs; [label] lfs has "
                          f"{len(cfg.label.lfs)}")


def dataset_splits(cfg: PipelineConfig, ingested: bool = True) -> set[str]:
    """The splits the stages can read: those of the ingested dataset when ``ingested`` and it exists, else those
    the loader makes as configured (its ``splits``/``split`` option or their default, and BEIR's ``unlabelled``)."""
    queries = RunPaths(cfg.run_dir).dataset / "queries.parquet"
    if ingested and queries.exists():
        import pyarrow.parquet as pq

        return set(pq.read_table(queries, columns=["split"]).column("split").to_pylist())
    from weakrank.loaders import LOADERS

    options = cfg.dataset.options
    defaults = {p.name: p.default for p in inspect.signature(LOADERS[cfg.dataset.loader]).parameters.values()}
    splits = options.get("splits", defaults.get("splits"))
    if splits is None:
        splits = [options.get("split", defaults.get("split"))]
    named = set(splits) | ({options["unlabelled"]} if options.get("unlabelled") else set())
    return {str(s) for s in named if s}


def check_splits(cfg: PipelineConfig, uses: Iterable[tuple[str, str]], known: set[str]) -> None:
    """Each ``(where, split)`` of ``uses`` names a split of ``known``."""
    for where, split in uses:
        if split not in known:
            raise ConfigError(f"{located(cfg.source, where)} unknown split {split!r}{did_you_mean(split, known)}; "
                              f"the dataset's splits are {sorted(known)}")


def check_config(
    cfg: PipelineConfig, stages: Iterable[str], *, analyze_splits: list[str] | None = None,
    eval_split: str | None = None, train_split: str | None = None, label_model: str | None = None,
) -> None:
    """What ``stages`` read of ``cfg`` (with the command line's ``analyze_splits``, ``eval_split``,
    ``train_split`` and ``label_model`` over the config's), checked before any of them runs."""
    stages = set(stages)
    if "ingest" in stages or not RunPaths(cfg.run_dir).dataset.exists():
        check_dataset(cfg)
    if "label" in stages:
        check_lfs(cfg)
    if label_model is not None:
        check_label_model(label_model, located(cfg.source, "--label-model:"))
    if "aggregate" in stages:
        check_lf_count(cfg, label_model)
    uses = []
    if "analyze" in stages:
        uses += [("--split" if analyze_splits else "[analyze] splits", s) for s in analyze_splits or cfg.analyze.splits or []]
    if stages & {"rerank", "evaluate"}:
        uses.append(("--eval-split" if eval_split else "[evaluate] split", eval_split or cfg.evaluate.split))
    if "train" in stages and train_split:
        uses.append(("[train] train_split", train_split))
    if uses:
        check_splits(cfg, uses, dataset_splits(cfg, ingested="ingest" not in stages))
