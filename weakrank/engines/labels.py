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
from weakrank.label_models import LabelModel, make_label_model


def fit_on_votes(
    votes_dir: str | Path, model: str = "generative", batch_rows: int = 256 * 1024, **options
) -> LabelModel:
    """A label model fitted out of core (:meth:`~weakrank.label_models.LabelModel.fit_streaming`) on the vote
    columns of a partitioned votes dataset, read in chunks."""
    columns = vote_columns(votes_dir)
    if not columns:
        raise DataError("votes dataset has no vote_* columns", file=votes_dir)
    return make_label_model(model, **options).fit_streaming(iter_votes(votes_dir, columns, batch_rows))


def write_labels(
    votes_dir: str | Path, labels_dir: str | Path, label_model: LabelModel, batch_rows: int = 256 * 1024
) -> Path:
    """The votes dataset plus p_relevant, label, confidence and score, written chunk by chunk (atomically)."""
    with atomic_dir(labels_dir) as tmp:
        for i, batch in enumerate(ds.dataset(Path(votes_dir), format="parquet").to_batches(batch_size=batch_rows)):
            frame = label_model.labels_table(batch.to_pandas())
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp / f"part-{i:06d}.parquet")
    return Path(labels_dir)
