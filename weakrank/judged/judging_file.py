"""The judging file: query-passage pairs for a person to judge, as a TSV any editor or spreadsheet can fill in
(``query_id, passage_id, query, passage, relevance`` and a person's own columns; a sample ``select`` drew is sealed,
:mod:`.seal`), and where a config's judging files live. Its format: docs/guide.md, "Judging by hand"."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd

from weakrank.errors import DataError
from weakrank.files import read_utf8
from weakrank.io import write_text
from weakrank.judged.seal import SEAL, seals

JUDGING_COLUMNS = ("query_id", "passage_id", "query", "passage", "relevance")
SKIP = "skip"
EVALUATION_USE = "evaluation"  # the use column of an evaluation sample's file (select --evaluation): it never trains
_READ_AS = {"y": "1", "yes": "1", "n": "0", "no": "0", "skip": SKIP, "?": SKIP, "": ""}
_SPACE = re.compile(r"[\t\r\n\v\f]+")
MAX_BYTES = 256 * 2**20  # a judging file is read whole; a person judges a few hundred pairs, not this many
JUDGING = "judging.tsv"  # select's sample of the training queries: it moves the LFs' quality priors
EVALUATION_JUDGING = "evaluation-judging.tsv"  # select --evaluation's sample of the evaluated split: it measures
JUDGMENTS = ".judgments"  # <config stem>.judgments/: the folder of a config's judging files


def judgments_folder(config: str | Path) -> Path:
    """``<config stem>.judgments/`` beside ``config``: a person's judging files, kept apart from every run directory
    (deleting a run, or rerunning it with ``--force``, never touches them)."""
    config = Path(config)
    return config.with_name(config.stem + JUDGMENTS)


def judging_path(config: str | Path | None, run_dir: str | Path, name: str) -> Path:
    """The judging file ``name`` (:data:`JUDGING`, :data:`EVALUATION_JUDGING`) of a config: in its
    :func:`judgments_folder`; one that an earlier weakrank wrote into the run directory is used there while the
    folder has none (existing runs keep working); a config without a file (built in Python): the run directory."""
    kept = Path(run_dir) / name
    if config is None:
        return kept
    beside = judgments_folder(config) / name
    return kept if kept.exists() and not beside.exists() else beside


def config_of(judging: str | Path) -> Path | None:
    """The config whose :func:`judgments_folder` holds the judging file ``judging``, where it exists; else None."""
    folder = Path(judging).resolve().parent
    if not folder.name.endswith(JUDGMENTS):
        return None
    config = folder.with_name(folder.name.removesuffix(JUDGMENTS) + ".toml")
    return config if config.is_file() else None


def write_judging_file(rows: pd.DataFrame, path: str | Path, seal: bool = False) -> Path:
    """Write ``rows`` (query_id, passage_id, query, passage; relevance optional; further columns kept after them)
    to the judging file ``path`` atomically, in the given order; a tab or newline in a text becomes a space. With
    ``seal`` (a sample ``select`` drew) each row's :data:`SEAL` is written last, over the cells as written; without,
    a seal the rows carry is kept as it is."""
    missing = [c for c in JUDGING_COLUMNS[:4] if c not in rows.columns]
    if missing:
        raise DataError(f"missing column(s) {missing} of the rows to judge", file=path, field=missing[0])
    table = rows.assign(relevance=rows["relevance"] if "relevance" in rows.columns else "")
    columns = [*JUDGING_COLUMNS, *(c for c in table.columns if c not in JUDGING_COLUMNS)]
    table = table[columns].fillna("").astype(str).map(as_written)
    if seal:
        table = table.drop(columns=SEAL, errors="ignore").assign(**{SEAL: seals(table)})
        columns = [*(c for c in columns if c != SEAL), SEAL]
    for field in ("query_id", "passage_id"):
        bad = table[field].str.contains(r"\s|^$", regex=True)
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise DataError(f"{table[field].iloc[row]!r} is empty or holds whitespace (TREC qrels cannot carry it)",
                            file=path, row=row, field=field)
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(table[columns].itertuples(index=False))
    if len(out.getvalue().encode()) > MAX_BYTES:
        raise DataError(f"the rows to judge take over {MAX_BYTES} bytes, more than a judging file holds: judge fewer "
                        "queries or passages", file=path)
    return write_text(out.getvalue(), path)


def as_written(text: str) -> str:
    """``text`` as a judging file holds it: a tab or newline a space."""
    return _SPACE.sub(" ", text)


def read_judging_file(path: str | Path) -> pd.DataFrame:
    """The rows of judging file ``path``, read whole once: :func:`parse_judging_text` of its content."""
    return parse_judging_text(read_utf8(path, MAX_BYTES), path)


def parse_judging_text(text: str, path: str | Path) -> pd.DataFrame:
    """The rows of ``text``, the content of judging file ``path`` (nothing is read here), every column a string,
    relevance as ``""`` (not judged), ``"skip"`` or an integer ≥ 0 (``y``/``n`` read as ``1``/``0``, ``?`` as
    ``skip``); ``attrs["lines"]``: each row's line. A missing column, a row with the wrong number of fields, an
    empty or spaced id, a pair listed twice or an unknown relevance is a :class:`DataError` naming the file, the
    line and the field."""
    csv.field_size_limit(max(csv.field_size_limit(), MAX_BYTES))  # a passage of any length the file can hold
    refuse_comma_separated(text, path)
    reader = csv.reader(io.StringIO(text), delimiter="\t")
    header = next(reader, None)
    if header is None:
        raise DataError(f"empty file; expected a header line {chr(9).join(JUDGING_COLUMNS)!r}", file=path, line=1)
    missing = [c for c in JUDGING_COLUMNS if c not in header]
    if missing:
        raise DataError(f"the header line lacks column(s) {missing} (tab-separated)", file=path, line=1, field=missing[0])
    rows, first_line, number = [], {}, reader.line_num
    for fields in reader:
        number, start = reader.line_num, number + 1
        if number != start:  # a row holds no newline: a quote that is not closed on its line swallowed the next
            raise DataError('a double quote (") opens a quoted field that does not end on this line; remove it, or '
                            'double it inside a field quoted as a whole', file=path, line=start)
        if not any(f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise DataError(f"{len(fields)} tab-separated fields, expected {len(header)} ({', '.join(header)})",
                            file=path, line=number)
        row = dict(zip(header, fields))
        for field in ("query_id", "passage_id"):
            if not row[field] or any(c.isspace() for c in row[field]):
                raise DataError(f"{row[field]!r} is empty or holds whitespace", file=path, line=number, field=field)
        pair = (row["query_id"], row["passage_id"])
        if pair in first_line:
            raise DataError(f"pair {pair[0]} / {pair[1]} is listed twice (first at line {first_line[pair]})",
                            file=path, line=number, field="passage_id")
        first_line[pair] = number
        row["relevance"] = _relevance(row["relevance"], path, number)
        rows.append(row)
    table = pd.DataFrame(rows, columns=header, dtype=str)
    table.attrs["lines"] = list(first_line.values())
    return table


def _relevance(raw: str, path: str | Path, line: int) -> str:
    """A relevance cell as :func:`read_judging_file` returns it."""
    value = raw.strip().lower()
    if value in _READ_AS:
        return _READ_AS[value]
    if value.isascii() and value.isdigit():  # not "²", a digit to str.isdigit that int() refuses
        return str(int(value))
    raise DataError(f"{raw!r} is not a relevance: expected 1 (or y), 0 (or n), a grade ≥ 0, skip (or ?), or blank",
                    file=path, line=line, field="relevance")


def judged(table: pd.DataFrame) -> pd.Series:
    """Which rows of a judging table carry a relevance (neither blank nor skipped)."""
    return ~table["relevance"].isin(["", SKIP])


def refuse_comma_separated(text: str, path: str | Path) -> None:
    """A :class:`DataError` (line 1) where ``text``, the content of ``path``, is a judging file a spreadsheet saved
    as CSV: a header line with commas or semicolons and no tab, or a ``.csv`` name and no tab on its first line."""
    first = text.lstrip().partition("\n")[0]
    if "\t" in first:
        return
    if Path(path).suffix.lower() == ".csv" or ("query_id" in first and ("," in first or ";" in first)):
        raise DataError("comma-separated: save as tab-separated (in a spreadsheet: save as \"Tab-separated values\", "
                        "a .tsv file)", file=path, line=1)


def is_judging_text(text: str, path: str | Path) -> bool:
    """Whether ``text``, the content of ``path``, is a judging file (its first line names the columns), not TREC
    qrels; one saved as CSV is a :class:`DataError` (:func:`refuse_comma_separated`)."""
    refuse_comma_separated(text, path)
    first = text.lstrip().partition("\n")[0]
    return "\t" in first and "query_id" in first.split("\t")

