"""A TREC run file read for scoring, checked first: it names some query, each (query, passage) pair once (as
ingest requires of a run), and some query the qrels judge. Each error names the run file (and line)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from weakrank.errors import DataError
from weakrank.io import FILE, LINE, read_run


def checked_run(path: str | Path, qrels: pd.DataFrame) -> pd.DataFrame:
    """``query_id, passage_id, score`` of the run file ``path``, or a located :class:`DataError` when it is empty,
    repeats a pair, or names no query of ``qrels``."""
    run = read_run(path, lines=True)
    if run.empty:
        raise DataError("the run is empty: it names no query to score", file=path)
    repeated = run.duplicated(["query_id", "passage_id"], keep="first").to_numpy()
    if repeated.any():
        row = run.iloc[int(repeated.argmax())]
        first = run[(run["query_id"] == row["query_id"]) & (run["passage_id"] == row["passage_id"])][LINE].iloc[0]
        raise DataError(f"duplicate line of query_id {row['query_id']!r}, passage_id {row['passage_id']!r} "
                        f"(first at line {first})", file=path, line=int(row[LINE]), field="passage_id")
    queries = run["query_id"].unique()
    if not set(queries) & set(qrels["query_id"]):
        raise DataError(f"none of its {len(queries)} queries (e.g. {queries[0]!r}) is in the qrels: nothing to score",
                        file=path)
    return run.drop(columns=[FILE, LINE])
