"""The conditionally independent generative model of Xu et al. (BERT-PR), Appendix A.

Each LF i votes (λ_i ≠ 0) with propensity β_i and, when it votes, is right with accuracy α_i;
the class prior is γ = P(y = +1). Given y, the LFs are independent:

    P(λ, y) = P(y) · Π_i β_i^{[λ_i≠0]} (1−β_i)^{[λ_i=0]} · α_i^{[λ_i=y]} (1−α_i)^{[λ_i=−y]}

The marginal likelihood Σ_y P(λ, y) is maximised by EM (closed-form steps on the distinct vote patterns,
so the cost hardly grows with the number of pairs). β_i is the LF's coverage in closed form; α_i is kept in (0.5, 1): an LF is
assumed better than chance, which also fixes the label-swap symmetry of the likelihood.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from weakrank.errors import NotFittedError
from weakrank.label_models.base import LabelModelBase, check_votes, distinct_rows
from weakrank.label_models.streaming import pattern_counts
from weakrank.labeling import vote_matrix


class GenerativeModel(LabelModelBase):
    """EM fit of (α, β, γ); ``prior`` fixes γ instead of learning it."""

    def __init__(
        self,
        prior: float | None = None,
        alpha_init: float = 0.7,
        max_iter: int = 200,
        tol: float = 1e-7,
        min_alpha: float = 0.5 + 1e-3,
    ) -> None:
        self.prior, self.alpha_init, self.max_iter, self.tol, self.min_alpha = prior, alpha_init, max_iter, tol, min_alpha
        self.alpha_: np.ndarray | None = None
        self.beta_: np.ndarray | None = None
        self.gamma_: float | None = None
        self.log_likelihood_: list[float] = []

    def _log_odds(self, votes: np.ndarray) -> np.ndarray:
        # log P(λ, y=+1) − log P(λ, y=−1): only voting LFs matter, each adds ±log(α/(1−α)).
        return logit(self.gamma_) + votes @ np.log(self.alpha_ / (1.0 - self.alpha_))

    def _log_likelihood(self, votes: np.ndarray, voted: np.ndarray, counts: np.ndarray) -> float:
        log_beta = np.where(voted, np.log(self.beta_), np.log1p(-self.beta_)).sum(axis=1)
        log_a, log_1a = np.log(self.alpha_), np.log1p(-self.alpha_)
        right = np.where(votes == 1, log_a, np.where(votes == -1, log_1a, 0.0)).sum(axis=1)
        wrong = np.where(votes == -1, log_a, np.where(votes == 1, log_1a, 0.0)).sum(axis=1)
        both = np.logaddexp(np.log(self.gamma_) + right, np.log1p(-self.gamma_) + wrong)
        return float(counts @ (log_beta + both) / counts.sum())

    def fit(self, votes: np.ndarray) -> GenerativeModel:
        # EM runs on the distinct vote patterns (at most 3^m) weighted by their counts.
        patterns, counts, _ = distinct_rows(check_votes(votes, self.min_lfs))
        return self.fit_counts(patterns, counts)

    def fit_counts(self, patterns: np.ndarray, counts: np.ndarray) -> GenerativeModel:
        """Fit on distinct vote patterns and how often each occurs (e.g. accumulated chunk by chunk
        with :func:`weakrank.label_models.streaming.pattern_counts`); the same result as :meth:`fit`."""
        patterns = check_votes(patterns, self.min_lfs).astype(np.float64)
        counts = np.asarray(counts, dtype=np.float64)
        voted = patterns != 0
        n_voted = counts @ voted
        silent = n_voted == 0  # an LF that abstains everywhere (e.g. answer_type on claims): α stays 0.5, no say
        eps = 1e-6
        self.beta_ = np.clip(n_voted / counts.sum(), eps, 1 - eps)
        self.alpha_ = np.full(patterns.shape[1], self.alpha_init)
        self.gamma_ = 0.5 if self.prior is None else self.prior
        self.log_likelihood_ = []
        for _ in range(self.max_iter):
            post = expit(self._log_odds(patterns))  # E-step: P(y=+1 | λ)
            # M-step: expected share of each LF's votes that agree with y, projected into (min_alpha, 1).
            agree = counts @ ((patterns == 1) * post[:, None] + (patterns == -1) * (1 - post[:, None]))
            self.alpha_ = np.where(silent, 0.5, np.clip(agree / np.maximum(n_voted, 1.0), self.min_alpha, 1 - eps))
            if self.prior is None:
                self.gamma_ = float(np.clip(counts @ post / counts.sum(), eps, 1 - eps))
            self.log_likelihood_.append(self._log_likelihood(patterns, voted, counts))
            if len(self.log_likelihood_) > 1 and abs(self.log_likelihood_[-1] - self.log_likelihood_[-2]) < self.tol:
                break
        return self

    def fit_streaming(self, chunks: Iterable[pd.DataFrame]) -> GenerativeModel:
        """Fit on the vote patterns of votes tables read chunk by chunk; the same result as :meth:`fit_table`."""
        return self.fit_counts(*pattern_counts(map(vote_matrix, chunks), self.min_lfs))

    def predict_proba(self, votes: np.ndarray) -> np.ndarray:
        if self.alpha_ is None:
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit() first")
        patterns, _, inverse = distinct_rows(check_votes(votes, self.min_lfs))
        return expit(self._log_odds(patterns.astype(np.float64)))[inverse]

    def state(self) -> dict:
        return {
            "alpha": self.alpha_.tolist(),
            "beta": self.beta_.tolist(),
            "gamma": self.gamma_,
            "iterations": len(self.log_likelihood_),
            "log_likelihood": self.log_likelihood_[-1] if self.log_likelihood_ else None,
        }
