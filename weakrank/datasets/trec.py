"""Generic TREC inputs: a TSV collection, a TSV of queries, a run file and (optionally) qrels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from weakrank.dataset import Dataset, candidates_from_rows
from weakrank.datasets.tables import read_tsv
from weakrank.errors import DataError


def read_run(file: Path) -> pd.DataFrame:
    """query_id, passage_id, score rows of a TREC run (``qid Q0 pid rank score tag``), best first per query."""
    run = read_tsv(file, ["query_id", "q0", "passage_id", "rank", "score", "tag"], header=False, sep=r"\s+")
    bad = pd.to_numeric(run["score"], errors="coerce").isna()
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise DataError(f"score {run['score'].iloc[row]!r} is not a number", file=file, row=row + 1, field="score")
    run["score"] = run["score"].astype(float)
    run = run.sort_values(["query_id", "score"], ascending=[True, False], kind="stable")
    return run[["query_id", "passage_id", "score"]].reset_index(drop=True)


def read_qrels(file: Path) -> pd.DataFrame:
    """query_id, passage_id, relevance rows of a TREC qrels file (``qid 0 pid rel``)."""
    qrels = read_tsv(file, ["query_id", "iter", "passage_id", "relevance"], header=False, sep=r"\s+")
    bad = pd.to_numeric(qrels["relevance"], errors="coerce").isna()
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise DataError("relevance is not an integer", file=file, row=row + 1, field="relevance")
    qrels["relevance"] = qrels["relevance"].astype(int)
    return qrels[["query_id", "passage_id", "relevance"]]


def load_trec(
    path: Path,
    collection: str = "collection.tsv",
    queries: str = "queries.tsv",
    run: str = "run.trec",
    qrels: str | None = "qrels.txt",
    split: str = "test",
    name: str | None = None,
) -> Dataset:
    """Load ``collection`` (pid\\ttext), ``queries`` (qid\\ttext), ``run`` and optional ``qrels`` under ``path``."""
    passages = read_tsv(path / collection, ["passage_id", "text"], header=False)
    query_table = read_tsv(path / queries, ["query_id", "text"], header=False).assign(split=split)
    cands = read_run(path / run)
    judged = pd.DataFrame({"query_id": [], "passage_id": [], "relevance": []})
    if qrels is not None and (path / qrels).exists():
        judged = read_qrels(path / qrels)
        relevant = set(zip(judged["query_id"], judged["passage_id"].where(judged["relevance"] > 0)))
        has_judgement = set(judged["query_id"])
        cands["gold"] = [
            int((q, p) in relevant) if q in has_judgement else pd.NA for q, p in zip(cands["query_id"], cands["passage_id"])
        ]
    sources = {"queries": str(path / queries), "passages": str(path / collection), "candidates": str(path / run)}
    if qrels:
        sources["qrels"] = str(path / qrels)
    return Dataset(
        name=name or path.name,
        queries=query_table,
        passages=passages,
        candidates=candidates_from_rows(cands, query_table),
        qrels=judged,
        sources=sources,
    )
