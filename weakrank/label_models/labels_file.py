"""What ``aggregate`` hands on beside the labels: ``labels.parquet``'s metadata as one typed record, with its one
writer and its one reader (a later stage reads no key of it by name)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from weakrank.checked import LIST, OBJECT, TEXT, read_field
from weakrank.fusion_state import FusionState
from weakrank.io import read_metadata, read_parquet, read_parquet_table, write_parquet
from weakrank.label_models import MODELS


@dataclass(frozen=True)
class LabelsInfo:
    """How a labels table was made: the label ``model`` (its name) over the ``lfs``, its fitted state (``params``: a
    :class:`~weakrank.fusion_state.FusionState`, with what judged queries did, for a portable model; another's as it
    saves it), the ids of the judged queries that taught it (``judged_queries``), the file they came from
    (``judgments``, its name) and the splits of every judged query it read (``judged_splits``: a split whose
    judgments made the labels is never the one scored with them, :func:`weakrank.validation.check_labels_apart`)."""

    model: str | None = None
    lfs: list[str] = field(default_factory=list)
    params: FusionState | dict = field(default_factory=dict)
    judged_queries: list[str] = field(default_factory=list)
    judgments: str | None = None
    judged_splits: list[str] = field(default_factory=list)

    @property
    def taught(self) -> bool:
        """Whether relevance labels (a person's judgments, or gold standing in for them) taught these labels."""
        return bool(self.judged_queries)


_KINDS = {"model": TEXT, "lfs": LIST, "params": OBJECT, "judged_queries": LIST, "judgments": TEXT,
          "judged_splits": LIST}  # each may be absent (None)
TAUGHT_KEY = "judged_splits"  # the key of the splits whose judgments made the labels
TAUGHT_WHAT = "these labels were made from judgments (they moved the LFs' priors, and chose the checkpoint) of"
_KEYS = {"judged_queries": "gold_queries"}  # a field's metadata key where it differs (labels have always kept it)


def write_labels(labels: pd.DataFrame, path: str | Path, info: LabelsInfo) -> Path:
    """Write a labels table with its record, atomically."""
    saved = {_KEYS.get(name, name): getattr(info, name) for name in _KINDS}
    if isinstance(info.params, FusionState):
        saved["params"] = info.params.to_dict()
    return write_parquet(labels, path, metadata=saved)


def read_labels_info(path: str | Path) -> LabelsInfo:
    """The record of labels file ``path`` (an empty one where it carries none: labels a user made); a field of the
    wrong type is a :class:`DataError` naming the file and the field; a portable model's state is read by
    :meth:`FusionState.from_dict <weakrank.fusion_state.FusionState.from_dict>`."""
    return _labels_info(read_metadata(path), path)


def read_labels(path: str | Path) -> tuple[pd.DataFrame, LabelsInfo]:
    """Labels file ``path``'s table and its record (:func:`read_labels_info`), from one read."""
    table, meta = read_parquet_table(path)
    return table, _labels_info(meta, path)


def _labels_info(meta: dict, path: str | Path) -> LabelsInfo:
    kept = {name: meta.get(_KEYS.get(name, name)) for name in _KINDS}
    for name, kind in _KINDS.items():
        if kept[name] is not None:
            read_field(meta, _KEYS.get(name, name), kind, path)
    info = LabelsInfo(**{name: value for name, value in kept.items() if value is not None})
    if info.params and info.model in MODELS and MODELS[info.model].portable:
        return replace(info, params=FusionState.from_dict(info.params, path, "params.", len(info.lfs) or None))
    return info


def labels_taught_splits(path: str | Path) -> set[str]:
    """The splits whose judgments made labels file ``path`` (:func:`taught_splits`)."""
    info = read_labels_info(path)
    if info.judged_splits or not info.judged_queries:
        return set(info.judged_splits)
    return taught_splits(read_parquet(path, columns=["query_id", "split"]), info)


def taught_splits(table: pd.DataFrame, info: LabelsInfo) -> set[str]:
    """The splits whose judgments made labels ``table`` with record ``info``: its ``judged_splits``; for labels
    written before it was kept, the splits of its ``judged_queries`` in the table."""
    if info.judged_splits or not info.judged_queries:
        return set(info.judged_splits)
    return set(table.loc[table["query_id"].isin(set(info.judged_queries)), "split"].astype(str))
