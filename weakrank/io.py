"""Atomic Parquet I/O: every stage writes a temp file and renames it into place."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from weakrank.errors import DataError


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temp path next to ``path``; rename it onto ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_parquet(df: pd.DataFrame, path: str | Path, metadata: dict | None = None) -> Path:
    """Write ``df`` to ``path`` atomically; ``metadata`` is stored as JSON in the schema."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    if metadata:
        meta = dict(table.schema.metadata or {})
        meta[b"weakrank"] = json.dumps(metadata).encode()
        table = table.replace_schema_metadata(meta)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return Path(path)


def read_parquet(path: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a Parquet file, failing with the file name and the missing columns."""
    path = Path(path)
    if not path.exists():
        raise DataError("file not found (did the previous stage run?)", file=path)
    schema = pq.read_schema(path)
    if columns is not None:
        missing = [c for c in columns if c not in schema.names]
        if missing:
            raise DataError(f"missing column(s) {missing}", file=path, field=missing[0])
    return pq.read_table(path, columns=columns).to_pandas()


def read_metadata(path: str | Path) -> dict:
    """The weakrank metadata stored by :func:`write_parquet` (empty if none)."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(b"weakrank")
    return json.loads(raw) if raw else {}


def write_text(text: str, path: str | Path) -> Path:
    """Write a text file atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)
