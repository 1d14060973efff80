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

from collections.abc import Iterable

import numpy as np
import pandas as pd

from weakrank.errors import WeakrankError
from weakrank.label_models.base import NOTHING_TO_FIT, cannot_stream, with_labels
from weakrank.labeling import informative_rows, lf_names, score_matrix


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


FEW_SHOT_WITHIN = 1.0  # few-shot mode averages the weightings within this many standard errors of the best


class ScoreFusionModel:
    """Label-free fusion of LF scores: ``fit(scores, groups)``, ``predict_proba``, ``fused``, and the
    :class:`~weakrank.label_models.base.LabelModel` protocol on a votes table's ``score_*`` columns.

    ``scores``: n × m raw LF scores (higher = more relevant); ``groups``: the query of each row.
    """

    min_lfs = 1

    def __init__(
        self, duplicate_threshold: float = 0.9, min_noise: float = 0.05, temperature: float = 1.0
    ) -> None:
        self.duplicate_threshold, self.min_noise, self.temperature = duplicate_threshold, min_noise, temperature
        self.clusters_: list[list[int]] | None = None
        self.scales_: np.ndarray | None = None
        self.weights_: np.ndarray | None = None
        self.loadings_: np.ndarray | None = None
        self.choice_ = "factor model"
        self.few_shot_map_: dict[str, float] = {}

    def _views(self, z: np.ndarray, informative: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each cluster's mean standardised score (0 where it abstains), and where each view is informative."""
        views = np.column_stack([z[:, c].mean(axis=1) for c in self.clusters_])
        return views, np.column_stack([informative[:, c].any(axis=1) for c in self.clusters_])

    def fit(self, scores: np.ndarray, groups: np.ndarray, gold: np.ndarray | None = None) -> ScoreFusionModel:
        """Fit without gold; with ``gold`` (1/0 on the rows of a few judged queries, NaN elsewhere), the
        weighting of the views is then chosen on those queries (:func:`few_shot_weights`)."""
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
        if views.shape[1] >= 3:
            loadings = one_factor(view_corr)
        else:  # one or two views: the factor model is not identified; equal loadings from their correlation
            r = view_corr[0, 1] if views.shape[1] == 2 else 1.0
            loadings = np.full(views.shape[1], np.sqrt(max(r, 0.0)))
        noise = 1.0 - loadings**2
        self.loadings_ = loadings
        self.weights_ = np.clip(loadings, 0.0, None) / np.maximum(noise, self.min_noise)
        if not (self.weights_ > 0).any():
            self.weights_ = np.ones_like(self.weights_)
        self.choice_, self.few_shot_map_ = "factor model", {}
        if gold is not None and np.isfinite(gold).any():
            scaled = views / self.scales_
            aps = few_shot_aps(scaled, groups, gold, self.weights_)
            self.choice_, self.weights_ = few_shot_weights(aps, self.weights_)
            self.few_shot_map_ = {**aps.mean().to_dict(),
                                  self.choice_: mean_average_precision(scaled @ self.weights_, groups, gold)}
        return self

    def scaled_views(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Each row's view scores (a cluster's mean standardised score over the view's spread): what the weights,
        and the few-shot choice among weightings (:func:`few_shot_weights`), apply to."""
        if self.weights_ is None:
            raise RuntimeError("call fit() first")
        scores = np.asarray(scores, dtype=np.float64)
        views, _ = self._views(standardize_within(scores, groups), informative_rows(scores, groups))
        return views / self.scales_

    def fused(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """The fused score of each row (the latent factor's posterior mean, up to scale)."""
        return self.scaled_views(scores, groups) @ self.weights_ / self.weights_.sum()

    def predict_proba(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """P(relevant): softmax of the standardised fused score over each query's list."""
        z = standardize_within(self.fused(scores, groups).reshape(-1, 1), groups)[:, 0] / self.temperature
        frame = pd.DataFrame({"g": pd.Series(groups).to_numpy(), "z": z})
        e = np.exp(z - frame.groupby("g", sort=False)["z"].transform("max").to_numpy())
        return e / pd.Series(e).groupby(frame["g"].to_numpy(), sort=False).transform("sum").to_numpy()

    def fit_table(self, votes: pd.DataFrame, gold: np.ndarray | None = None) -> ScoreFusionModel:
        """:meth:`fit` on the LF scores of ``votes``, each row's query its group."""
        return self.fit(score_matrix(votes), votes["query_id"].to_numpy(), gold)

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

    def params(self) -> dict:
        """The fitted state, JSON-ready: :meth:`from_params` rebuilds a model that fuses as this one."""
        return {
            "clusters": self.clusters_,
            "loadings": None if self.loadings_ is None else self.loadings_.tolist(),
            "weights": None if self.weights_ is None else self.weights_.tolist(),
            "scales": None if self.scales_ is None else self.scales_.tolist(),
            "choice": self.choice_,
            "few_shot_map": self.few_shot_map_,
            "options": {"duplicate_threshold": self.duplicate_threshold, "min_noise": self.min_noise,
                        "temperature": self.temperature},
        }

    @classmethod
    def from_params(cls, params: dict) -> ScoreFusionModel:
        """A fitted model from :meth:`params`."""
        model = cls(**params["options"])
        model.clusters_ = [list(map(int, c)) for c in params["clusters"]]
        model.loadings_, model.weights_, model.scales_ = (np.asarray(params[k], dtype=np.float64)
                                                          for k in ("loadings", "weights", "scales"))
        model.choice_ = params.get("choice", "factor model")
        model.few_shot_map_ = dict(params.get("few_shot_map", {}))
        return model


def average_precisions(scores: np.ndarray, groups: np.ndarray, gold: np.ndarray) -> pd.Series:
    """AP of ``scores`` in each group whose rows are judged (``gold`` 1/0, NaN unjudged) and hold a relevant one,
    by group; ties count against (the relevant row last among equal scores)."""
    frame = pd.DataFrame({"g": pd.Series(groups).to_numpy(), "s": scores, "y": gold})
    aps = {}
    for group, rows in frame[np.isfinite(gold)].groupby("g", sort=False):
        y = rows.sort_values(["s", "y"], ascending=[False, True], kind="stable")["y"].to_numpy()
        if y.sum() > 0:
            hits = np.cumsum(y)
            aps[group] = float((hits / np.arange(1, len(y) + 1))[y == 1].mean())
    return pd.Series(aps, dtype=np.float64)


def mean_average_precision(scores: np.ndarray, groups: np.ndarray, gold: np.ndarray) -> float:
    """Mean of :func:`average_precisions` (NaN where no group is judged)."""
    aps = average_precisions(scores, groups, gold)
    return float(aps.mean()) if len(aps) else float("nan")


def few_shot_candidates(weights: np.ndarray) -> dict[str, np.ndarray]:
    """The weightings of the views few-shot mode chooses among: the factor model's ``weights``, equal weights
    (CombSUM), the factor model without one view (an LF that misleads here; left out where that view has no
    weight already), or one view alone."""
    m = len(weights)
    candidates = {"factor model": weights, "equal weights": np.ones(m)}
    for k in range(m):
        if m > 1 and weights[k] > 0 and weights[np.arange(m) != k].sum() > 0:
            candidates[f"factor model without view {k}"] = np.where(np.arange(m) == k, 0.0, weights)
        candidates[f"view {k} alone"] = np.eye(m)[k]
    return candidates


def few_shot_aps(views: np.ndarray, groups: np.ndarray, gold: np.ndarray, weights: np.ndarray) -> pd.DataFrame:
    """AP on each judged query (rows) of each of :func:`few_shot_candidates` (columns) over the (scaled) ``views``."""
    return pd.DataFrame({name: average_precisions(views @ w, groups, gold)
                         for name, w in few_shot_candidates(weights).items()})


def few_shot_weights(aps: pd.DataFrame, weights: np.ndarray, within: float = FEW_SHOT_WITHIN) -> tuple[str, np.ndarray]:
    """The mean of the normalised weights of the weightings whose mean AP on the judged queries (``aps``:
    :func:`few_shot_aps`) is within ``within`` standard errors of the best one's (the error of their paired
    difference over the judged queries; 0: the best alone, ties averaged). Returns its name ("mean of A; B", or
    the one weighting's name) and weights. A few judged queries rank close weightings by chance: the mean of
    those they cannot tell apart keeps the best one's gain and halves its spread over draws of the queries
    (docs/experiments.md, few-shot mode)."""
    candidates = few_shot_candidates(weights)
    means = aps.mean()
    best = max(candidates, key=lambda name: (means[name], -list(candidates).index(name)))
    gap = aps[best].to_numpy()[:, None] - aps[list(candidates)].to_numpy()
    keep = np.array([name == best for name in candidates])  # no judged query with a relevant one: the best alone
    if len(gap):
        error = gap.std(axis=0, ddof=1) / np.sqrt(len(gap)) if len(gap) > 1 else np.zeros(len(candidates))
        keep |= gap.mean(axis=0) <= within * error + 1e-12
    chosen = [name for name, kept in zip(candidates, keep) if kept]
    mean = np.mean([candidates[name] / candidates[name].sum() for name in chosen], axis=0)
    return (best if len(chosen) == 1 else "mean of " + "; ".join(chosen)), mean


def describe_choice(choice: str, clusters: list[list[int]], lfs: list[str]) -> str:
    """A few-shot choice with its views named by their LFs ("factor model without view 2" → "factor model
    without bert_cosine")."""
    for k in range(len(clusters) - 1, -1, -1):  # view 12 before view 1
        choice = choice.replace(f"view {k}", "+".join(lfs[i] for i in clusters[k]))
    return choice


def average_views(teacher: np.ndarray, ranker: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The mean of two scores of the same pairs, each standardised within its group (query)."""
    views = standardize_within(np.column_stack([teacher, ranker]).astype(np.float64), groups)
    return views.mean(axis=1)


def fuse_ranker(votes: pd.DataFrame, run: pd.DataFrame, split: str, teacher: ScoreFusionModel | None = None,
                **options: float) -> pd.DataFrame:
    """A second round: a trained ranker's scores (``run``: query_id, passage_id, score) averaged with its
    teacher's, both standardised within each query (:func:`average_views`). The teacher is ``teacher``, a
    :class:`ScoreFusionModel` over the LFs of ``votes`` fitted without gold (default: fitted on ``split``'s
    pairs with ``options``).

    The ranker is not one more LF of the factor model: it learned from that fusion, so its agreement with
    the LFs is theirs, and the factor model would count it twice (measured: one more LF gave WikiQA 0.683,
    below its labels' 0.688; the average 0.694). Two views and no gold: equal weights."""
    ranker = run[["query_id", "passage_id", "score"]].rename(columns={"score": "ranker"})
    rows = votes[votes["split"] == split].merge(ranker, on=["query_id", "passage_id"], validate="one_to_one")
    if len(rows) != len(run):
        raise WeakrankError(f"{len(run) - len(rows)} pairs of the ranker's run have no LF scores in split {split!r}")
    names = lf_names(votes)
    if not names:
        raise WeakrankError("the votes table has no LF columns to fuse the ranker with")
    scores, groups = score_matrix(rows, names), rows["query_id"].to_numpy()
    teacher = ScoreFusionModel(**options).fit(scores, groups) if teacher is None else teacher
    fused = average_views(teacher.fused(scores, groups), rows["ranker"].to_numpy(dtype=np.float64), groups)
    return rows[["query_id", "passage_id"]].assign(score=fused)
