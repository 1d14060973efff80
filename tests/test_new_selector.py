"""A new judged decision and a new estimator, added from this file alone (docs/architecture.md, "A judged
decision", "A judged-mode estimator"): a selector needs the candidates' scores of the judged pairs, their totals,
an estimator returning an :class:`Estimate`, the rule and a new :class:`FusionState`; nothing in the library
changes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from weakrank.combinations import LABEL_FREE, Combination, combined
from weakrank.evaluation.sampled_map import Estimate, Totals, estimate
from weakrank.fusion_state import FusionState
from weakrank.judged.aligned import Judged, judged_totals
from weakrank.judged.rule import Choice, choose
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import score_matrix
from weakrank.lists import informative_rows, standardize_within


def mean_of_ratios(totals: Totals, weights: pd.Series | None = None, baseline: str | None = None) -> Estimate:
    """A second estimator: each judged query's AP (its totals' ratio) averaged with equal weight, where
    :func:`estimate` takes the ratio of the summed totals; the lead's error from the per-query differences."""
    ap = totals.found.div(totals.relevant, axis=0).dropna()
    baseline = baseline or ap.columns[0]
    gaps = ap.sub(ap[baseline], axis=0)
    error = lambda frame: frame.std(ddof=1) / np.sqrt(len(frame))  # noqa: E731
    return Estimate(ap.mean(), gaps.mean(), error(gaps), len(ap), baseline, error(ap))


class ShrinkageSelector:
    """The new decision: how far the label-free weighting moves towards CombSUM (``steps``: 0 keeps it, 1 is
    CombSUM), chosen on the judged pairs by ``estimator`` and the rule; ``state_`` a new state, the base untouched."""

    def __init__(self, base: ScoreFusionModel, steps=(0.0, 0.5, 1.0), estimator=estimate) -> None:
        self.base, self.steps, self.estimator = base, tuple(steps), estimator
        self.choice_: Choice | None = None
        self.state_: FusionState | None = None

    def fit(self, votes: pd.DataFrame, judged: Judged) -> ShrinkageSelector:
        state = self.base.fitted()
        scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
        z, informative = standardize_within(scores, groups), informative_rows(scores, groups)
        free = state.lf_weights(scores.shape[1])
        even = np.full_like(free, np.abs(free).sum() / len(free))
        found = {LABEL_FREE if s == 0 else f"{s:g} towards CombSUM": Combination("linear", (1 - s) * free + s * even)
                 for s in self.steps}
        scored = pd.DataFrame({name: combined(z, groups, informative, c) for name, c in found.items()})
        self.choice_ = choose(self.estimator(judged_totals(votes, scored, judged), judged.weights, LABEL_FREE))
        name = self.choice_.name
        self.state_ = state.using(name, None if name == LABEL_FREE else found[name], self.choice_.record())
        return self


def distracted(queries: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Lists of 10, one relevant: LF 0 finds it, LFs 1 and 2 share a distractor (the label-free weighting trusts
    them); the votes table and gold."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(queries), 10)
    gold = np.tile(np.eye(10)[0], queries)
    shared = rng.normal(size=len(groups))
    scores = [gold * 2 + rng.normal(size=len(groups)), shared + rng.normal(scale=0.5, size=len(groups)),
              shared + rng.normal(scale=0.5, size=len(groups))]
    votes = pd.DataFrame({"query_id": [f"q{g}" for g in groups], "passage_id": [f"p{i}" for i in range(len(groups))],
                          "split": "train"})
    for k, column in enumerate(scores):
        votes[f"score_lf{k}"], votes[f"vote_lf{k}"] = column, 0
    return votes, gold


def judged_on(votes: pd.DataFrame, gold: np.ndarray, queries: int) -> Judged:
    judged = {f"q{i}" for i in range(queries)}
    rows = votes["query_id"].isin(judged).to_numpy()
    return Judged(np.where(rows, gold, np.nan), np.where(rows, 1.0, np.nan), pd.Series(1.0, index=sorted(judged)))


def test_a_selector_written_outside_the_library_chooses_returns_a_new_state_and_leaves_its_base():
    votes, gold = distracted(200)
    base = ScoreFusionModel().fit_table(votes)
    before = base.state_.to_dict()
    selector = ShrinkageSelector(base).fit(votes, judged_on(votes, gold, 60))
    assert base.state_.to_dict() == before and base.state_.choice == LABEL_FREE  # the base as it was
    assert selector.choice_.name == "1 towards CombSUM" and "taken" in selector.choice_.reason()
    assert selector.state_.choice == "1 towards CombSUM" and selector.state_.record == selector.choice_.record()
    scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
    held_out = ~votes["query_id"].isin({f"q{i}" for i in range(60)}).to_numpy()  # queries no judgment saw

    def ap_of(model: ScoreFusionModel) -> float:
        """Mean AP over the held-out lists (one relevant passage each: the reciprocal of its rank)."""
        fused = model.fused(scores, groups)[held_out].reshape(-1, 10)
        relevant = gold[held_out].reshape(-1, 10).argmax(axis=1)
        mine = fused[np.arange(len(fused)), relevant]
        return float(np.mean(1 / (1 + (fused > mine[:, None]).sum(axis=1))))

    assert ap_of(ScoreFusionModel.from_state(selector.state_)) > ap_of(base) + 0.1


def test_a_new_estimator_plugs_into_the_same_selector_and_rule():
    votes, gold = distracted(200, seed=1)
    base = ScoreFusionModel().fit_table(votes)
    judged = judged_on(votes, gold, 60)
    scored = ShrinkageSelector(base, estimator=mean_of_ratios).fit(votes, judged)
    assert scored.choice_.name == ShrinkageSelector(base).fit(votes, judged).choice_.name == "1 towards CombSUM"
    few = ShrinkageSelector(base, estimator=mean_of_ratios).fit(votes, judged_on(votes, gold, 2))
    assert few.choice_.name == LABEL_FREE and "fewer than" in few.choice_.reason()  # the rule's floor holds
