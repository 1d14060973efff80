"""The judged choice of a combination, as a meta-estimator over the fusion label model (scikit-learn's shape):
:class:`CombinationSelector` fits the fusion model without gold, estimates every candidate combination's MAP over
the pool from the judged sample (:mod:`.estimate`), lets the rule choose (:mod:`.rule`) and has the fitted model
:meth:`~weakrank.label_models.fusion.ScoreFusionModel.use` the choice."""

from __future__ import annotations

import pandas as pd

from weakrank.combinations import LABEL_FREE
from weakrank.judged.design import candidate_scores
from weakrank.judged.estimate import Totals, estimate, query_totals
from weakrank.judged.judgments import Judged
from weakrank.judged.rule import Choice, Rule, choose
from weakrank.label_models.fusion import ScoreFusionModel


def judged_totals(votes: pd.DataFrame, scored: pd.DataFrame, judged: Judged) -> Totals:
    """Each candidate's estimated totals (columns of ``scored``; :func:`~weakrank.judged.estimate.query_totals`) on
    each judged query."""
    rows = votes["query_id"].isin(set(judged.queries)).to_numpy()
    return query_totals(scored[rows].reset_index(drop=True), votes["query_id"].to_numpy()[rows], judged.gold[rows],
                     judged.inclusion[rows])


class CombinationSelector:
    """``fit(votes, judged)`` fits ``model`` (a :class:`ScoreFusionModel`) without gold, then the judged sample
    chooses how it combines the LFs (``choice_``, a :class:`~weakrank.judged.rule.Choice`; ``model`` then scores
    with it)."""

    def __init__(self, model: ScoreFusionModel, rule: Rule = Rule()) -> None:
        self.model, self.rule = model, rule
        self.choice_: Choice | None = None

    def fit(self, votes: pd.DataFrame, judged: Judged) -> CombinationSelector:
        """Fit and choose (class doc)."""
        self.model.fit_table(votes)
        found, scored = candidate_scores(votes, self.model)
        totals = judged_totals(votes, scored, judged)
        self.choice_ = choose(estimate(totals, judged.weights, LABEL_FREE), self.rule)
        name = self.choice_.name
        self.model.use(name, None if name == LABEL_FREE else found[name], self.choice_.record())
        return self



