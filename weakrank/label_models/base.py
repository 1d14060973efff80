"""What every label model shares: the :class:`LabelModel` protocol on a votes table, input checks, vote
patterns and probabilities → (label, confidence)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Protocol, Self

import numpy as np
import pandas as pd

from weakrank.errors import WeakrankError
from weakrank.fusion_state import FusionState
from weakrank.labeling import vote_matrix

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


def distinct_rows(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of a ±1/0 vote matrix, how often each occurs, and each row's pattern index."""
    m = votes.shape[1]
    if m > 39:  # base-3 codes would overflow int64
        patterns, inverse, counts = np.unique(votes, axis=0, return_inverse=True, return_counts=True)
        return patterns, counts.astype(np.float64), inverse.ravel()
    powers = 3 ** np.arange(m, dtype=np.int64)
    codes, inverse, counts = np.unique((votes + 1).astype(np.int64) @ powers, return_inverse=True, return_counts=True)
    patterns = (codes[:, None] // powers % 3 - 1).astype(np.int8)
    return patterns, counts.astype(np.float64), inverse


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


class LabelModel(Protocol):
    """What every label model does, on a votes table (query_id, passage_id, split, ``vote_<lf>`` and
    ``score_<lf>`` columns): the constructor stores its options, :meth:`fit_table` returns it fitted. Its tags say
    what else it can do: ``takes_priors`` (it weighs the LFs by quality priors given to it, which evidence can move) and
    ``portable`` (its fitted state, a :class:`~weakrank.fusion_state.FusionState`, scores lists it never saw: a
    shipped ranker's teacher)."""

    min_lfs: int  # the fewest LFs it can run on
    takes_priors: bool
    portable: bool

    def fit_table(self, votes: pd.DataFrame) -> Self:
        """Fit on ``votes`` (no gold: judged queries move the fusion model's LF priors in
        :mod:`weakrank.judged`)."""

    def predict_table(self, votes: pd.DataFrame) -> np.ndarray:
        """P(relevant) of each row of ``votes``."""

    def labels_table(self, votes: pd.DataFrame) -> pd.DataFrame:
        """``votes`` plus p_relevant, label, confidence and score (:func:`with_labels`)."""

    def fit_streaming(self, chunks: Iterable[pd.DataFrame]) -> Self:
        """Fit on votes tables read chunk by chunk (out of core: at least the ``vote_*`` columns)."""

    def state(self) -> dict | FusionState:
        """The fitted state (stored with the labels, as their metadata's ``params``): JSON-ready, or the portable
        model's :class:`~weakrank.fusion_state.FusionState`."""


def cannot_stream(model: object) -> WeakrankError:
    """The error of a label model that needs all rows at once."""
    return WeakrankError(f"{type(model).__name__} cannot be fitted chunk by chunk; use 'generative' or 'majority'")


class LabelModelBase(ABC):
    """A model of LF votes that yields P(relevant | votes): ``fit(V)``, ``predict_proba(V)`` on the n × m vote
    matrix, and the :class:`LabelModel` protocol on its ``vote_*`` columns."""

    min_lfs: int = 2
    takes_priors = False
    portable = False

    def fit(self, votes: np.ndarray) -> LabelModelBase:
        """Fit the model's parameters to ``votes`` (no-op for models without parameters)."""
        check_votes(votes, self.min_lfs)
        return self

    @abstractmethod
    def predict_proba(self, votes: np.ndarray) -> np.ndarray:
        """P(relevant) of each row of ``votes``."""

    def state(self) -> dict:
        """The fitted state, JSON-serialisable (stored with the labels, as their metadata's ``params``)."""
        return {}

    def fit_table(self, votes: pd.DataFrame) -> Self:
        """Fit on the vote matrix of ``votes``."""
        self.fit(vote_matrix(votes))
        return self

    def predict_table(self, votes: pd.DataFrame) -> np.ndarray:
        """P(relevant) of each row of ``votes``, from its vote matrix."""
        return self.predict_proba(vote_matrix(votes))

    def labels_table(self, votes: pd.DataFrame) -> pd.DataFrame:
        """``votes`` plus the labels-table columns; the score is the log-odds of P(relevant)."""
        return with_labels(votes, self.predict_table(votes))

    def fit_streaming(self, chunks: Iterable[pd.DataFrame]) -> Self:
        """Refused unless the model overrides it (majority, generative): it needs every row at once."""
        raise cannot_stream(self)
