"""A label model over the LFs' continuous scores: a one-factor model of per-query standardised scores.

Votes keep only an LF's top-1/bottom-half decisions; this model keeps each LF's whole ranking. Per query,
each LF's scores are standardised (mean 0, std 1 within the list); a list an LF cannot rank (all its scores
tied, e.g. the answer-type LF on a question of no known type) is an abstain: it scores 0 there and is left
out of the correlations, which are taken over the lists both LFs rank (so an LF that often abstains is
judged by where it speaks, not diluted by where it does not). LFs whose standardised scores are near
copies of each other (correlation ≥ ``duplicate_threshold``, e.g. BM25 and TF-IDF) are merged into one
view, their mean, so a duplicated LF gains no weight. A one-factor model then explains the views'
correlations by one latent relevance factor: view k = λ_k · factor + noise of variance ψ_k = 1 − λ_k²,
fitted without gold by principal-axis factoring (the least-squares fit of the off-diagonal correlations,
which unlike maximum likelihood does not drive one view's ψ to 0 — measured on SciFact, where scikit-learn's
``FactorAnalysis`` gave TF-IDF, the weakest LF, the largest weight). An LF that agrees with the others through
the latent factor gets a large loading; the fused score is the factor's posterior mean, Σ_k (λ_k / ψ_k) z_k —
the optimal linear combination under the model, so a strong LF outweighs several weak ones.

P(relevant) is the softmax of the fused score (standardised within the query, divided by
``temperature``) over the query's list: a prior from the list structure, about one relevant candidate per
list, so a pair is labelled relevant only where it stands out from the rest of its list. Its order within a
query is the fused score's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from weakrank.combinations import LABEL_FREE, ChoiceRecord, Combination, fused_scores
from weakrank.errors import WeakrankError
from weakrank.label_models.base import NOTHING_TO_FIT, cannot_stream, with_labels
from weakrank.label_models.family_factor import fit_family_factor
from weakrank.labeling import lf_names, score_matrix
from weakrank.lists import informative_rows, softmax_within, standardize_within

PRIOR_STRENGTH = 0.05  # the centred L2 pull towards the declared priors (family_factor); fitted: bench_teacher.py


def duplicate_clusters(corr: np.ndarray, threshold: float) -> list[list[int]]:
    """Groups of columns linked by correlation ≥ ``threshold`` (single linkage), in column order."""
    m = len(corr)
    cluster = list(range(m))
    for i in range(m):
        for j in range(i + 1, m):
            if corr[i, j] >= threshold and cluster[i] != cluster[j]:
                old, new = cluster[j], cluster[i]
                cluster = [new if c == old else c for c in cluster]
    return [[i for i in range(m) if cluster[i] == c] for c in dict.fromkeys(cluster)]


def pairwise_correlation(z: np.ndarray, informative: np.ndarray) -> np.ndarray:
    """Correlation of each pair of columns over the rows where both are informative (0 where they share none)."""
    m = z.shape[1]
    corr = np.eye(m)
    for i in range(m):
        for j in range(i + 1, m):
            both = informative[:, i] & informative[:, j]
            x, y = z[both, i], z[both, j]
            ok = both.sum() > 2 and x.std() > 0 and y.std() > 0
            corr[i, j] = corr[j, i] = float(np.corrcoef(x, y)[0, 1]) if ok else 0.0
    return corr


def one_factor(corr: np.ndarray, max_communality: float = 0.995, iterations: int = 500) -> np.ndarray:
    """Loadings of a one-factor model of a correlation matrix by principal-axis factoring (iterated
    communalities: the unweighted least-squares fit of the off-diagonal correlations); sign: most load > 0."""
    off = corr - np.diag(np.diag(corr))
    communality = np.abs(off).max(axis=1)
    loadings = np.zeros(len(corr))
    for _ in range(iterations):
        reduced = off + np.diag(communality)
        values, vectors = np.linalg.eigh(reduced)
        loadings = vectors[:, -1] * np.sqrt(max(values[-1], 0.0))
        updated = np.clip(loadings**2, 0.0, max_communality)
        if np.abs(updated - communality).max() < 1e-8:
            break
        communality = updated
    return loadings * (np.sign(loadings.sum()) or 1.0)


class ScoreFusionModel:
    """Label-free fusion of LF scores: ``fit(scores, groups)``, ``predict_proba``, ``fused``, and the
    :class:`~weakrank.label_models.base.LabelModel` protocol on a votes table's ``score_*`` columns.

    ``scores``: n × m raw LF scores (higher = more relevant); ``groups``: the query of each row.
    """

    min_lfs = 1

    def __init__(
        self, duplicate_threshold: float = 0.9, min_noise: float = 0.05, temperature: float = 1.0,
        priors: Mapping[str, Mapping[str, Any]] | None = None, prior_strength: float = PRIOR_STRENGTH,
    ) -> None:
        self.duplicate_threshold, self.min_noise, self.temperature = duplicate_threshold, min_noise, temperature
        self.priors, self.prior_strength = priors, prior_strength
        self.lfs_: list[dict[str, Any]] = []
        self.clusters_: list[list[int]] | None = None
        self.scales_: np.ndarray | None = None
        self.weights_: np.ndarray | None = None
        self.loadings_: np.ndarray | None = None
        self.combine_ = "linear"
        self.choice_ = LABEL_FREE
        self.judged_: ChoiceRecord | None = None

    def _views(self, z: np.ndarray, informative: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each cluster's mean standardised score (0 where it abstains), and where each view is informative."""
        views = np.column_stack([z[:, c].mean(axis=1) for c in self.clusters_])
        return views, np.column_stack([informative[:, c].any(axis=1) for c in self.clusters_])

    def _declared(self, names: Sequence[str] | None) -> tuple[list[str | None], list[float | None]]:
        """Each view's family and prior loading from ``priors`` (a cluster: its first LF's family, the mean of its
        LFs' priors); all None without names or priors."""
        found = [dict(self.priors.get(n) or {}) for n in names] if names is not None and self.priors else None
        if found is None:
            return [None] * len(self.clusters_), [None] * len(self.clusters_)
        families = [found[c[0]].get("family") for c in self.clusters_]
        priors = [[found[i]["prior"] for i in c if found[i].get("prior") is not None] for c in self.clusters_]
        return families, [float(np.mean(p)) if p else None for p in priors]

    def fit(self, scores: np.ndarray, groups: np.ndarray, names: Sequence[str] | None = None) -> ScoreFusionModel:
        """Fit without gold (judged queries choose among combinations in :mod:`weakrank.judged`, which then
        :meth:`use` one); ``names``: the LFs of the columns, whose declarations (``priors``) the fit weighs."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 2 or not len(scores):
            raise WeakrankError(f"score matrix must be 2-D (pairs × LFs) and non-empty, got shape {scores.shape}")
        if not np.isfinite(scores).all():
            raise WeakrankError("LF scores must be finite")
        z, informative = standardize_within(scores, groups), informative_rows(scores, groups)
        columns = np.flatnonzero(informative.any(axis=0))
        if not len(columns):
            raise WeakrankError(NOTHING_TO_FIT)
        corr = pairwise_correlation(z[:, columns], informative[:, columns])
        clusters = duplicate_clusters(corr, self.duplicate_threshold)
        self.clusters_ = [[int(columns[i]) for i in c] for c in clusters]
        views, where = self._views(z, informative)
        self.scales_ = np.array([views[where[:, k], k].std() or 1.0 for k in range(views.shape[1])])
        view_corr = pairwise_correlation(views, where)
        families, priors = self._declared(names)
        if any(f is not None for f in families) or any(p is not None for p in priors):
            found = fit_family_factor(view_corr, families, priors, self.prior_strength, self.min_noise)
            self.loadings_, self.weights_ = found.loadings, found.weights
            agreement, decided = found.agreement, found.prior_decided
        else:
            if views.shape[1] >= 3:
                loadings = one_factor(view_corr)
            else:  # one or two views: the factor model is not identified; equal loadings from their correlation
                r = view_corr[0, 1] if views.shape[1] == 2 else 1.0
                loadings = np.full(views.shape[1], np.sqrt(max(r, 0.0)))
            noise = 1.0 - loadings**2
            self.loadings_ = agreement = loadings
            self.weights_ = np.clip(loadings, 0.0, None) / np.maximum(noise, self.min_noise)
            decided = np.zeros(len(loadings), dtype=bool)
        if not (self.weights_ > 0).any():
            self.weights_ = np.ones_like(self.weights_)
        self.combine_, self.choice_, self.judged_ = "linear", LABEL_FREE, None
        self.lfs_ = self._described(names, families, priors, agreement, decided)
        return self

    def _described(self, names: Sequence[str] | None, families: list[str | None], priors: list[float | None],
                   agreement: np.ndarray, decided: np.ndarray) -> list[dict[str, Any]]:
        """Per LF (by view): its family, prior, the loading agreement alone gave, the loading used, its share of the
        fused score's weight and whether its prior decided (what ``aggregate``, ``analyze`` and the card print)."""
        if names is None:
            return []
        share = self.weights_ / self.weights_.sum()
        described = []
        for k, cluster in enumerate(self.clusters_):
            for i in cluster:
                described.append({"lf": names[i], "family": families[k], "prior": priors[k],
                                  "agreement": float(agreement[k]), "loading": float(self.loadings_[k]),
                                  "weight": float(share[k] / len(cluster)), "prior_decided": bool(decided[k])})
        return described

    def lf_weights(self, n_lfs: int) -> np.ndarray:
        """The weighting as one weight per LF (of ``n_lfs``) on its standardised score (a cluster's weight shared by
        its LFs; 0 for an LF that ranks no list)."""
        weights = np.zeros(n_lfs)
        for cluster, w, scale in zip(self.clusters_, self.weights_, self.scales_):
            weights[cluster] = w / scale / len(cluster)
        return weights

    def use(self, name: str, combination: Combination | None, judged: ChoiceRecord) -> ScoreFusionModel:
        """Score with ``combination`` (called ``name``; one LF a cluster) instead of the label-free weighting, as
        judged queries chose (``judged``: the choice's record, :meth:`weakrank.judged.rule.Choice.record`); ``None``
        keeps the label-free weighting and records the choice."""
        if self.weights_ is None:
            raise RuntimeError("call fit() first")
        self.judged_ = judged
        if combination is None:
            return self
        n_lfs = max(max(c) for c in self.clusters_) + 1
        loadings = np.zeros(max(n_lfs, len(combination.weights)))
        for cluster, loading in zip(self.clusters_, self.loadings_):
            loadings[cluster] = loading
        self.clusters_ = [[i] for i in range(len(combination.weights))]
        self.combine_, self.weights_ = combination.kind, np.asarray(combination.weights, dtype=np.float64)
        self.scales_, self.loadings_ = np.ones(len(self.weights_)), loadings[:len(self.weights_)]
        self.choice_ = name
        return self

    def scaled_views(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Each row's view scores (a cluster's mean standardised score over the view's spread): what the weights,
        and a combination judged queries chose (:meth:`use`), apply to."""
        if self.weights_ is None:
            raise RuntimeError("call fit() first")
        scores = np.asarray(scores, dtype=np.float64)
        views, _ = self._views(standardize_within(scores, groups), informative_rows(scores, groups))
        return views / self.scales_

    def fused(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """The fused score of each row (the latent factor's posterior mean, up to scale; in few-shot mode, the
        combination the judged queries chose)."""
        if self.weights_ is None:
            raise RuntimeError("call fit() first")
        return fused_scores(scores, groups, self.clusters_, self.weights_, self.scales_, self.combine_)

    def predict_proba(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """P(relevant): softmax of the standardised fused score over each query's list."""
        z = standardize_within(self.fused(scores, groups).reshape(-1, 1), groups)[:, 0] / self.temperature
        return softmax_within(z, groups)

    def fit_table(self, votes: pd.DataFrame) -> ScoreFusionModel:
        """:meth:`fit` on the LF scores of ``votes``, each row's query its group."""
        return self.fit(score_matrix(votes), votes["query_id"].to_numpy(), lf_names(votes))

    def predict_table(self, votes: pd.DataFrame) -> np.ndarray:
        """:meth:`predict_proba` of the rows of ``votes``."""
        return self.predict_proba(score_matrix(votes), votes["query_id"].to_numpy())

    def labels_table(self, votes: pd.DataFrame) -> pd.DataFrame:
        """``votes`` plus the labels-table columns; the score is the fused score."""
        scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
        return with_labels(votes, self.predict_proba(scores, groups), self.fused(scores, groups))

    def fit_streaming(self, chunks: Iterable[pd.DataFrame]) -> ScoreFusionModel:
        """Refused: the factor model's correlations need every list at once."""
        raise cannot_stream(self)

    def state(self) -> dict:
        """The fitted state, JSON-ready: :meth:`from_state` rebuilds a model that fuses as this one."""
        return {
            "clusters": self.clusters_,
            "loadings": None if self.loadings_ is None else self.loadings_.tolist(),
            "weights": None if self.weights_ is None else self.weights_.tolist(),
            "scales": None if self.scales_ is None else self.scales_.tolist(),
            "combine": self.combine_,
            "choice": self.choice_,
            "judged": self.judged_.to_dict() if self.judged_ else {},
            "options": {"duplicate_threshold": self.duplicate_threshold, "min_noise": self.min_noise,
                        "temperature": self.temperature},
            **({"lfs": self.lfs_, "priors": {"strength": self.prior_strength, "declared": dict(self.priors or {})}}
               if self.lfs_ and self.priors else {}),
        }

    @classmethod
    def from_state(cls, state: dict) -> ScoreFusionModel:
        """A fitted model from :meth:`state`."""
        model = cls(**{k: v for k, v in state["options"].items() if k != "few_shot_margin"})  # an older state's
        model.clusters_ = [list(map(int, c)) for c in state["clusters"]]
        model.loadings_, model.weights_, model.scales_ = (np.asarray(state[k], dtype=np.float64)
                                                          for k in ("loadings", "weights", "scales"))
        model.combine_ = state.get("combine", "linear")
        model.choice_ = state.get("choice", LABEL_FREE)
        model.judged_ = judged_choice(state)
        model.lfs_ = list(state.get("lfs") or [])
        return model


def judged_choice(state: dict) -> ChoiceRecord | None:
    """What judged queries chose, as fusion ``state`` (:meth:`ScoreFusionModel.state`) keeps it; None where they
    chose nothing (or the state is of another label model)."""
    return ChoiceRecord.from_dict(state["judged"], where="params.judged.") if state.get("judged") else None
