"""Negative samplers: which non-relevant passages a query's positives are contrasted with.

Every sampler returns :class:`Negative`s carrying the negative-sampler score ŝ ∈ [0, 1] that WSLS
consumes: the passage's BM25 score min-max normalised over the query's negatives (Penha & Hauff, WSLS: the hardest
negative gets 1; 0 for a passage from outside the list, whose BM25 score is below the list's). No
sampler ever returns a known positive of the query, nor an unlabelled pair of its list (role −1). New
samplers (a learned policy, say) only need ``sample``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from weakrank.training.config import TrainConfig


@dataclass(frozen=True)
class Negative:
    """A sampled negative: passage id, label confidence, normalised sampler score."""

    passage_id: str
    confidence: float
    ns_score: float


@dataclass
class QueryList:
    """One query's labelled candidate list, as the samplers see it."""

    query_id: str
    passage_ids: np.ndarray
    labels: np.ndarray  # 1 positive, 0 negative, −1 unlabelled (never a negative)
    confidences: np.ndarray
    bm25: np.ndarray  # negative-sampler score, min-max normalised over the list's negatives (NaN elsewhere)
    teacher: np.ndarray | None = None  # the label model's score, standardised within the list
    positives: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.positives = frozenset(self.passage_ids[self.labels == 1].tolist())

    def negatives(self) -> np.ndarray:
        """Indices of the list's labelled negatives."""
        return np.flatnonzero(self.labels == 0)


class NegativeSampler(Protocol):
    """Draws ``n`` negatives for a query."""

    name: str

    def sample(self, query: QueryList, n: int, rng: np.random.Generator) -> list[Negative]: ...


def _from_list(query: QueryList, rows: np.ndarray) -> list[Negative]:
    return [Negative(str(query.passage_ids[i]), float(query.confidences[i]), float(query.bm25[i])) for i in rows]


class UniformSampler:
    """Uniform over the list's labelled negatives."""

    name = "uniform"

    def sample(self, query: QueryList, n: int, rng: np.random.Generator) -> list[Negative]:
        pool = query.negatives()
        return _from_list(query, rng.choice(pool, size=n, replace=len(pool) < n)) if len(pool) else []


class BM25Sampler:
    """NS_BM25: uniform over the ``top_k`` labelled negatives of highest BM25 score (hard negatives)."""

    name = "bm25"

    def __init__(self, top_k: int = 5) -> None:
        self.top_k = top_k

    def sample(self, query: QueryList, n: int, rng: np.random.Generator) -> list[Negative]:
        pool = query.negatives()
        if not len(pool):
            return []
        pool = pool[np.argsort(-query.bm25[pool], kind="stable")[: self.top_k]]
        return _from_list(query, rng.choice(pool, size=n, replace=len(pool) < n))


class RandomSampler:
    """NS_random: uniform over the whole collection, never a known positive or unlabelled pair of the query."""

    name = "random"

    def __init__(self, collection: Sequence[str]) -> None:
        self.collection = np.asarray(collection, dtype=object)

    def sample(self, query: QueryList, n: int, rng: np.random.Generator) -> list[Negative]:
        in_list = {str(p): i for i, p in enumerate(query.passage_ids)}
        blocked = {str(p) for p in query.passage_ids[query.labels != 0]}  # positives and unlabelled pairs
        out: list[Negative] = []
        while len(out) < n and len(self.collection) > len(blocked):
            pid = str(self.collection[rng.integers(len(self.collection))])
            if pid in blocked:
                continue
            i = in_list.get(pid)
            out.append(Negative(pid, 1.0, 0.0) if i is None else _from_list(query, np.array([i]))[0])
        return out


class MixedSampler:
    """Draws each negative from one of several samplers with fixed probabilities."""

    name = "mixed"

    def __init__(self, samplers: Sequence[NegativeSampler], probabilities: Sequence[float]) -> None:
        if len(samplers) != len(probabilities) or not np.isclose(sum(probabilities), 1.0):
            raise ValueError("mixed sampler needs one probability per sampler, summing to 1")
        self.samplers, self.probabilities = list(samplers), np.asarray(probabilities, dtype=float)

    def sample(self, query: QueryList, n: int, rng: np.random.Generator) -> list[Negative]:
        picks = rng.choice(len(self.samplers), size=n, p=self.probabilities)
        return [neg for k in picks for neg in self.samplers[k].sample(query, 1, rng)]


class SwitchSampler:
    """Delegates to the sampler named by ``active``; a policy switches it between batches."""

    name = "switch"

    def __init__(self, samplers: dict[str, NegativeSampler], active: str) -> None:
        self.samplers, self.active = samplers, active

    def sample(self, query: QueryList, n: int, rng: np.random.Generator) -> list[Negative]:
        return self.samplers[self.active].sample(query, n, rng)


def make_sampler(cfg: TrainConfig, collection: Sequence[str]) -> NegativeSampler:
    """The configured negative sampler (``policy``/``random_policy``: a switch a policy callback drives) over
    ``collection``, the passage ids the random sampler draws from."""
    bm25, random_ = BM25Sampler(cfg.bm25_top_k), RandomSampler(collection)
    if cfg.sampler == "bm25":
        return bm25
    if cfg.sampler == "random":
        return random_
    if cfg.sampler == "uniform":
        return UniformSampler()
    if cfg.sampler == "mixed":
        return MixedSampler([bm25, random_], cfg.mixed_probabilities)
    return SwitchSampler({"bm25": bm25, "random": random_}, active="bm25")
