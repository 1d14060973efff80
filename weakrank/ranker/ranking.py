"""What every trained ranker offers on top of ``predict(pairs)``: ``score_frame`` and ``rank``, as
sentence-transformers' ``CrossEncoder.rank``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class RanksPassages:
    """``rank(query, passages)`` for a ranker with ``predict(pairs, batch_size)``."""

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        raise NotImplementedError

    @contextmanager
    def remembering(self) -> Iterator[None]:
        """Within the block, what scoring computed of one text may serve the next call that meets it again (a
        rerank scored chunk by chunk, whose queries share passages); nothing here: a bi-encoder keeps its
        embeddings."""
        yield

    def score_frame(self, pairs: pd.DataFrame, batch_size: int = 64) -> np.ndarray:
        """Scores of a frame's rows (``query_id, passage_id, query, passage``; the shipped ranker reads each
        ``query_id``'s rows as one list)."""
        return self.predict(list(zip(pairs["query"], pairs["passage"])), batch_size=batch_size)

    def rank(self, query: str, passages: Sequence[str], top_k: int | None = None, return_documents: bool = False,
             batch_size: int = 64) -> list[dict]:
        """``passages`` best first, as sentence-transformers' ``CrossEncoder.rank``: ``corpus_id`` (the index in
        ``passages``), ``score`` and, with ``return_documents``, ``text``."""
        scores = self.predict([(query, p) for p in passages], batch_size=batch_size)
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [{"corpus_id": int(i), "score": float(scores[i]), **({"text": passages[i]} if return_documents else {})}
                for i in order]
