"""AC-IR (the AC-IR paper, seed 001): an actor-critic agent that picks the negative sampler during training."""

from weakrank.policy.agent import ActorCriticAgent
from weakrank.policy.rewards import REWARDS, reward
from weakrank.policy.state import TermWeightedEncoder, TrainingState

__all__ = ["REWARDS", "ActorCriticAgent", "TermWeightedEncoder", "TrainingState", "reward"]
