"""TF-IDF cosine between query and passage (scikit-learn), vocabulary and IDF from the collection."""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from weakrank.dataset import Dataset
from weakrank.lf import PairBatch, RankingLF, ranking_lf
from weakrank.text import tokenize


def make_tfidf(name: str = "tfidf", sublinear_tf: bool = True, **rule: float) -> RankingLF:
    """A TF-IDF cosine LF; ``rule`` sets ``top_k`` / ``bottom_fraction``."""

    def build(dataset: Dataset) -> TfidfVectorizer:
        return TfidfVectorizer(analyzer=tokenize, sublinear_tf=sublinear_tf).fit(dataset.passages["text"])

    @ranking_lf(name, batched=True, fit=build, **rule)
    def score(pairs: PairBatch, vectorizer: TfidfVectorizer) -> np.ndarray:
        q = vectorizer.transform(pairs.query)  # rows are L2-normalised: the dot product is the cosine
        p = vectorizer.transform(pairs.passage)
        return np.asarray(q.multiply(p).sum(axis=1)).ravel()

    return score


tfidf = make_tfidf()
