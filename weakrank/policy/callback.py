"""Drive a :class:`~weakrank.training.samplers.SwitchSampler` from the training loop (AC-IR).

Every ``every`` steps the callback measures validation MAP on a few dev queries, turns it into a reward,
updates the actor-critic with the TD error of the last decision, and picks the sampler for the next
``every`` steps. A training run is one episode; its end is the terminal transition. With
``learn=False`` and ``uniform=True`` it is the paper's random-policy baseline.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.io import write_text
from weakrank.policy.agent import ActorCriticAgent
from weakrank.policy.rewards import reward
from weakrank.policy.state import TermWeightedEncoder, TrainingState


class PolicyCallback:
    """AC-IR decisions every ``every`` steps; records the chosen sampler of each step."""

    def __init__(
        self,
        agent: ActorCriticAgent,
        encoder: TermWeightedEncoder,
        every: int,
        reward_kind: str = "diff",
        val_queries: int = 20,
        uniform: bool = False,
        seed: int = 0,
    ) -> None:
        self.agent, self.encoder, self.every, self.reward_kind = agent, encoder, every, reward_kind
        self.val_queries, self.uniform = val_queries, uniform
        self.rng = np.random.default_rng(seed)
        self.maps: list[float] = []
        self.pending: tuple[np.ndarray, int] | None = None
        self.actions: list[tuple[int, str]] = []
        self.td_errors: list[float] = []

    def _validation_map(self, trainer) -> float:
        from weakrank.training.trainer import ranking_metrics

        if trainer.dev_data is None:
            return 0.0
        value = ranking_metrics(trainer.model, trainer.dev_data, trainer.dev_queries[: self.val_queries])["map"]
        return 0.0 if np.isnan(value) else value

    def _choose(self, state: np.ndarray) -> int:
        if self.uniform:
            return int(self.rng.integers(len(self.agent.actions)))
        return self.agent.act(state)

    def __call__(self, trainer, batch, loss: float, grad_norm: float) -> None:
        step = trainer.progress.step
        if step % self.every == 0 or step == 1:
            per_epoch = -(-len(trainer.data.anchors) // trainer.cfg.batch_size)
            signals = TrainingState(loss, grad_norm, trainer.progress.batch_in_epoch / per_epoch, trainer.progress.epoch)
            state = self.encoder.state(signals, batch.queries, batch.positives)
            self.maps.append(self._validation_map(trainer))
            if self.pending is not None and not self.uniform:
                previous, action = self.pending
                self.td_errors.append(self.agent.update(previous, action, reward(self.reward_kind, self.maps), state, done=False))
            action = self._choose(state)
            self.pending = (state, action)
            trainer.sampler.active = self.agent.actions[action]
        self.actions.append((step, trainer.sampler.active))

    def on_end(self, trainer) -> None:
        """Terminal update of the episode; writes the action log and the policy."""
        if self.pending is not None and not self.uniform:
            self.maps.append(self._validation_map(trainer))
            state, action = self.pending
            self.td_errors.append(self.agent.update(state, action, reward(self.reward_kind, self.maps), state, done=True))
        actions = pd.DataFrame(self.actions, columns=["step", "sampler"])
        write_text(actions.to_csv(index=False), trainer.out_dir / "policy_actions.csv")
        plot_action_frequencies(actions, trainer.out_dir / "policy_actions.png")

    def save(self, path: str | Path) -> None:
        """Keep the learned policy for the next episode or for reuse."""
        self.agent.save(path)


def plot_action_frequencies(actions: pd.DataFrame, path: Path, window: int = 20) -> Path:
    """Share of steps using each sampler over training (moving window)."""
    from weakrank.plots import line_plot

    shares = pd.get_dummies(actions.set_index("step")["sampler"]).astype(float).rolling(window, min_periods=1).mean()
    return line_plot(shares, path, title="Negative sampler chosen by the policy", xlabel="training step",
                     ylabel=f"share of the last {window} steps")
