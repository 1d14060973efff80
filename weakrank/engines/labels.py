"""Out-of-core aggregate: fit the label model on a votes dataset's ``vote_*`` columns only (no texts, no
scores), chunk by chunk, then write a labels dataset part by part (p_relevant, label, confidence)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from weakrank.engines.partitions import iter_votes, vote_columns
from weakrank.errors import DataError
from weakrank.io import atomic_dir
from weakrank.label_models import make_label_model, with_labels
from weakrank.label_models.base import LabelModelBase
from weakrank.label_models.streaming import fit_streaming


def fit_on_votes(
    votes_dir: str | Path, model: str = "generative", batch_rows: int = 256 * 1024, **options
) -> LabelModelBase:
    """A label model fitted on the vote columns of a partitioned votes dataset, read in chunks."""
    columns = vote_columns(votes_dir)
    if not columns:
        raise DataError("votes dataset has no vote_* columns", file=votes_dir)
    chunks = (frame.to_numpy(dtype="int8") for frame in iter_votes(votes_dir, columns, batch_rows))
    return fit_streaming(make_label_model(model, **options), chunks)


def write_labels(
    votes_dir: str | Path, labels_dir: str | Path, label_model: LabelModelBase, batch_rows: int = 256 * 1024
) -> Path:
    """The votes dataset plus p_relevant, label, confidence, written chunk by chunk (atomically)."""
    columns = vote_columns(votes_dir)
    with atomic_dir(labels_dir) as tmp:
        for i, batch in enumerate(ds.dataset(Path(votes_dir), format="parquet").to_batches(batch_size=batch_rows)):
            frame = batch.to_pandas()
            frame = with_labels(frame, label_model.predict_proba(frame[columns].to_numpy(dtype="int8")))
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp / f"part-{i:06d}.parquet")
    return Path(labels_dir)
