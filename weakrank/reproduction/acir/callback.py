"""Drive a :class:`~weakrank.training.samplers.SwitchSampler` from the training loop (AC-IR).

Every ``every`` steps the callback measures validation MAP on a few dev queries, turns it into the
reward of the previous decision, and picks the sampler for the next ``every`` steps. The actor-critic
learns a transition once the next decision's action has run a step (it is then not terminal), or at
the episode's end (terminal): a training run is one episode, and an action chosen at a decision the
run ended on never ran, so nothing is learned from it. With ``uniform=True`` it is the paper's
random-policy baseline, which learns nothing. :func:`policy_callback` builds it for a trainer whose sampler is
``policy`` or ``random_policy`` (AC-IR's trainer plug-in: :mod:`weakrank.reproduction.acir.plugin`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from weakrank.io import write_text
from weakrank.plots import line_plot
from weakrank.reproduction.acir.agent import ActorCriticAgent
from weakrank.reproduction.acir.rewards import reward
from weakrank.reproduction.acir.state import TermWeightedEncoder, TrainingState
from weakrank.training.callbacks import TrainerCallback, TrainerView
from weakrank.training.config import TrainConfig
from weakrank.training.samplers import SwitchSampler

if TYPE_CHECKING:
    from weakrank.training.rankers import Ranker


class PolicyCallback(TrainerCallback):
    """AC-IR decisions every ``every`` steps, switching ``sampler``; records the sampler each step ran with and,
    given ``save_to``, saves the policy there once the episode's last update is learned."""

    def __init__(
        self,
        agent: ActorCriticAgent,
        encoder: TermWeightedEncoder,
        sampler: SwitchSampler,
        every: int,
        reward_kind: str = "diff",
        val_queries: int = 20,
        uniform: bool = False,
        seed: int = 0,
        ceiling: float = 1.0,
        save_to: str | Path | None = None,
    ) -> None:
        self.agent, self.encoder, self.sampler, self.every = agent, encoder, sampler, every
        self.save_to = save_to
        self.reward_kind = reward_kind
        self.val_queries, self.uniform, self.ceiling = val_queries, uniform, ceiling
        self.rng = np.random.default_rng(seed)
        self.maps: list[float] = []
        self.pending: tuple[np.ndarray, int, int] | None = None  # the last decision: state, action, step
        self.transition: tuple[np.ndarray, int, float, np.ndarray] | None = None  # (s, a, r, s') not yet learned
        self.actions: list[tuple[int, str]] = []
        self.td_errors: list[float] = []

    def _validation_map(self, trainer: TrainerView) -> float:
        if trainer.dev_data is None:
            return 0.0
        value = trainer.dev_metrics(self.val_queries)["map"]
        return 0.0 if np.isnan(value) else value

    def _learn(self, done: bool) -> None:
        """One TD update of the agent from the pending transition."""
        state, action, value, next_state = self.transition
        self.td_errors.append(self.agent.update(state, action, value, next_state, done=done))
        self.transition = None

    def _choose(self, state: np.ndarray) -> int:
        if self.uniform:
            return int(self.rng.integers(len(self.agent.actions)))
        return self.agent.act(state)

    def on_step(self, trainer: TrainerView, batch: Any, loss: float, grad_norm: float) -> None:
        step = trainer.progress.step
        self.actions.append((step, self.sampler.active))
        if self.transition is not None:  # the last decision's action ran this step: the episode went on
            self._learn(done=False)
        if step % self.every == 0 or step == 1:
            epoch_progress = trainer.progress.batch_in_epoch / trainer.steps_per_epoch
            signals = TrainingState(loss, grad_norm, epoch_progress, trainer.progress.epoch)
            state = self.encoder.state(signals, batch.queries, batch.positives)
            self.maps.append(self._validation_map(trainer))
            if self.pending is not None and not self.uniform:
                previous, action, _ = self.pending
                self.transition = (previous, action, reward(self.reward_kind, self.maps, self.ceiling), state)
            action = self._choose(state)
            self.pending = (state, action, step)
            self.sampler.active = self.agent.actions[action]

    def on_end(self, trainer: TrainerView) -> None:
        """Terminal update of the episode's last executed action; writes the action log."""
        if self.pending is not None and not self.uniform and trainer.progress.step > self.pending[2]:
            self.maps.append(self._validation_map(trainer))  # the last decision's action ran to the end
            state, action, _ = self.pending
            self.transition = (state, action, reward(self.reward_kind, self.maps, self.ceiling), state)
        if self.transition is not None:
            self._learn(done=True)
        if self.save_to:
            self.save(self.save_to)
        actions = pd.DataFrame(self.actions, columns=["step", "sampler"])
        write_text(actions.to_csv(index=False), trainer.out_dir / "policy_actions.csv")
        plot_action_frequencies(actions, trainer.out_dir / "policy_actions.png")

    def save(self, path: str | Path) -> None:
        """Keep the learned policy for the next episode or for reuse."""
        self.agent.save(path)


def policy_callback(tc: TrainConfig, model: Ranker, sampler: SwitchSampler, texts: list[str]) -> PolicyCallback:
    """AC-IR over the samplers of ``sampler`` (a switch), its state read with ``model``'s word embeddings weighted
    over the collection's ``texts``: a saved policy at ``policy_path`` is reused and, by a ``policy`` sampler (not
    the uniform ``random_policy``), updated and saved back."""
    encoder = TermWeightedEncoder(model.tokenizer, model.encoder.get_input_embeddings().weight, texts)
    actions = list(sampler.samplers)
    if tc.policy_path and Path(tc.policy_path).exists():
        agent = ActorCriticAgent.load(tc.policy_path, seed=tc.seed)
    else:
        agent = ActorCriticAgent(actions, encoder.state_dim, seed=tc.seed)
    return PolicyCallback(agent, encoder, sampler, tc.policy_every, tc.policy_reward, tc.policy_val_queries,
                          uniform=tc.sampler == "random_policy", seed=tc.seed, ceiling=tc.policy_ceiling,
                          save_to=tc.policy_path if tc.sampler == "policy" else None)


def plot_action_frequencies(actions: pd.DataFrame, path: Path, window: int = 20) -> Path:
    """Share of steps using each sampler over training (moving window)."""
    shares = pd.get_dummies(actions.set_index("step")["sampler"]).astype(float).rolling(window, min_periods=1).mean()
    return line_plot(shares, path, title="Negative sampler chosen by the policy", xlabel="training step",
                     ylabel=f"share of the last {window} steps")
