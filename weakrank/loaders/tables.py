"""Shared helpers of the loaders: reading source files with located errors, checking and building tables.

Every row read from a source file carries its file (``_file``) and 1-based line (``_line``), and every
check runs on those rows before anything is de-duplicated, so an error names the file, line, field and id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.dataset import Dataset, candidates_from_rows, qrels_from_candidates
from weakrank.errors import DataError, did_you_mean
from weakrank.files import read_utf8
from weakrank.io import FILE, LINE


def layout_files(path: Path, files: dict[str, str], splits: tuple[str, ...]) -> list[tuple[str, Path]]:
    """The file of each of ``splits`` under ``path`` (``files``: split → file name); an unknown split is a
    :class:`DataError` naming the ``splits`` option."""
    for split in splits:
        if split not in files:
            raise DataError(f"unknown split {split!r}{did_you_mean(split, files)}; this dataset has {sorted(files)}",
                            field="options splits")
    return [("path", path / files[split]) for split in splits]


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``; a missing, non-UTF-8 or empty file raises :class:`DataError`."""
    text = read_utf8(path)
    if not text.strip():
        raise DataError("empty file", file=path)
    return text


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-blank lines of ``path`` with their 1-based numbers (line ends stripped)."""
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        line = line.rstrip("\r")
        if line.strip():
            yield number, line


def read_tsv(path: Path, columns: list[str], header: bool = True, sep: str | None = "\t") -> pd.DataFrame:
    """Read a delimited file (``sep=None``: runs of whitespace) as strings, each row with its file and line.

    A missing file or column, non-UTF-8 bytes, an empty file or a line with the wrong number of fields
    (a stray tab) raises :class:`DataError` naming the file and line.
    """
    lines = read_lines(path)
    names = columns
    if header:
        number, first = next(lines)
        names = first.split(sep)
        for col in columns:
            if col not in names:
                raise DataError(f"missing column; has {names}", file=path, line=number, field=col)
    rows, numbers = [], []
    for number, line in lines:
        fields = line.split(sep)
        if len(fields) != len(names):
            hint = " (a stray tab?)" if sep == "\t" else ""
            raise DataError(
                f"{len(fields)} fields, expected {len(names)} ({', '.join(names)}){hint}", file=path, line=number
            )
        rows.append(fields)
        numbers.append(number)
    df = pd.DataFrame(rows, columns=names, dtype=object) if rows else pd.DataFrame(columns=names, dtype=object)
    df[FILE] = str(path)
    df[LINE] = numbers
    return df


def fail_at(df: pd.DataFrame, mask: pd.Series | np.ndarray, field: str, message: Callable[[pd.Series], str]) -> None:
    """Raise :class:`DataError` at the first row of ``df`` where ``mask`` holds (no-op when none does)."""
    mask = np.asarray(mask, dtype=bool)
    if mask.any():
        row = df.iloc[int(mask.argmax())]
        raise DataError(message(row), file=row.get(FILE), line=_line(row), field=field)


def _line(row: pd.Series) -> int | None:
    value = row.get(LINE)
    return None if value is None or pd.isna(value) else int(value)


def where(row: pd.Series) -> str:
    """``file:line`` of a row (``file`` alone when the line is unknown)."""
    line = _line(row)
    return f"{row.get(FILE)}" if line is None else f"{row.get(FILE)}:{line}"


def _first(df: pd.DataFrame, key: list[str], row: pd.Series) -> pd.Series:
    return df[(df[key] == row[key]).all(axis=1)].iloc[0]


def check_unique(df: pd.DataFrame, key: str | list[str], field: str, what: str) -> None:
    """A repeated ``key`` is an error at its second occurrence, naming the first."""
    key = [key] if isinstance(key, str) else key

    def message(row: pd.Series) -> str:
        ids = ", ".join(repr(row[k]) for k in key)
        return f"duplicate {what} {ids} (first at {where(_first(df, key, row))})"

    fail_at(df, df.duplicated(key, keep="first"), field, message)


def check_consistent(df: pd.DataFrame, key: str, value: str, field: str, what: str) -> None:
    """A ``key`` reused with a different ``value`` is an error at the first row that differs."""
    first = df.groupby(key, sort=False)[value].transform("first")

    def message(row: pd.Series) -> str:
        head = _first(df, [key], row)
        return f"{what} {row[key]!r} reused with a different {value} {row[value]!r} (first at {where(head)}: {head[value]!r})"

    fail_at(df, df[value].ne(first) & df[value].notna(), field, message)


def check_text(df: pd.DataFrame, column: str, field: str, owner: str) -> None:
    """Null or blank text in ``column`` is an error naming the row's ``owner`` id."""
    text = df[column]
    blank = text.isna() | text.astype(str).str.strip().eq("")
    fail_at(df, blank, field, lambda row: f"empty text for {owner} {row[owner]!r}")


def dataset_from_pairs(
    name: str,
    pairs: pd.DataFrame,
    sources: dict[str, str],
    fields: dict[str, str] | None = None,
    repeated_pairs: bool = False,
) -> Dataset:
    """A dataset from one row per candidate: query_id, query, passage_id, passage, split, gold (+ file, line).

    Before any de-duplication: empty texts, a query or passage id reused with a different text, a query
    in two splits and (unless ``repeated_pairs``) a repeated (query, passage) pair are errors; ``fields``
    maps these columns to the source's field names for the messages. With ``repeated_pairs`` a repeated
    pair keeps its first occurrence, and must repeat its gold label.
    """
    f = {c: c for c in ("query_id", "query", "passage_id", "passage", "split", "gold")} | (fields or {})
    check_text(pairs, "query", f["query"], "query_id")
    check_text(pairs, "passage", f["passage"], "passage_id")
    check_consistent(pairs, "query_id", "query", f["query_id"], "query id")
    check_consistent(pairs, "query_id", "split", f["query_id"], "query id")
    check_consistent(pairs, "passage_id", "passage", f["passage_id"], "passage id")
    key = ["query_id", "passage_id"]
    if repeated_pairs:
        pairs = pairs.assign(_pair=pairs["query_id"] + "\t" + pairs["passage_id"])
        check_consistent(pairs, "_pair", "gold", f["gold"], "candidate (query id, passage id)")
        pairs = pairs.drop_duplicates(key)
    else:
        check_unique(pairs, key, f["passage_id"], "candidate (query id, passage id)")
    queries = pairs.drop_duplicates("query_id")[["query_id", "query", "split"]].rename(columns={"query": "text"})
    passages = pairs.drop_duplicates("passage_id")[["passage_id", "passage"]].rename(columns={"passage": "text"})
    candidates = candidates_from_rows(pairs[["query_id", "passage_id", "gold"]], queries)
    return Dataset(
        name=name,
        queries=queries.reset_index(drop=True),
        passages=passages.reset_index(drop=True),
        candidates=candidates.reset_index(drop=True),
        qrels=qrels_from_candidates(candidates),
        sources=sources,
    )
