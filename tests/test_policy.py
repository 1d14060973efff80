from types import SimpleNamespace

import numpy as np
import pytest
import torch

from weakrank.reproduction.acir import ActorCriticAgent, TermWeightedEncoder, TrainingState, reward
from weakrank.reproduction.acir.callback import PolicyCallback


def test_rewards_by_hand():
    history = [0.30, 0.35, 0.33]
    assert reward("raw", history) == pytest.approx(0.33)
    assert reward("diff", history) == pytest.approx(-0.02)
    assert reward("ceil_running", history) == pytest.approx(-0.02)  # 0.33 − best so far (0.35)
    assert reward("ceil_running", [0.3, 0.2, 0.4]) == pytest.approx(0.1)
    assert reward("diff", [0.3]) == 0.0
    with pytest.raises(ValueError):
        reward("best", history)


def test_r_ceil_is_the_distance_to_a_constant_ceiling():
    history = [0.30, 0.35, 0.33]
    # R_ceil = MAP_t − m_max: 0.33 − 1 (MAP's maximum, the default) and 0.33 − 0.5 with m_max = 0.5
    assert reward("ceil", history) == pytest.approx(-0.67)
    assert reward("ceil", history, ceiling=0.5) == pytest.approx(-0.17)
    assert reward("ceil", [0.40]) == pytest.approx(-0.60)  # no previous MAP needed
    assert reward("ceil", [0.2, 0.9, 0.5], ceiling=0.5) == pytest.approx(0.0)  # not 0.5 − 0.9 (running best)


class RecordingAgent(ActorCriticAgent):
    """An agent that records each update as (decision step, action, reward, next decision step, done)."""

    def __init__(self) -> None:
        super().__init__(["bm25", "random"], state_dim=2, seed=0)
        self.updates: list[tuple[float, int, float, float, bool]] = []

    def update(self, state, action, reward, next_state, done):
        self.updates.append((float(state[0]), action, round(reward, 9), float(next_state[0]), done))
        return super().update(state, action, reward, next_state, done)


def run_episode(tmp_path, steps: int, maps: dict[int, float], **options) -> PolicyCallback:
    """``steps`` training steps of a fake trainer with a decision every 2 steps; the state's first entry is
    the decision's step and the validation MAP at step s is ``maps[s]``."""
    encoder = SimpleNamespace(state=lambda signals, *texts: np.array([signals.epoch_progress, 1.0], np.float32))
    sampler = SimpleNamespace(active="bm25")
    callback = PolicyCallback(RecordingAgent(), encoder, sampler, every=2, **options)
    callback._validation_map = lambda trainer: maps[trainer.progress.step]
    progress = SimpleNamespace(step=0, batch_in_epoch=0, epoch=0)
    trainer = SimpleNamespace(progress=progress, steps_per_epoch=1, out_dir=tmp_path)  # one anchor
    batch = SimpleNamespace(queries=["q"], positives=["p"])
    for step in range(1, steps + 1):
        trainer.progress.step = trainer.progress.batch_in_epoch = step  # epoch progress = step / 1 batch per epoch
        callback.on_step(trainer, batch, 0.5, 1.0)
    callback.on_end(trainer)
    return callback


def test_an_action_that_never_ran_is_not_learned_from(tmp_path):
    # decisions at steps 1, 2 and 4; the run ends at step 4 (max_steps or early stopping), so the action
    # chosen at step 4 never runs. Learned: (s1, a1, 0.5 − 0.2, s2) once a2 ran step 3, not terminal;
    # (s2, a2, 0.6 − 0.5, s4) at the end, terminal. The old code also learned (s4, a4, 0.6 − 0.6 = 0, done).
    callback = run_episode(tmp_path, 4, {1: 0.2, 2: 0.5, 4: 0.6})
    updates = callback.agent.updates
    learned = [(s, r, s_next, done) for s, _, r, s_next, done in updates]
    assert learned == [(1.0, 0.3, 2.0, False), (2.0, 0.1, 4.0, True)]
    assert len(callback.td_errors) == 2
    first, second = (callback.agent.actions[a] for _, a, *_ in updates)
    # the log holds the sampler each step ran with: the initial one, then a1, then a2 twice
    log = (tmp_path / "policy_actions.csv").read_text().split()
    assert log == ["step,sampler", "1,bm25", f"2,{first}", f"3,{second}", f"4,{second}"]


def test_the_last_action_that_ran_to_the_end_is_the_terminal_update(tmp_path):
    # decisions at 1, 2, 4; step 5 runs a4, whose reward is the final MAP's: R_ceil = 0.7 − 0.8
    callback = run_episode(tmp_path, 5, {1: 0.2, 2: 0.5, 4: 0.6, 5: 0.7}, reward_kind="ceil", ceiling=0.8)
    learned = [(s, r, done) for s, _, r, _, done in callback.agent.updates]
    assert learned == [(1.0, -0.3, False), (2.0, -0.2, False), (4.0, -0.1, True)]
    assert run_episode(tmp_path, 5, {1: 0.2, 2: 0.5, 4: 0.6, 5: 0.7}, uniform=True).agent.updates == []


