"""Each ranking's MAP over a pool of queries, estimated without bias from a sample of judged pairs whose inclusion
probabilities are known: per query the Horvitz–Thompson totals of R · AP and R (as statAP does: Aslam, Pavlu &
Yilmaz 2006), their ratio over queries, and the paired leads over a baseline with their standard errors. The
estimator and its reasoning: docs/judged-design.md."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

CERTAIN_INCLUSION = 1.0 - 1e-9  # an inclusion probability below this marks a pair sampled from the rest of its list


def list_totals(scores: np.ndarray, judged: np.ndarray, inclusion: np.ndarray) -> tuple[float, float]:
    """The estimated R · AP and R (docs/judged-design.md) of one list ranked by ``scores`` (higher first; ties count
    against the relevant pair), ``judged`` 1/0 on the judged pairs and NaN elsewhere, ``inclusion`` each judged pair's
    probability of being judged."""
    scores, judged, inclusion = (np.asarray(a, dtype=np.float64) for a in (scores, judged, inclusion))
    seen = np.isfinite(judged)
    y = np.where(seen, judged, 0.0) > 0
    if not y.any():
        return 0.0, 0.0
    order = np.lexsort((y, -scores))  # by score, a relevant pair last among ties
    rank = np.empty(len(scores), dtype=np.int64)
    rank[order] = np.arange(1, len(scores) + 1)
    pi = np.where(seen, inclusion, np.inf)
    sampled = seen & (pi < CERTAIN_INCLUSION)
    s = int(sampled.sum())
    together = (s - 1) / (s / pi[sampled][0] - 1) if s > 1 else 1.0  # P(j judged | i judged), both sampled
    relevant = np.flatnonzero(y)
    relevant = relevant[np.argsort(rank[relevant])]
    drawn = sampled[relevant]
    fixed_above = np.cumsum(~drawn) - ~drawn  # relevant pairs above each one, fixed (counted once each)
    drawn_above = np.cumsum(drawn) - drawn  # … and sampled: weighted 1 / P(judged | this one judged)
    inverse_above = np.cumsum(np.where(drawn, 1.0 / pi[relevant], 0.0)) - np.where(drawn, 1.0 / pi[relevant], 0.0)
    above = fixed_above + np.where(drawn, drawn_above / together, inverse_above)
    found = float(((1.0 + above) / rank[relevant] / pi[relevant]).sum())
    return found, float((1.0 / pi[relevant]).sum())


@dataclass(frozen=True)
class Totals:
    """Per judged query (rows), each candidate's estimated R · AP (``found``, a column per candidate) and the
    query's estimated number of relevant passages (``relevant``)."""

    found: pd.DataFrame
    relevant: pd.Series


def query_totals(scores: pd.DataFrame, groups: np.ndarray, judged: np.ndarray, inclusion: np.ndarray) -> Totals:
    """:func:`list_totals` of each column of ``scores`` (a candidate's score per row) on each group (query) with a
    judged row."""
    groups = np.asarray(groups)
    found, relevant = {}, {}
    for query in pd.unique(groups[np.isfinite(judged)]):
        where = np.flatnonzero(groups == query)
        totals = {name: list_totals(scores[name].to_numpy()[where], judged[where], inclusion[where])
                  for name in scores.columns}
        found[query] = {name: value[0] for name, value in totals.items()}
        relevant[query] = next(iter(totals.values()))[1] if totals else 0.0
    return Totals(pd.DataFrame.from_dict(found, orient="index", columns=list(scores.columns)),
                  pd.Series(relevant, dtype=np.float64))


@dataclass(frozen=True)
class Estimate:
    """Each candidate's estimated MAP (``map``) and its standard error (``map_error``), its lead over the
    ``baseline`` (``lead``) and that lead's standard error (``error``), over ``queries`` judged queries on which a
    relevant passage was found."""

    map: pd.Series
    lead: pd.Series
    error: pd.Series
    queries: int
    baseline: str
    map_error: pd.Series

    def errors(self, name: str) -> float:
        """``name``'s lead in standard errors (±inf for a lead with no spread)."""
        lead, error = float(self.lead[name]), float(self.error[name])
        if error > 0:
            return lead / error
        return float(np.inf if lead > 0 else -np.inf if lead < 0 else 0.0)


def estimate(totals: Totals, weights: pd.Series | None = None, baseline: str | None = None) -> Estimate:
    """The pool's MAP of each candidate (docs/judged-design.md) and each one's paired lead over ``baseline`` (default
    the first candidate), each judged query weighted by ``weights`` (``1 / π_q``, by query id; default 1)."""
    found, relevant = totals.found, totals.relevant
    baseline = baseline or found.columns[0]
    w = (weights.reindex(found.index).fillna(1.0) if weights is not None else pd.Series(1.0, index=found.index))
    w, r = w.to_numpy(float), relevant.reindex(found.index).to_numpy(float)
    total, n = float(w @ r), int((r > 0).sum())
    if total <= 0:
        empty = pd.Series(np.nan, index=found.columns)
        return Estimate(empty, empty, empty, 0, baseline, empty)
    means = pd.Series(w @ found.to_numpy() / total, index=found.columns)
    lead = means - means[baseline]
    gaps = found.sub(found[baseline], axis=0).to_numpy()

    def error(values: np.ndarray, ratios: np.ndarray) -> pd.Series:
        """The standard error of the totals' ratio (linearised over the judged queries)."""
        residual = w[:, None] * (values - np.outer(r, ratios))
        spread = residual.std(axis=0, ddof=1) * np.sqrt(len(r)) / total if len(r) > 1 else np.inf
        return pd.Series(spread, index=found.columns, dtype=np.float64)

    return Estimate(means, lead, error(gaps, lead.to_numpy()), n, baseline, error(found.to_numpy(), means.to_numpy()))
