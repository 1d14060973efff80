"""Adding a loss is one module plus one registry line: this module is that module (a squared-hinge objective with
an option of its own and a rule), and the subprocess below adds the registry line before anything reads the
registry, then configures, checks, flags and computes the new loss with no other file edited."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weakrank.training.batches import Batch
from weakrank.training.objectives.base import Objective, TrainSettings, check, pair_scores, refuse


@dataclass
class SquaredHingeOptions:
    squared_margin: float = field(default=1.0, metadata={
        "group": "objective", "help": "squared hinge: the margin, >= 0"})


@dataclass(frozen=True)
class SquaredHinge(Objective):
    """max(0, margin − s+ + s−)² per triplet."""

    loss = "squared_hinge"
    options = SquaredHingeOptions
    margin: float = 1.0

    def __post_init__(self) -> None:
        check(self.margin >= 0, "SquaredHinge", f"margin = {self.margin!r} must be >= 0")

    @classmethod
    def selects(cls, cfg: TrainSettings) -> bool:
        return cfg.loss == "squared_hinge"

    @classmethod
    def from_config(cls, cfg: TrainSettings) -> SquaredHinge:
        return cls(cfg.squared_margin)

    @classmethod
    def check_config(cls, cfg: TrainSettings) -> None:
        refuse(cfg.loss != "squared_hinge" or cfg.mode == "pairwise", "[train] squared_hinge is pairwise")
        check(cfg.squared_margin >= 0, "[train]", f"squared_margin = {cfg.squared_margin!r} must be >= 0")

    def __call__(self, model: Any, batch: Batch, step: int, total: int) -> Any:
        k = len(batch.queries)
        scores = pair_scores(model, batch)
        return (self.margin - scores[:k] + scores[k:]).clamp(min=0).pow(2).mean()


SCRIPT = r'''
import argparse
import numpy as np
import pytest
import torch

from tests.test_new_objective import SquaredHinge
from weakrank.training import objectives

objectives.OBJECTIVES.append(SquaredHinge)  # the registry line

from weakrank.commands.train import add_train_flags, options_table, train_overrides
from weakrank.errors import ConfigError
from weakrank.training.batches import Batch
from weakrank.training.config import TrainConfig

cfg = TrainConfig.from_dict({"mode": "pairwise", "loss": "squared_hinge", "squared_margin": 0.5})
assert cfg.squared_margin == 0.5
with pytest.raises(ConfigError, match="squared_margin = -1 must be >= 0"):
    TrainConfig(mode="pairwise", loss="squared_hinge", squared_margin=-1)
with pytest.raises(ConfigError, match="squared_hinge is pairwise"):
    TrainConfig(mode="pointwise", loss="squared_hinge")
with pytest.raises(ConfigError, match="mode = 'listwise' goes with loss = 'kl'"):
    TrainConfig(mode="listwise", loss="squared_hinge")
assert TrainConfig().squared_margin == 1.0 and TrainConfig().loss == "kl"  # the defaults are today's

parser = argparse.ArgumentParser()
add_train_flags(parser)
args = parser.parse_args(["--loss", "squared_hinge", "--mode", "pairwise", "--squared-margin", "2"])
assert train_overrides(args) == {"mode": "pairwise", "loss": "squared_hinge", "squared_margin": 2.0}
assert "| `squared_margin` | `--squared-margin` | `1.0` | objective |" in options_table()

objective = objectives.objective_from_config(cfg)
assert objective == SquaredHinge(0.5)


class Toy(torch.nn.Module):  # scores a pair by its passage's length
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(0.1))
        self.device = torch.device("cpu")

    def score(self, queries, passages):
        return self.w * torch.tensor([float(len(p)) for p in passages])


one = np.ones(2)
batch = Batch(["q1", "q2"], ["long passage", "pos"], ["neg", "a negative"], one, one, one, one)
model = Toy()
loss = objective(model, batch, 0, 10)
loss.backward()
expected = (0.0 + (0.5 - 0.1 * 3 + 0.1 * 10) ** 2) / 2  # the first triplet is past the margin
assert abs(loss.item() - expected) < 1e-6, (loss.item(), expected)
assert model.w.grad is not None
print("ok")
'''


def test_a_new_objective_is_one_module_and_one_registry_line():
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=root,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert run.returncode == 0, run.stderr
    assert run.stdout == "ok\n"


def test_the_registered_objectives_are_todays():
    from weakrank.training.objectives import OBJECTIVES, losses, option_classes

    assert [o.__name__ for o in OBJECTIVES] == ["Hinge", "SoftCrossEntropy", "LabelRelaxation", "InBatch", "ListwiseKL"]
    assert losses() == ("hinge", "ce", "kl")
    assert [c.__name__ for c in option_classes()] == ["HingeOptions", "ListwiseOptions"]
