"""BERT cosine: transformers encoder, [CLS] (or mean-pooled) last hidden layer, cosine of query and passage.

The encoder runs through :func:`weakrank.similarity.shared_encoder` (sentence-transformers; a plain Hugging Face
model is wrapped with mean pooling, of which only the token vectors are read): with ``embedding_cosine`` over
the same model and length, one forward pass serves both.
"""

from __future__ import annotations

import numpy as np

from weakrank.dataset import Dataset
from weakrank.encoders import DEFAULT_ENCODER, POOLINGS, resolve_model
from weakrank.lf import PairBatch, RankingLF, lf_factory, ranking_lf
from weakrank.names import PRECISIONS
from weakrank.similarity import SharedEncoder, check_windows, shared_encoder, window_cosine

PRIOR = 0.7  # its quality prior (a loading on relevance), measured: benchmarks/teacher_priors.csv


@lf_factory(precisions=PRECISIONS)
def make_bert_cosine(
    name: str = "bert_cosine",
    model: str = DEFAULT_ENCODER,
    pooling: str = "cls",
    batch_size: int = 64,
    max_length: int = 256,
    precision: str = "fp32",
    windows: str = "first+best",
    **rule: float,
) -> RankingLF:
    """A BERT cosine LF; ``pooling`` is ``"cls"`` (the [CLS] vector) or ``"mean"`` (masked mean of the last layer);
    ``precision`` ``"int8"`` runs the encoder's linear layers dynamically quantised (CPU); ``windows``: how a passage
    longer than ``max_length`` is scored (:func:`weakrank.similarity.window_cosine`).

    The default is [CLS]: with the packaged MiniLM, mean pooling would duplicate ``embedding_cosine``.
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
    check_windows(windows)

    def load(dataset: Dataset | None) -> SharedEncoder:
        return shared_encoder(resolve_model(model), max_length=max_length, batch_size=batch_size, precision=precision)

    @ranking_lf(name, batched=True, fit=load, per_process=True, models=(model,), family="semantic",
                 prior=PRIOR, precision=precision, **rule)
    def score(pairs: PairBatch, encoder: SharedEncoder) -> np.ndarray:
        return window_cosine(pairs.query, pairs.passage, encoder, pooling, windows)

    return score


bert_cosine = make_bert_cosine()
