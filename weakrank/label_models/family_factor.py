"""The one-factor model with LF families and priors: what the fusion label model fits (:mod:`.fusion`).

Each view (an LF, or a cluster of near-copies) is ``z_k = λ_k · f + e_k``: ``f`` the latent relevance, ``λ_k`` the
view's loading (its quality). Views of one *family* (lexical, semantic, …) share part of their errors, so their
agreement says as much about their common style as about relevance; only agreement *across* families is evidence
of quality. The loadings are the least-squares fit of the cross-family correlations, ``r_kl ≈ λ_k λ_l``, plus a
centred L2 pull of strength ``strength`` towards each view's prior loading (Snorkel's ``prec_init`` with its ``l2``
plays the same role for votes)::

    minimise  Σ_{k<l, family k ≠ family l} (r_kl − λ_k λ_l)²  +  strength · Σ_{k with a prior} (λ_k − μ_k)²

A view whose correlation with every other view is within :data:`SILENT` standard errors of 0 agrees with nothing: it
keeps the loading agreement alone gives it (about 0), whatever its prior; clear evidence of no signal outweighs a
prior. Where three or more families speak, the cross-family correlations identify every loading and, with a weak
pull, the data outweighs the prior; with two families (lexical against semantic) they fix only the product of the
two camps' loadings, and the prior decides how it splits. (The shipped strength, fitted on seven collections, is
strong: there agreement added little beyond the priors; ``benchmarks/teacher_priors.csv``.) Views with no family are each a family of their own and views with no prior feel no
pull: with neither, the fit is today's principal-axis factoring (the unweighted least-squares fit of every
off-diagonal correlation).

The fused score is the factor's posterior mean, ``w = Σ_e⁻¹ λ``: ``Σ_e`` the error covariance, the within-family
correlation the factor leaves unexplained off the diagonal (shared errors), ``1 − λ²`` on it. A family of several
views therefore weighs about as one view: a redundant LF adds little.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_LOADING = 0.995
SILENT = 3.0  # a view whose every correlation is below this many standard errors (1/√rows) agrees with nothing
DECIDED = 0.1  # a loading moved by at least this much from what agreement alone says was decided by its prior


@dataclass(frozen=True)
class FactorFit:
    """The fitted loadings of the views (``loadings``), the loadings agreement alone gives (``agreement``: the fit
    of every correlation with no family and no prior, today's label-free model), the weights of the fused score
    (``weights``) and, per view, whether its prior decided its loading (``prior_decided``)."""

    loadings: np.ndarray
    agreement: np.ndarray
    weights: np.ndarray
    prior_decided: np.ndarray


def _cross(families: Sequence[str | None]) -> np.ndarray:
    """1 where two views are of different families (a view with no family is its own), 0 elsewhere."""
    keys = [f if f is not None else f"\0{i}" for i, f in enumerate(families)]
    return np.array([[float(a != b) for b in keys] for a in keys])


def _fit(corr: np.ndarray, cross: np.ndarray, prior: np.ndarray, strength: float, start: np.ndarray,
         ceiling: np.ndarray | None = None, sweeps: int = 5000, tolerance: float = 1e-10) -> np.ndarray:
    """The loadings minimising the module doc's objective (``prior``: NaN where a view has none), by exact
    coordinate descent: each loading in turn set to its minimiser given the others, clipped to [0, ``ceiling``]
    (default :data:`MAX_LOADING`)."""
    ceiling = np.full(len(corr), MAX_LOADING) if ceiling is None else np.minimum(ceiling, MAX_LOADING)
    pull = np.where(np.isfinite(prior), strength, 0.0)
    mu = np.where(np.isfinite(prior), prior, 0.0)
    lam = np.clip(np.asarray(start, dtype=np.float64), 0.01, MAX_LOADING)
    for _ in range(sweeps):
        before = lam.copy()
        for k in range(len(lam)):
            denominator = cross[k] @ lam**2 + pull[k]
            if denominator > 0:
                lam[k] = np.clip((cross[k] * corr[k]) @ lam + pull[k] * mu[k], 0.0, None) / denominator
                lam[k] = min(lam[k], ceiling[k])
        if np.abs(lam - before).max() < tolerance:
            break
    return lam


def _start(corr: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """A symmetric start: each view's root mean cross-family correlation (a view alone: its root mean correlation)."""
    m = len(corr)
    weights = cross if cross.sum() else 1.0 - np.eye(m)
    mean = (np.clip(corr, 0.0, None) * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
    return np.sqrt(np.clip(mean, 0.01, MAX_LOADING))


def fit_family_factor(corr: np.ndarray, families: Sequence[str | None], prior: Sequence[float | None],
                      strength: float, min_noise: float = 0.05, rows: Sequence[int] | None = None,
                      support: Sequence[float] | None = None) -> FactorFit:
    """The family one-factor model of the views' correlation matrix ``corr`` (module doc); ``families`` and ``prior``
    (a prior loading in (0, 1), or None) one per view; ``rows``: the rows each view ranks (what tells a view that
    agrees with nothing; None: no view is taken for one); ``support``: per view, the share of the fitted loading's
    move away from agreement's that it keeps (1, the default: all; a sparse LF's prior, fitted where it ranked many
    pairs, keeps less where it ranks few)."""
    corr = np.asarray(corr, dtype=np.float64)
    m = len(corr)
    if m == 1:
        one = np.ones(1)
        return FactorFit(one, one, one, np.zeros(1, dtype=bool))
    cross = _cross(families)
    if not cross.any():  # one family: no cross-family evidence; its correlations are all there is
        cross = 1.0 - np.eye(m)
    mu = np.array([np.nan if p is None else float(p) for p in prior])
    every = 1.0 - np.eye(m)
    agreement = _fit(corr, every, np.full(m, np.nan), 0.0, _start(corr, every))
    start = _start(corr, cross)
    silent = np.array([np.delete(corr[k], k).max() < SILENT / np.sqrt(max(rows[k], 1)) for k in range(m)]) \
        if rows is not None else np.zeros(m, dtype=bool)
    loadings = _fit(corr, cross, mu, strength, np.where(np.isfinite(mu), mu, start),
                    np.where(silent, agreement, MAX_LOADING))
    if support is not None:
        loadings = agreement + np.asarray(support, dtype=np.float64) * (loadings - agreement)
    same = 1.0 - cross - np.eye(m)
    errors = np.clip((corr - np.outer(loadings, loadings)) * same, 0.0, None)
    np.fill_diagonal(errors, np.maximum(1.0 - loadings**2, min_noise))
    values, vectors = np.linalg.eigh(errors)
    errors = vectors @ np.diag(np.maximum(values, min_noise)) @ vectors.T
    weights = np.clip(np.linalg.solve(errors, loadings), 0.0, None)
    if not (weights > 0).any():
        weights = np.ones(m)
    return FactorFit(loadings, agreement, weights, np.abs(loadings - agreement) >= DECIDED)
