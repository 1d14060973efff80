"""When judging a few queries would help, said from the label model's own fit (no gold read): two views it
cannot tell apart (:func:`judging_advice`), an LF it all but leaves out that disagrees with it or leads the judged
sample (:func:`overlooked`); and what a judged sample estimated of each candidate combination
(:func:`judged_estimates`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.analysis import first_agreement
from weakrank.fusion_state import FusionState
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.label_models.labels_file import read_labels_info
from weakrank.labeling import lf_names, score_matrix
from weakrank.lists import informative_rows

TRUSTED = 0.5  # the factor model reads a view loaded at least this much as a good witness of relevance …
ALIKE = 0.1  # … and two whose loadings are this close as equally good …
DISAGREE = 0.3  # … while they put different candidates first on at least this share of the lists


def judging_advice(views: pd.DataFrame) -> str | None:
    """One line when the fusion label model cannot tell views apart (:func:`fusion_views`' table), else None.

    The rule: two views that the factor model loads at least :data:`TRUSTED` and within :data:`ALIKE` of each
    other (it trusts them alike, so it weighs them about equally) put different candidates first on at least
    :data:`DISAGREE` of the lists. On those lists the fused first is a compromise between two views that
    nothing without labels tells apart; a few judged queries do (judged mode chooses the weighting on them).
    Of several such pairs, the one with the most weight is named.
    """
    trusted = views[views["loading"] >= TRUSTED]
    pairs = [(a, b) for i, a in enumerate(trusted.index) for b in trusted.index[i + 1:]
             if abs(trusted.loc[a, "loading"] - trusted.loc[b, "loading"]) <= ALIKE
             and 1 - views.loc[a, b] >= DISAGREE]
    if not pairs:
        return None
    a, b = max(pairs, key=lambda pair: views.loc[list(pair), "weight"].sum())
    return (f"the label model cannot tell {a} and {b} apart: it loads them alike ({views.loc[a, 'loading']:.2f}, "
            f"{views.loc[b, 'loading']:.2f}), yet they put different candidates first on {1 - views.loc[a, b]:.0%} "
            f"of the lists both rank ({views.attrs['lists']} lists), and nothing without labels says which is right there")


NEAR_ZERO = 0.05  # an LF with less of the fused score's weight than this is all but left out of the labels …
MOST = 0.5  # … and worth a look where its first candidate differs from the fused ranking's on more lists than this


def overlooked(votes: pd.DataFrame, model: ScoreFusionModel, estimates: Mapping[str, float] | None = None
               ) -> str | None:
    """One line when an LF weighted near zero by the fusion ``model`` (fitted on ``votes``: its share of the fused
    score, a merged view's shared by its LFs, below :data:`NEAR_ZERO`) puts a different candidate first than the
    fused ranking on most of the lists it ranks (more than :data:`MOST`), or leads the judged sample (``estimates``:
    each candidate combination's estimated MAP, ``<lf> alone`` for one LF's; :class:`~weakrank.combinations.
    ChoiceRecord`); else None. Where it is right, the labels, and the ranker trained on them, miss it."""
    names, groups = lf_names(votes), votes["query_id"].to_numpy()
    scores = score_matrix(votes)
    state = model.fitted()
    weights = np.asarray(state.weights)
    share = np.zeros(len(names))
    for cluster, weight in zip(state.clusters, weights / weights.sum()):
        share[list(cluster)] = weight / len(cluster)
    informative = informative_rows(scores, groups)
    fused = model.scaled_views(scores, groups) @ weights
    agreement = first_agreement(np.column_stack([scores, fused]),
                                np.column_stack([informative, informative.any(axis=1)]), groups)[:-1, -1]
    leader = max(estimates, key=lambda name: estimates[name]) if estimates else ""
    found = []
    for i, name in enumerate(names):
        differs, leads = 1 - agreement[i], leader == f"{name} alone"
        if share[i] < NEAR_ZERO and (differs > MOST or leads):
            found.append(f"{name} has {share[i]:.1%} of the label model's weight, yet its first candidate differs "
                         f"from the fused ranking's on {differs:.0%} of the lists it ranks"
                         + (f" and it leads the judged sample (estimated MAP {estimates[leader]:.3f})" if leads else ""))
    if not found:
        return None
    return ("; ".join(found) + ": where it is right, the labels and the ranker trained on them miss it, and nothing "
            "without judgments says which is")


def judged_estimates(params: object) -> dict[str, float] | None:
    """Each candidate's MAP estimated from the judged sample recorded in a label model's fitted ``params`` (a labels
    record's), or None where no judged sample chose them."""
    judged = params.judged if isinstance(params, FusionState) else None
    return dict(judged.estimates) if judged else None


def judging_notes(labels: Path, views: pd.DataFrame, votes: pd.DataFrame,
                  model: ScoreFusionModel) -> tuple[str | None, str | None]:
    """What the analysis of a run says of judging, from the fusion ``model`` fitted on ``votes`` and its ``views``
    (:func:`~weakrank.analysis.fusion_views`): :func:`judging_advice`, unless the labels of ``labels`` (a labels
    file) already came from judged queries, and :func:`overlooked`, with the estimates of the judged sample that
    chose them where one did."""
    info = read_labels_info(labels) if labels.exists() else None
    judged = info is not None and info.judged_queries
    return (None if judged else judging_advice(views)), overlooked(votes, model, judged_estimates(info and info.params))
