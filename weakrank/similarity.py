"""Cosine similarity of aligned pairs, encoding each distinct text once."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

Encoder = Callable[[list[str]], np.ndarray]


def pair_cosine(queries: Sequence[str], passages: Sequence[str], encode: Encoder) -> np.ndarray:
    """cos(encode(queries[i]), encode(passages[i])) for every i; each distinct text is encoded once."""
    texts, inverse = np.unique(np.asarray(list(queries) + list(passages), dtype=object), return_inverse=True)
    emb = np.asarray(encode(list(texts)), dtype=np.float64)
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    emb = emb / np.where(norms == 0, 1.0, norms)
    n = len(queries)
    return np.einsum("ij,ij->i", emb[inverse[:n]], emb[inverse[n:]])
