"""Maths over each query's list (weakrank.lists): by hand on small groups, and AP against ir-measures."""

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import AP

from weakrank.lists import (
    average_precisions,
    informative_rows,
    minmax_over,
    minmax_within,
    reciprocal_ranks,
    softmax_within,
    standardize_within,
)

# two interleaved groups: a holds 1, 2, 3 (column 0) and b holds 5, 5 (tied); column 1 ties in a, ranks b
GROUPS = np.array(["a", "b", "a", "b", "a"])
SCORES = np.array([[1.0, 7.0], [5.0, 0.0], [2.0, 7.0], [5.0, 4.0], [3.0, 7.0]])


def test_standardize_within_by_hand():
    z = standardize_within(SCORES, GROUPS)
    root = np.sqrt(1.5)  # a: mean 2, population std sqrt(2/3), so 1 and 3 are ∓sqrt(3/2)
    np.testing.assert_allclose(z[:, 0], [-root, 0.0, 0.0, 0.0, root])  # b tied: 0
    np.testing.assert_allclose(z[:, 1], [0.0, -1.0, 0.0, 1.0, 0.0])  # a tied: 0; b: mean 2, std 2


def test_informative_rows_are_the_lists_a_column_ranks():
    assert informative_rows(SCORES, GROUPS).tolist() == [[True, False], [False, True], [True, False],
                                                         [False, True], [True, False]]


def test_softmax_within_by_hand():
    scores = np.array([np.log(3), 1000.0, 0.0, 1000.0, 1000.0 + np.log(2)])
    groups = np.array(["a", "b", "a", "b", "b"])
    # a: 3 / (3 + 1) and 1 / 4; b: 1, 1, 2 over 4 (no overflow at 1000: shifted by the group's max)
    np.testing.assert_allclose(softmax_within(scores, groups), [0.75, 0.25, 0.25, 0.25, 0.5])
    np.testing.assert_allclose(softmax_within(scores + 7.0, groups), softmax_within(scores, groups))


def test_minmax_within_by_hand():
    values = np.array([2.0, 9.0, 4.0, 9.0, 3.0])
    np.testing.assert_allclose(minmax_within(values, GROUPS), [0.0, 0.5, 1.0, 0.5, 0.5])  # b constant: 0.5


def test_minmax_over_the_masked_entries():
    values = np.array([1.0, 5.0, 30.0, 9.0])
    np.testing.assert_allclose(minmax_over(values, np.array([True, True, False, True])), [0.0, 0.5, np.nan, 1.0])
    np.testing.assert_allclose(minmax_over(values, np.array([False, True, False, False])), [np.nan, 0.5, np.nan, np.nan])
    assert np.isnan(minmax_over(values, np.zeros(4, dtype=bool))).all()


def test_average_precision_by_hand():
    groups = np.array([0, 0, 0, 1, 1, 2, 2, 3, 3])
    gold = np.array([0, 1, 0, 1, 0, np.nan, np.nan, 0, 0])  # query 2 unjudged, query 3 without a relevant row
    aps = average_precisions(np.array([3, 2, 1, 5, 1, 0, 0, 1, 2.0]), groups, gold)
    assert aps.to_dict() == {0: pytest.approx(0.5), 1: pytest.approx(1.0)}


def test_unjudged_rows_are_left_out_of_the_list():
    gold = np.array([np.nan, 0, 1, np.nan])  # the unjudged rows ranked first and third do not count
    assert average_precisions(np.array([9.0, 3, 2, 1]), np.zeros(4), gold).to_dict() == {0: pytest.approx(0.5)}


def test_ties_count_against_the_relevant_row():
    groups = np.array([0, 0, 0, 1, 1, 1, 1])
    gold = np.array([0, 1, 0, 1, 0, 1, 0.0])
    # query 0: all tied, the relevant row last: 1/3; query 1: 2 first, then three tied with one relevant, which
    # goes to rank 4: (1/1 + 2/4) / 2
    aps = average_precisions(np.array([1, 1, 1, 2, 1, 1, 1.0]), groups, gold)
    assert aps.to_dict() == {0: pytest.approx(1 / 3), 1: pytest.approx(0.75)}
    # the order of the rows does not matter
    order = np.array([1, 0, 2, 5, 6, 3, 4])
    pd.testing.assert_series_equal(average_precisions(np.array([1, 1, 1, 2, 1, 1, 1.0])[order], groups[order],
                                                      gold[order]).sort_index(), aps.sort_index())


@pytest.mark.parametrize("seed", range(5))
def test_average_precision_equals_ir_measures_without_ties(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, size=40)
    groups = np.repeat([f"q{i}" for i in range(len(sizes))], sizes)
    scores = rng.permutation(len(groups)) / 7.0  # no ties
    gold = rng.choice([0.0, 1.0, np.nan], p=[0.6, 0.2, 0.2], size=len(groups))
    order = rng.permutation(len(groups))  # rows of all lists mixed
    groups, scores, gold = groups[order], scores[order], gold[order]
    ours = average_precisions(scores, groups, gold)

    judged = np.isfinite(gold)  # ir-measures gets the condensed run: the judged rows only
    docs = np.array([f"d{i}" for i in range(len(groups))])
    qrels = pd.DataFrame({"query_id": groups[judged], "doc_id": docs[judged], "relevance": gold[judged].astype(int)})
    run = pd.DataFrame({"query_id": groups[judged], "doc_id": docs[judged], "score": scores[judged]})
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([AP], qrels, run)}
    with_relevant = set(qrels.loc[qrels["relevance"] > 0, "query_id"])
    assert len(with_relevant) > 10 and set(ours.index) == with_relevant
    for qid in with_relevant:
        assert ours[qid] == pytest.approx(theirs[qid], abs=1e-12), qid


def test_reciprocal_ranks_by_hand():
    """1 / (60 + rank) within each list, ties sharing their mean rank; 0 where a column does not rank the list."""
    z = np.array([[3.0, 1.0], [1.0, 2.0], [1.0, 0.0], [5.0, 0.0]])
    groups = np.array(["a", "a", "a", "b"])
    informative = np.array([[True, True], [True, True], [True, True], [True, False]])
    expected = np.array([[1 / 61, 1 / 62], [1 / 62.5, 1 / 61], [1 / 62.5, 1 / 63], [1 / 61, 0.0]])
    np.testing.assert_allclose(reciprocal_ranks(z, groups, informative), expected)
