"""Ways to combine the LFs' scores of a query's list into one ranking — what a fitted fusion state scores with
(:mod:`weakrank.fusion_state`), and the candidates a selector chooses among:

- ``label-free``: the fusion model's factor weighting, fitted without gold;
- ``CombSUM``: every LF's standardised score summed;
- ``RRF``: reciprocal-rank fusion (k = 60) of the LFs' rankings;
- ``<lf> alone``: one LF's ranking.
"""

from __future__ import annotations

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


def combined(z: np.ndarray, groups: np.ndarray, informative: np.ndarray, combination: Combination) -> np.ndarray:
    """Each row's score under ``combination`` (``z``: the LFs' scores standardised within each group)."""
    if combination.kind == "rrf":
        return reciprocal_ranks(z, groups, informative) @ combination.weights
    return z @ combination.weights
