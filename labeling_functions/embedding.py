"""Sentence-embedding cosine (sentence-transformers; the packaged MiniLM by default, offline).

The model runs through :func:`weakrank.similarity.shared_encoder`: an LF reading the same model's [CLS] or mean
vectors (``bert_cosine``) takes them from the same forward pass, each text encoded once.
"""

from __future__ import annotations

import numpy as np

from weakrank.dataset import Dataset
from weakrank.encoders import DEFAULT_ENCODER, resolve_model
from weakrank.lf import PairBatch, RankingLF, lf_factory, ranking_lf
from weakrank.names import PRECISIONS
from weakrank.similarity import SharedEncoder, check_windows, shared_encoder, window_cosine

PRIOR = 0.9  # its quality prior (a loading on relevance), measured: benchmarks/teacher_priors.csv


@lf_factory(precisions=PRECISIONS)
def make_embedding_cosine(
    name: str = "embedding_cosine", model: str = DEFAULT_ENCODER, batch_size: int = 64, precision: str = "fp32",
    windows: str = "first+best", **rule: float,
) -> RankingLF:
    """A sentence-embedding cosine LF over any sentence-transformers model name or path; ``precision`` ``"int8"``
    runs its linear layers dynamically quantised (CPU); ``windows``: how a passage longer than the model reads is
    scored (:func:`weakrank.similarity.window_cosine`: the mean of its first and best window's cosine by default)."""
    check_windows(windows)

    def load(dataset: Dataset | None) -> SharedEncoder:
        return shared_encoder(resolve_model(model), batch_size=batch_size, precision=precision)

    @ranking_lf(name, batched=True, fit=load, per_process=True, models=(model,), family="semantic",
                 prior=PRIOR, precision=precision, **rule)
    def score(pairs: PairBatch, encoder: SharedEncoder) -> np.ndarray:
        return window_cosine(pairs.query, pairs.passage, encoder, "sentence", windows)

    return score


embedding_cosine = make_embedding_cosine()
