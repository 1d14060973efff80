"""What the fusion label model's own fit says it may have wrong, no gold read: two views it cannot tell apart
(:func:`undecided_views`) and an LF it all but leaves out where agreement says it is the best witness
(:func:`overlooked`). ``analyze`` and ``aggregate`` say them, with the commands that judge a few queries: those tell
who is right (judged mode moves the LFs' priors on them)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from weakrank.analysis import first_agreement
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names, score_matrix
from weakrank.lists import informative_rows

TRUSTED = 0.5  # the factor model reads a view loaded at least this much as a good witness of relevance …
ALIKE = 0.1  # … and two whose loadings are this close as equally good …
DISAGREE = 0.3  # … while they put different candidates first on at least this share of the lists


def undecided_views(views: pd.DataFrame) -> str | None:
    """One line when the fusion label model cannot tell views apart (:func:`fusion_views`' table), else None.

    The rule: two views that the fit (agreement weighed against their declared priors) and agreement alone (the
    ``agreement`` column) both load at least :data:`TRUSTED` and within :data:`ALIKE` of each other (the model
    trusts them, and neither the evidence nor a prior tells them apart), put different candidates first on at least
    :data:`DISAGREE` of the lists. On those lists the fused first is a compromise between two views that
    nothing without labels tells apart; a few judged queries do (judged mode moves their priors on them).
    Of several such pairs, the one with the most weight is named.
    """
    trusted = views[(views["loading"] >= TRUSTED) & (views["agreement"] >= TRUSTED)]
    pairs = [(a, b) for i, a in enumerate(trusted.index) for b in trusted.index[i + 1:]
             if abs(trusted.loc[a, "agreement"] - trusted.loc[b, "agreement"]) <= ALIKE
             and abs(trusted.loc[a, "loading"] - trusted.loc[b, "loading"]) <= ALIKE
             and 1 - views.loc[a, b] >= DISAGREE]
    if not pairs:
        return None
    a, b = max(pairs, key=lambda pair: views.loc[list(pair), "weight"].sum())
    return (f"the label model cannot tell {a} and {b} apart: it loads them alike ({views.loc[a, 'loading']:.2f}, "
            f"{views.loc[b, 'loading']:.2f}; by agreement alone {views.loc[a, 'agreement']:.2f}, "
            f"{views.loc[b, 'agreement']:.2f}), yet they put different candidates first on {1 - views.loc[a, b]:.0%} "
            f"of the lists both rank ({views.attrs['lists']} lists), and nothing without labels says which is right there")


NEAR_ZERO = 0.05  # an LF with less of the fused score's weight than this is all but left out of the labels …
MOST = 0.5  # … and worth a word where its first candidate differs from the fused ranking's on more lists than this
TOP_PRIOR = 0.95  # the highest prior the warning offers (a declared prior lies in (0, 1))


def overlooked(votes: pd.DataFrame, model: ScoreFusionModel) -> str | None:
    """One line when the evidence is against the weighting of an LF that the fusion ``model`` (fitted on ``votes``)
    all but leaves out (its share of the fused score, a merged view's shared by its LFs, below :data:`NEAR_ZERO`)
    and whose first candidate differs from the fused ranking's on most of the lists it ranks (more than
    :data:`MOST`); else None. The evidence: agreement alone loads it above every other LF by :data:`ALIKE` or more
    and its declared prior decided its loading. An LF that agreement itself leaves out, or
    that its prior keeps low where agreement does not say it is the best witness, is the expected state and says
    nothing (measured: the old rule, weight and disagreement alone, fired on every collection). Of several, the one
    with the clearest case is named."""
    names, groups = lf_names(votes), votes["query_id"].to_numpy()
    scores = score_matrix(votes)
    state = model.fitted()
    weights = np.asarray(state.weights)
    share = np.zeros(len(names))
    for cluster, weight in zip(state.clusters, weights / weights.sum()):
        share[list(cluster)] = weight / len(cluster)
    informative = informative_rows(scores, groups)
    fused = model.scaled_views(scores, groups) @ weights
    differs = 1 - first_agreement(np.column_stack([scores, fused]),
                                  np.column_stack([informative, informative.any(axis=1)]), groups)[:-1, -1]
    left_out = {name: i for i, name in enumerate(names) if share[i] < NEAR_ZERO and differs[i] > MOST}
    return _overridden(votes, model, {name: (share[i], differs[i]) for name, i in left_out.items()})


def _overridden(votes: pd.DataFrame, model: ScoreFusionModel, left_out: Mapping[str, tuple[float, float]]
                ) -> str | None:
    """:func:`overlooked`'s line for the LF of ``left_out`` (name → its share of the weight, the share of lists
    where its first candidate differs) that agreement alone loads most clearly above every other LF while its prior
    decided its loading, with what declaring the prior agreement gives it would change (with two families,
    lexical and semantic, agreement fixes only the product of their loadings, so a weaker pull changes nothing: the
    prior's value decides); None where there is none."""
    fitted = {w.lf: w for w in model.fitted().lfs}
    cases = []
    for name in left_out:
        lf = fitted.get(name)
        others = [w for w in fitted.values() if w.lf != name]
        if lf is None or lf.prior is None or not lf.prior_decided or not others:
            continue
        rival = max(others, key=lambda w: w.agreement)
        if lf.agreement - rival.agreement >= ALIKE:
            cases.append((lf.agreement - rival.agreement, lf, rival))
    if not cases:
        return None
    _, lf, rival = max(cases, key=lambda case: case[0])
    weight, differs = left_out[lf.lf]
    offered = min(round(lf.agreement, 2), TOP_PRIOR)
    priors = {**model.priors, lf.lf: {**model.priors[lf.lf], "prior": offered}}
    refitted = ScoreFusionModel(**{**model.get_params(), "priors": priors}).fit_table(votes)
    scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
    both = np.column_stack([model.fused(scores, groups), refitted.fused(scores, groups)])
    changed = 1 - first_agreement(both, np.ones_like(both, dtype=bool), groups)[0, 1]
    gets = sum(w.weight for w in refitted.fitted().lfs if w.lf == lf.lf)
    return (f"{lf.lf} has {weight:.1%} of the label model's weight, yet agreement alone loads it {lf.agreement:.2f}, "
            f"above every other LF (next {rival.lf}, {rival.agreement:.2f}), and its first candidate differs from the "
            f"fused ranking's on {differs:.0%} of the lists it ranks: its prior ({lf.prior:.2f}) decided its loading; "
            f"`[label.options.{lf.lf}] prior = {offered:g}` (what agreement says) gives it {gets:.0%} of the weight "
            f"and changes the fused first candidate on {changed:.0%} of the lists")
