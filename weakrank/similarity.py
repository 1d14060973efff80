"""Cosine similarity of aligned pairs, encoding each distinct text once (across calls and LFs: a shared encoder)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from weakrank.models import pool_tokens

Encoder = Callable[[list[str]], np.ndarray]


def pair_cosine(queries: Sequence[str], passages: Sequence[str], encode: Encoder) -> np.ndarray:
    """cos(encode(queries[i]), encode(passages[i])) for every i; each distinct text is encoded once."""
    texts, inverse = np.unique(np.asarray(list(queries) + list(passages), dtype=object), return_inverse=True)
    emb = np.asarray(encode(list(texts)), dtype=np.float64)
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    emb = emb / np.where(norms == 0, 1.0, norms)
    n = len(queries)
    return np.einsum("ij,ij->i", emb[inverse[:n]], emb[inverse[n:]])


OUTPUTS = ("sentence", "cls", "mean")  # what one forward pass gives: the model's embedding, [CLS], the tokens' mean


class SharedEncoder:
    """A sentence-transformers model that encodes each distinct text once for every LF reading it: its
    sentence embedding, the [CLS] vector and the tokens' masked mean all come from one forward pass
    (length-sorted batches, as ``SentenceTransformer.encode``), kept for ``max_items`` texts."""

    def __init__(self, model, batch_size: int = 64, chunk: int = 1024, max_items: int = 200_000) -> None:
        self.model, self.batch_size, self.chunk, self.max_items = model, batch_size, chunk, max_items
        self.store: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _forward(self, texts: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        out = {}
        for start in range(0, len(texts), self.chunk):  # token vectors of a chunk only, then three vectors a text
            part = texts[start : start + self.chunk]
            encoded = self.model.encode(part, batch_size=self.batch_size, output_value=None, show_progress_bar=False)
            for text, features in zip(part, encoded):
                tokens, mask = features["token_embeddings"].float()[None], features["attention_mask"][None]
                out[text] = (features["sentence_embedding"].float().cpu().numpy(),
                             *(pool_tokens(tokens, mask, pooling)[0].cpu().numpy() for pooling in ("cls", "mean")))
        return out

    def __call__(self, texts: list[str], output: str = "sentence") -> np.ndarray:
        """``output`` (one of :data:`OUTPUTS`) of each of ``texts``."""
        k = OUTPUTS.index(output)
        missing = [t for t in dict.fromkeys(texts) if t not in self.store]
        fresh = self._forward(sorted(missing, key=len)) if missing else {}
        room = self.max_items - len(self.store)
        self.store.update(list(fresh.items())[: max(room, 0)])
        vectors = [(self.store.get(t) or fresh[t])[k] for t in texts]
        return np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)


_MODELS: dict[tuple[str, int | None], SharedEncoder] = {}


def shared_encoder(path: str, max_length: int | None = None, batch_size: int = 64) -> SharedEncoder:
    """The process's :class:`SharedEncoder` of the sentence-transformers model at ``path`` truncating at
    ``max_length`` tokens (None: the model's own ``max_seq_length``): LFs over the same model and length share
    one, so their texts are encoded once."""
    from sentence_transformers import SentenceTransformer

    if (path, None) not in _MODELS:
        _MODELS[path, None] = SharedEncoder(SentenceTransformer(path, device=None), batch_size)
    default = _MODELS[path, None]
    if max_length is None or max_length == default.model.max_seq_length:
        return default
    if (path, max_length) not in _MODELS:
        model = SentenceTransformer(path, device=None)
        model.max_seq_length = max_length
        _MODELS[path, max_length] = SharedEncoder(model, batch_size)
    return _MODELS[path, max_length]
