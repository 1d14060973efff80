"""Snorkel's ``LabelModel`` behind the weakrank vote convention (converted once, here)."""

from __future__ import annotations

import numpy as np

from weakrank.errors import NotFittedError
from weakrank.label_models.base import LabelModelBase, check_votes
from weakrank.voting import to_snorkel


class SnorkelLabelModel(LabelModelBase):
    """``snorkel.labeling.model.LabelModel`` (cardinality 2); ``prior`` fixes P(relevant)."""

    min_lfs = 3  # Snorkel's LabelModel refuses fewer

    def __init__(
        self, prior: float | None = None, n_epochs: int = 500, lr: float = 0.01, seed: int = 0, progress: bool = False
    ) -> None:
        self.prior, self.n_epochs, self.lr, self.seed, self.progress = prior, n_epochs, lr, seed, progress
        self.model_ = None

    def fit(self, votes: np.ndarray) -> SnorkelLabelModel:
        from snorkel.labeling.model import LabelModel

        votes = check_votes(votes, self.min_lfs)
        self.model_ = LabelModel(cardinality=2, verbose=False)
        balance = None if self.prior is None else [1.0 - self.prior, self.prior]
        self.model_.fit(
            to_snorkel(votes),
            class_balance=balance,
            n_epochs=self.n_epochs,
            lr=self.lr,
            seed=self.seed,
            progress_bar=self.progress,
        )
        return self

    def predict_proba(self, votes: np.ndarray) -> np.ndarray:
        if self.model_ is None:
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit() first")
        return self.model_.predict_proba(to_snorkel(check_votes(votes, self.min_lfs)))[:, 1]

    def state(self) -> dict:
        weights = self.model_.get_weights() if self.model_ is not None else []
        return {"lf_accuracy": [float(w) for w in weights], "prior": self.prior}
