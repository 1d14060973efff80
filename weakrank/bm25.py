"""BM25 over a passage collection, scored as sparse matrix products.

The statistics and formula are those of ``rank_bm25.BM25Okapi`` (ATIRE idf with an epsilon floor);
``tests/test_bm25.py`` checks equality against it and ``benchmarks/bench_lf_apply.py`` measures both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from weakrank.text import tokenize

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import CountVectorizer


def _count_vectorizer(**options: Any) -> CountVectorizer:
    """A term counter over :func:`~weakrank.text.tokenize` (sklearn imported on first use: checking a config
    imports this module and needs no sklearn)."""
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(analyzer=tokenize, dtype=np.float64, **options)


class BM25Index:
    """BM25Okapi statistics of a collection; scores query–passage pairs or whole collections."""

    def __init__(self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._vectorizer = _count_vectorizer()
        tf = self._vectorizer.fit_transform(texts).tocsr()
        n_docs = tf.shape[0]
        self.avgdl = float(np.asarray(tf.sum(axis=1)).ravel().sum() / n_docs)
        df = np.bincount(tf.indices, minlength=tf.shape[1])
        idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
        idf[idf < 0] = epsilon * idf.mean()
        self.idf = idf
        self.weights = self._weights(tf)

    def _weights(self, tf: sp.csr_matrix) -> sp.csr_matrix:
        """Weight of term t in passage d: idf_t * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))."""
        doc_len = np.asarray(tf.sum(axis=1)).ravel()
        norm = self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)
        rows = np.repeat(np.arange(tf.shape[0]), np.diff(tf.indptr))
        data = self.idf[tf.indices] * tf.data * (self.k1 + 1) / (tf.data + norm[rows])
        return sp.csr_matrix((data, tf.indices, tf.indptr), shape=tf.shape)

    def state(self) -> dict[str, np.ndarray]:
        """The collection statistics that score any passage's text (vocabulary, idf, avgdl, k1, b, epsilon),
        without the collection: :meth:`from_state` restores an index that scores by text only."""
        vocabulary = sorted(self._vectorizer.vocabulary_, key=self._vectorizer.vocabulary_.get)
        return {"vocabulary": np.array(vocabulary, dtype=str), "idf": self.idf,
                "parameters": np.array([self.k1, self.b, self.epsilon, self.avgdl])}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> BM25Index:
        """An index of :meth:`state`'s statistics over an empty collection (:meth:`score_texts` only)."""
        index = cls.__new__(cls)
        index.k1, index.b, index.epsilon, index.avgdl = (float(v) for v in state["parameters"])
        index.idf = np.asarray(state["idf"], dtype=np.float64)
        index._vectorizer = _count_vectorizer(vocabulary={str(t): i for i, t in enumerate(state["vocabulary"])})
        index.weights = sp.csr_matrix((0, len(index.idf)))
        return index

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

    def score_texts(self, queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        """BM25 score of ``queries[i]`` against the text ``passages[i]`` under the collection's statistics (a
        passage of the collection scores as :meth:`score_pairs` scores its row)."""
        uniq, inverse = np.unique(np.asarray(queries, dtype=object), return_inverse=True)
        q = self.query_matrix(list(uniq))[inverse]
        weights = self._weights(self._vectorizer.transform(list(passages)).tocsr())
        return np.asarray(weights.multiply(q).sum(axis=1)).ravel()

    def top_k(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows and scores of the ``k`` best passages of each query, best first (ties by row)."""
        k = min(k, self.n_docs)
        scores = (self.query_matrix(queries) @ self.weights.T).toarray()
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return order, np.take_along_axis(scores, order, axis=1)
