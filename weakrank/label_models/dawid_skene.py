"""Class-conditional accuracies (Dawid & Skene, 1979): each LF has its own vote distribution per class.

Xu et al.'s (BERT-PR) generative model gives an LF one accuracy α for both classes. A
top-1/bottom-half LF is far from symmetric: its +1 votes (one per list) are right much less often than
its −1 votes are. Here each LF i has, for each class y, a distribution θ_i[y] over its votes {+1, −1, 0};
given y the LFs are independent. EM on the distinct vote patterns, as in :mod:`.generative`. The classes
are identified by requiring each LF to vote +1 more often on relevant than on non-relevant pairs (the
swap that breaks it for most LFs is undone); ``prior`` fixes γ = P(relevant).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from weakrank.errors import NotFittedError, WeakrankError
from weakrank.label_models.base import NOTHING_TO_FIT, LabelModelBase, check_votes, distinct_rows

VALUES = (1, -1, 0)  # columns of θ_i[y]


class DawidSkeneModel(LabelModelBase):
    """EM fit of per-class vote distributions ``theta_[i, c, v]`` (c: 0 = relevant, 1 = not; v: +1, −1, 0)."""

    def __init__(
        self, prior: float | None = None, max_iter: int = 300, tol: float = 1e-8, smoothing: float = 1.0
    ) -> None:
        self.prior, self.max_iter, self.tol, self.smoothing = prior, max_iter, tol, smoothing
        self.theta_: np.ndarray | None = None
        self.gamma_: float | None = None
        self.log_likelihood_: list[float] = []

    def _log_joint(self, patterns: np.ndarray) -> np.ndarray:
        """log P(λ, y) for y = relevant (column 0) and not relevant (column 1)."""
        onehot = np.stack([patterns == v for v in VALUES], axis=-1).astype(np.float64)  # (p, m, 3)
        log_theta = np.log(self.theta_)  # (m, 2, 3)
        per_class = np.einsum("pmv,mcv->pc", onehot, log_theta)
        return per_class + np.log([self.gamma_, 1.0 - self.gamma_])

    def fit(self, votes: np.ndarray) -> DawidSkeneModel:
        patterns, counts, _ = distinct_rows(check_votes(votes, self.min_lfs))
        return self.fit_counts(patterns, counts)

    def fit_counts(self, patterns: np.ndarray, counts: np.ndarray) -> DawidSkeneModel:
        """Fit on distinct vote patterns and their counts (see :meth:`GenerativeModel.fit_counts`)."""
        patterns = check_votes(patterns, self.min_lfs)
        counts = np.asarray(counts, dtype=np.float64)
        silent = counts @ (patterns != 0) == 0
        if silent.all():
            raise WeakrankError(NOTHING_TO_FIT)
        if silent.any():  # an LF that abstains everywhere: fitted without it, the same (abstain) rates in both classes
            theta = np.tile([0.0, 0.0, 1.0], (len(silent), 2, 1))
            theta[~silent] = self.fit_counts(patterns[:, ~silent], counts).theta_
            self.theta_ = np.clip(theta, 1e-12, None)
            return self
        onehot = np.stack([patterns == v for v in VALUES], axis=-1).astype(np.float64)
        # start from majority vote's posterior
        pos, neg = (patterns == 1).sum(axis=1), (patterns == -1).sum(axis=1)
        post = np.where(pos + neg > 0, (pos + 0.5) / (pos + neg + 1.0), 0.5)
        self.gamma_ = self.prior
        self.log_likelihood_ = []
        for _ in range(self.max_iter):
            weight = counts[:, None] * np.column_stack([post, 1.0 - post])  # (p, 2)
            tallies = np.einsum("pc,pmv->mcv", weight, onehot) + self.smoothing
            self.theta_ = tallies / tallies.sum(axis=2, keepdims=True)
            if self.prior is None:
                self.gamma_ = float(np.clip(weight[:, 0].sum() / counts.sum(), 1e-6, 1 - 1e-6))
            joint = self._log_joint(patterns)
            post = expit(joint[:, 0] - joint[:, 1])
            self.log_likelihood_.append(float(counts @ np.logaddexp(joint[:, 0], joint[:, 1]) / counts.sum()))
            if len(self.log_likelihood_) > 1 and abs(self.log_likelihood_[-1] - self.log_likelihood_[-2]) < self.tol:
                break
        # identifiability: relevant is the class on which the LFs vote +1 more often
        if np.median(self.theta_[:, 0, 0] - self.theta_[:, 1, 0]) < 0:
            self.theta_ = self.theta_[:, ::-1, :].copy()
            self.gamma_ = 1.0 - self.gamma_ if self.prior is None else self.gamma_
        return self

    def predict_proba(self, votes: np.ndarray) -> np.ndarray:
        if self.theta_ is None:
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit() first")
        patterns, _, inverse = distinct_rows(check_votes(votes, self.min_lfs))
        joint = self._log_joint(patterns)
        return expit(joint[:, 0] - joint[:, 1])[inverse]

    def state(self) -> dict:
        return {
            "theta": None if self.theta_ is None else self.theta_.tolist(),
            "gamma": self.gamma_,
            "iterations": len(self.log_likelihood_),
        }
