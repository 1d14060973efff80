"""AC-IR in the experiment grid: a ``policy`` row's seeds are successive episodes of one policy."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from weakrank.errors import DataError
from weakrank.reproduction import grid
from weakrank.reproduction.acir import ActorCriticAgent
from weakrank.sections import AggregateConfig, ExperimentConfig


def grid_config(run_dir, seeds):
    experiment = ExperimentConfig(label_models=["generative"], variants=["hinge"], samplers=["bm25", "policy"],
                                  seeds=seeds, supervised=False)
    return SimpleNamespace(run_dir=run_dir, name="acir", source=None, train=None, aggregate=AggregateConfig(),
                           experiment=experiment)


def policy_cells(cfg) -> list[grid.Cell]:
    return [c for c in grid.grid_cells(cfg, pd.DataFrame()) if dict(c.params).get("sampler") == "policy"]


def test_a_policy_cell_depends_on_the_seeds_before_it(tmp_path):
    cells = policy_cells(grid_config(tmp_path, [0, 1, 2]))
    assert [dict(c.params)["policy_after"] for c in cells] == [(), (0,), (0, 1)]
    fixed = [c for c in grid.grid_cells(grid_config(tmp_path, [0, 1, 2]), pd.DataFrame()) if c not in cells]
    assert len(fixed) == 1 + 3 and all("policy_after" not in dict(c.params) for c in fixed)  # generative, NS bm25
    # seed 1 as the first episode is another cell than seed 1 after seed 0
    assert policy_cells(grid_config(tmp_path, [1]))[0].key != cells[1].key


def test_trained_run_carries_the_policy_from_seed_to_seed(tmp_path, monkeypatch):
    cfg = grid_config(tmp_path, [0, 1])
    (tmp_path / "dataset").mkdir()
    pd.DataFrame({"query_id": ["q", "q"], "passage_id": ["a", "b"], "relevance": [1, 0]}).to_parquet(
        tmp_path / "dataset" / "qrels.parquet")
    for seed in (0, 1):
        (tmp_path / "experiment" / "labels").mkdir(parents=True, exist_ok=True)
        (tmp_path / "experiment" / "labels" / f"generative_noise0_seed{seed}.parquet").touch()
    state = np.ones(3, dtype=np.float32)
    started_from = []

    def fake_train(cfg, tc, progress):
        """One 'episode': continue the policy at policy_path (or a fresh one), write it and a history."""
        path = tc.policy_path
        agent = ActorCriticAgent.load(path) if Path(path).exists() else ActorCriticAgent(["bm25", "random"], 3)
        started_from.append(agent.probabilities(state))
        agent.update(state, 0, 1.0, state, done=True)
        agent.save(path)
        history = pd.DataFrame({"step": [1], "dev_recall@1": [0.5]})
        history.to_csv(tmp_path / tc.output / "history.csv", index=False)

    monkeypatch.setattr(grid, "train_ranker", fake_train)
    monkeypatch.setattr(grid, "model_dir", lambda cfg, output: output)
    monkeypatch.setattr(grid, "score_split", lambda *args: pd.DataFrame())
    first, second = policy_cells(cfg)
    root = tmp_path / "experiment"
    stale = ActorCriticAgent(["bm25", "random"], 3, seed=7)
    stale.save(root / "models" / first.key / "policy.pt")  # left by an interrupted attempt
    grid.trained_run(cfg, first, root / "models" / first.key)
    grid.trained_run(cfg, second, root / "models" / second.key)
    ended = ActorCriticAgent.load(grid.policy_file(root, first)).probabilities(state)
    assert np.allclose(started_from[1], ended)  # seed 1 continued the policy seed 0 ended with
    assert np.allclose(started_from[0], ActorCriticAgent(["bm25", "random"], 3).probabilities(state))  # a fresh agent
    assert not np.allclose(started_from[0], ended)
    assert grid.policy_file(root, second).exists() and (root / "history" / f"{second.key}.csv").exists()
    assert not (root / "models" / second.key).exists()
    grid.policy_file(root, first).unlink()
    with pytest.raises(DataError, match="no policy of seed 0"):
        grid.trained_run(cfg, second, root / "models" / second.key)
