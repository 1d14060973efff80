"""Paired t-tests across queries with Bonferroni correction, and mean ± std over seeds."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.stats import ttest_rel


def paired_tests(
    per_query: Mapping[str, pd.DataFrame], baseline: str, alpha: float = 0.05
) -> pd.DataFrame:
    """p-values of each system against ``baseline`` per metric (paired t-test on shared queries),
    Bonferroni-corrected for the number of systems compared; ``significant`` marks p < alpha."""
    base = per_query[baseline]
    others = [name for name in per_query if name != baseline]
    rows = []
    for name in others:
        table = per_query[name]
        shared = base.index.intersection(table.index)
        for metric in base.columns.intersection(table.columns):
            a, b = table.loc[shared, metric].to_numpy(float), base.loc[shared, metric].to_numpy(float)
            p = 1.0 if np.allclose(a, b) else float(ttest_rel(a, b).pvalue)
            p_corr = min(1.0, p * max(1, len(others)))
            rows.append({"system": name, "metric": metric, "delta": a.mean() - b.mean(), "p": p, "p_bonferroni": p_corr,
                         "significant": p_corr < alpha})
    return pd.DataFrame(rows)


def mean_std(tables: list[pd.DataFrame]) -> tuple[pd.Series, pd.Series]:
    """Mean and standard deviation (ddof=1; 0 for one seed) over seeds of each metric's query average."""
    means = pd.DataFrame([t.mean() for t in tables])
    return means.mean(), means.std(ddof=1).fillna(0.0) if len(tables) > 1 else means.mean() * 0.0


def average_over_seeds(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Per-query metrics averaged over seed runs (the unit of the paired test for trained systems)."""
    return pd.concat(tables).groupby(level=0).mean()
