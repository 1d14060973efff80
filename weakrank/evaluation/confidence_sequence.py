"""An interval that stays valid however the judging stops: Waudby-Smith & Ramdas's hedged betting confidence sequence
("Estimating means of bounded random variables by betting", JRSS-B 2024), for sampling without replacement, of the
mean of a bounded paired difference over a split's queries. The construction and its price: docs/judged-design.md."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95  # the sequence's coverage, at every number of queries at once
TRUNCATE = 0.75  # a bet never stakes more than this share of the capital (the paper's c, 1/2 or 3/4)
GRID = 2001  # candidate means on [−1, 1] (a step of 0.001)


@dataclass(frozen=True)
class Sequence:
    """The confidence sequence after ``queries`` differences: [``low``, ``high``] (on [−1, 1]), and their mean."""

    queries: int
    mean: float
    low: float
    high: float

    @property
    def verdict(self) -> str:
        """``yes`` where the interval lies above 0, ``no`` where below, else ``not yet``."""
        return "yes" if self.low > 0 else "no" if self.high < 0 else "not yet"


def confidence_sequence(diffs: np.ndarray, population: int, planned: int | np.ndarray,
                        level: float = LEVEL) -> Sequence:
    """The running-intersection confidence sequence (docs/judged-design.md) of the mean of ``population`` values in [−1,
    1] of which ``diffs`` are the first drawn, in drawing order, without replacement, after the last of them;
    ``planned``: the number of queries the stakes are tuned for (one for all, or each query's). With no difference yet
    it is [−1, 1]."""
    return confidence_path(diffs, population, planned, level)[-1]


def confidence_path(diffs: np.ndarray, population: int, planned: int | np.ndarray,
                    level: float = LEVEL) -> list[Sequence]:
    """:func:`confidence_sequence` after none, the first, the first two, … of ``diffs``."""
    x = np.clip(np.asarray(diffs, dtype=np.float64), -1.0, 1.0)
    sizes = np.broadcast_to(np.asarray(planned, dtype=np.float64), x.shape)
    if len(x) > population:
        raise ValueError(f"{len(x)} differences drawn from a population of {population}")
    y = (x + 1.0) / 2.0
    m = np.linspace(0.0, 1.0, GRID)
    alpha = 1.0 - level
    log_up = np.zeros(GRID)  # log capital of the bettor on "above", then on "below"
    log_down = np.zeros(GRID)
    alive = np.ones(GRID, dtype=bool)  # the candidate means not yet rejected (the running intersection)
    path = [Sequence(0, 0.0, -1.0, 1.0)]
    for t, value in enumerate(y, start=1):
        before = y[: t - 1]
        var_hat = (0.25 + ((before - _running_means(before)) ** 2).sum()) / t  # the paper's, a prior of ¼
        stake = math.sqrt(2.0 * math.log(2.0 / alpha) / (var_hat * max(sizes[t - 1], 1.0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            m_t = (population * m - before.sum()) / (population - t + 1)
        possible = (m_t >= 0.0) & (m_t <= 1.0)  # a mean the values drawn so far leave reachable
        up = np.minimum(stake, TRUNCATE / np.maximum(m_t, 1e-12))
        down = np.minimum(stake, TRUNCATE / np.maximum(1.0 - m_t, 1e-12))
        with np.errstate(invalid="ignore", divide="ignore"):
            log_up += np.log1p(np.where(possible, up * (value - m_t), 0.0))
            log_down += np.log1p(np.where(possible, -down * (value - m_t), 0.0))
        capital = np.logaddexp(log_up, log_down) - math.log(2.0)
        kept = alive & possible & (capital < math.log(1.0 / alpha))
        alive = kept if kept.any() else alive  # all rejected (a chance below α): the last interval stands
        step = 1.0 / (GRID - 1)  # out to the next candidate rejected: the set's edge lies between the two
        low, high = max(float(m[alive].min()) - step, 0.0), min(float(m[alive].max()) + step, 1.0)
        path.append(Sequence(t, float(x[:t].mean()), 2 * low - 1, 2 * high - 1))
    return path


def _running_means(values: np.ndarray) -> np.ndarray:
    """The paper's μ̂_i after each value: (½ + the sum up to it) / (its position + 1)."""
    return (0.5 + np.cumsum(values)) / np.arange(2, len(values) + 2)
