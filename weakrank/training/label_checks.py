"""The table a run trains on, checked against the dataset before training starts: its pairs belong to the
dataset's queries and passages, weak labels carry ``label``/``confidence``, probabilities lie in [0, 1] and
the label model's ``score`` is a number on the train split. Each error names the file, row and field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.dataset import Dataset
from weakrank.errors import DataError

UNIT = ("p_relevant", "confidence")  # columns that hold probabilities


def check_label_table(labels: pd.DataFrame, path: str | Path, dataset: Dataset, supervised: bool, split: str) -> None:
    """A located :class:`DataError` for the first problem of ``labels`` (read from ``path``) as a run that
    trains on ``split`` of ``dataset`` reads it (``supervised``: gold, no weak labels needed)."""
    for column, table, key in (("query_id", dataset.queries, "queries"), ("passage_id", dataset.passages, "passages")):
        if column not in labels.columns:
            raise DataError("missing column", file=path, field=column)
        unknown = ~labels[column].isin(table[column])
        if unknown.any():
            row = int(unknown.to_numpy().argmax())
            raise DataError(f"labels do not match this dataset: {column} {labels[column].iloc[row]!r} is not one of "
                            f"its {key} (re-run label and aggregate after ingest)", file=path, row=row, field=column)
    if supervised:
        return
    for column in ("label", "confidence"):
        if column not in labels.columns:
            raise DataError("missing column (run `weakrank aggregate`)", file=path, field=column)
    for column in (c for c in UNIT if c in labels.columns):
        values = labels[column].to_numpy(dtype=float)
        bad = ~((values >= 0) & (values <= 1))
        if bad.any():
            row = int(bad.argmax())
            raise DataError(f"{values[row]} is outside [0, 1] (a probability)", file=path, row=row, field=column)
    if "score" in labels.columns:
        nan = np.flatnonzero(labels["score"].isna().to_numpy() & (labels["split"] == split).to_numpy())
        if len(nan):
            rows = ", ".join(map(str, nan[:5])) + (", …" if len(nan) > 5 else "")
            raise DataError(f"NaN on {len(nan)} rows of split {split!r} (rows {rows}); the label model's score must "
                            "be a number (re-run `weakrank aggregate`)", file=path, row=int(nan[0]), field="score")
