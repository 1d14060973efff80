"""What a training step reads: a batch of triplets or pairs, or a listwise batch of groups (built by
:mod:`weakrank.training.data`, turned into a loss by :mod:`weakrank.training.objectives`). Kept apart from the
data so that the objectives, which the ``[train]`` options are built from, load without pandas or the config."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ListBatch:
    """One listwise batch: per query, its text, a group of its candidates and their teacher scores."""

    queries: list[str]
    passages: list[list[str]]
    teacher: list[np.ndarray]


@dataclass(frozen=True)
class Batch:
    """Texts and targets of one training batch: triplets (pos/neg) or pointwise pairs."""

    queries: list[str]
    positives: list[str]
    negatives: list[str]
    confidence: np.ndarray  # per triplet: sqrt(c+ · c−)
    ns_score: np.ndarray  # negative's normalised sampler score
    pos_confidence: np.ndarray
    neg_confidence: np.ndarray
