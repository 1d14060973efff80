"""One protocol for every label model: fit on a votes table, P(relevant) of each row, its labels table."""

import numpy as np
import pandas as pd
import pytest

from weakrank.errors import WeakrankError
from weakrank.label_models import MODELS, ScoreFusionModel, fit_labels, fit_predict, make_label_model, with_labels
from weakrank.labeling import score_matrix, vote_matrix


def votes_table(queries: int = 120, size: int = 6, seed: int = 0) -> pd.DataFrame:
    """Lists of ``size`` with one relevant candidate, scored by three LFs of decreasing strength."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(queries), size)
    gold = np.tile(np.eye(size)[0], queries)
    votes = pd.DataFrame({"query_id": groups.astype(str), "passage_id": np.arange(len(groups)).astype(str),
                          "split": "test", "gold": gold})
    for i, strength in enumerate([2.0, 1.0, 0.5]):
        votes[f"score_lf{i}"] = strength * gold + rng.normal(size=len(groups))
        votes[f"vote_lf{i}"] = np.where(votes[f"score_lf{i}"] > 1.0, 1, -1).astype(np.int8)
    return votes


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_label_model_fits_on_a_votes_table_as_on_its_matrices(name):
    votes = votes_table()
    model = make_label_model(name)
    assert model.fit_table(votes) is model
    p = model.predict_table(votes)
    assert p.shape == (len(votes),) and ((0 <= p) & (p <= 1)).all()
    groups = votes["query_id"].to_numpy()
    if name == "fusion":
        matrix = ScoreFusionModel().fit(score_matrix(votes), groups).predict_proba(score_matrix(votes), groups)
        score = model.fused(score_matrix(votes), groups)
    else:
        matrix = make_label_model(name).fit(vote_matrix(votes)).predict_proba(vote_matrix(votes))
        score = None
    np.testing.assert_allclose(p, matrix, rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(model.labels_table(votes), with_labels(votes, matrix, score))
    pd.testing.assert_frame_equal(fit_labels(votes, make_label_model(name)), model.labels_table(votes))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_no_label_model_reads_gold(name):
    votes = votes_table()
    flipped = votes.assign(gold=1.0 - pd.to_numeric(votes["gold"], errors="coerce"))
    np.testing.assert_array_equal(fit_predict(votes, make_label_model(name)),
                                  fit_predict(flipped, make_label_model(name)))


def test_out_of_core_fit_equals_the_in_memory_fit_or_is_refused():
    votes = votes_table()
    chunks = [votes.iloc[i : i + 50] for i in range(0, len(votes), 50)]
    streamed = make_label_model("generative").fit_streaming(iter(chunks))
    assert streamed.state() == make_label_model("generative").fit_table(votes).state()
    majority = make_label_model("majority")
    assert majority.fit_streaming(iter(())) is majority  # nothing to fit, nothing read
    for name in ("fusion", "snorkel", "dawid_skene"):
        with pytest.raises(WeakrankError, match="cannot be fitted chunk by chunk"):
            make_label_model(name).fit_streaming(iter(chunks))
