"""What every label model shares: input checks and probabilities → (label, confidence)."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pandas as pd

from weakrank.errors import WeakrankError

NOTHING_TO_FIT = "every LF abstains on every pair (each list has one candidate, or all its scores tie): nothing to fit"


def check_votes(votes: np.ndarray, min_lfs: int) -> np.ndarray:
    """``votes`` as an int8 n × m matrix of +1/−1/0 with at least ``min_lfs`` columns."""
    votes = np.asarray(votes)
    if votes.ndim != 2:
        raise WeakrankError(f"vote matrix must be 2-D (pairs × LFs), got shape {votes.shape}")
    if votes.shape[1] < min_lfs:
        raise WeakrankError(f"this label model needs at least {min_lfs} LFs, got {votes.shape[1]}")
    if not np.isin(votes, (-1, 0, 1)).all():
        raise WeakrankError("votes must be +1 (relevant), -1 (not relevant) or 0 (abstain)")
    return votes.astype(np.int8, copy=False)


def labels_from_proba(p_relevant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hard labels (1 if P(relevant) > 0.5, ties → 0) and their confidence max(p, 1 − p)."""
    p = np.asarray(p_relevant, dtype=np.float64)
    return (p > 0.5).astype(np.int8), np.maximum(p, 1.0 - p)


def with_labels(votes: pd.DataFrame, p_relevant: np.ndarray, score: np.ndarray | None = None) -> pd.DataFrame:
    """``votes`` plus the labels-table columns ``p_relevant``, ``label``, ``confidence`` and ``score`` (the
    label model's ranking score, which listwise training distils; the log-odds of ``p_relevant`` by default)."""
    p = np.asarray(p_relevant, dtype=np.float64)
    label, confidence = labels_from_proba(p)
    if score is None:
        clipped = np.clip(p, 1e-6, 1 - 1e-6)
        score = np.log(clipped) - np.log1p(-clipped)
    return votes.assign(p_relevant=p, label=label, confidence=confidence, score=np.asarray(score, dtype=np.float64))


class LabelModelBase(ABC):
    """A model of LF votes that yields P(relevant | votes)."""

    min_lfs: int = 2

    def fit(self, votes: np.ndarray) -> LabelModelBase:
        """Fit the model's parameters to ``votes`` (no-op for models without parameters)."""
        check_votes(votes, self.min_lfs)
        return self

    @abstractmethod
    def predict_proba(self, votes: np.ndarray) -> np.ndarray:
        """P(relevant) of each row of ``votes``."""

    def params(self) -> dict:
        """Fitted parameters, JSON-serialisable (stored with the labels)."""
        return {}
