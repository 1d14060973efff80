"""One-step actor-critic (TD(0)) over a discrete set of negative samplers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from weakrank.files import atomic_path


def _mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inputs, hidden), nn.Tanh(), nn.Linear(hidden, outputs))


class ActorCriticAgent:
    """Actor π(a|s) and critic V(s), small MLPs updated by the TD error δ = r + γ V(s') − V(s)."""

    def __init__(
        self,
        actions: list[str],
        state_dim: int,
        hidden: int = 32,
        lr_actor: float = 1e-3,
        lr_critic: float = 1e-2,
        gamma: float = 1.0,
        seed: int = 0,
    ) -> None:
        self.actions, self.state_dim, self.hidden, self.gamma = list(actions), state_dim, hidden, gamma
        self.generator = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        self.actor = _mlp(state_dim, hidden, len(self.actions))
        self.critic = _mlp(state_dim, hidden, 1)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=lr_actor)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=lr_critic)

    def probabilities(self, state: np.ndarray) -> np.ndarray:
        """π(·|state)."""
        with torch.no_grad():
            return torch.softmax(self.actor(torch.as_tensor(state)), dim=-1).numpy()

    def act(self, state: np.ndarray, greedy: bool = False) -> int:
        """An action index drawn from π(·|state) (its argmax when ``greedy``)."""
        probs = torch.as_tensor(self.probabilities(state))
        if greedy:
            return int(probs.argmax())
        return int(torch.multinomial(probs, 1, generator=self.generator))

    def update(self, state: np.ndarray, action: int, reward: float, next_state: np.ndarray, done: bool) -> float:
        """One TD(0) step of critic and actor; returns the TD error δ."""
        s, s_next = torch.as_tensor(state), torch.as_tensor(next_state)
        value = self.critic(s).squeeze()
        with torch.no_grad():
            target = reward + (0.0 if done else self.gamma * self.critic(s_next).squeeze())
        delta = target - value
        self.critic_opt.zero_grad()
        delta.pow(2).backward()
        self.critic_opt.step()
        log_prob = torch.log_softmax(self.actor(s), dim=-1)[action]
        self.actor_opt.zero_grad()
        (-delta.detach() * log_prob).backward()
        self.actor_opt.step()
        return float(delta.detach())

    def save(self, path: str | Path) -> Path:
        """Write the policy (both networks and their optimisers) to one file, atomically."""
        state = {
            "actions": self.actions,
            "state_dim": self.state_dim,
            "hidden": self.hidden,
            "gamma": self.gamma,
            "actor": self.actor.state_dict(),
            "critic": self.critic.state_dict(),
            "actor_opt": self.actor_opt.state_dict(),
            "critic_opt": self.critic_opt.state_dict(),
        }
        with atomic_path(path) as tmp:
            torch.save(state, tmp)
        return Path(path)

    @classmethod
    def load(cls, path: str | Path, seed: int = 0) -> ActorCriticAgent:
        """A policy saved by :meth:`save`, ready to act or to go on learning."""
        state = torch.load(path, weights_only=True)
        agent = cls(state["actions"], state["state_dim"], state["hidden"], gamma=state["gamma"], seed=seed)
        for name in ("actor", "critic", "actor_opt", "critic_opt"):
            getattr(agent, name).load_state_dict(state[name])
        return agent
