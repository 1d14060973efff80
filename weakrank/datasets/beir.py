"""BEIR layout (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``), e.g. SciFact.

BEIR has no candidate lists: each judged query gets the BM25 top-``k`` of the corpus (the same
:class:`~weakrank.bm25.BM25Index` as the BM25 LF), or the lists of a TREC run file when one is given.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from weakrank.bm25 import BM25Index
from weakrank.dataset import Dataset, candidates_from_rows
from weakrank.datasets.tables import read_tsv
from weakrank.datasets.trec import read_run
from weakrank.errors import DataError


def read_jsonl(file: Path, fields: tuple[str, ...]) -> list[dict]:
    """Records of a JSON-lines file; a bad line or a missing field names file, line and field."""
    if not file.exists():
        raise DataError("file not found", file=file)
    records = []
    with file.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"not JSON: {err.msg}", file=file, row=i) from None
            for f in fields:
                if f not in rec:
                    raise DataError("missing field", file=file, row=i, field=f)
            records.append(rec)
    return records


def bm25_candidates(queries: pd.DataFrame, passages: pd.DataFrame, k: int, batch: int = 256) -> pd.DataFrame:
    """query_id, passage_id rows of the BM25 top-``k`` passages of each query, best first."""
    index = BM25Index(passages["text"].tolist())
    ids = passages["passage_id"].to_numpy()
    frames = []
    texts, qids = queries["text"].tolist(), queries["query_id"].to_numpy()
    for start in tqdm(range(0, len(texts), batch), desc="BM25 candidates", unit="batch", leave=False):
        rows, _ = index.top_k(texts[start : start + batch], k)
        frames.append(
            pd.DataFrame({"query_id": np.repeat(qids[start : start + batch], rows.shape[1]), "passage_id": ids[rows.ravel()]})
        )
    return pd.concat(frames, ignore_index=True)


def load_beir(
    path: Path,
    splits: tuple[str, ...] = ("train", "test"),
    k: int = 100,
    run: str | None = None,
    name: str | None = None,
) -> Dataset:
    """Load a BEIR directory; candidates are BM25 top-``k`` (or the lists of ``run``)."""
    corpus = read_jsonl(path / "corpus.jsonl", ("_id", "text"))
    passages = pd.DataFrame(
        {
            "passage_id": [str(r["_id"]) for r in corpus],
            "text": [f"{r.get('title', '')} {r['text']}".strip() for r in corpus],
        }
    )
    all_queries = {str(r["_id"]): r["text"] for r in read_jsonl(path / "queries.jsonl", ("_id", "text"))}
    qrel_frames, split_of = [], {}
    for split in splits:
        file = path / "qrels" / f"{split}.tsv"
        q = read_tsv(file, ["query-id", "corpus-id", "score"])
        unknown = ~q["query-id"].isin(all_queries.keys())
        if unknown.any():
            row = int(unknown.to_numpy().argmax())
            raise DataError(f"unknown query id {q['query-id'].iloc[row]!r}", file=file, row=row + 2, field="query-id")
        split_of.update({qid: split for qid in q["query-id"]})
        qrel_frames.append(q)
    qrels = pd.concat(qrel_frames, ignore_index=True).rename(
        columns={"query-id": "query_id", "corpus-id": "passage_id", "score": "relevance"}
    )
    queries = pd.DataFrame(
        {"query_id": list(split_of), "text": [all_queries[q] for q in split_of], "split": list(split_of.values())}
    )
    cands = read_run(Path(run)) if run else bm25_candidates(queries, passages, k)
    cands = cands[cands["query_id"].isin(split_of.keys())]
    relevant = set(zip(qrels["query_id"], qrels["passage_id"].where(qrels["relevance"].astype(int) > 0)))
    cands["gold"] = [int((q, p) in relevant) for q, p in zip(cands["query_id"], cands["passage_id"])]
    sources = {
        "queries": str(path / "queries.jsonl"),
        "passages": str(path / "corpus.jsonl"),
        "candidates": run or f"BM25 top-{k} of {path / 'corpus.jsonl'}",
        "qrels": str(path / "qrels"),
    }
    return Dataset(
        name=name or path.name,
        queries=queries,
        passages=passages,
        candidates=candidates_from_rows(cands, queries),
        qrels=qrels[["query_id", "passage_id", "relevance"]],
        sources=sources,
    )
