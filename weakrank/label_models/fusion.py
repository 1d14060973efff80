"""A label model over the LFs' continuous scores: a one-factor model of per-query standardised scores.

Votes keep only an LF's top-1/bottom-half decisions; this model keeps each LF's whole ranking. Per query,
each LF's scores are standardised (mean 0, std 1 within the list). LFs whose standardised scores are near
copies of each other (correlation ≥ ``duplicate_threshold``, e.g. BM25 and TF-IDF) are merged into one
view, their mean, so a duplicated LF gains no weight. A one-factor model (scikit-learn's
``FactorAnalysis``) then explains the views' covariance by one latent relevance factor: view k =
λ_k · factor + noise of variance ψ_k, fitted without gold. An LF that agrees with the others through the
latent factor gets a large loading; the fused score is the factor's posterior mean, Σ_k (λ_k / ψ_k) z_k —
the optimal linear combination under the model, so a strong LF outweighs several weak ones.

P(relevant) is the softmax of the fused score (standardised within the query, divided by
``temperature``) over the query's list: a prior from the list structure, about one relevant candidate per
list, so a pair is labelled relevant only where it stands out from the rest of its list. Its order within a
query is the fused score's order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.decomposition import FactorAnalysis

from weakrank.errors import WeakrankError
from weakrank.labeling import lf_names, score_matrix


def standardize_within(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each column of ``scores`` standardised within each group (0 where a group's scores are constant)."""
    frame = pd.DataFrame(scores)
    by = frame.groupby(pd.Series(groups).to_numpy(), sort=False)
    mean, std = by.transform("mean").to_numpy(), by.transform("std", ddof=0).to_numpy()
    return np.where(std > 1e-12, (scores - mean) / np.where(std > 1e-12, std, 1.0), 0.0)


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


class ScoreFusionModel:
    """Label-free fusion of LF scores: ``fit(scores, groups)``, ``predict_proba``, ``fused``.

    ``scores``: n × m raw LF scores (higher = more relevant); ``groups``: the query of each row.
    """

    def __init__(
        self, duplicate_threshold: float = 0.9, min_noise: float = 0.05, temperature: float = 1.0, seed: int = 0
    ) -> None:
        self.duplicate_threshold, self.min_noise = duplicate_threshold, min_noise
        self.temperature, self.seed = temperature, seed
        self.clusters_: list[list[int]] | None = None
        self.weights_: np.ndarray | None = None
        self.loadings_: np.ndarray | None = None

    def _views(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        z = standardize_within(np.asarray(scores, dtype=np.float64), groups)
        return np.column_stack([z[:, c].mean(axis=1) for c in self.clusters_])

    def fit(self, scores: np.ndarray, groups: np.ndarray) -> ScoreFusionModel:
        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 2 or not len(scores):
            raise WeakrankError(f"score matrix must be 2-D (pairs × LFs) and non-empty, got shape {scores.shape}")
        if not np.isfinite(scores).all():
            raise WeakrankError("LF scores must be finite")
        z = standardize_within(scores, groups)
        informative = z.std(axis=0) > 0
        corr = np.corrcoef(z[:, informative], rowvar=False) if informative.sum() > 1 else np.ones((1, 1))
        columns = np.flatnonzero(informative)
        clusters = duplicate_clusters(np.atleast_2d(corr), self.duplicate_threshold)
        self.clusters_ = [[int(columns[i]) for i in c] for c in clusters]
        views = self._views(scores, groups)
        views = views / np.where(views.std(axis=0) > 0, views.std(axis=0), 1.0)
        if views.shape[1] >= 3:
            fa = FactorAnalysis(n_components=1, random_state=self.seed).fit(views)
            loadings = fa.components_[0]
            loadings = loadings * np.sign(loadings.sum())  # the factor's sign: most LFs rank relevant first
            noise = fa.noise_variance_
        else:  # one or two views: the factor model is not identified; equal loadings from their correlation
            r = float(np.corrcoef(views, rowvar=False)[0, 1]) if views.shape[1] == 2 else 1.0
            loadings = np.full(views.shape[1], np.sqrt(max(r, 0.0)))
            noise = 1.0 - loadings**2
        self.loadings_ = loadings
        self.weights_ = np.clip(loadings, 0.0, None) / np.maximum(noise, self.min_noise)
        if not (self.weights_ > 0).any():
            self.weights_ = np.ones_like(self.weights_)
        return self

    def fused(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """The fused score of each row (the latent factor's posterior mean, up to scale)."""
        if self.weights_ is None:
            raise RuntimeError("call fit() first")
        views = self._views(np.asarray(scores, dtype=np.float64), groups)
        return views @ self.weights_ / self.weights_.sum()

    def predict_proba(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """P(relevant): softmax of the standardised fused score over each query's list."""
        z = standardize_within(self.fused(scores, groups).reshape(-1, 1), groups)[:, 0] / self.temperature
        frame = pd.DataFrame({"g": pd.Series(groups).to_numpy(), "z": z})
        e = np.exp(z - frame.groupby("g", sort=False)["z"].transform("max").to_numpy())
        return e / pd.Series(e).groupby(frame["g"].to_numpy(), sort=False).transform("sum").to_numpy()

    def params(self) -> dict:
        return {
            "clusters": self.clusters_,
            "loadings": None if self.loadings_ is None else self.loadings_.tolist(),
            "weights": None if self.weights_ is None else self.weights_.tolist(),
        }


def fuse_ranker(votes: pd.DataFrame, run: pd.DataFrame, split: str, **options: float) -> pd.DataFrame:
    """A second round: a trained ranker's scores (``run``: query_id, passage_id, score) as one more LF beside
    the LFs of ``votes``, fused by :class:`ScoreFusionModel` fitted without gold on ``split``'s pairs."""
    ranker = run[["query_id", "passage_id", "score"]].rename(columns={"score": "ranker"})
    rows = votes[votes["split"] == split].merge(ranker, on=["query_id", "passage_id"], validate="one_to_one")
    if len(rows) != len(run):
        raise WeakrankError(f"{len(run) - len(rows)} pairs of the ranker's run have no LF scores in split {split!r}")
    scores = np.column_stack([score_matrix(rows, lf_names(votes)), rows["ranker"].to_numpy(dtype=np.float64)])
    groups = rows["query_id"].to_numpy()
    fused = ScoreFusionModel(**options).fit(scores, groups).fused(scores, groups)
    return rows[["query_id", "passage_id"]].assign(score=fused)
