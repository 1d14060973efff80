"""AC-IR's ``[train]`` options (Cohen et al.): how often the policy chooses, its reward, its saved file. Composed
into :class:`~weakrank.training.config.TrainConfig` through the trainer plug-in
(:mod:`weakrank.reproduction.acir.plugin`); loads without torch, as the CLI's flags are built from it."""

from __future__ import annotations

from dataclasses import dataclass, field

REWARDS = ("diff", "raw", "ceil", "ceil_running")  # computed by weakrank.reproduction.acir.rewards


@dataclass
class PolicyOptions:
    """The sampling policy's options (samplers ``policy`` and ``random_policy``)."""

    policy_every: int = field(default=20, metadata={
        "group": "objective", "help": "AC-IR: steps between two sampler choices"})
    policy_reward: str = field(default="diff", metadata={
        "group": "objective", "choices": REWARDS,
        "help": "AC-IR reward: change of validation MAP (diff), MAP (raw), MAP − ceiling (ceil) or MAP − best so far "
                "(ceil_running)"})
    policy_ceiling: float = field(default=1.0, metadata={
        "group": "objective", "help": "AC-IR: m_max of the ceil reward (R_ceil = MAP − m_max)"})
    policy_path: str = field(default="", metadata={
        "group": "objective", "help": "AC-IR: file to load the policy from and save it to ('': none)"})
    policy_val_queries: int = field(default=20, metadata={
        "group": "objective", "help": "AC-IR: dev queries of the reward's validation MAP"})
