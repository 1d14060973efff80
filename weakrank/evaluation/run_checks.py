"""A TREC run file read for scoring, checked first: read by the one reader of run files
(:func:`~weakrank.io.read_run_file`: not empty, each (query, passage) pair once), and naming some query the qrels
judge. Each error names the run file (and line)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from weakrank.errors import DataError
from weakrank.io import read_run_file


def checked_run(path: str | Path, qrels: pd.DataFrame) -> pd.DataFrame:
    """``query_id, passage_id, score`` of the run file ``path`` (:func:`~weakrank.io.read_run_file`), or a located
    :class:`DataError` when it names no query of ``qrels``."""
    run = read_run_file(path)
    queries = run["query_id"].unique()
    if not set(queries) & set(qrels["query_id"]):
        raise DataError(f"none of its {len(queries)} queries (e.g. {queries[0]!r}) is in the qrels: nothing to score",
                        file=path)
    return run
