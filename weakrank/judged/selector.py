"""Judged choices as meta-estimators (scikit-learn's ``GridSearchCV`` shape): a selector holds its base, ``fit``
estimates each candidate's MAP over the pool from the judged sample (:mod:`.estimate`), lets the rule choose
(:mod:`.rule`) and returns itself with what was chosen (``choice_``) and a new fitted thing; the base is never
rewritten.

- :class:`CombinationSelector`: how the fusion label model combines the LFs (its new state, ``state_``);
- :class:`StudentWeightSelector`: the student's weight in the shipped ranker (``weight_``, its record ``record_``);
- :class:`PriorSelector`: not a choice but an update: the judged pairs move each LF's quality prior
  (:mod:`.prior_update`) and the fusion model is fitted under the posterior (``update_``, ``state_``, ``model_``).

A new judged decision is one more selector here: its candidates' scores of the judged pairs, their totals
(:func:`~weakrank.judged.estimate.query_totals`), the estimate and the rule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

import numpy as np
import pandas as pd

from weakrank.combinations import LABEL_FREE
from weakrank.fusion_state import ChoiceRecord, FusionState
from weakrank.judged.aligned import Judged
from weakrank.judged.design import candidate_scores
from weakrank.judged.estimate import Totals, estimate, query_totals, sample_estimate
from weakrank.judged.prior_update import NAME, PRIOR_SD, PriorUpdate, update_priors
from weakrank.judged.rule import Choice, Rule, choose
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names, score_matrix

EVEN = 0.5
WEIGHTS = (EVEN, 0.0, 0.25, 0.75, 1.0)  # the student's weight; the even average first, kept unless beaten


def judged_totals(votes: pd.DataFrame, scored: pd.DataFrame, judged: Judged) -> Totals:
    """Each candidate's estimated totals (columns of ``scored``; :func:`~weakrank.judged.estimate.query_totals`) on
    each judged query."""
    rows = votes["query_id"].isin(set(judged.queries)).to_numpy()
    return query_totals(scored[rows].reset_index(drop=True), votes["query_id"].to_numpy()[rows], judged.gold[rows],
                     judged.inclusion[rows])


class CombinationSelector:
    """``fit(votes, judged)`` fits a copy of ``base`` (a :class:`ScoreFusionModel`, left as it is) without gold,
    then the judged sample chooses how it combines the LFs: ``choice_`` (a :class:`~weakrank.judged.rule.Choice`),
    ``state_`` (a new :class:`~weakrank.fusion_state.FusionState` that scores with it and records it) and
    ``model_`` (a fusion model fitted to ``state_``)."""

    def __init__(self, base: ScoreFusionModel, rule: Rule = Rule()) -> None:
        self.base, self.rule = base, rule
        self.choice_: Choice | None = None
        self.state_: FusionState | None = None
        self.model_: ScoreFusionModel | None = None

    def fit(self, votes: pd.DataFrame, judged: Judged) -> CombinationSelector:
        """Fit and choose (class doc)."""
        fitted = type(self.base)(**self.base.get_params()).fit_table(votes)
        found, scored = candidate_scores(votes, fitted)
        totals = judged_totals(votes, scored, judged)
        self.choice_ = choose(estimate(totals, judged.weights, LABEL_FREE), self.rule)
        name = self.choice_.name
        self.state_ = fitted.fitted().using(name, None if name == LABEL_FREE else found[name], self.choice_.record())
        self.model_ = ScoreFusionModel.from_state(self.state_)
        return self


class PriorSelector:
    """``fit(votes, judged)`` fits a copy of ``base`` (a :class:`ScoreFusionModel`, left as it is) without gold, updates
    its LFs' quality priors by the judged pairs (:func:`~weakrank.judged.prior_update.update_priors`: ``update_``) and
    fits another copy under the posterior: ``state_`` (a new :class:`~weakrank.fusion_state.FusionState` that records
    the update, with the judged estimate of MAP with and without it) and ``model_``. Without judged queries
    ``state_`` is the fit without judgments; where too few count (or none shows an LF ranking its judged relevant
    passages higher), it is that fit, recording why nothing moved."""

    def __init__(self, base: ScoreFusionModel, prior_sd: float = PRIOR_SD) -> None:
        self.base, self.prior_sd = base, prior_sd
        self.update_: PriorUpdate | None = None
        self.state_: FusionState | None = None
        self.model_: ScoreFusionModel | None = None

    def fit(self, votes: pd.DataFrame, judged: Judged) -> PriorSelector:
        """Fit, update, refit (class doc)."""
        params = self.base.get_params()
        fitted = type(self.base)(**params).fit_table(votes)
        scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
        self.update_ = update_priors(scores, groups, lf_names(votes), judged, fitted.fitted(), params["priors"],
                                     params["prior_strength"], self.prior_sd)
        model = fitted
        if self.update_.delta > 0:
            model = type(self.base)(**{**params, "priors": self.update_.priors,
                                       "prior_strength": self.update_.strength}).fit_table(votes)
        self.state_ = fitted.fitted()
        if judged.queries:
            teachers = {LABEL_FREE: fitted} if model is fitted else {LABEL_FREE: fitted, NAME: model}
            scored = pd.DataFrame({name: m.fused(scores, groups) for name, m in teachers.items()})
            found = estimate(judged_totals(votes, scored, judged), judged.weights, LABEL_FREE)
            self.state_ = replace(model.fitted(), judged=self.update_.record(found.map.to_dict()))
        self.model_ = ScoreFusionModel.from_state(self.state_)
        return self


class Blends(Protocol):
    """The base of :class:`StudentWeightSelector`: a shipped ranker (:class:`~weakrank.ranker.fused.FusedRanker`)
    that scores pairs at each student weight."""

    def blends(self, pairs: pd.DataFrame, weights: Sequence[float]) -> np.ndarray:
        """Scores of the rows of ``pairs`` at each of ``weights``, a column each."""


def weight_name(weight: float) -> str:
    """How a student weight is named in a choice's reason and its MAP table."""
    return f"student weight {weight:g}"


