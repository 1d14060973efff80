"""Scores → per-query votes, and the one conversion to and from Snorkel's label convention.

weakrank votes: +1 relevant, −1 not relevant, 0 abstain.
Snorkel label matrix: 1 relevant, 0 not relevant, −1 abstain.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from weakrank.lf_scorer import VoteRule

POSITIVE, NEGATIVE, ABSTAIN = 1, -1, 0


def rank_votes(scores: np.ndarray, groups: np.ndarray, rule: VoteRule = VoteRule()) -> np.ndarray:
    """Votes of each pair from its score's place in its group (query), following ``rule``. An LF that
    cannot rank a list (one candidate, or all scores tied) abstains on all of it."""
    frame = pd.DataFrame({"g": groups, "s": scores})
    by = frame.groupby("g", sort=False)["s"]
    n = by.transform("size").to_numpy()
    at_or_above = by.rank(method="max", ascending=False).to_numpy()
    at_or_below = by.rank(method="max", ascending=True).to_numpy()
    n_bottom = np.floor(n * rule.bottom_fraction)
    votes = np.zeros(len(scores), dtype=np.int8)
    votes[at_or_below <= n_bottom] = NEGATIVE
    votes[at_or_above <= rule.top_k] = POSITIVE
    votes[n < 2] = ABSTAIN  # a one-candidate list cannot be ranked (an all-tied list abstains by the tie rule)
    return votes


def to_snorkel(votes: np.ndarray) -> np.ndarray:
    """weakrank votes (+1/−1/0) → Snorkel labels (1/0/−1)."""
    votes = np.asarray(votes)
    return np.where(votes == ABSTAIN, -1, (votes == POSITIVE).astype(np.int64))


def from_snorkel(labels: np.ndarray) -> np.ndarray:
    """Snorkel labels (1/0/−1) → weakrank votes (+1/−1/0)."""
    labels = np.asarray(labels)
    return np.where(labels == -1, ABSTAIN, np.where(labels == 1, POSITIVE, NEGATIVE)).astype(np.int8)
