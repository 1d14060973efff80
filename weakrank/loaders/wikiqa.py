"""WikiQA (``WikiQA-{train,dev,test}.tsv``): questions, candidate Wikipedia sentences, 0/1 labels.

With ``candidates = "bm25"`` each question's candidates are instead the BM25 top-``k`` of every sentence the files
list: a collection whose candidates a first-stage retriever chose out of a shared pool (as web-search passages
are), where the lexical LFs agree by construction. The files' labels judge those candidates; a sentence that was
not listed for the question counts as not relevant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset, candidates_from_rows, qrels_from_candidates
from weakrank.errors import ConfigError
from weakrank.loaders.candidates import bm25_candidates
from weakrank.loaders.tables import FILE, LINE, dataset_from_pairs, fail_at, read_tsv

COLUMNS = ["QuestionID", "Question", "SentenceID", "Sentence", "Label"]


def wikiqa_inputs(path: Path, splits: tuple[str, ...], **_: Any) -> list[tuple[str, Path]]:
    """The ``WikiQA-<split>.tsv`` file of each split, under ``path``."""
    return [("path", path / f"WikiQA-{split}.tsv") for split in splits]


def load_wikiqa(path: Path, splits: tuple[str, ...] = ("train", "dev", "test"), candidates: str = "listed",
                k: int = 20) -> Dataset:
    """Load the WikiQA TSV files under ``path``; passage ids are the sentence ids. ``candidates``: ``"listed"``
    (each question's sentences in the files) or ``"bm25"`` (its BM25 top-``k`` of all of them)."""
    if candidates not in ("listed", "bm25"):
        raise ConfigError(f"[dataset] options.candidates must be 'listed' or 'bm25', not {candidates!r}")
    frames = []
    for (_, file), split in zip(wikiqa_inputs(path, splits), splits):
        df = read_tsv(file, COLUMNS)
        fail_at(df, ~df["Label"].isin(["0", "1"]), "Label", lambda row: f"label {row['Label']!r} is not 0 or 1")
        frames.append(
            pd.DataFrame(
                {
                    "query_id": df["QuestionID"],
                    "query": df["Question"],
                    "passage_id": df["SentenceID"],
                    "passage": df["Sentence"],
                    "split": split,
                    "gold": df["Label"].astype(int),
                    FILE: df[FILE],
                    LINE: df[LINE],
                }
            )
        )
    sources = {t: str(path / "WikiQA-*.tsv") for t in ("queries", "passages", "candidates", "qrels")}
    fields = {"query_id": "QuestionID", "query": "Question", "passage_id": "SentenceID", "passage": "Sentence"}
    listed = dataset_from_pairs("wikiqa", pd.concat(frames, ignore_index=True), sources, fields)
    return listed if candidates == "listed" else pooled(listed, k)


def pooled(listed: Dataset, k: int) -> Dataset:
    """``listed`` with each query's candidates replaced by its BM25 top-``k`` of all passages, labelled by the listed
    gold (unlisted: not relevant)."""
    found = bm25_candidates(listed.queries, listed.passages, k)
    relevant = listed.candidates.loc[listed.candidates["gold"] == 1, ["query_id", "passage_id"]]
    keys = pd.MultiIndex.from_frame(found[["query_id", "passage_id"]])
    found["gold"] = keys.isin(pd.MultiIndex.from_frame(relevant)).astype(int)
    rows = candidates_from_rows(found, listed.queries)
    sources = listed.sources | {"candidates": f"BM25 top-{k} of every sentence in {listed.sources['passages']}"}
    return Dataset(name=listed.name, queries=listed.queries, passages=listed.passages, candidates=rows,
                   qrels=qrels_from_candidates(rows), sources=sources)
