"""AC-IR (Cohen et al.): an actor-critic agent that picks the negative sampler during training.

The names below are imported on first use (``weakrank.reproduction.acir.rewards`` stays free of torch for the CLI)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from weakrank.reproduction.acir.agent import ActorCriticAgent
    from weakrank.reproduction.acir.rewards import REWARDS, reward
    from weakrank.reproduction.acir.state import TermWeightedEncoder, TrainingState

__all__ = ["REWARDS", "ActorCriticAgent", "TermWeightedEncoder", "TrainingState", "reward"]
_HOMES = {"ActorCriticAgent": "agent", "REWARDS": "rewards", "reward": "rewards", "TermWeightedEncoder": "state",
          "TrainingState": "state"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'weakrank.reproduction.acir' has no attribute {name!r}")
    return getattr(importlib.import_module(f"weakrank.reproduction.acir.{_HOMES[name]}"), name)
