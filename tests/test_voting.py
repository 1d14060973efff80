import numpy as np
import pytest

from weakrank.lf import VoteRule
from weakrank.voting import from_snorkel, rank_votes, to_snorkel


def test_default_rule_top1_positive_bottom_half_negative():
    scores = np.array([0.9, 0.1, 0.5, 0.3, 0.7])  # ranks: 0.9 > 0.7 > 0.5 > 0.3 > 0.1
    votes = rank_votes(scores, np.zeros(5))
    # top-1 → +1, floor(5/2)=2 lowest → −1, the rest abstain
    assert votes.tolist() == [1, -1, 0, -1, 0]


def test_rule_is_per_query_and_configurable():
    scores = np.array([3.0, 2.0, 1.0, 0.0, 10.0, 20.0])
    groups = np.array(["a", "a", "a", "a", "b", "b"])
    votes = rank_votes(scores, groups, VoteRule(top_k=2, bottom_fraction=0.25))
    assert votes.tolist() == [1, 1, 0, -1, 1, 1]


def test_ties_never_straddle_a_boundary():
    # all equal: nothing to tell apart, so the LF abstains on the whole list
    assert rank_votes(np.zeros(4), np.zeros(4)).tolist() == [0, 0, 0, 0]
    # two tied at the top with top_k=1: both abstain; the tied bottom pair fits in the bottom half
    votes = rank_votes(np.array([5.0, 5.0, 1.0, 1.0]), np.zeros(4))
    assert votes.tolist() == [0, 0, -1, -1]


def test_single_candidate_list_abstains():
    assert rank_votes(np.array([0.2]), np.array(["q"])).tolist() == [0]


def test_snorkel_conversion_round_trip():
    votes = np.array([[1, -1, 0], [0, 0, 1]], dtype=np.int8)
    labels = to_snorkel(votes)
    assert labels.tolist() == [[1, 0, -1], [-1, -1, 1]]
    assert (from_snorkel(labels) == votes).all()


def test_vote_rule_rejects_bad_values():
    with pytest.raises(ValueError):
        VoteRule(bottom_fraction=1.5)
    with pytest.raises(ValueError):
        VoteRule(top_k=-1)


def test_an_lf_that_cannot_rank_a_list_abstains_on_it():
    groups = np.array(["solo", "tied", "tied", "tied", "ok", "ok", "ok", "ok"])
    scores = np.array([5.0, 1.0, 1.0, 1.0, 4.0, 3.0, 2.0, 1.0])
    votes = rank_votes(scores, groups, VoteRule(top_k=1, bottom_fraction=0.5))
    assert votes.tolist() == [0, 0, 0, 0, 1, 0, -1, -1]
