import numpy as np
import pytest

from weakrank.errors import WeakrankError
from weakrank.label_models import GenerativeModel, MajorityVote, SnorkelLabelModel, labels_from_proba, make_label_model


def simulate(n: int, alpha, beta, gamma: float, seed: int = 0):
    """Votes of conditionally independent LFs with accuracy alpha and propensity beta."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < gamma, 1, -1)
    votes = np.zeros((n, len(alpha)), dtype=np.int8)
    for i, (a, b) in enumerate(zip(alpha, beta)):
        votes[:, i] = np.where(rng.random(n) < b, np.where(rng.random(n) < a, y, -y), 0)
    return votes, y


def test_majority_vote_on_a_hand_matrix():
    votes = np.array([[1, 1, -1], [-1, -1, 0], [1, -1, 0], [0, 0, 0], [1, 0, 0]])
    p = MajorityVote().predict_proba(votes)
    assert p.tolist() == pytest.approx([2 / 3, 0.0, 0.5, 0.5, 1.0])
    label, confidence = labels_from_proba(p)
    assert label.tolist() == [1, 0, 0, 0, 1]
    assert confidence.tolist() == pytest.approx([2 / 3, 1.0, 0.5, 0.5, 1.0])


def test_generative_model_recovers_simulated_parameters():
    alpha, beta, gamma = [0.9, 0.8, 0.7, 0.6], [0.5, 0.7, 0.9, 0.3], 0.3
    votes, y = simulate(200_000, alpha, beta, gamma)
    model = GenerativeModel().fit(votes)
    assert np.abs(model.alpha_ - alpha).max() < 0.05
    assert np.abs(model.beta_ - beta).max() < 0.01
    assert abs(model.gamma_ - gamma) < 0.02
    assert np.all(np.diff(model.log_likelihood_) > -1e-9)  # EM never decreases the likelihood
    accuracy = ((model.predict_proba(votes) > 0.5) == (y == 1)).mean()
    mv_accuracy = ((MajorityVote().predict_proba(votes) > 0.5) == (y == 1)).mean()
    assert accuracy > mv_accuracy  # weighting LFs by accuracy beats counting them


def test_generative_model_keeps_alpha_above_half_and_honours_a_fixed_prior():
    votes, _ = simulate(20_000, [0.9, 0.45, 0.8], [0.8, 0.8, 0.8], 0.5, seed=1)
    model = GenerativeModel(prior=0.2).fit(votes)
    assert model.gamma_ == 0.2
    assert (model.alpha_ > 0.5).all()


def test_snorkel_label_model_learns_from_the_same_votes():
    votes, y = simulate(20_000, [0.9, 0.8, 0.7], [0.6, 0.6, 0.6], 0.4, seed=2)
    p = SnorkelLabelModel(n_epochs=200).fit(votes).predict_proba(votes)
    assert ((p > 0.5) == (y == 1)).mean() > 0.8
    assert len(SnorkelLabelModel().fit(votes).params()["lf_accuracy"]) == 3


def test_label_models_refuse_too_few_lfs_and_bad_votes():
    one = np.array([[1], [-1]])
    with pytest.raises(WeakrankError, match="at least 2 LFs, got 1"):
        GenerativeModel().fit(one)
    with pytest.raises(WeakrankError, match="at least 2 LFs"):
        MajorityVote().predict_proba(one)
    with pytest.raises(WeakrankError, match="at least 3 LFs"):
        SnorkelLabelModel().fit(np.array([[1, -1], [0, 1]]))
    with pytest.raises(WeakrankError, match="must be \\+1"):
        MajorityVote().predict_proba(np.array([[2, 1]]))


def test_generative_model_refuses_an_lf_that_never_votes():
    with pytest.raises(ValueError, match=r"column\(s\) \[1\] abstain"):
        GenerativeModel().fit(np.array([[1, 0], [-1, 0], [1, 0]]))


def test_make_label_model_by_name():
    assert isinstance(make_label_model("generative", prior=0.1), GenerativeModel)
    with pytest.raises(WeakrankError, match="unknown label model"):
        make_label_model("oracle")
