"""BM25 over a passage collection, scored as sparse matrix products.

The statistics and formula are those of ``rank_bm25.BM25Okapi`` (ATIRE idf with an epsilon floor);
``tests/test_bm25.py`` checks equality against it and ``benchmarks/bench_lf_apply.py`` measures both.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from weakrank.text import tokenize


class BM25Index:
    """BM25Okapi statistics of a collection; scores query–passage pairs or whole collections."""

    def __init__(self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._vectorizer = CountVectorizer(analyzer=tokenize, dtype=np.float64)
        tf = self._vectorizer.fit_transform(texts).tocsr()
        n_docs = tf.shape[0]
        doc_len = np.asarray(tf.sum(axis=1)).ravel()
        avgdl = doc_len.sum() / n_docs
        df = np.bincount(tf.indices, minlength=tf.shape[1])
        idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
        idf[idf < 0] = epsilon * idf.mean()
        self.idf = idf
        # weight of term t in doc d: idf_t * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))
        norm = k1 * (1 - b + b * doc_len / avgdl)
        rows = np.repeat(np.arange(n_docs), np.diff(tf.indptr))
        data = idf[tf.indices] * tf.data * (k1 + 1) / (tf.data + norm[rows])
        self.weights = sp.csr_matrix((data, tf.indices, tf.indptr), shape=tf.shape)

    @property
    def n_docs(self) -> int:
        """Number of passages in the collection."""
        return self.weights.shape[0]

    def query_matrix(self, queries: Sequence[str]) -> sp.csr_matrix:
        """Term counts of each query over the collection vocabulary (unknown terms dropped)."""
        return self._vectorizer.transform(queries).tocsr()

    def score_pairs(self, queries: Sequence[str], doc_rows: np.ndarray) -> np.ndarray:
        """BM25 score of ``queries[i]`` against collection row ``doc_rows[i]``, for every i."""
        uniq, inverse = np.unique(np.asarray(queries, dtype=object), return_inverse=True)
        q = self.query_matrix(list(uniq))[inverse]
        return np.asarray(self.weights[np.asarray(doc_rows)].multiply(q).sum(axis=1)).ravel()

    def top_k(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows and scores of the ``k`` best passages of each query, best first (ties by row)."""
        k = min(k, self.n_docs)
        scores = (self.query_matrix(queries) @ self.weights.T).toarray()
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return order, np.take_along_axis(scores, order, axis=1)
