"""Shipping a trained student with its teacher: the teacher fitted on a run directory (:func:`run_teacher`),
written beside the student (:func:`ship`) so that :func:`weakrank.ranker.load_ranker` loads the shipped ranker
(:mod:`weakrank.ranker.fused`)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.errors import DataError
from weakrank.io import read_metadata, read_parquet
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names
from weakrank.paths import RunPaths
from weakrank.ranker.teacher import Teacher
from weakrank.registry import resolve_lf


def run_teacher(cfg: PipelineConfig, labels: str | Path | None = None) -> Teacher | None:
    """The teacher of a model trained on ``cfg``'s run directory: each LF of ``[label] lfs`` (fitted on the
    dataset when it keeps collection statistics) and the fusion label model as ``aggregate`` fitted it (its state
    in ``labels``, by default labels.parquet; refitted without gold on every pair of ``votes.parquet`` when the
    labels come from another label model or carry no state: only then are the votes read). None, with a warning,
    when an LF cannot score without the collection (a ``fit`` without ``export``): the model is the student alone."""
    paths = RunPaths(cfg.run_dir)
    labelled = lf_names(pd.DataFrame(columns=pq.read_schema(paths.votes).names))
    lfs = [resolve_lf(spec, cfg.label.lf_options.get(spec)) for spec in cfg.label.lfs]
    if [lf.name for lf in lfs] != labelled:
        raise DataError(f"labelled by the LFs {labelled}, but [label] lfs names {[lf.name for lf in lfs]}: "
                        "re-run `weakrank label`", file=paths.votes)
    stuck = [lf.name for lf in lfs if not lf.portable]
    if stuck:
        warnings.warn(f"LFs {stuck} are fitted on the collection and export no state: the model holds the student "
                      "alone (give ranking_lf export= and restore=)", stacklevel=2)
        return None
    fusion = _fusion(cfg, Path(labels) if labels else paths.labels, labelled, paths.votes)
    dataset = Dataset.load(paths.dataset) if any(lf.export_fn for lf in lfs) else None
    fitted = [lf.fit(dataset) if lf.export_fn is not None else lf for lf in lfs]
    return Teacher(fitted, fusion.state(), cfg.label.lfs, [cfg.label.lf_options.get(spec, {}) for spec in cfg.label.lfs])


def ship(teacher: Teacher, *directories: str | Path) -> list[Path]:
    """Write ``teacher`` beside the student saved in each of ``directories``; returns the teacher files written."""
    return [teacher.save(directory) for directory in directories]


def _fusion(cfg: PipelineConfig, labels: Path, lfs: list[str], votes: Path) -> ScoreFusionModel:
    """The fusion label model over ``lfs`` that wrote ``labels`` (few-shot weighting included), else one fitted
    without gold on every pair of ``votes``."""
    meta = read_metadata(labels) if labels.exists() else {}
    state = meta.get("params") or {}
    if meta.get("model") == "fusion" and meta.get("lfs") == lfs and "scales" in state:
        return ScoreFusionModel.from_state(state)
    options = cfg.aggregate.options if cfg.aggregate.model == "fusion" else {}
    return ScoreFusionModel(**options).fit_table(read_parquet(votes))
