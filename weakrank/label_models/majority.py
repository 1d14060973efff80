"""Majority vote: P(relevant) = share of +1 among the non-abstaining votes (0.5 when all abstain)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from weakrank.label_models.base import LabelModelBase, check_votes


class MajorityVote(LabelModelBase):
    """Majority vote; the confidence of its label is the majority fraction."""

    def fit_streaming(self, chunks: Iterable[pd.DataFrame]) -> MajorityVote:
        """Nothing to fit: the chunks are not read."""
        return self

    def predict_proba(self, votes: np.ndarray) -> np.ndarray:
        votes = check_votes(votes, self.min_lfs)
        pos = (votes == 1).sum(axis=1)
        cast = (votes != 0).sum(axis=1)
        return np.where(cast > 0, pos / np.maximum(cast, 1), 0.5)