def test_the_episode_ends_by_saving_the_learned_policy_when_given_a_file(tmp_path):
    callback = run_episode(tmp_path, 5, {1: 0.2, 2: 0.5, 4: 0.6, 5: 0.7}, save_to=tmp_path / "policy.pt")
    state = np.array([4.0, 1.0], np.float32)
    assert np.allclose(ActorCriticAgent.load(tmp_path / "policy.pt").probabilities(state),
                       callback.agent.probabilities(state))


def test_a_trainer_finds_the_policy_samplers_callback_through_the_plugin():
    from weakrank.reproduction.acir.options import PolicyOptions
    from weakrank.reproduction.acir.plugin import PLUGIN, policy_callback
    from weakrank.training.config import TrainConfig
    from weakrank.training.plugins import plugins, sampler_callback

    assert PLUGIN in plugins() and issubclass(TrainConfig, PolicyOptions)  # AC-IR's [train] keys, from its package
    assert sampler_callback("policy") is policy_callback and sampler_callback("random_policy") is policy_callback
    assert sampler_callback("bm25") is None


def test_update_changes_both_networks_and_learns_the_better_action():
    agent = ActorCriticAgent(["bm25", "random"], state_dim=4, seed=0)
    state = np.ones(4, dtype=np.float32)
    before = [p.clone() for p in list(agent.actor.parameters()) + list(agent.critic.parameters())]
    delta = agent.update(state, action=0, reward=1.0, next_state=state, done=False)
    after = list(agent.actor.parameters()) + list(agent.critic.parameters())
    assert np.isfinite(delta)
    assert all(not torch.equal(b, a) for b, a in zip(before, after))
    for _ in range(200):  # action 0 always pays, action 1 never does
        a = agent.act(state)
        agent.update(state, a, 1.0 if a == 0 else 0.0, state, done=True)
    assert agent.probabilities(state)[0] > 0.9


def test_saved_policy_acts_the_same(tmp_path):
    agent = ActorCriticAgent(["bm25", "random", "mixed"], state_dim=3, seed=1)
    agent.update(np.ones(3, dtype=np.float32), 2, 0.5, np.zeros(3, dtype=np.float32), done=False)
    back = ActorCriticAgent.load(agent.save(tmp_path / "policy.pt"))
    s = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    assert np.allclose(back.probabilities(s), agent.probabilities(s))
    assert back.actions == ["bm25", "random", "mixed"]


def test_state_vector_from_the_real_tokenizer():
    from transformers import AutoModel, AutoTokenizer

    from weakrank.encoders import resolve_model

    path = resolve_model("minilm")
    tokenizer = AutoTokenizer.from_pretrained(path)
    embeddings = AutoModel.from_pretrained(path).get_input_embeddings().weight
    collection = ["the cat sat on the mat", "stock markets fell", "a cat and a dog"]
    encoder = TermWeightedEncoder(tokenizer, embeddings, collection, dim=8)
    signals = TrainingState(loss=0.7, grad_norm=3.0, epoch_progress=0.5, epoch=1)
    state = encoder.state(signals, ["where is the cat"], ["the cat sat on the mat"])
    assert state.shape == (encoder.state_dim,) == (20,)
    assert np.isfinite(state).all()
    assert not np.allclose(encoder.encode(["cat"]), encoder.encode(["stock markets"]))


@pytest.mark.slow
def test_one_ac_ir_episode_on_real_data_updates_both_networks(tmp_path):
    from tests.conftest import shared
    from weakrank.loaders import load_dataset
    from weakrank.training import TrainConfig
    from weakrank.training.build import trainer_from_config
    from weakrank.training.data import TrainingData
    from weakrank.training.evaluators import dev_evaluator

    ds = load_dataset("trecqa", shared("trecqa"), splits=("train", "dev")).subset(max_queries=8)
    labels = ds.candidates.assign(label=ds.candidates["gold"].astype(int), confidence=0.9,
                                  score_bm25=-ds.candidates["rank"].astype(float))
    data = TrainingData(labels, ds.queries, ds.passages, "train")
    dev = TrainingData(labels, ds.queries, ds.passages, "dev")
    cfg = TrainConfig(mode="pairwise", loss="hinge", head_lr=0.0, max_epochs=0.0, freeze_embeddings=False,
                      sampler="policy", batch_size=2, max_length=32, max_steps=4, policy_every=2, policy_val_queries=2,
                      eval_every=0, checkpoint_every=0, dev_queries=4, lr=1e-4)
    trainer = trainer_from_config(cfg, data, dev_evaluator(dev, cfg), tmp_path / "episode", ds.passages)
    [callback] = trainer.callbacks  # the AC-IR callback a policy sampler comes with
    before = [p.clone() for p in list(callback.agent.actor.parameters()) + list(callback.agent.critic.parameters())]
    trainer.fit(show_progress=False)
    after = list(callback.agent.actor.parameters()) + list(callback.agent.critic.parameters())
    assert all(not torch.equal(b, a) for b, a in zip(before, after))
    # decisions at steps 1, 2 and 4: the first learned at step 3, the second (terminal) at the episode's end;
    # the action chosen at step 4 never ran
    assert len(callback.td_errors) == 2 and np.isfinite(callback.td_errors).all()
    actions = (tmp_path / "episode" / "policy_actions.csv").read_text().splitlines()
    assert len(actions) == 1 + 4 and all(a.split(",")[1] in {"bm25", "random"} for a in actions[1:])
    assert (tmp_path / "episode" / "policy_actions.png").stat().st_size > 1000
