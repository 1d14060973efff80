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
