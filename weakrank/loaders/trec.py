"""Generic TREC inputs: a TSV collection, and per split a TSV of queries, an optional run file and optional qrels.

A config gives each split its files (paths relative to ``[dataset] path``)::

    [dataset.splits.train]        # no qrels: weak training needs none; no run: BM25 candidates
    queries = "train-queries.tsv"
    [dataset.splits.test]
    queries = "test-queries.tsv"
    run = "test.run"
    qrels = "test.qrels"

A split without a run gets the BM25 top-``k`` of the collection for each query
(:func:`~weakrank.loaders.candidates.bm25_candidates`, as the BEIR loader). Without ``splits``, the ``queries``,
``run`` (default ``run.trec`` if present) and ``qrels`` (if present) options form the one split ``split``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset, candidates_from_rows
from weakrank.errors import ConfigError, DataError
from weakrank.io import read_qrels, read_run_file
from weakrank.loaders.candidates import bm25_candidates
from weakrank.loaders.tables import check_text, check_unique, fail_at, read_tsv

SPLIT_KEYS = {"queries", "run", "qrels"}


def run_rows(file: Path) -> pd.DataFrame:
    """query_id, passage_id, score rows (with file and line) of a TREC run (``qid Q0 pid rank score tag``),
    best first per query, read by the one reader of run files (:func:`~weakrank.io.read_run_file`: an empty file,
    a non-numeric score or a (query, passage) repeated with another score is a located error; repeated with the same
    score it counts once)."""
    run = read_run_file(file, lines=True)
    return run.sort_values(["query_id", "score"], ascending=[True, False], kind="stable").reset_index(drop=True)


def qrels_rows(file: Path) -> pd.DataFrame:
    """query_id, passage_id, relevance rows (with file and line) of a TREC qrels file (``qid 0 pid rel``);
    an empty file, a non-integer relevance or a repeated (query, passage) is a located error."""
    qrels = _not_empty(read_qrels(file, lines=True), file)
    check_unique(qrels, ["query_id", "passage_id"], "passage_id", "qrels row (query id, passage id)")
    return qrels


def _not_empty(rows: pd.DataFrame, file: Path) -> pd.DataFrame:
    if rows.empty:
        raise DataError("empty file", file=file)
    return rows


def gold_of(cands: pd.DataFrame, qrels: pd.DataFrame) -> pd.Series:
    """Gold of each candidate: 1/0 for queries in the qrels (relevance > 0 is relevant), else <NA>."""
    relevant = set(zip(qrels["query_id"], qrels["passage_id"].where(qrels["relevance"] > 0)))
    assessed = set(qrels["query_id"])
    gold = [int((q, p) in relevant) if q in assessed else pd.NA for q, p in zip(cands["query_id"], cands["passage_id"])]
    return pd.Series(gold, index=cands.index, dtype="Int8")


DEFAULT_RUN = "run.trec"


def split_files(path: Path, splits: dict[str, Any] | None, queries: str, run: str | None, qrels: str | None,
                split: str) -> dict:
    """Each split's files (queries, optional run and qrels) from the loader's options; a malformed table of
    ``splits`` is a :class:`ConfigError`."""
    if splits is None:
        run = run or (DEFAULT_RUN if (path / DEFAULT_RUN).exists() else None)
        return {split: {"queries": queries} | ({"run": run} if run else {})
                | ({"qrels": qrels} if qrels and (path / qrels).exists() else {})}
    if not isinstance(splits, dict) or not splits:
        raise ConfigError("[dataset.splits] must hold one table per split ([dataset.splits.train] ...)")
    for name, files in splits.items():
        if not isinstance(files, dict):
            raise ConfigError(f"[dataset.splits.{name}] must be a table with queries, optional run and qrels")
        unknown, missing = set(files) - SPLIT_KEYS, {"queries"} - set(files)
        if unknown or missing:
            raise ConfigError(
                f"[dataset.splits.{name}]: unknown key(s) {sorted(unknown)}, missing key(s) {sorted(missing)} "
                "(keys: queries, optional run and qrels)"
            )
    return splits


def trec_inputs(path: Path, collection: str, queries: str, run: str | None, qrels: str | None, split: str,
                splits: dict[str, dict[str, str]] | None, **_: Any) -> list[tuple[str, Path]]:
    """The collection and each split's queries, run and qrels files (those it names; a missing default qrels or
    run is no error), under the config key that names each."""
    named = [(f"splits.{name}.{key}" if splits else f"options {key}", path / file) for name, spec in
             split_files(path, splits, queries, run, qrels, split).items() for key, file in spec.items()]
    return [("options collection", path / collection), *named]


def load_trec(
    path: Path,
    collection: str = "collection.tsv",
    queries: str = "queries.tsv",
    run: str | None = None,
    qrels: str | None = "qrels.txt",
    split: str = "test",
    splits: dict[str, dict[str, str]] | None = None,
    k: int = 100,
    name: str | None = None,
) -> Dataset:
    """Load ``collection`` (pid\\ttext) and, per split, ``queries`` (qid\\ttext), a ``run`` (none: the BM25
    top-``k`` of the collection) and optional ``qrels``.

    Queries the qrels do not name have no gold. A run naming a query outside its split's queries file or a
    passage outside the collection, and a query id in two queries files, are located errors; qrels lines
    of queries outside the split are ignored (one qrels file may serve every split). (Long: one pass over the
    files of every split, each checked where it is read, so that every error names its own file and line.)
    """
    files = split_files(path, splits, queries, run, qrels, split)
    passages = read_tsv(path / collection, ["passage_id", "text"], header=False)
    check_unique(passages, "passage_id", "passage_id", "passage id")
    check_text(passages, "text", "text", "passage_id")
    split_queries = {s: read_tsv(path / spec["queries"], ["query_id", "text"], header=False).assign(split=s)
                     for s, spec in files.items()}
    runless = [q for s, q in split_queries.items() if not files[s].get("run")]
    bm25 = bm25_candidates(pd.concat(runless, ignore_index=True), passages, k) if runless else None
    query_frames, cand_frames, qrels_frames = [], [], []
    for split_name, spec in files.items():
        q = split_queries[split_name]
        if spec.get("run"):
            r = run_rows(path / spec["run"])
            fail_at(r, ~r["query_id"].isin(q["query_id"]), "query_id",
                    lambda row, f=spec["queries"]: f"run names query id {row['query_id']!r}, which is not in {f}")
            fail_at(r, ~r["passage_id"].isin(passages["passage_id"]), "passage_id",
                    lambda row: f"run names passage id {row['passage_id']!r}, which is not in {collection}")
        else:
            r = bm25[bm25["query_id"].isin(q["query_id"])].reset_index(drop=True)
        assessed = pd.DataFrame({"query_id": [], "passage_id": [], "relevance": []})
        if spec.get("qrels"):
            assessed = qrels_rows(path / spec["qrels"])
            assessed = assessed[assessed["query_id"].isin(q["query_id"])]
        r["gold"] = gold_of(r, assessed)
        query_frames.append(q)
        cand_frames.append(r)
        qrels_frames.append(assessed[["query_id", "passage_id", "relevance"]])
    query_table = pd.concat(query_frames, ignore_index=True)
    check_unique(query_table, "query_id", "query_id", "query id")
    check_text(query_table, "text", "text", "query_id")
    sources = {
        "queries": ", ".join(str(path / f["queries"]) for f in files.values()),
        "passages": str(path / collection),
        "candidates": ", ".join(str(path / f["run"]) if f.get("run") else f"BM25 top-{k} of {path / collection}"
                                for f in files.values()),
        "qrels": ", ".join(str(path / f["qrels"]) for f in files.values() if f.get("qrels")),
    }
    return Dataset(
        name=name or path.name,
        queries=query_table[["query_id", "text", "split"]],
        passages=passages[["passage_id", "text"]],
        candidates=candidates_from_rows(pd.concat(cand_frames, ignore_index=True), query_table),
        qrels=pd.concat(qrels_frames, ignore_index=True),
        sources=sources,
    )
