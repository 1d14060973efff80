"""Cosine similarity of aligned pairs, encoding each distinct text once (across calls with a cache)."""

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


class EmbeddingCache:
    """Wraps an encoder so that a text already encoded (by an earlier chunk of pairs) is not encoded again;
    holds at most ``max_items`` embeddings (texts past that are encoded on every call)."""

    def __init__(self, encode: Encoder, max_items: int = 200_000) -> None:
        self.encode, self.max_items = encode, max_items
        self.store: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.store]
        fresh = dict(zip(missing, np.asarray(self.encode(missing), dtype=np.float32))) if missing else {}
        room = self.max_items - len(self.store)
        self.store.update(list(fresh.items())[: max(room, 0)])
        return np.stack([self.store[t] if t in self.store else fresh[t] for t in texts]) if texts else np.zeros((0, 0))
