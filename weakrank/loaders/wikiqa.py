"""WikiQA (``WikiQA-{train,dev,test}.tsv``): questions, candidate Wikipedia sentences, 0/1 labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.loaders.tables import FILE, LINE, dataset_from_pairs, fail_at, read_tsv

COLUMNS = ["QuestionID", "Question", "SentenceID", "Sentence", "Label"]


def wikiqa_inputs(path: Path, splits: tuple[str, ...], **_: Any) -> list[tuple[str, Path]]:
    """The ``WikiQA-<split>.tsv`` file of each split, under ``path``."""
    return [("path", path / f"WikiQA-{split}.tsv") for split in splits]


def load_wikiqa(path: Path, splits: tuple[str, ...] = ("train", "dev", "test")) -> Dataset:
    """Load the WikiQA TSV files under ``path``; passage ids are the sentence ids."""
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
    return dataset_from_pairs("wikiqa", pd.concat(frames, ignore_index=True), sources, fields)
