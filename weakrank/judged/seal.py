"""The seal of a judging file that ``select`` drew: per row, one short digest per sealed column (the texts and the
sample's design) in its last column, :data:`SEAL`, so that a reader tells the design as select wrote it from a cell
edited by hand, while relevance and a person's own columns stay theirs to edit. What it covers:
docs/judged-design.md."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from weakrank.errors import DataError

SEAL = "seal"
SEALED = ("query", "passage", "query_inclusion", "passage_inclusion", "stratum", "sample_seed", "use")
POOLED = ("pool_depth", "population", "split_queries", "planned", "draw", "query_rows")  # a pooled sample's design
PREFIXES = ("rank_", "ranking_")  # each system's ranks in its top k; the digests of the rankings drawn from
INTEGER = ("stratum", "sample_seed", *POOLED)  # with rank_*: whole numbers (blank where a rank is none)
VERSION = "2"  # the first part of a seal of this weakrank's


def sealed_columns(columns: Sequence[str]) -> list[str]:
    """The columns a seal covers: :data:`SEALED` (``""`` where absent), then those of :data:`POOLED` and those
    starting with one of :data:`PREFIXES` that ``columns`` holds, in name order."""
    return [*SEALED, *sorted(c for c in columns if c in POOLED or c.startswith(PREFIXES))]


def design_columns(columns: Sequence[str]) -> list[str]:
    """The sealed columns of ``columns`` that only select writes (not the texts): a file with one of them and no seal
    was unsealed."""
    return [c for c in sealed_columns(columns) if c in columns and c not in ("query", "passage")]


def is_integer_column(column: str) -> bool:
    """Whether ``column`` holds whole numbers (:data:`INTEGER`, ``rank_*``)."""
    return column in INTEGER or column.startswith(PREFIXES[0])


def value(column: str, cell: str) -> str:
    """``cell`` of ``column`` as the seal reads it: a number of a design column by its value (an integral one as an
    int, another to 12 significant digits), any other cell as written."""
    if column not in SEALED[2:6] and not (column in POOLED or column.startswith(PREFIXES[0])):
        return cell
    try:
        number = float(cell)
    except ValueError:
        return cell
    return str(int(number)) if number.is_integer() else format(number, ".12g")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:4]


def seals(table: pd.DataFrame) -> pd.Series:
    """Each row's seal (docs/judged-design.md): :data:`VERSION`, the digest of the sealed columns' names, then one
    digest per sealed column, joined by dots."""
    columns = sealed_columns(list(table.columns))
    names = "\x1e".join(columns)

    def seal(row: dict) -> str:
        ids = (row["query_id"], row["passage_id"])
        cells = [_digest(*ids, c, value(c, row.get(c, ""))) for c in columns]
        return ".".join([VERSION, _digest(*ids, names), *cells])

    return pd.Series([seal(row) for row in table.to_dict("records")], index=table.index, dtype=str)


def check_seal(table: pd.DataFrame, path: str | Path) -> None:
    """The sealed cells of judging table ``table`` (:func:`~weakrank.judged.judging_file.read_judging_file`'s, of
    file ``path``) are as ``select`` wrote them: a :class:`DataError` naming the line, the column and the query of
    the first one edited, or of a design column in a file without seals."""
    lines = table.attrs["lines"]
    if SEAL not in table.columns:
        design = design_columns(list(table.columns))
        if design and len(table):
            raise DataError(f"holds a sample's design (column {design[0]!r}) but no {SEAL!r} column, which select "
                            "writes beside it: put the seal column back as select wrote it, or draw the sample again "
                            "with weakrank select", file=path, line=1, field=design[0])
        return
    expected, columns = seals(table), sealed_columns(list(table.columns))
    for row in range(len(table)):
        found, query = table[SEAL].iloc[row].split("."), table["query_id"].iloc[row]
        where = {"file": path, "line": lines[row]}
        if found[0] != VERSION and len(found) == len(SEALED):  # an earlier weakrank's seal: the cells as written
            edited = [c for c, part in zip(SEALED, found) if part not in _spellings(table, row, c)]
            everything = SEALED
        elif found[0] == VERSION and len(found) == len(columns) + 2:
            written = expected.iloc[row].split(".")
            edited, everything = [c for c, a, b in zip(columns, found[2:], written[2:]) if a != b], columns
            if found[1] != written[1] and len(edited) < len(columns):
                raise _columns_changed(table, query, where)
        elif found[0] == VERSION:
            raise _columns_changed(table, query, where)
        else:
            raise DataError(f"{table[SEAL].iloc[row]!r} is not a seal select wrote (leave the column as it is)",
                            field=SEAL, **where)
        if len(edited) == len(everything):
            raise DataError(f"this row's ids or its seal were changed since select wrote it (query {query!r}, passage "
                            f"{table['passage_id'].iloc[row]!r}): the sample's rows are select's; put them back, or "
                            "draw the sample again", field="query_id", **where)
        if edited:
            cell = table[edited[0]].iloc[row] if edited[0] in table.columns else "(no column)"
            raise DataError(f"{cell!r} was changed since select wrote it (query {query!r}): the texts and the "
                            "sample's design are select's (only relevance and your own columns are yours to edit); "
                            "put it back, or draw the sample again", field=edited[0], **where)


def _spellings(table: pd.DataFrame, row: int, column: str) -> set[str]:
    """The digests an earlier weakrank's seal may hold for a cell: of the cell as written and, of a number, as
    select spelt it (``1.0`` for a probability, ``1`` for a stratum or seed)."""
    ids = (table["query_id"].iloc[row], table["passage_id"].iloc[row])
    cell = table[column].iloc[row] if column in table.columns else ""
    spelt = {cell}
    try:
        number = float(cell)
        spelt |= {repr(number)} | ({str(int(number))} if number.is_integer() else set())
    except ValueError:
        pass
    return {_digest(*ids, column, text) for text in spelt}


def _columns_changed(table: pd.DataFrame, query: str, where: dict) -> DataError:
    held = [c for c in sealed_columns(list(table.columns)) if c in table.columns]
    return DataError(f"the sample's columns are not those select wrote (query {query!r}): a design column was "
                     f"deleted, added or renamed (it holds {', '.join(held)}); put the file back as select wrote it, "
                     "or draw the sample again", field=SEAL, **where)
