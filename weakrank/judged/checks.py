"""A person's judgments (a judging file or TREC qrels: ``[aggregate] judgments``, ``--judgments``) checked against
the run they are to teach before any of them is used. Judgments with nothing usable (an empty file, nothing judged
yet, no judged pair a candidate of this run), a judged query that is not in this run or of the split it evaluates,
a pair judged twice with two grades, or a judging file whose texts are not this dataset's: each a
:class:`~weakrank.errors.DataError` naming the file, the line and the field. What this run cannot use of them (pairs
no list ranks) is counted in one line."""

from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd

from weakrank.errors import DataError
from weakrank.io import LINE, read_parquet, read_qrels
from weakrank.judged.judging_file import as_written, is_judging_file, judged, read_judging_file

KEY = ["query_id", "passage_id"]


def check_judgments(path: str | Path, votes: pd.DataFrame, dataset: str | Path, evaluated: str) -> str:
    """Check judgments ``path`` against the votes table of the run they teach, its ingested dataset folder
    ``dataset`` and the split it evaluates, ``evaluated`` (module doc); the line that counts their judged pairs:
    used, not candidates (no list ranks them)."""
    path = Path(path)
    pairs = _judged_pairs(path, Path(dataset))
    splits = votes.drop_duplicates("query_id").set_index("query_id")["split"]
    unknown = ~pairs["query_id"].isin(splits.index)
    if unknown.any():
        raise DataError(f"judged query {pairs.loc[unknown, 'query_id'].iloc[0]!r} is not in the votes "
                        f"({pairs.loc[unknown, 'query_id'].nunique()} such queries): judgments of another collection "
                        "or config?", file=path, line=int(pairs.loc[unknown, LINE].iloc[0]), field="query_id")
    used = pd.MultiIndex.from_frame(pairs[KEY]).isin(pd.MultiIndex.from_frame(votes[KEY]))
    if not used.any():
        raise DataError(f"none of its {len(pairs)} judged pairs is a candidate of this run: judgments of another "
                        "collection or config?", file=path)
    scored = pairs[used & (pairs["query_id"].map(splits) == evaluated)]
    if len(scored):
        raise DataError(f"judges {scored['query_id'].nunique()} queries of the evaluated split {evaluated!r} (e.g. "
                        f"{scored['query_id'].iloc[0]!r}): they would choose what they then score; judge queries of "
                        "another split", file=path, line=int(scored[LINE].iloc[0]), field="query_id")
    queries = pairs.loc[used, "query_id"].nunique()
    counts = [f"{used.sum()} judged pairs of {queries} quer{'y' if queries == 1 else 'ies'} used"]
    counts += [f"{(~used).sum()} not candidates"] if (~used).any() else []
    return f"judgments {path}: {', '.join(counts)}" + (" (left out)" if len(counts) > 1 else "")


def _judged_pairs(path: Path, dataset: Path) -> pd.DataFrame:
    """``query_id, passage_id, relevance`` (an int) and the line of each judged pair of ``path``; a judging file's
    texts checked against the dataset's."""
    if is_judging_file(path):
        table = read_judging_file(path)
        table[LINE] = table.attrs["lines"]
        _check_texts(table, dataset, path)
        if not judged(table).any():
            raise DataError(f"nothing judged yet ({len(table)} rows, none with a relevance); judge it first: weakrank "
                            f"judge {shlex.quote(str(path))}", file=path, field="relevance")
        pairs = table[judged(table)].astype({"relevance": int})
    else:
        pairs = read_qrels(path, lines=True)
        if pairs.empty:
            raise DataError("nothing judged yet: an empty file (expected TREC qrels lines, qid 0 pid relevance, or a "
                            "judging file)", file=path)
    _check_once(pairs, path)
    return pairs[[*KEY, "relevance", LINE]].reset_index(drop=True)


def _check_once(pairs: pd.DataFrame, path: Path) -> None:
    """No pair of ``pairs`` judged twice with two grades."""
    grades = pairs.groupby(KEY, sort=False)["relevance"].transform("nunique")
    if (grades > 1).any():
        first = pairs[grades > 1].iloc[0]
        same = pairs[(pairs["query_id"] == first["query_id"]) & (pairs["passage_id"] == first["passage_id"])]
        raise DataError(f"pair {first['query_id']} / {first['passage_id']} is judged twice, {first['relevance']} at "
                        f"line {first[LINE]} and {same['relevance'].iloc[1]} here: keep one", file=path,
                        line=int(same[LINE].iloc[1]), field="relevance")


def _check_texts(table: pd.DataFrame, dataset: Path, path: Path) -> None:
    """The query and passage texts of a judging file are the dataset's, where it knows the id."""
    for field, table_name in (("query", "queries"), ("passage", "passages")):
        ids = f"{field}_id"
        texts = read_parquet(dataset / f"{table_name}.parquet", columns=[ids, "text"]).set_index(ids)["text"]
        expected = table[ids].map(texts)
        differs = expected.notna() & (expected.map(as_written, na_action="ignore") != table[field])
        if differs.any():
            row = differs.to_numpy().argmax()
            raise DataError(f"{field} {table[ids].iloc[row]}'s text is not this dataset's ({table[field].iloc[row][:60]!r} "
                            f"here, {expected.iloc[row][:60]!r} in the dataset): a judging file of another collection "
                            "or config?", file=path, line=int(table[LINE].iloc[row]), field=field)
