"""A person's judgments checked against the run they are to teach before any of them is used, in two steps: read once
and checked before anything runs (:func:`judgments_to_teach`, aggregate's check), then against the votes when they
teach (:func:`check_judgments`). An evaluation sample (:func:`check_not_evaluation`), a judged query that is not in
this run or of the split it evaluates, texts that are not the dataset's, or judgments no pair of which is a
candidate of this run: each a :class:`~weakrank.errors.DataError` naming the file, the line and the field. What this
run cannot use of them (pairs no list ranks) is counted in one line.

Judgments of the evaluated split are refused by the rule that keeps what measures apart from what teaches
(:func:`weakrank.apart.check_apart`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from weakrank.apart import check_apart
from weakrank.errors import DataError
from weakrank.io import LINE, read_parquet
from weakrank.judged.judging_file import EVALUATION_USE, as_written
from weakrank.judged.judgments import KEY, Judgments, read_judgments

JUDGES = "judges queries of"  # how a judging file teaches, as weakrank.apart says it


def check_not_evaluation(use: str | None, *, file: str | Path, line: int) -> None:
    """Judgments that measure never teach: a :class:`DataError` at ``file`` (``line``) where the judgments are an
    evaluation sample (``use``: :data:`~weakrank.judged.judging_file.EVALUATION_USE`), whatever split is evaluated."""
    if use == EVALUATION_USE:
        raise DataError("an evaluation sample (its use column says evaluation: select --evaluation drew it): it "
                        "measures the systems and never trains, whatever split is evaluated; to train, judge a "
                        "sample of a training split (weakrank select CONFIG)", file=file, line=line, field="use")


def check_texts(table: pd.DataFrame | None, dataset: Path, path: Path) -> None:
    """The query and passage texts of ``table``, the rows of judging file ``path`` as read (with their lines), are
    those of the ingested ``dataset`` folder, where it knows the id; rows without texts (TREC qrels, or None) have
    none to check."""
    if table is None or "query" not in table.columns:
        return
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


def judgments_to_teach(path: Path, dataset: Path, evaluated: str) -> Judgments:
    """The judgments of ``path`` that ``aggregate`` will teach with, read once
    (:func:`~weakrank.judged.judgments.read_judgments`: something judged) and checked before anything runs: no
    evaluation sample, and, where the ``dataset`` folder is ingested, its texts (:func:`check_texts`) and
    no query of the ``evaluated`` split (:func:`~weakrank.apart.check_apart`). What needs the votes is checked
    when they teach (:func:`check_judgments`)."""
    found = read_judgments(path)
    if (dataset / "passages.parquet").exists():
        check_texts(found.rows, dataset, path)
    check_not_evaluation(found.use, file=path, line=int(found.table[LINE].iloc[0]))
    if (dataset / "queries.parquet").exists():
        table = read_parquet(dataset / "queries.parquet", columns=["query_id", "split"])
        scored = found.table[found.table["query_id"].isin(set(table.loc[table["split"] == evaluated, "query_id"]))]
        if len(scored):
            check_apart(evaluated, {evaluated}, file=path, line=int(scored[LINE].iloc[0]), field="query_id",
                        what=JUDGES)
    return found


def check_judgments(judgments: Judgments, votes: pd.DataFrame, dataset: Path, evaluated: str) -> str:
    """Check ``judgments`` against the ingested ``dataset`` folder's texts, the votes table of the run they teach and
    the split it evaluates, ``evaluated`` (module doc); the line that counts their judged pairs: used, not candidates
    (no list ranks them)."""
    path, pairs = judgments.source, judgments.table
    check_texts(judgments.rows, dataset, path)
    check_not_evaluation(judgments.use, file=path, line=int(pairs[LINE].iloc[0]))
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
        check_apart(evaluated, {evaluated}, file=path, line=int(scored[LINE].iloc[0]), field="query_id",
                        what=JUDGES)
    queries = pairs.loc[used, "query_id"].nunique()
    counts = [f"{used.sum()} judged pairs of {queries} quer{'y' if queries == 1 else 'ies'} used"]
    counts += [f"{(~used).sum()} not candidates"] if (~used).any() else []
    return f"judgments {path}: {', '.join(counts)}" + (" (left out)" if len(counts) > 1 else "")
