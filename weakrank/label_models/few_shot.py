"""Few-shot mode: a handful of judged queries choose how the LFs' scores are combined.

The candidates, each a way to score a query's list from the LFs' scores standardised within it:

- ``label-free``: the fusion model's factor weighting, fitted without gold;
- ``CombSUM``: every LF's standardised score summed;
- ``RRF``: reciprocal-rank fusion (k = 60) of the LFs' rankings;
- ``<lf> alone``: one LF's ranking.

Each candidate's AP is taken on every judged query over its judged candidates only (unjudged ones are left out of
the list: a condensed list, so a judging file that asks about a few passages per query is enough). The rule
(:func:`choose`) keeps the label-free weighting unless one candidate beats it clearly — on at least
:data:`MIN_QUERIES` judged queries with a relevant passage, its mean AP lead over the label-free one at least
:data:`MIN_LEAD` and beyond ``margin`` standard errors of their paired difference (as a t statistic: the same
one-sided level as ``margin`` under a normal, on n − 1 degrees of freedom) — and then takes that candidate alone:
averaging a clear winner with the weightings it beat gives back most of its lead, and a lead within the noise of a
few queries, or one too small to matter, is not worth the risk of choosing worse than no judgment at all (measured:
on SemEval, CombSUM led the label-free weighting by 0.012 on 9 judged queries, 1.5 SE, and was 0.036 below it on the
test queries). The constants were chosen on the four shared collections and ``pipelines/wikiqa_bm25.toml``
(``benchmarks/bench_few_shot_rule.py``, docs/experiments.md): the least that kept ``select``'s sets from ever choosing
below the label-free weighting there. :data:`MIN_QUERIES` was 6 until ``wikiqa_bm25``, where BM25 chose the
candidates from a shared pool and only a quarter of the questions have a relevant one: ``select``'s 10 had 5, on
which the embedding LF led by 0.29 judged MAP (1.9 SE) and 0.09 test MAP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from weakrank.lists import average_precisions, reciprocal_ranks

LABEL_FREE = "label-free"
MARGIN = 1.0  # standard errors of the paired AP difference a candidate must lead the label-free weighting by
MIN_LEAD = 0.02  # and the least mean AP lead on the judged queries that is worth a change
MIN_QUERIES = 5  # judged queries with a relevant passage below which nothing changes


@dataclass(frozen=True)
class Combination:
    """A way to combine the LFs: ``linear`` (``weights`` · standardised scores) or ``rrf`` (``weights`` ·
    reciprocal ranks)."""

    kind: str
    weights: np.ndarray


def candidates(label_free: np.ndarray, informative: np.ndarray, names: Sequence[str]) -> dict[str, Combination]:
    """The combinations few-shot mode chooses among: ``label_free`` (per-LF weights of the factor model), CombSUM,
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


def candidate_aps(z: np.ndarray, groups: np.ndarray, informative: np.ndarray, gold: np.ndarray,
                  found: dict[str, Combination]) -> pd.DataFrame:
    """AP on each judged query (rows) of each combination in ``found`` (columns)."""
    return pd.DataFrame({name: average_precisions(combined(z, groups, informative, c), groups, gold)
                         for name, c in found.items()})


@dataclass(frozen=True)
class Choice:
    """What the judged queries chose, and why: the best candidate's lead over the ``baseline`` (``kept``: how a
    person names it) in MAP and in standard errors of the paired difference, over ``queries`` judged queries with a
    relevant passage."""

    name: str
    best: str
    lead: float
    errors: float
    queries: int
    margin: float
    baseline: str = LABEL_FREE
    kept: str = "the label-free weighting"
    min_lead: float = MIN_LEAD
    min_queries: int = MIN_QUERIES

    def reason(self) -> str:
        """One sentence for a person."""
        if self.queries < self.min_queries:
            return (f"{self.queries} judged queries have a relevant passage, fewer than the {self.min_queries} a "
                    f"change needs: {self.kept} is kept")
        if self.best == self.baseline:
            return f"on {self.queries} judged queries nothing beats {self.kept}: it is kept"
        verdict = ("taken" if self.name == self.best else
                   f"not clearly ahead (it takes {self.min_lead:g} MAP and {self.margin:g} SE): {self.kept} is kept")
        return (f"on {self.queries} judged queries the best is {self.best}, {self.lead:+.3f} MAP over {self.kept} "
                f"({self.errors:.1f} SE): {verdict}")


def choose(aps: pd.DataFrame, margin: float = MARGIN, baseline: str = LABEL_FREE,
           kept: str = "the label-free weighting", min_lead: float = MIN_LEAD,
           min_queries: int = MIN_QUERIES) -> Choice:
    """The rule of the module doc over ``aps`` (:func:`candidate_aps`: a column per candidate, a row per judged
    query), ``baseline`` the column kept unless another beats it clearly (``kept``: its name in the reason);
    ``min_lead`` and ``min_queries``: the rule's constants (``benchmarks/bench_few_shot_rule.py`` varies them)."""
    if len(aps) < min_queries:
        return Choice(baseline, baseline, 0.0, 0.0, len(aps), margin, baseline, kept, min_lead, min_queries)
    from scipy.stats import norm, t

    means = aps.mean()
    best = max(aps.columns, key=lambda name: (means[name], name == baseline, -list(aps.columns).index(name)))
    gap = (aps[best] - aps[baseline]).to_numpy()
    error = gap.std(ddof=1) / np.sqrt(len(gap))
    errors = float(gap.mean() / error) if error > 0 else (np.inf if gap.mean() > 0 else 0.0)
    taken = best != baseline and gap.mean() >= min_lead and errors > t.ppf(norm.cdf(margin), len(gap) - 1)
    return Choice(best if taken else baseline, best, float(gap.mean()), errors, len(gap), margin, baseline, kept,
                  min_lead, min_queries)
