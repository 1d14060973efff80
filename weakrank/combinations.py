"""Ways to combine the LFs' scores of a query's list into one ranking — the candidates judged mode chooses among
(:mod:`weakrank.judged`) and what a fitted fusion model or a shipped teacher scores with:

- ``label-free``: the fusion model's factor weighting, fitted without gold;
- ``CombSUM``: every LF's standardised score summed;
- ``RRF``: reciprocal-rank fusion (k = 60) of the LFs' rankings;
- ``<lf> alone``: one LF's ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from weakrank.lists import reciprocal_ranks

LABEL_FREE = "label-free"


@dataclass(frozen=True)
class Combination:
    """A way to combine the LFs: ``linear`` (``weights`` · standardised scores) or ``rrf`` (``weights`` ·
    reciprocal ranks)."""

    kind: str
    weights: np.ndarray


def candidates(label_free: np.ndarray, informative: np.ndarray, names: Sequence[str]) -> dict[str, Combination]:
    """The combinations judged mode chooses among: ``label_free`` (per-LF weights of the factor model), CombSUM,
    RRF, and each LF alone (of the LFs that rank some list: ``informative``, one flag per LF)."""
    speaking = np.asarray(informative, dtype=float)
    found = {LABEL_FREE: Combination("linear", np.asarray(label_free, dtype=float))}
    if speaking.sum() > 1:
        found["CombSUM"] = Combination("linear", speaking)
        found["RRF"] = Combination("rrf", speaking)
    for i, name in enumerate(names):
        if speaking[i]:
            found[f"{name} alone"] = Combination("linear", np.eye(len(names))[i])
    return found


def combined(z: np.ndarray, groups: np.ndarray, informative: np.ndarray, combination: Combination) -> np.ndarray:
    """Each row's score under ``combination`` (``z``: the LFs' scores standardised within each group)."""
    if combination.kind == "rrf":
        return reciprocal_ranks(z, groups, informative) @ combination.weights
    return z @ combination.weights
