"""The formats weakrank reads and writes, in one place: Parquet with its metadata, ``.npz`` arrays, text, and TREC
runs and qrels (read through ir-measures' readers, each bad line located by file, line and field). Every write is
atomic and every read bounded to regular files (:mod:`weakrank.files`); every text input (runs, qrels,
collections, queries) may be gzipped: a ``.gz`` file is read decompressed."""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from weakrank.errors import DataError, LeftOutWarning
from weakrank.files import atomic_path, read_utf8

# columns that carry a row's source file and 1-based line (read_run/read_qrels with ``lines=True``, the loaders)
FILE, LINE = "_file", "_line"
RUN_FIELDS = ("query_id", "q0", "passage_id", "rank", "score", "tag")
QRELS_FIELDS = ("query_id", "iteration", "passage_id", "relevance")


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
    return read_parquet_table(path, columns)[0]


def read_parquet_table(path: str | Path, columns: list[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """:func:`read_parquet` and the weakrank metadata (:func:`read_metadata`) of the same read."""
    path = Path(path)
    if not path.exists():
        raise DataError("file not found (did the previous stage run?)", file=path)
    try:
        if columns is not None:
            missing = [c for c in columns if c not in pq.read_schema(path).names]
            if missing:
                raise DataError(f"missing column(s) {missing}", file=path, field=missing[0])
        table = pq.read_table(path, columns=columns)
    except (pa.ArrowException, OSError) as err:  # truncated or not Parquet at all
        raise DataError(f"not a readable Parquet file ({err}); re-run the stage that writes it", file=path) from None
    return table.to_pandas(), _weakrank_metadata(table.schema)


def read_metadata(path: str | Path) -> dict:
    """The weakrank metadata stored by :func:`write_parquet` (empty if none)."""
    return _weakrank_metadata(pq.read_schema(path))


def _weakrank_metadata(schema: pa.Schema) -> dict:
    raw = (schema.metadata or {}).get(b"weakrank")
    return json.loads(raw) if raw else {}


def write_npz(arrays: dict[str, np.ndarray], path: str | Path) -> Path:
    """Write named arrays to an ``.npz`` file atomically (no pickled objects)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as out:
            np.savez(out, **arrays)
    return Path(path)


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file written by :func:`write_npz` (object arrays refused)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as err:  # missing, truncated, or not an .npz file
        raise DataError(f"not a readable .npz file ({err})", file=path) from None


def write_text(text: str, path: str | Path) -> Path:
    """Write a text file atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def read_run(path: str | Path, lines: bool = False) -> pd.DataFrame:
    """``query_id, passage_id, score`` rows of a TREC run file (``qid Q0 pid rank score tag``) in file order, read
    by ``ir_measures.read_trec_run``; ``lines=True`` adds each row's file and 1-based line (columns :data:`FILE`,
    :data:`LINE`). A line with the wrong number of fields or a score that is not a finite number is a located
    :class:`DataError`."""
    return _read_trec(path, ir_measures.read_trec_run, RUN_FIELDS, "score", lines)


def read_run_file(path: str | Path, queries: Collection[str] | None = None, split: str | None = None,
                  known: Collection[str] | None = None, lines: bool = False) -> pd.DataFrame:
    """The one reader of a user's TREC run file (``ingest``, ``evaluate`` with or without ``--judgments``,
    ``rerank --run``): :func:`read_run`'s rows, checked. An empty file is refused; a line that repeats a (query,
    passage) pair with the same score counts once (the first), with another score it is refused at its line, naming
    the first (as a qrels pair judged twice is). With ``known`` (the dataset's queries) the queries it lacks are left
    out and named (a :class:`~weakrank.errors.LeftOutWarning`: the count and a few ids); with ``queries`` (those of
    the evaluated split ``split``) only their rows are kept (one run may rank every split, as one qrels file judges
    them), and a run none of whose queries is one of them is refused, naming the file and the split."""
    run = read_run(path, lines=True)
    if run.empty:
        raise DataError("empty run file: it ranks no query", file=path)
    first = run.groupby(["query_id", "passage_id"], sort=False)[["score", LINE]].transform("first")
    changed = np.flatnonzero((run["score"] != first["score"]).to_numpy())
    if len(changed):
        row, was = run.iloc[changed[0]], first.iloc[changed[0]]
        raise DataError(f"query {row['query_id']!r}, passage {row['passage_id']!r} is ranked twice with two scores, "
                        f"{was['score']:g} at line {int(was[LINE])} and {row['score']:g} here: keep one", file=path,
                        line=int(row[LINE]), field="score")
    run = run[~run.duplicated(["query_id", "passage_id"])]
    ranked = list(dict.fromkeys(run["query_id"]))
    unknown = [] if known is None else list(pd.Index(ranked).difference(pd.Index(list(known)), sort=False))
    if unknown:
        shown = ", ".join(repr(q) for q in unknown[:3]) + (", …" if len(unknown) > 3 else "")
        warnings.warn(f"{path}: {len(unknown)} of its {len(ranked)} queries are not in the dataset and are left out "
                      f"({shown})", LeftOutWarning, stacklevel=2)
        run = run[~run["query_id"].isin(set(unknown))]
    if queries is not None:
        kept = run["query_id"].isin(set(queries))
        if not kept.any():
            raise DataError(f"none of its {len(ranked)} queries (e.g. {ranked[0]!r}) is of the evaluated split "
                            f"{split!r}: nothing to measure there", file=path)
        run = run[kept]
    run = run.reset_index(drop=True)
    return run if lines else run.drop(columns=[FILE, LINE])


def read_qrels(path: str | Path, lines: bool = False, text: str | None = None) -> pd.DataFrame:
    """``query_id, passage_id, relevance`` rows of a TREC qrels file (``qid iter pid relevance``; its content
    ``text`` where it was read already) in file order, read by ``ir_measures.read_trec_qrels``; ``lines=True`` adds
    each row's file and 1-based line (columns :data:`FILE`, :data:`LINE`). A line with the wrong number of fields
    or a relevance that is not an integer is a located :class:`DataError`."""
    return _read_trec(path, ir_measures.read_trec_qrels, QRELS_FIELDS, "relevance", lines, text)


def write_run(scored: pd.DataFrame, path: str | Path, tag: str) -> Path:
    """Write ``query_id, passage_id, score`` rows as a TREC run (rank by score, ties by row order)."""
    ordered = scored.sort_values(["query_id", "score"], ascending=[True, False], kind="stable")
    ranks = ordered.groupby("query_id").cumcount() + 1
    lines = [f"{q} Q0 {p} {r} {s:.6f} {tag}" for q, p, r, s in zip(ordered["query_id"], ordered["passage_id"], ranks, ordered["score"])]
    return write_text("".join(line + "\n" for line in lines), path)


def write_qrels(qrels: pd.DataFrame, path: str | Path) -> Path:
    """Write ``query_id, passage_id, relevance`` rows as a TREC qrels file (``qid 0 pid relevance``)."""
    lines = [f"{q} 0 {p} {int(r)}" for q, p, r in zip(qrels["query_id"], qrels["passage_id"], qrels["relevance"])]
    return write_text("".join(line + "\n" for line in lines), path)


def _read_trec(
    path: str | Path, reader: Callable[[Iterable[str]], Iterator[tuple]], fields: tuple[str, ...], value: str, lines: bool,
    text: str | None = None,
) -> pd.DataFrame:
    """The rows of ``reader`` (an ir-measures reader: one row per non-blank line) of ``path`` (or its ``text``) as
    ``query_id, passage_id, value``."""
    text = read_utf8(path) if text is None else text
    rows: list[tuple] = []
    try:
        for row in reader(io.StringIO(text)):
            rows.append(row)
    except ValueError:  # the reader stopped at the line after its last row: say what is wrong there
        raise _bad_line(path, *_numbered(text)[len(rows)], fields, value) from None
    table = pd.DataFrame({"query_id": [r.query_id for r in rows], "passage_id": [r.doc_id for r in rows],
                          value: [getattr(r, value) for r in rows]})
    infinite = ~np.isfinite(table[value].to_numpy(dtype=float))  # the run reader's float() takes "nan" and "inf"
    if infinite.any():
        raise _bad_line(path, *_numbered(text)[int(infinite.argmax())], fields, value)
    if lines:
        table[FILE] = str(path)
        table[LINE] = [number for number, _ in _numbered(text)]
    return table


def _numbered(text: str) -> list[tuple[int, str]]:
    """The non-blank lines of ``text`` with their 1-based numbers, as ir-measures' readers split them."""
    return [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]


def _bad_line(path: str | Path, number: int, line: str, fields: tuple[str, ...], value: str) -> DataError:
    parts = line.split()
    if len(parts) != len(fields):
        return DataError(f"{len(parts)} fields, expected {len(fields)} ({', '.join(fields)})", file=path, line=number)
    raw = parts[fields.index(value)]
    what = "a number" if value == "score" else "an integer"
    return DataError(f"{value} {raw!r} is not {what}", file=path, line=number, field=value)
