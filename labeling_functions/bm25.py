"""BM25 (Okapi, rank_bm25's formula) of the query against the passage, IDF over the whole collection.

A trained model carries the collection's statistics (``export`` / ``restore``): a passage outside the
collection is scored from its text under them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from weakrank.bm25 import BM25Index
from weakrank.dataset import Dataset
from weakrank.lf import PairBatch, RankingLF, lf_factory, ranking_lf

PRIOR = 0.35  # its quality prior (a loading on relevance), measured: benchmarks/teacher_priors.csv


@lf_factory
def make_bm25(name: str = "bm25", k1: float = 1.5, b: float = 0.75, **rule: float) -> RankingLF:
    """A BM25 LF with its own parameters; ``rule`` sets ``top_k`` / ``bottom_fraction``."""

    def build(dataset: Dataset) -> tuple[BM25Index, pd.Index]:
        passages = dataset.passages
        return BM25Index(passages["text"].tolist(), k1=k1, b=b), pd.Index(passages["passage_id"])

    def restore(state: dict[str, np.ndarray]) -> tuple[BM25Index, pd.Index]:
        return BM25Index.from_state(state), pd.Index([])

    @ranking_lf(name, batched=True, fit=build, export=lambda resource: resource[0].state(), restore=restore,
                 family="lexical", prior=PRIOR, **rule)
    def score(pairs: PairBatch, resource: tuple[BM25Index, pd.Index]) -> np.ndarray:
        index, rows = resource
        row = rows.get_indexer(pairs.passage_id)
        known = row >= 0
        if known.all():
            return index.score_pairs(pairs.query, row)
        scores = np.empty(len(pairs))
        queries = np.asarray(pairs.query, dtype=object)
        scores[known] = index.score_pairs(queries[known], row[known])
        scores[~known] = index.score_texts(queries[~known], np.asarray(pairs.passage, dtype=object)[~known])
        return scores

    return score


bm25 = make_bm25()
