"""The state the sampling policy sees: training signals plus a compressed view of the batch.

Signals: previous batch loss, scaled gradient norm of the top layers, progress in the epoch, epoch.
Batch view: the term-weighted (idf) sum of the encoder's input word embeddings of the batch's queries
and of its positive passages, each projected to ``dim`` numbers by a fixed random projection.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class TrainingState:
    """Scalar training signals at a decision point."""

    loss: float
    grad_norm: float
    epoch_progress: float
    epoch: int

    def vector(self) -> np.ndarray:
        """Squashed into comparable ranges (log-scaled loss and gradient norm)."""
        return np.array(
            [math.log1p(max(self.loss, 0.0)), math.log1p(max(self.grad_norm, 0.0)), self.epoch_progress, math.log1p(self.epoch)],
            dtype=np.float32,
        )


class TermWeightedEncoder:
    """idf-weighted sums of a transformer's input word embeddings, randomly projected to ``dim``."""

    def __init__(self, tokenizer, embeddings: torch.Tensor, collection: Sequence[str], dim: int = 16, seed: int = 0):
        self.tokenizer = tokenizer
        ids = tokenizer(list(collection), add_special_tokens=False)["input_ids"]
        df = np.zeros(embeddings.shape[0])
        for doc in ids:
            df[np.unique(doc)] += 1
        self.idf = torch.tensor(np.log((1 + len(ids)) / (1 + df)) + 1.0, dtype=torch.float32)
        rng = np.random.default_rng(seed)
        projection = rng.standard_normal((embeddings.shape[1], dim)) / math.sqrt(dim)
        self.table = (embeddings.detach().float().cpu() @ torch.tensor(projection, dtype=torch.float32)).contiguous()
        self.dim = dim

    @property
    def state_dim(self) -> int:
        """Length of :meth:`state` vectors: 4 training signals + queries + positives."""
        return 4 + 2 * self.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The normalised idf-weighted embedding sum of all ``texts`` together."""
        total = torch.zeros(self.dim)
        for doc in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
            ids = torch.tensor(doc, dtype=torch.long)
            total += (self.table[ids] * self.idf[ids, None]).sum(0)
        return (total / total.norm().clamp(min=1e-6)).numpy()

    def state(self, signals: TrainingState, queries: Sequence[str], positives: Sequence[str]) -> np.ndarray:
        """The full state vector of a decision point."""
        return np.concatenate([signals.vector(), self.encode(queries), self.encode(positives)]).astype(np.float32)
