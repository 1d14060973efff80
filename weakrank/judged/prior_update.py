"""Judged pairs as evidence about each LF's quality: each LF's quality prior (a Gaussian on its loading) moved by what
it shows beyond the teacher on the judged pairs, and the fusion model (:mod:`weakrank.label_models.family_factor`)
fitted as without judgments, under the posterior. The model and its reasoning: docs/judged-design.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from weakrank.combinations import LABEL_FREE
from weakrank.evaluation.sampled_map import estimate
from weakrank.fusion_state import FusionState
from weakrank.judged.aligned import Judged, judged_totals
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names, score_matrix
from weakrank.lists import informative_rows, standardize_within
from weakrank.records import LFEvidence, PriorUpdateRecord

PRIOR_SD = 0.05  # τ: the prior's spread on a loading; 0.1 and 0.2 lost more often (benchmarks/judged_priors.csv)
MIN_QUERIES = 5  # judged queries with a relevant and a non-relevant passage below which nothing changes (at 2: 6 % of
# wikiqa_bm25's samples of 10 queries lost over 0.01, at 3: 4 %, at 5: none; benchmarks/judged_priors.csv)
LOWEST, HIGHEST = 0.01, 0.99  # a posterior loading is kept inside (0, 1), as a declared prior is
NAME = "judged priors"  # the fit under the updated priors, as the record's estimates name it


@dataclass(frozen=True)
class PriorUpdate:
    """The update (docs/judged-design.md): per LF its :class:`LFEvidence` (``lfs``), the judged ``queries`` that
    counted, the latent gap ``delta`` and the gaps' spread ``spread`` (σ), the pull's new ``strength``, and the fusion
    model's ``priors`` to fit with (its ``priors`` argument: family and posterior mean by LF)."""

    lfs: tuple[LFEvidence, ...]
    queries: int
    delta: float
    spread: float
    strength: float
    priors: Mapping[str, Mapping[str, Any]]

    def reason(self) -> str:
        """One sentence for a person."""
        if self.queries < MIN_QUERIES:
            return (f"{self.queries} judged queries have a relevant and a non-relevant passage, fewer than the "
                    f"{MIN_QUERIES} an update needs: the declared priors are kept")
        if self.delta <= 0:
            return (f"on {self.queries} judged queries no LF ranks the relevant passages higher: the declared priors "
                    "are kept")
        moved = ", ".join(f"{e.lf} {e.prior:.2f} → {e.posterior:.2f}" for e in self.lfs)
        return f"on {self.queries} judged queries the LFs' quality priors moved: {moved}"

    def record(self, estimates: Mapping[str, float]) -> PriorUpdateRecord:
        """The update as a fusion state keeps it (``estimates``: the judged estimate of MAP without it and, where it
        moved the priors, with it)."""
        return PriorUpdateRecord(self.lfs, dict(estimates), self.queries, self.reason(),
                                 {"prior_sd": PRIOR_SD, "min_queries": MIN_QUERIES})


def judged_gaps(z: np.ndarray, informative: np.ndarray, groups: np.ndarray, judged: Judged) -> pd.DataFrame:
    """Per judged query with a relevant and a non-relevant judged passage (rows), each column's gap of the
    within-list scores ``z`` (NaN where ``informative`` says the column does not rank the list)."""
    seen = np.isfinite(judged.gold)
    gaps = {}
    for query in pd.unique(np.asarray(groups)[seen]):
        where = np.flatnonzero((groups == query) & seen)
        relevant = judged.gold[where] > 0
        if relevant.all() or not relevant.any():
            continue
        gap = z[where][relevant].mean(axis=0) - z[where][~relevant].mean(axis=0)
        gaps[query] = np.where(informative[where[0]], gap, np.nan)
    return pd.DataFrame.from_dict(gaps, orient="index", columns=range(z.shape[1]))