class StudentWeightSelector:
    """``fit(pairs)`` chooses the student's weight in ``base`` (the shipped ranker, left as it is) on judged queries
    the student never trained on: each weight of ``weights`` (the first kept unless another is clearly ahead) is
    graded by its MAP estimated from the judged sample, and the rule chooses. Then ``weight_``, ``choice_`` and
    ``record_`` (the choice as a shipped model keeps it, with each weight's estimated MAP and the judged queries).

    ``pairs``: ``query_id, passage_id, query, passage, judged`` (the whole lists of the judged queries; ``judged``
    1/0 or NaN), with ``judged_inclusion`` and ``judged_weight`` (the sample's design) where the judgments came with
    one.

    The judged queries the student has not trained on: judged mode holds them out of the first ``judged_after`` of
    training's steps and saves the student then (:func:`~weakrank.judged.evaluator.unseen_pairs`); each pair of the
    sample is weighted by the inverse of its inclusion probability (:mod:`.estimate`), and the rule is the one that
    chooses the teacher (:mod:`.rule`). A student graded on queries it was trained on would grade itself (measured:
    its judged AP rises to the student alone, where test MAP is lowest)."""

    def __init__(self, base: Blends, weights: Sequence[float] = WEIGHTS, rule: Rule = Rule()) -> None:
        self.base, self.weights, self.rule = base, tuple(weights), rule
        self.weight_: float | None = None
        self.choice_: Choice | None = None
        self.record_: ChoiceRecord | None = None

    def fit(self, pairs: pd.DataFrame) -> StudentWeightSelector:
        """Grade and choose (class doc)."""
        pairs = pairs.reset_index(drop=True)
        names = [weight_name(w) for w in self.weights]
        scores = pd.DataFrame(self.base.blends(pairs, self.weights), columns=names)
        kept = f"the even average ({names[0]})" if self.weights[0] == EVEN else names[0]
        self.choice_ = choose(sample_estimate(pairs, scores, names[0]), self.rule, kept=kept)
        self.weight_ = self.weights[names.index(self.choice_.name)]
        seen = np.isfinite(pd.to_numeric(pairs["judged"], errors="coerce").to_numpy(float))
        self.record_ = replace(self.choice_.record(), judged_map=self.choice_.estimates,
                               judged_queries=sorted(set(pairs.loc[seen, "query_id"])))
        return self
