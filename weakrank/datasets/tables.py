"""Shared helpers of the loaders: reading delimited files with located errors, building tables."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from weakrank.dataset import Dataset, candidates_from_rows, qrels_from_candidates
from weakrank.errors import DataError


def read_tsv(path: Path, columns: list[str], header: bool = True, sep: str = "\t") -> pd.DataFrame:
    """Read a delimited file as strings; a missing file or column raises :class:`DataError`."""
    if not path.exists():
        raise DataError("file not found", file=path)
    df = pd.read_csv(
        path,
        sep=sep,
        header=0 if header else None,
        names=None if header else columns,
        dtype=str,
        quoting=csv.QUOTE_NONE,
        keep_default_na=False,
        engine="python" if sep.startswith("\\s") else "c",
    )
    for col in columns:
        if col not in df.columns:
            raise DataError(f"missing column; has {list(df.columns)}", file=path, field=col)
    return df


def dataset_from_pairs(
    name: str,
    pairs: pd.DataFrame,
    sources: dict[str, str],
) -> Dataset:
    """A dataset from one row per candidate: query_id, query, passage_id, passage, split, gold."""
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
