"""Vote patterns counted chunk by chunk: what the generative model's out-of-core fit
(:meth:`~weakrank.label_models.generative.GenerativeModel.fit_streaming`) reads.

The generative model only needs each distinct vote pattern and its count, so a stream of vote
chunks (e.g. the ``vote_*`` columns of a partitioned votes dataset, read with pyarrow) is reduced to
at most 3^m patterns as it goes; the fit equals the in-memory one.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from weakrank.errors import WeakrankError
from weakrank.label_models.base import check_votes, distinct_rows


def merge_counts(patterns: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of stacked ``patterns`` (in :func:`distinct_rows` order) with their summed ``counts``."""
    unique, _, inverse = distinct_rows(patterns)
    return unique, np.bincount(inverse, weights=counts, minlength=len(unique))


def pattern_counts(chunks: Iterable[np.ndarray], min_lfs: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Distinct vote patterns of all ``chunks`` (n_i × m vote matrices) and their counts, in bounded memory."""
    patterns: np.ndarray | None = None
    counts = np.zeros(0)
    for chunk in chunks:
        p, c, _ = distinct_rows(check_votes(chunk, min_lfs))
        if patterns is None:
            patterns, counts = p, c
        else:
            if p.shape[1] != patterns.shape[1]:
                raise WeakrankError(f"vote chunks disagree on the number of LFs ({p.shape[1]} vs {patterns.shape[1]})")
            patterns, counts = merge_counts(np.vstack([patterns, p]), np.concatenate([counts, c]))
    if patterns is None:
        raise WeakrankError("no votes to fit the label model on")
    return patterns, counts
