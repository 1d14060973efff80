"""BEIR layout (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``), e.g. SciFact.

BEIR has no candidate lists: each query with qrels gets the BM25 top-``k`` of the corpus
(:func:`~weakrank.loaders.candidates.bm25_candidates`), or the lists of a TREC run file when one is given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset, candidates_from_rows
from weakrank.errors import DataError
from weakrank.loaders.candidates import bm25_candidates
from weakrank.loaders.tables import (
    FILE,
    LINE,
    check_consistent,
    check_text,
    check_unique,
    fail_at,
    read_lines,
    read_tsv,
)
from weakrank.loaders.trec import gold_of, run_rows


def read_jsonl(file: Path, fields: tuple[str, ...], optional: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per record of a JSON-lines file: ``fields`` (required) and ``optional`` (absent: ""), as strings,
    with file and line. A bad line, a missing or null field or a non-string value (but an integer ``_id``) is a
    located error."""
    rows = []
    for number, line in read_lines(file):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"not JSON: {err.msg}", file=file, line=number) from None
        if not isinstance(rec, dict):
            raise DataError(f"not a JSON object but {type(rec).__name__}", file=file, line=number)
        row = {LINE: number}
        for f in (*fields, *optional):
            if f not in rec and f in fields:
                raise DataError("missing field", file=file, line=number, field=f)
            value = rec.get(f, "")
            if value is None:
                raise DataError("null value", file=file, line=number, field=f)
            if isinstance(value, bool) or not isinstance(value, str | int if f == "_id" else str):  # ids may be numbers
                raise DataError(f"must be a string, got {type(value).__name__}", file=file, line=number, field=f)
            row[f] = str(value)
        rows.append(row)
    return pd.DataFrame(rows, columns=[*fields, *optional, LINE]).assign(**{FILE: str(file)})


def beir_inputs(path: Path, splits: tuple[str, ...], run: str | None, **_: Any) -> list[tuple[str, Path]]:
    """``corpus.jsonl``, ``queries.jsonl`` and the qrels of each split under ``path``, and the ``run`` file."""
    layout = [path / "corpus.jsonl", path / "queries.jsonl", *(path / "qrels" / f"{split}.tsv" for split in splits)]
    return [("path", file) for file in layout] + ([("options run", Path(run))] if run else [])


def load_beir(
    path: Path,
    splits: tuple[str, ...] = ("train", "test"),
    k: int = 100,
    run: str | None = None,
    unlabelled: str | None = None,
    name: str | None = None,
) -> Dataset:
    """Load a BEIR directory; candidates are BM25 top-``k`` (or the lists of ``run``).

    The queries of ``qrels/<split>.tsv`` form each of ``splits``; ``unlabelled`` names a split for every
    other query of ``queries.jsonl`` (no gold: weak training needs none). Duplicate ids, a query in the qrels
    of two splits and a run naming an unknown query or passage are located errors. (Long: one pass over BEIR's three
    inputs, each file checked where it is read, so that every error names its own file and line.)
    """
    corpus = read_jsonl(path / "corpus.jsonl", ("_id", "text"), ("title",))
    check_unique(corpus, "_id", "_id", "passage id")
    passages = corpus.assign(passage_id=corpus["_id"], text=(corpus["title"] + " " + corpus["text"]).str.strip())
    check_text(passages, "text", "text", "passage_id")
    all_queries = read_jsonl(path / "queries.jsonl", ("_id", "text"))
    check_unique(all_queries, "_id", "_id", "query id")
    check_text(all_queries, "text", "text", "_id")
    qrel_frames = []
    for split in splits:
        q = read_tsv(path / "qrels" / f"{split}.tsv", ["query-id", "corpus-id", "score"]).assign(split=split)
        fail_at(q, ~q["query-id"].isin(all_queries["_id"]), "query-id",
                lambda r: f"unknown query id {r['query-id']!r} (not in queries.jsonl)")
        fail_at(q, ~q["score"].str.fullmatch(r"-?\d+"), "score", lambda r: f"score {r['score']!r} is not an integer")
        qrel_frames.append(q)
    assessed = pd.concat(qrel_frames, ignore_index=True)
    check_unique(assessed, ["query-id", "corpus-id"], "corpus-id", "qrels row (query id, corpus id)")
    check_consistent(assessed, "query-id", "split", "query-id", "query id")
    qrels = pd.DataFrame(
        {"query_id": assessed["query-id"], "passage_id": assessed["corpus-id"],
         "relevance": assessed["score"].astype(int)}
    )
    split_of = dict(zip(assessed["query-id"], assessed["split"]))
    if unlabelled is not None:
        split_of |= {qid: unlabelled for qid in all_queries["_id"] if qid not in split_of}
    text = all_queries.set_index("_id")["text"]
    queries = pd.DataFrame(
        {"query_id": list(split_of), "text": text.loc[list(split_of)].to_numpy(), "split": list(split_of.values())}
    )
    if run:
        cands = run_rows(Path(run))
        fail_at(cands, ~cands["query_id"].isin(all_queries["_id"]), "query_id",
                lambda r: f"run names query id {r['query_id']!r}, which is not in queries.jsonl")
        fail_at(cands, ~cands["passage_id"].isin(passages["passage_id"]), "passage_id",
                lambda r: f"run names passage id {r['passage_id']!r}, which is not in corpus.jsonl")
        cands = cands[cands["query_id"].isin(split_of.keys())]
    else:
        cands = bm25_candidates(queries, passages, k)
    cands["gold"] = gold_of(cands, qrels)
    sources = {
        "queries": str(path / "queries.jsonl"),
        "passages": str(path / "corpus.jsonl"),
        "candidates": run or f"BM25 top-{k} of {path / 'corpus.jsonl'}",
        "qrels": str(path / "qrels"),
    }
    return Dataset(
        name=name or path.name,
        queries=queries,
        passages=passages[["passage_id", "text"]],
        candidates=candidates_from_rows(cands, queries),
        qrels=qrels,
        sources=sources,
    )
