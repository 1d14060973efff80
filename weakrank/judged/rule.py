"""The rule: keep the default (the label-free weighting, or share) unless the judged sample shows another candidate
clearly ahead. Its constants were fitted by simulation on train splits only (``benchmarks/bench_judged_rule.py``;
how: docs/judged-design.md)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from scipy.stats import norm, t

from weakrank.combinations import LABEL_FREE
from weakrank.evaluation.sampled_map import Estimate
from weakrank.records import ChoiceRecord

MARGIN = 2.5  # standard errors of the paired lead the best candidate needs
MIN_LEAD = 0.05  # the least estimated MAP lead worth a change
MIN_QUERIES = 3  # judged queries with a relevant passage below which nothing changes


@dataclass(frozen=True)
class Rule:
    """The rule's constants (docs/judged-design.md)."""

    margin: float = MARGIN
    min_lead: float = MIN_LEAD
    min_queries: int = MIN_QUERIES


@dataclass(frozen=True)
class Choice:
    """What the judged sample chose, and why: ``name`` (the candidate used), ``best`` (the one with the highest
    estimate), its estimated ``lead`` over the ``baseline`` (a person calls it ``kept``) in MAP and in standard
    errors (``errors``), over ``queries`` judged queries with a relevant passage; ``estimates``: each candidate's
    estimated MAP."""

    name: str
    best: str
    lead: float
    errors: float
    queries: int
    estimates: dict[str, float]
    rule: Rule = Rule()
    baseline: str = LABEL_FREE
    kept: str = "the label-free weighting"

    def reason(self) -> str:
        """One sentence for a person."""
        if self.queries < self.rule.min_queries:
            return (f"{self.queries} judged queries have a relevant passage, fewer than the {self.rule.min_queries} "
                    f"a change needs: {self.kept} is kept")
        if self.best == self.baseline:
            return f"on {self.queries} judged queries nothing is estimated above {self.kept}: it is kept"
        verdict = ("taken" if self.name == self.best else
                   f"not clearly ahead (it takes {self.rule.min_lead:g} MAP and {self.rule.margin:g} SE): "
                   f"{self.kept} is kept")
        return (f"on {self.queries} judged queries the best is {self.best}, estimated {self.lead:+.3f} MAP over "
                f"{self.kept} ({self.errors:.1f} SE): {verdict}")

    def record(self) -> ChoiceRecord:
        """The choice of a combination as a fusion state keeps it."""
        return ChoiceRecord(self.name, self.best, self.lead, self.errors, self.queries, self.estimates, self.reason(),
                            asdict(self.rule))


def choose(found: Estimate, rule: Rule = Rule(), kept: str = "the label-free weighting") -> Choice:
    """The rule (docs/judged-design.md) over ``found`` (the baseline: ``found.baseline``, called ``kept``)."""
    baseline, estimates = found.baseline, {k: float(v) for k, v in found.map.items()}
    if found.queries < rule.min_queries:
        return Choice(baseline, baseline, 0.0, 0.0, found.queries, estimates, rule, baseline, kept)
    names = list(found.lead.index)
    best = max(names, key=lambda name: (found.lead[name], name == baseline, -names.index(name)))
    lead, errors = float(found.lead[best]), found.errors(best)
    needed = t.ppf(norm.cdf(rule.margin), found.queries - 1)  # margin as a one-sided level, on n − 1 df
    taken = best != baseline and lead >= rule.min_lead and errors > needed
    return Choice(best if taken else baseline, best, lead, errors, found.queries, estimates, rule, baseline, kept)
