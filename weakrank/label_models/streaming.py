"""Label models on vote matrices too large for memory: fit on pattern counts accumulated chunk by chunk.

The generative model only needs each distinct vote pattern and its count, so a stream of vote
chunks (e.g. the ``vote_*`` columns of a partitioned votes dataset, read with pyarrow) is reduced to
at most 3^m patterns as it goes; the fit equals the in-memory one.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from weakrank.errors import WeakrankError
from weakrank.label_models.base import LabelModelBase, check_votes
from weakrank.label_models.generative import GenerativeModel, distinct_rows
from weakrank.label_models.majority import MajorityVote


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


def fit_streaming(model: LabelModelBase, chunks: Iterable[np.ndarray]) -> LabelModelBase:
    """Fit ``model`` on a stream of vote chunks (generative: on pattern counts; majority: nothing to fit)."""
    if isinstance(model, GenerativeModel):
        return model.fit_counts(*pattern_counts(chunks, model.min_lfs))
    if isinstance(model, MajorityVote):
        return model
    raise WeakrankError(f"{type(model).__name__} cannot be fitted chunk by chunk; use 'generative' or 'majority'")
