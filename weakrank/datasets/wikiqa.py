"""WikiQA (``WikiQA-{train,dev,test}.tsv``): questions, candidate Wikipedia sentences, 0/1 labels."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.datasets.tables import dataset_from_pairs, read_tsv
from weakrank.errors import DataError

COLUMNS = ["QuestionID", "Question", "SentenceID", "Sentence", "Label"]


def load_wikiqa(path: Path, splits: tuple[str, ...] = ("train", "dev", "test")) -> Dataset:
    """Load the WikiQA TSV files under ``path``; passage ids are the sentence ids."""
    frames = []
    for split in splits:
        file = path / f"WikiQA-{split}.tsv"
        df = read_tsv(file, COLUMNS)
        bad = ~df["Label"].isin(["0", "1"])
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise DataError(f"label {df['Label'].iloc[row]!r} is not 0 or 1", file=file, row=row + 2, field="Label")
        frames.append(
            pd.DataFrame(
                {
                    "query_id": df["QuestionID"],
                    "query": df["Question"],
                    "passage_id": df["SentenceID"],
                    "passage": df["Sentence"],
                    "split": split,
                    "gold": df["Label"].astype(int),
                }
            )
        )
    sources = {t: str(path / "WikiQA-*.tsv") for t in ("queries", "passages", "candidates", "qrels")}
    return dataset_from_pairs("wikiqa", pd.concat(frames, ignore_index=True), sources)
