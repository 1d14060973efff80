"""Sentence-embedding cosine (sentence-transformers; the packaged MiniLM by default, offline)."""

from __future__ import annotations

import numpy as np

from weakrank.dataset import Dataset
from weakrank.lf import PairBatch, RankingLF, lf_factory, ranking_lf
from weakrank.models import DEFAULT_ENCODER, resolve_model
from weakrank.similarity import EmbeddingCache, pair_cosine


@lf_factory
def make_embedding_cosine(
    name: str = "embedding_cosine", model: str = DEFAULT_ENCODER, batch_size: int = 64, **rule: float
) -> RankingLF:
    """A sentence-embedding cosine LF over any sentence-transformers model name or path."""

    def load(dataset: Dataset):
        from sentence_transformers import SentenceTransformer

        encoder = SentenceTransformer(resolve_model(model), device=None)
        return EmbeddingCache(lambda texts: encoder.encode(texts, batch_size=batch_size, show_progress_bar=False))

    @ranking_lf(name, batched=True, fit=load, per_process=True, **rule)
    def score(pairs: PairBatch, encode: EmbeddingCache) -> np.ndarray:
        return pair_cosine(pairs.query, pairs.passage, encode)

    return score


embedding_cosine = make_embedding_cosine()
