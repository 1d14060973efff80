"""What a pooled evaluation sample stands for, checked before its figures are printed: every row ``select`` drew is
there (:func:`check_whole`), and each system compared still ranks as when the sample was drawn from it
(:func:`check_drawn_from`). Its exact top-k figures are read from the file's ranks (``rank_<system>``), and the
rows judged are those today's runs put at the top: a sample drawn from another ranking (a ranker retrained since,
another run directory that shares the judgments folder) would print the figures of a ranking no run holds now."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.errors import DataError
from weakrank.io import LINE
from weakrank.judged.pooling import RANK, RANKING, ranked_lists, ranking_digests, whole


def check_whole(rows: pd.DataFrame, path: Path) -> None:
    """Every row and query of the pooled sample ``rows`` (a judged file's rows, :data:`~weakrank.io.LINE` beside
    them; sealed) is there: each query has the rows select drew (``query_rows``), and the queries are those drawn
    (``draw`` 1 … n, n the sample's size its query inclusion says): else a :class:`DataError` naming the line, the
    column and the query."""
    by_query = rows.groupby("query_id", sort=False)
    counts, first = by_query.size(), by_query.first()
    short = counts[counts != pd.to_numeric(first["query_rows"])]
    if len(short):
        query = short.index[0]
        raise DataError(f"query {query!r} has {short.iloc[0]} rows, select drew {first.loc[query, 'query_rows']}: a "
                        "row was deleted (or added); put it back as select wrote it, or draw the sample again",
                        file=path, line=int(first.loc[query, LINE]), field="query_rows")
    places = pd.to_numeric(first["draw"]).astype(int)
    size = round(float(first["query_inclusion"].iloc[0]) * whole(rows, "population"))
    missing = sorted(set(range(1, size + 1)) - set(places))
    if missing or len(places) != size:
        raise DataError(f"holds {len(places)} queries, select drew {size}"
                        + (f" (the one drawn {missing[0]}. is missing)" if missing else "")
                        + ": a query's rows were deleted; put them back as select wrote them, or draw the sample "
                        "again", file=path, line=int(rows[LINE].iloc[-1]), field="draw")


def check_drawn_from(rows: pd.DataFrame, runs: Mapping[str, pd.DataFrame], sources: Mapping[str, Path],
                     path: Path, redraw: str) -> None:
    """Each system compared in the pooled sample ``rows`` (its ``rank_<system>`` columns; ``runs``: name → run, the
    same names; ``sources``: name → the file its run comes from) ranks the split's queries as when select drew the
    sample (its ``ranking_<system>`` digests): else a :class:`DataError` naming the judging file ``path``, the line,
    the query and the run, and saying how to measure (``redraw``: the commands that draw a new sample)."""
    systems = [c[len(RANK):] for c in rows.columns if c.startswith(RANK)]
    if not any(c.startswith(RANKING) for c in rows.columns):
        raise DataError("a pooled sample drawn by an earlier weakrank, which did not record the rankings it was drawn "
                        f"from: its exact figures cannot be checked against today's runs; draw a new one: {redraw}",
                        file=path, line=1, field=f"{RANKING}{systems[-1]}")
    gone = [name for name in systems if name not in runs]
    if gone:
        raise DataError(f"was drawn from a run of {gone[0]!r}, and there is none now: rerank it, or draw a new "
                        f"sample: {redraw}", file=path, line=1, field=f"{RANK}{gone[0]}")
    lists = ranked_lists({name: runs[name] for name in systems})
    queries = list(dict.fromkeys(rows["query_id"]))
    now = ranking_digests(lists, whole(rows, "pool_depth"), queries)
    for name in systems:
        drawn = rows[f"{RANKING}{name}"].str.partition("/")
        today = rows["query_id"].map(now[name]).str.partition("/")
        here, split = np.flatnonzero(drawn[0] != today[0]), np.flatnonzero(drawn[2] != today[2])
        if len(here) or len(split):
            row = rows.iloc[here[0] if len(here) else split[0]]
            what = (f"its top {whole(rows, 'pool_depth')} of query {row['query_id']!r}" if len(here) else
                    "its tops of other queries of the split, the ones the sample stands for")
            raise DataError(f"{sources.get(name, name)} ranks otherwise than when select drew this sample from "
                            f"{name!r} ({what} changed since: retrained, or reranked?): its figures would measure the "
                            f"ranking it was drawn from. Measure today's with a new sample: {redraw}; or, to keep "
                            f"measuring the one drawn from, put that run of {name!r} back", file=path,
                            line=int(row[LINE]), field=f"{RANKING}{name}")
