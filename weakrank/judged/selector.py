"""Judged choices as meta-estimators (scikit-learn's ``GridSearchCV`` shape): a selector holds its base, ``fit``
estimates each candidate's MAP over the pool from the judged sample (:mod:`.estimate`), lets the rule choose
(:mod:`.rule`) and returns itself with what was chosen (``choice_``) and a new fitted thing; the base is never
rewritten.

- :class:`~weakrank.judged.student_weight.StudentWeightSelector`, the same shape after training (in its own module,
  which the train stage calls once): the student's weight in the shipped ranker (``weight_``, its record ``record_``);
- :class:`PriorSelector`: not a choice but an update: the judged pairs move each LF's quality prior
  (:mod:`.prior_update`) and the fusion model is fitted under the posterior (``update_``, ``state_``, ``model_``).

A new judged decision is one more selector here: its candidates' scores of the judged pairs, their totals
(:func:`judged_totals`), the estimate and the rule, and a new state (:meth:`~weakrank.fusion_state.FusionState.using`
for a combination of the LFs; choosing one among eight served ``aggregate --judgments`` until judgments moved the
priors instead, and lives on in ``benchmarks/bench_judgments.py``, which compares the two)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from weakrank.combinations import LABEL_FREE
from weakrank.fusion_state import FusionState
from weakrank.judged.aligned import Judged
from weakrank.judged.estimate import Totals, estimate, query_totals
from weakrank.judged.prior_update import NAME, PRIOR_SD, PriorUpdate, update_priors
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names, score_matrix


def judged_totals(votes: pd.DataFrame, scored: pd.DataFrame, judged: Judged) -> Totals:
    """Each candidate's estimated totals (columns of ``scored``; :func:`~weakrank.judged.estimate.query_totals`) on
    each judged query."""
    rows = votes["query_id"].isin(set(judged.queries)).to_numpy()
    return query_totals(scored[rows].reset_index(drop=True), votes["query_id"].to_numpy()[rows], judged.gold[rows],
                     judged.inclusion[rows])


class PriorSelector:
    """``fit(votes, judged)`` fits a copy of ``base`` (a :class:`ScoreFusionModel`, left as it is) without gold, updates
    its LFs' quality priors by the judged pairs (:func:`~weakrank.judged.prior_update.update_priors`: ``update_``) and
    fits another copy under the posterior: ``state_`` (a new :class:`~weakrank.fusion_state.FusionState` that records
    the update, with the judged estimate of MAP with and without it) and ``model_``; ``unjudged_`` is the first fit.
    Without judged queries ``state_`` is the fit without judgments; where too few count (or none shows an LF ranking
    its judged relevant passages higher), it is that fit, recording why nothing moved."""

    def __init__(self, base: ScoreFusionModel, prior_sd: float = PRIOR_SD) -> None:
        self.base, self.prior_sd = base, prior_sd
        self.update_: PriorUpdate | None = None
        self.state_: FusionState | None = None
        self.model_: ScoreFusionModel | None = None
        self.unjudged_: ScoreFusionModel | None = None

    def fit(self, votes: pd.DataFrame, judged: Judged) -> PriorSelector:
        """Fit, update, refit (class doc)."""
        params = self.base.get_params()
        fitted = self.unjudged_ = type(self.base)(**params).fit_table(votes)
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
            self.state_ = replace(model.fitted(), record=self.update_.record(found.map.to_dict()))
        self.model_ = ScoreFusionModel.from_state(self.state_)
        return self
