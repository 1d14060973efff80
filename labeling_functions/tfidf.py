"""TF-IDF cosine between query and passage (scikit-learn), vocabulary and IDF from the collection.

A trained model carries the vocabulary and IDF (``export`` / ``restore``): a passage outside the collection
is vectorised from its text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from weakrank.dataset import Dataset
from weakrank.lf import PairBatch, RankingLF, lf_factory, ranking_lf
from weakrank.text import tokenize

PRIOR = 0.35  # its quality prior (a loading on relevance), measured: benchmarks/teacher_priors.csv

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer


def _tfidf_vectorizer(**options: Any) -> TfidfVectorizer:
    """A TF-IDF vectoriser over :func:`~weakrank.text.tokenize` (sklearn imported on first use, not by a config check)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(analyzer=tokenize, **options)


@lf_factory
def make_tfidf(name: str = "tfidf", sublinear_tf: bool = True, **rule: float) -> RankingLF:
    """A TF-IDF cosine LF; ``rule`` sets ``top_k`` / ``bottom_fraction``."""

    def build(dataset: Dataset) -> tuple[TfidfVectorizer, sp.csr_matrix, pd.Index]:
        vectorizer = _tfidf_vectorizer(sublinear_tf=sublinear_tf)
        passages = vectorizer.fit_transform(dataset.passages["text"]).tocsr()
        return vectorizer, passages, pd.Index(dataset.passages["passage_id"])

    def export(resource: tuple[TfidfVectorizer, sp.csr_matrix, pd.Index]) -> dict[str, np.ndarray]:
        vectorizer = resource[0]
        terms = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get)
        return {"vocabulary": np.array(terms, dtype=str), "idf": vectorizer.idf_}

    def restore(state: dict[str, np.ndarray]) -> tuple[TfidfVectorizer, sp.csr_matrix, pd.Index]:
        vocabulary = {str(t): i for i, t in enumerate(state["vocabulary"])}
        vectorizer = _tfidf_vectorizer(sublinear_tf=sublinear_tf, vocabulary=vocabulary)
        vectorizer.idf_ = state["idf"]
        return vectorizer, sp.csr_matrix((0, len(vocabulary))), pd.Index([])

    @ranking_lf(name, batched=True, fit=build, export=export, restore=restore, family="lexical", prior=PRIOR, **rule)
    def score(pairs: PairBatch, resource: tuple[TfidfVectorizer, sp.csr_matrix, pd.Index]) -> np.ndarray:
        vectorizer, passages, rows = resource
        queries, inverse = np.unique(np.asarray(pairs.query, dtype=object), return_inverse=True)
        q = vectorizer.transform(queries)[inverse]  # rows are L2-normalised: the dot product is the cosine
        row = rows.get_indexer(pairs.passage_id)
        # a passage outside the collection: the batch is vectorised from its text (the same vectors for the rest)
        p = passages[row] if (row >= 0).all() else vectorizer.transform(list(pairs.passage))
        return np.asarray(q.multiply(p).sum(axis=1)).ravel()

    return score


tfidf = make_tfidf()
