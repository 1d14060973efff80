import numpy as np
import pytest
import torch

from weakrank.policy import ActorCriticAgent, TermWeightedEncoder, TrainingState, reward


def test_rewards_by_hand():
    history = [0.30, 0.35, 0.33]
    assert reward("raw", history) == pytest.approx(0.33)
    assert reward("diff", history) == pytest.approx(-0.02)
    assert reward("ceil", history) == pytest.approx(-0.02)  # 0.33 − best so far (0.35)
    assert reward("ceil", [0.3, 0.2, 0.4]) == pytest.approx(0.1)
    assert reward("diff", [0.3]) == 0.0
    with pytest.raises(ValueError):
        reward("best", history)


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

    from weakrank.models import resolve_model

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


def test_one_ac_ir_episode_on_real_data_updates_both_networks(tmp_path):
    from tests.conftest import shared
    from weakrank.datasets import load_dataset
    from weakrank.training import TrainConfig
    from weakrank.training.data import TrainingData
    from weakrank.training.run import policy_callback
    from weakrank.training.trainer import Trainer

    ds = load_dataset("trecqa", shared("trecqa"), splits=("train", "dev")).subset(max_queries=8)
    labels = ds.candidates.assign(label=ds.candidates["gold"].astype(int), confidence=0.9,
                                  score_bm25=-ds.candidates["rank"].astype(float))
    data = TrainingData(labels, ds.queries, ds.passages, "train")
    dev = TrainingData(labels, ds.queries, ds.passages, "dev")
    cfg = TrainConfig(sampler="policy", batch_size=2, max_length=32, max_steps=4, policy_every=2, policy_val_queries=2,
                      eval_every=0, checkpoint_every=0, dev_queries=4, lr=1e-4)
    trainer = Trainer(cfg, data, dev, tmp_path / "episode", ds.passages["passage_id"].tolist())
    callback = policy_callback(cfg, trainer, ds)
    trainer.callbacks.append(callback)
    before = [p.clone() for p in list(callback.agent.actor.parameters()) + list(callback.agent.critic.parameters())]
    trainer.fit(show_progress=False)
    after = list(callback.agent.actor.parameters()) + list(callback.agent.critic.parameters())
    assert all(not torch.equal(b, a) for b, a in zip(before, after))
    # decisions at steps 1, 2 and 4: updates at 2 and 4, then the terminal one at the episode's end
    assert len(callback.td_errors) == 3 and np.isfinite(callback.td_errors).all()
    actions = (tmp_path / "episode" / "policy_actions.csv").read_text().splitlines()
    assert len(actions) == 1 + 4 and all(a.split(",")[1] in {"bm25", "random"} for a in actions[1:])
    assert (tmp_path / "episode" / "policy_actions.png").stat().st_size > 1000
