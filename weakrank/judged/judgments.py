"""A person's judgments as judged mode reads them: each judged pair with the probability that it was asked about (a
judging file's ``query_inclusion`` and ``passage_inclusion``; TREC qrels are judged in full). :func:`read_judged_file`
is the one reader of a judged file; what it checks, and how a skipped passage counts: docs/judged-design.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.errors import DataError
from weakrank.evaluation.sampled_map import CERTAIN_INCLUSION
from weakrank.files import read_utf8
from weakrank.io import LINE, read_qrels
from weakrank.judged.judging_file import EVALUATION_USE, MAX_BYTES, is_judging_text, judged, parse_judging_text
from weakrank.judged.seal import check_seal, is_integer_column, value
from weakrank.paths import program, shell_path

DESIGN = ("query_inclusion", "passage_inclusion")
KEY = ["query_id", "passage_id"]


@dataclass(frozen=True)
class Judgments:
    """The judged pairs (``table``: query_id, passage_id, relevance, query_inclusion, passage_inclusion and, read
    from a file, each pair's line, :data:`~weakrank.io.LINE`) of the file ``source``, what its sample was drawn
    for (``use``: its ``use`` column, None where it has none) and, of a judging file, every row as read (``rows``:
    its lines, texts and design, unjudged rows too), so that nothing reads the file again."""

    table: pd.DataFrame
    source: Path | None = None
    use: str | None = None
    rows: pd.DataFrame | None = None

    @property
    def queries(self) -> list[str]:
        """The judged query ids, in the file's order."""
        return list(dict.fromkeys(self.table["query_id"]))


def _probability(values: pd.Series, lines: pd.Series, path: Path, field: str) -> pd.Series:
    """``values`` (on ``lines``) as probabilities in (0, 1], or a :class:`DataError` at the first other one."""
    number = pd.to_numeric(values, errors="coerce")
    bad = ~((number > 0) & (number <= 1))
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"{values.iloc[row]!r} is not a probability in (0, 1] (the sample's design, written by "
                        "weakrank select: leave it as it is)", file=path, line=int(lines.iloc[row]), field=field)
    return number.astype(float)


def read_judged_file(path: str | Path) -> pd.DataFrame:
    """Every row of judged file ``path`` (a judging file, all its columns, unjudged rows too; TREC qrels: query_id,
    passage_id, relevance as an int) with its line (:data:`~weakrank.io.LINE`), checked (docs/judged-design.md)."""
    path = Path(path)
    text = read_utf8(path, MAX_BYTES)  # the file's one read
    if is_judging_text(text, path):
        table = parse_judging_text(text, path)
        check_seal(table, path)
        for column in filter(is_integer_column, table.columns):  # as select spelt them: "3", not "3.0"
            table[column] = [value(column, cell) for cell in table[column]]
        table[LINE] = table.attrs["lines"]
        return table  # a pair listed twice is refused by parse_judging_text
    table = read_qrels(path, lines=True, text=text)
    _check_once(table, path)
    return table


def read_judgments(path: str | Path, rows: pd.DataFrame | None = None) -> Judgments:
    """The judged pairs of judging file (or TREC qrels file) ``path`` with their inclusion probabilities (module
    doc), read and checked by :func:`read_judged_file` (``rows``: what it returned, where the file was read
    already); nothing judged is a :class:`DataError`. A qrels line repeated with the same grade counts once; an
    evaluation sample's ``use`` holds wherever a row says it."""
    path = Path(path)
    table = read_judged_file(path) if rows is None else rows.copy()
    if "query" not in table.columns:  # TREC qrels: judged in full
        if table.empty:
            raise DataError("nothing judged yet: an empty file (expected TREC qrels lines, qid 0 pid relevance, or a "
                            "judging file)", file=path)
        out = table.assign(relevance=table["relevance"].astype(int), query_inclusion=1.0, passage_inclusion=1.0)
        return Judgments(out.drop_duplicates(KEY)[[*KEY, "relevance", *DESIGN, LINE]].reset_index(drop=True), path)
    if not judged(table).any():
        raise DataError(f"nothing judged yet ({len(table)} rows, none with a relevance); judge it first: {program()} "
                        f"judge {shell_path(path)}", file=path, field="relevance")
    for field in DESIGN:
        table[field] = _probability(table[field], table[LINE], path, field) if field in table.columns else 1.0
    answered = judged(table)
    sampled = table["passage_inclusion"] < CERTAIN_INCLUSION
    drawn = sampled.groupby(table["query_id"]).transform("sum")
    kept = (sampled & answered).groupby(table["query_id"]).transform("sum")
    rest = drawn / table["passage_inclusion"]
    table["passage_inclusion"] = np.where(sampled & (kept > 0), kept / rest, table["passage_inclusion"])
    out = table.loc[answered, [*KEY, "relevance", *DESIGN, LINE]].astype({"relevance": int})
    uses = sorted(set(table["use"]) - {""}) if "use" in table.columns else []
    return Judgments(out.reset_index(drop=True), path, EVALUATION_USE if EVALUATION_USE in uses else next(iter(uses), None),
                     table)


def read_judged_qrels(path: str | Path) -> pd.DataFrame:
    """``query_id, passage_id, relevance`` (an int) of the judged rows of judged file ``path``
    (:func:`read_judged_file`: a judging file, or TREC qrels read as they are)."""
    rows = read_judged_file(path)
    return rows.loc[judged(rows), [*KEY, "relevance"]].astype({"relevance": int}).reset_index(drop=True)


def _check_once(pairs: pd.DataFrame, path: Path) -> None:
    """No pair of ``pairs`` (with their lines) judged twice with two grades."""
    grades = pairs.groupby(KEY, sort=False)["relevance"].transform("nunique")
    if (grades > 1).any():
        first = pairs[grades > 1].iloc[0]
        same = pairs[(pairs["query_id"] == first["query_id"]) & (pairs["passage_id"] == first["passage_id"])]
        raise DataError(f"pair {first['query_id']} / {first['passage_id']} is judged twice, {first['relevance']} at "
                        f"line {first[LINE]} and {same['relevance'].iloc[1]} here: keep one", file=path,
                        line=int(same[LINE].iloc[1]), field="relevance")
