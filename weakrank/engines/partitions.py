"""Partitioned Parquet datasets of pairs and votes, written and read chunk by chunk (out-of-core).

A pairs dataset is a directory of hive partitions ``part=<k>/`` (``pyarrow.dataset.write_dataset``);
each partition holds whole query lists (an LF votes per query, so a list is never split) and is
aligned to the :data:`weakrank.labeling.CHUNK_SIZE` chunks of the in-process path, so every engine
calls each LF on exactly the same batches. ``_row`` keeps the candidates' order.
A votes dataset is a directory of Parquet files with the votes-table columns plus ``_row`` and ``part``.
Both are written into a temp directory renamed into place, so a reader never sees half a dataset.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from weakrank.dataset import Dataset
from weakrank.errors import DataError
from weakrank.files import atomic_dir
from weakrank.labeling import CHUNK_SIZE, KEY_COLUMNS, SCORE, VOTE, _query_chunks

ROW, PART = "_row", "part"
PAIR_COLUMNS = [ROW, *KEY_COLUMNS, "query", "passage"]
HIVE = ds.partitioning(pa.schema([(PART, pa.int32())]), flavor="hive")


def partition_bounds(query_ids: np.ndarray, part_rows: int, chunk_size: int = CHUNK_SIZE) -> list[tuple[int, int]]:
    """[start, end) row bounds of partitions of about ``part_rows`` pairs made of whole LF chunks."""
    if part_rows < 1:
        raise ValueError(f"part_rows must be >= 1, got {part_rows}")
    bounds, begin = [], 0
    for _, end in _query_chunks(query_ids, chunk_size) if len(query_ids) else []:
        if end - begin >= part_rows:
            bounds.append((begin, end))
            begin = end
    if begin < len(query_ids):
        bounds.append((begin, len(query_ids)))
    return bounds


def _check_contiguous(query_ids: np.ndarray, source: str) -> None:
    starts = np.flatnonzero(np.r_[True, query_ids[1:] != query_ids[:-1]])
    runs = pd.Series(query_ids[starts])
    repeated = runs.duplicated()
    if repeated.any():
        row = int(starts[int(repeated.to_numpy().argmax())])
        raise DataError(
            f"query {query_ids[row]!r} has a candidate list split in two", file=source, row=row, field="query_id"
        )


def write_pairs(
    dataset: Dataset, directory: str | Path, part_rows: int = 100_000, chunk_size: int = CHUNK_SIZE
) -> Path:
    """Write the dataset's pairs (candidates + texts) as a partitioned Parquet dataset, part by part."""
    candidates = dataset.candidates
    qid = candidates["query_id"].to_numpy()
    _check_contiguous(qid, dataset.sources.get("candidates", "<candidates table>"))
    q_text = dataset.queries.set_index("query_id")["text"]
    p_text = dataset.passages.set_index("passage_id")["text"]

    def table(k: int, a: int, b: int) -> pa.Table:
        part = candidates.iloc[a:b]
        frame = part.assign(
            _row=np.arange(a, b, dtype=np.int64),
            query=q_text.loc[part["query_id"]].to_numpy(),
            passage=p_text.loc[part["passage_id"]].to_numpy(),
        )[PAIR_COLUMNS].assign(part=np.int32(k))
        return pa.Table.from_pandas(frame, preserve_index=False)

    bounds = partition_bounds(qid, part_rows, chunk_size)
    if not bounds:
        raise DataError("no candidate pairs to write", file=dataset.sources.get("candidates", "<candidates table>"))
    head = table(0, *bounds[0])
    rest = (b for k, (a, e) in enumerate(bounds[1:], start=1) for b in table(k, a, e).cast(head.schema).to_batches())
    return write_batches(head.to_batches(), rest, head.schema, directory)


def write_batches(
    head: Sequence[pa.RecordBatch], rest: Iterator[pa.RecordBatch], schema: pa.Schema, directory: str | Path
) -> Path:
    """Stream record batches (with a ``part`` column) into a hive-partitioned dataset, atomically."""
    with atomic_dir(directory) as tmp:
        ds.write_dataset(
            _chain(head, rest),
            tmp,
            schema=schema,
            format="parquet",
            partitioning=HIVE,
            existing_data_behavior="overwrite_or_ignore",
            max_rows_per_group=64 * 1024,
        )
    return Path(directory)


def _chain(head: Sequence[pa.RecordBatch], rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield from head
    yield from rest


def pairs_dataset(directory: str | Path) -> ds.Dataset:
    """The pairs dataset written by :func:`write_pairs` (lazy, nothing read yet)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError("pairs dataset not found", file=directory)
    return ds.dataset(directory, format="parquet", partitioning=HIVE)


def part_ids(directory: str | Path) -> list[int]:
    """The partition numbers of a pairs dataset, in order."""
    keys = {ds.get_partition_keys(f.partition_expression)[PART] for f in pairs_dataset(directory).get_fragments()}
    return sorted(int(k) for k in keys)


def read_part(directory: str | Path, part: int) -> pd.DataFrame:
    """One partition of a pairs dataset as pandas (its own rows only)."""
    table = pairs_dataset(directory).to_table(filter=ds.field(PART) == part)
    return table.to_pandas()


def write_votes_part(votes: pd.DataFrame, directory: str | Path, part: int) -> Path:
    """Write one labelled partition as ``part-<k>.parquet`` of a votes dataset."""
    path = Path(directory) / f"part-{part:06d}.parquet"
    pq.write_table(pa.Table.from_pandas(votes, preserve_index=False), path)
    return path


def iter_votes(
    directory: str | Path, columns: list[str] | None = None, batch_rows: int = 256 * 1024
) -> Iterator[pd.DataFrame]:
    """Chunks of a votes dataset (only ``columns``; e.g. the ``vote_*`` ones) — memory stays bounded."""
    dataset = ds.dataset(Path(directory), format="parquet")
    if columns is not None:
        missing = [c for c in columns if c not in dataset.schema.names]
        if missing:
            raise DataError(f"missing column(s) {missing}", file=directory, field=missing[0])
    for batch in dataset.to_batches(columns=columns, batch_size=batch_rows):
        yield batch.to_pandas()


def vote_columns(directory: str | Path) -> list[str]:
    """The ``vote_*`` column names of a votes dataset (read from its schema only)."""
    return [c for c in ds.dataset(Path(directory), format="parquet").schema.names if c.startswith(VOTE)]


def read_votes(directory: str | Path) -> pd.DataFrame:
    """A whole votes dataset in candidate order, as the in-process votes table (no ``_row``/``part``)."""
    frame = ds.dataset(Path(directory), format="parquet").to_table().to_pandas()
    frame = frame.sort_values(ROW, kind="stable").reset_index(drop=True)
    names = [c[len(VOTE) :] for c in frame.columns if c.startswith(VOTE)]
    columns = KEY_COLUMNS + [c for n in names for c in (SCORE + n, VOTE + n)]
    types = {
        "query_id": str,
        "passage_id": str,
        "split": str,
        "rank": "int32",
        "gold": "Int8",
        **{SCORE + n: "float64" for n in names},
        **{VOTE + n: "int8" for n in names},
    }
    return frame[columns].astype(types)
