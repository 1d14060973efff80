"""BM25 (Okapi, rank_bm25's formula) of the query against the passage, IDF over the whole collection."""

from __future__ import annotations

import numpy as np
import pandas as pd

from weakrank.bm25 import BM25Index
from weakrank.dataset import Dataset
from weakrank.lf import PairBatch, RankingLF, lf_factory, ranking_lf


@lf_factory
def make_bm25(name: str = "bm25", k1: float = 1.5, b: float = 0.75, **rule: float) -> RankingLF:
    """A BM25 LF with its own parameters; ``rule`` sets ``top_k`` / ``bottom_fraction``."""

    def build(dataset: Dataset) -> tuple[BM25Index, pd.Index]:
        passages = dataset.passages
        return BM25Index(passages["text"].tolist(), k1=k1, b=b), pd.Index(passages["passage_id"])

    @ranking_lf(name, batched=True, fit=build, **rule)
    def score(pairs: PairBatch, resource: tuple[BM25Index, pd.Index]) -> np.ndarray:
        index, rows = resource
        return index.score_pairs(pairs.query, rows.get_indexer(pairs.passage_id))

    return score


bm25 = make_bm25()
