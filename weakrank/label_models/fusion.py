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

from weakrank.errors import NotFittedError, WeakrankError
from weakrank.fusion_state import FusionState, LFWeight
from weakrank.label_models.base import NOTHING_TO_FIT, cannot_stream, with_labels
from weakrank.label_models.family_factor import fit_family_factor
from weakrank.labeling import lf_names, score_matrix
from weakrank.lists import informative_rows, softmax_within, standardize_within

KIN = 0.5  # an undeclared LF correlated this much with a declared one is pulled as that one's family
PRIOR_STRENGTH = 20.0  # the centred L2 pull towards the declared priors (family_factor): fitted with them, benchmarks/teacher_priors.csv
# a view that ranks less than this share of the pairs keeps its prior's loading in proportion, the rest agreement's: a
# sparse LF's prior (answer_type's, fitted where it ranks 38-50 % of the pairs) does not decide the lists it ranks on
# 2 % of them (docs/experiments.md, 2026-11-28)
FULL_COVERAGE = 0.2


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


def prior_support(where: np.ndarray) -> np.ndarray:
    """How much of its prior each view's loading keeps (:func:`~.family_factor.fit_family_factor`'s ``support``):
    all of it from :data:`FULL_COVERAGE` of the pairs ranked up, in proportion below (``where``: n × views, whether a
    view ranks a row)."""
    return np.minimum(where.mean(axis=0) / FULL_COVERAGE, 1.0)


def undeclared_pull(families: Sequence[str | None], priors: Sequence[float | None], corr: np.ndarray,
                    kin: float = KIN) -> tuple[list[str | None], list[float | None]]:
    """The family and prior each view is fitted with where some view declared a prior: its own; a view that declared
    neither is pulled like the rest, as the family of the declared view it correlates with most (at least ``kin``)
    and that family's mean prior, else as a family of its own with the mean of every declared prior. Without it, a
    user's LF that declares nothing would feel no pull while every built-in is pulled (measured: a crude word count
    beside three lexical LFs took 96 % of the weight)."""
    declared = [k for k, p in enumerate(priors) if p is not None]
    if not declared:
        return list(families), list(priors)
    overall = float(np.mean([priors[k] for k in declared]))
    out_families, out_priors = list(families), list(priors)
    for k, (family, prior) in enumerate(zip(families, priors)):
        if prior is not None or family is not None:
            continue
        nearest = max(declared, key=lambda j: corr[k, j])
        if corr[k, nearest] >= kin and families[nearest] is not None:
            kind = families[nearest]
            out_families[k] = kind
            out_priors[k] = float(np.mean([priors[j] for j in declared if families[j] == kind]))
        else:
            out_priors[k] = overall
    return out_families, out_priors


def kin_capped(weights: np.ndarray, clusters: Sequence[Sequence[int]], families: Sequence[str | None],
               undeclared: Sequence[bool]) -> np.ndarray:
    """``weights`` (one per view), each view of undeclared LFs weighing per LF at most what the declared LF of the
    family :func:`undeclared_pull` placed it in that weighs most does (of a family of its own: the declared LF that
    weighs most): nothing vouches for it more than for the LFs it resembles, and a user who trusts it more declares
    its prior. Measured: a crude word count beside bm25, tfidf and word_overlap took 33 % of the weight on TrecQA
    against their 22-24 % (its loading below bm25's, whose view tfidf shares), 38-42 % on seven other collections where
    it is a family of its own (``benchmarks/teacher_robustness.csv``)."""
    capped = np.array(weights, dtype=np.float64)
    declared = [j for j in range(len(weights)) if not undeclared[j]]
    for k, family in enumerate(families):
        if not undeclared[k] or not declared:
            continue
        peers = [j for j in declared if family is not None and families[j] == family] or declared
        capped[k] = min(capped[k], len(clusters[k]) * max(weights[j] / len(clusters[j]) for j in peers))
    return capped


