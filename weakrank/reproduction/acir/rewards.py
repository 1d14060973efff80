"""Rewards of the sampling policy, from the validation MAP measured after each decision.

* ``diff`` (R_diff): MAP_t − MAP_{t−1}, the paper's default (with γ = 1 the returns telescope to the
  final MAP gain);
* ``raw`` (R_raw): MAP_t;
* ``ceil`` (R_ceil): MAP_t − m_max, the distance to a constant ceiling m_max (by default 1, MAP's maximum);
* ``ceil_running``: MAP_t − max(MAP_0 … MAP_{t−1}), only new bests are rewarded (not the paper's R_ceil).
"""

from __future__ import annotations

from collections.abc import Sequence

from weakrank.reproduction.acir.options import REWARDS  # declared with the [train] option that chooses one


def reward(kind: str, history: Sequence[float], ceiling: float = 1.0) -> float:
    """Reward of the last entry of ``history`` (validation MAP after each decision, oldest first);
    ``ceiling`` is R_ceil's constant m_max."""
    if kind not in REWARDS:
        raise ValueError(f"unknown reward {kind!r}; choose one of {REWARDS}")
    if not history:
        raise ValueError("reward needs at least one validation MAP")
    current = history[-1]
    if kind == "raw":
        return float(current)
    if kind == "ceil":
        return float(current - ceiling)
    if len(history) == 1:
        return 0.0
    previous = history[-2] if kind == "diff" else max(history[:-1])
    return float(current - previous)