def fitted_loadings(state: FusionState, n_lfs: int) -> np.ndarray:
    """Each LF's loading in a fitted state (its cluster's; NaN for an LF in none)."""
    loadings = np.full(n_lfs, np.nan)
    for cluster, loading in zip(state.clusters, state.loadings):
        loadings[list(cluster)] = loading
    return loadings


def update_priors(scores: np.ndarray, groups: np.ndarray, names: Sequence[str], judged: Judged, state: FusionState,
                  priors: Mapping[str, Mapping[str, Any]] | None, strength: float,
                  prior_sd: float = PRIOR_SD) -> PriorUpdate:
    """The posterior (docs/judged-design.md) from the judged pairs of ``scores`` (rows × LFs ``names``, ``groups`` each
    row's query) under ``priors`` (the fusion model's, by LF name; None: none declared) and ``strength`` (its pull),
    ``state`` the fit without judgments (the teacher the LFs are measured beyond, and the prior of an LF that
    declares none: its loading there)."""
    scores, groups = np.asarray(scores, dtype=np.float64), np.asarray(groups)
    declared = {name: dict((priors or {}).get(name) or {}) for name in names}
    fitted = fitted_loadings(state, len(names))
    mu = np.array([declared[n]["prior"] if declared[n].get("prior") is not None else fitted[k]
                   for k, n in enumerate(names)], dtype=np.float64)
    z, informative = standardize_within(scores, groups), informative_rows(scores, groups)
    teacher = standardize_within(state.fused(scores, groups).reshape(-1, 1), groups)
    beta = (z * teacher).sum(axis=0) / max(float((teacher**2).sum()), 1e-12)
    residual = z - teacher * beta
    m = len(names)
    table = judged_gaps(np.column_stack([residual, z, teacher]), np.column_stack([informative, informative, np.ones(
        (len(z), 1), bool)]), groups, judged)  # per query: each LF's residual gap, its own gap, the teacher's gap
    ranked = np.isfinite(mu)
    values, own = table.to_numpy(dtype=np.float64)[:, :m], table.to_numpy(dtype=np.float64)[:, m:]
    counted = np.isfinite(values) & ranked
    n, queries = counted.sum(axis=0), len(table)
    w = judged.weights.reindex(table.index).fillna(1.0).to_numpy(float) if queries else np.ones(0)
    w = w / w.mean() if queries else w
    total = w @ np.where(counted, values, 0.0)  # Σ_q w_q h_kq per LF
    mean = np.divide(total, w @ counted, out=np.zeros(len(names)), where=n > 0)
    spare = (n - 1).clip(0).sum()
    delta = float(np.nanmax(w @ np.nan_to_num(own) / w.sum())) if queries else 0.0  # the largest mean gap
    if queries < MIN_QUERIES or spare == 0 or delta <= 0:
        lfs = tuple(LFEvidence(names[k], float(mu[k]), float(mean[k]), int(n[k]), float(mu[k]), 1.0)
                    for k in np.flatnonzero(ranked))
        return PriorUpdate(lfs, queries, 0.0, float("nan"), strength, priors or {})
    spread = float(np.sqrt(max((np.where(counted, values - mean, 0.0) ** 2).sum() / spare, 1e-12)))
    precision = 1.0 / prior_sd**2 + n * delta**2 / spread**2
    shift = delta * total / spread**2 / precision
    posterior = np.clip(mu + shift, LOWEST, HIGHEST)
    concentration = precision * prior_sd**2
    lfs = tuple(LFEvidence(names[k], float(mu[k]), float(mean[k]), int(n[k]), float(posterior[k]),
                           float(concentration[k])) for k in np.flatnonzero(ranked))
    new_priors = {e.lf: {**declared[e.lf], "prior": e.posterior} for e in lfs}
    return PriorUpdate(lfs, queries, delta, spread, float(strength * concentration[ranked].mean()), new_priors)


class PriorSelector:
    """``fit(votes, judged)`` fits a copy of ``base`` (a :class:`ScoreFusionModel`, left as it is) without gold, updates
    its LFs' quality priors by the judged pairs (:func:`update_priors`: ``update_``) and
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