class ScoreFusionModel:
    """Label-free fusion of LF scores: ``fit(scores, groups)``, ``predict_proba``, ``fused``, and the
    :class:`~weakrank.label_models.base.LabelModel` protocol on a votes table's ``score_*`` columns; fitted, its state
    is ``state_`` (a :class:`~weakrank.fusion_state.FusionState`).

    ``scores``: n × m raw LF scores (higher = more relevant); ``groups``: the query of each row.
    """

    min_lfs = 1
    takes_priors = True  # the LFs' quality priors, declared or moved by evidence (:mod:`.family_factor`)
    portable = True  # its state alone scores new lists: a shipped ranker's teacher (:mod:`weakrank.ranker.teacher`)

    def __init__(
        self, duplicate_threshold: float = 0.9, min_noise: float = 0.05, temperature: float = 1.0,
        priors: Mapping[str, Mapping[str, Any]] | None = None, prior_strength: float = PRIOR_STRENGTH,
    ) -> None:
        self.duplicate_threshold, self.min_noise, self.temperature = duplicate_threshold, min_noise, temperature
        self.priors, self.prior_strength = priors, prior_strength
        self.state_: FusionState | None = None

    def get_params(self) -> dict[str, Any]:
        """Every constructor argument, the LFs' declared priors included (scikit-learn's ``get_params``): what a
        copy fitted elsewhere is built with."""
        return {**self.options(), "priors": self.priors, "prior_strength": self.prior_strength}

    def options(self) -> dict[str, float]:
        """The constructor's options, as a state keeps them."""
        return {"duplicate_threshold": self.duplicate_threshold, "min_noise": self.min_noise,
                "temperature": self.temperature}

    def fitted(self) -> FusionState:
        """The fitted state; :class:`~weakrank.errors.NotFittedError` before :meth:`fit`."""
        if self.state_ is None:
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit() first")
        return self.state_

    @staticmethod
    def _views(z: np.ndarray, informative: np.ndarray, clusters: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Each cluster's mean standardised score (0 where it abstains), and where each view is informative."""
        views = np.column_stack([z[:, list(c)].mean(axis=1) for c in clusters])
        return views, np.column_stack([informative[:, list(c)].any(axis=1) for c in clusters])

    def _declared(self, names: Sequence[str] | None, clusters: list[list[int]]) -> tuple[list, list]:
        """Each view's family and prior loading from ``priors`` (a cluster: its first LF's family, the mean of its
        LFs' priors); all None without names or priors."""
        found = [dict(self.priors.get(n) or {}) for n in names] if names is not None and self.priors else None
        if found is None:
            return [None] * len(clusters), [None] * len(clusters)
        priors = [[found[i]["prior"] for i in c if found[i].get("prior") is not None] for c in clusters]
        return [found[c[0]].get("family") for c in clusters], [float(np.mean(p)) if p else None for p in priors]

    def fit(self, scores: np.ndarray, groups: np.ndarray, names: Sequence[str] | None = None) -> ScoreFusionModel:
        """Fit without gold (judged queries move the LFs' priors in :mod:`weakrank.judged`, which fits a new model
        under them); ``names``: the LFs of the columns, whose declared families and priors (``priors``) the fit
        weighs against their agreement."""
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
        clusters = [[int(columns[i]) for i in c] for c in duplicate_clusters(corr, self.duplicate_threshold)]
        views, where = self._views(z, informative, clusters)
        scales = np.array([views[where[:, k], k].std() or 1.0 for k in range(views.shape[1])])
        view_corr = pairwise_correlation(views, where)
        families, priors = self._declared(names, clusters)
        if any(f is not None for f in families) or any(p is not None for p in priors):
            pulled_families, pulled = undeclared_pull(families, priors, view_corr)
            found = fit_family_factor(view_corr, pulled_families, pulled, self.prior_strength, self.min_noise,
                                      where.sum(axis=0), prior_support(where))
            loadings, weights, agreement = found.loadings, found.weights, found.agreement
            decided = found.prior_decided & np.array([p is not None for p in priors])  # an undeclared LF: never
            weights = kin_capped(weights, clusters, pulled_families, [p is None for p in priors])
        else:
            if views.shape[1] >= 3:
                loadings = one_factor(view_corr)
            else:  # one or two views: the factor model is not identified; equal loadings from their correlation
                r = view_corr[0, 1] if views.shape[1] == 2 else 1.0
                loadings = np.full(views.shape[1], np.sqrt(max(r, 0.0)))
            noise = 1.0 - loadings**2
            weights = np.clip(loadings, 0.0, None) / np.maximum(noise, self.min_noise)
            agreement, decided = loadings, np.zeros(len(loadings), dtype=bool)
        if not (weights > 0).any():
            weights = np.ones_like(weights)
        share = weights / weights.sum()
        described = () if names is None or self.priors is None else tuple(
            LFWeight(names[i], families[k], priors[k], float(agreement[k]), float(loadings[k]),
                     float(share[k] / len(c)), bool(decided[k]))
            for k, c in enumerate(clusters) for i in c)
        self.state_ = FusionState.of(clusters, loadings, weights, scales, options=self.options(), lfs=described)
        return self

    def lf_weights(self, n_lfs: int) -> np.ndarray:
        """The weighting as one weight per LF (of ``n_lfs``) on its standardised score (a cluster's weight shared by
        its LFs; 0 for an LF that ranks no list)."""
        return self.fitted().lf_weights(n_lfs)

    def scaled_views(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Each row's view scores (a cluster's mean standardised score over the view's spread): what the weights apply
        to."""
        state = self.fitted()
        scores = np.asarray(scores, dtype=np.float64)
        views, _ = self._views(standardize_within(scores, groups), informative_rows(scores, groups), state.clusters)
        return views / np.asarray(state.scales)

    def fused(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """The fused score of each row (the latent factor's posterior mean, up to scale; a state an earlier
        weakrank saved with a combination judged queries chose scores with it)."""
        return self.fitted().fused(scores, groups)

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

    def state(self) -> FusionState:
        """The fitted state (stored with the labels, as their metadata's ``params``)."""
        return self.fitted()

    @classmethod
    def from_state(cls, state: FusionState) -> ScoreFusionModel:
        """A model fitted as ``state`` says, with its options."""
        model = cls(**state.options)
        model.state_ = state
        return model
