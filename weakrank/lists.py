"""Maths over the rows of each query's list: every function takes rows and their ``groups`` (query ids, any order)
and works within each group — standardise, softmax, min-max, which lists a score can rank, reciprocal ranks,
average precision."""

from __future__ import annotations

import numpy as np
import pandas as pd

TIED = 1e-12  # a group's standard deviation at or below which its scores count as all tied
RRF_K = 60  # reciprocal-rank fusion's k (Cormack et al. 2009)


def standardize_within(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each column of ``scores`` standardised within each group (0 where a group's scores are constant)."""
    frame = pd.DataFrame(scores)
    by = frame.groupby(pd.Series(groups).to_numpy(), sort=False)
    mean, std = by.transform("mean").to_numpy(), by.transform("std", ddof=0).to_numpy()
    return np.where(std > TIED, (scores - mean) / np.where(std > TIED, std, 1.0), 0.0)


def informative_rows(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per column of ``scores``, the rows whose group (query) it can rank: an all-tied list is an abstain."""
    std = pd.DataFrame(scores).groupby(pd.Series(groups).to_numpy(), sort=False).transform("std", ddof=0)
    return std.to_numpy() > TIED


def reciprocal_ranks(z: np.ndarray, groups: np.ndarray, informative: np.ndarray) -> np.ndarray:
    """1 / (k + rank) of each row by each column within its group (rank 1 = highest; ties share their mean rank);
    0 where the column does not rank the group (``informative`` False)."""
    frame = pd.DataFrame(z)
    ranks = frame.groupby(pd.Series(groups).to_numpy(), sort=False).rank(ascending=False, method="average").to_numpy()
    return np.where(informative, 1.0 / (RRF_K + ranks), 0.0)


def softmax_within(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Softmax of ``scores`` within each group (invariant to a shift of a group's scores)."""
    scores = np.asarray(scores, dtype=np.float64)
    keys = pd.Series(groups).to_numpy()
    e = np.exp(scores - pd.Series(scores).groupby(keys, sort=False).transform("max").to_numpy())
    return e / pd.Series(e).groupby(keys, sort=False).transform("sum").to_numpy()


def minmax_within(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Min-max normalisation of ``values`` within each group (0.5 where a group is constant)."""
    values = np.asarray(values, dtype=np.float64)
    by = pd.Series(values).groupby(pd.Series(groups).to_numpy(), sort=False)
    low, high = by.transform("min").to_numpy(), by.transform("max").to_numpy()
    span = high - low
    return np.where(span > 0, (values - low) / np.where(span > 0, span, 1), 0.5)


def minmax_over(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """One list's ``values`` min-max normalised over the entries where ``mask`` holds (Penha & Hauff, WSLS:
    over a query's negatives, so its hardest negative gets 1); 0.5 where those are constant, NaN outside ``mask``."""
    out = np.full(len(values), np.nan)
    if mask.any():
        low, high = values[mask].min(), values[mask].max()
        out[mask] = (values[mask] - low) / (high - low) if high > low else 0.5
    return out


def average_precisions(scores: np.ndarray, groups: np.ndarray, gold: np.ndarray) -> pd.Series:
    """AP of ``scores`` in each group whose rows are assessed (``gold`` 1/0, NaN unassessed: left out, a condensed
    list) and hold a relevant one, by group; ties count against (the relevant row last among equal scores)."""
    frame = pd.DataFrame({"g": pd.Series(groups).to_numpy(), "s": scores, "y": gold})
    aps = {}
    for group, rows in frame[np.isfinite(gold)].groupby("g", sort=False):
        y = rows.sort_values(["s", "y"], ascending=[False, True], kind="stable")["y"].to_numpy()
        if y.sum() > 0:
            hits = np.cumsum(y)
            aps[group] = float((hits / np.arange(1, len(y) + 1))[y == 1].mean())
    return pd.Series(aps, dtype=np.float64)
