import numpy as np
import pandas as pd
import pytest

from weakrank.errors import WeakrankError
from weakrank.label_models import (
    DawidSkeneModel,
    GenerativeModel,
    MajorityVote,
    ScoreFusionModel,
    SnorkelLabelModel,
    labels_from_proba,
    make_label_model,
)


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
    assert len(SnorkelLabelModel().fit(votes).state()["lf_accuracy"]) == 3


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


def test_make_label_model_by_name():
    assert isinstance(make_label_model("generative", prior=0.1), GenerativeModel)
    with pytest.raises(WeakrankError, match="unknown label model"):
        make_label_model("oracle")


def test_dawid_skene_recovers_class_conditional_vote_rates():
    # per LF, P(vote | relevant) and P(vote | not relevant) over (+1, −1, 0): asymmetric like top-1/bottom-half LFs
    theta = np.array([
        [[0.60, 0.05, 0.35], [0.05, 0.60, 0.35]],
        [[0.40, 0.10, 0.50], [0.10, 0.55, 0.35]],
        [[0.70, 0.10, 0.20], [0.15, 0.45, 0.40]],
        [[0.30, 0.20, 0.50], [0.05, 0.50, 0.45]],
    ])
    rng = np.random.default_rng(4)
    n, gamma = 100_000, 0.25
    y = rng.random(n) < gamma
    votes = np.zeros((n, 4), dtype=np.int8)
    for i in range(4):
        for cls, mask in ((0, y), (1, ~y)):
            votes[mask, i] = rng.choice([1, -1, 0], size=mask.sum(), p=theta[i, cls])
    model = DawidSkeneModel().fit(votes)
    assert np.abs(model.theta_ - theta).max() < 0.03
    assert abs(model.gamma_ - gamma) < 0.02
    ds_acc = ((model.predict_proba(votes) > 0.5) == y).mean()
    gm_acc = ((GenerativeModel().fit(votes).predict_proba(votes) > 0.5) == y).mean()
    assert ds_acc >= gm_acc  # one accuracy per LF cannot express the asymmetry


def simulate_scores(n_queries: int, size: int, strengths, seed: int = 0):
    """Per-query lists with one relevant pair; LF i's score = strength_i · relevance + unit noise."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_queries), size)
    y = np.zeros(n_queries * size)
    y[np.arange(n_queries) * size + rng.integers(size, size=n_queries)] = 1
    scores = np.column_stack([s * y + rng.normal(size=len(y)) for s in strengths])
    return scores, groups, y


def mean_auc(score, y, groups):
    from sklearn.metrics import roc_auc_score

    return np.mean([roc_auc_score(y[groups == g], score[groups == g]) for g in np.unique(groups)[:300]])


def test_score_fusion_weights_the_strong_lf_and_beats_the_best_single_one():
    scores, groups, y = simulate_scores(2000, 8, [2.5, 1.0, 0.8, 0.6])
    model = ScoreFusionModel().fit(scores, groups)
    weights = np.asarray(model.state_.weights)
    assert np.argmax(weights) == 0 and weights[0] > 2 * weights[1:].max()
    fused = model.fused(scores, groups)
    assert mean_auc(fused, y, groups) > max(mean_auc(scores[:, i], y, groups) for i in range(4))
    p = model.predict_proba(scores, groups)
    assert ((p[y == 1] > 0.5).mean() > 0.5) and ((p[y == 0] < 0.5).mean() > 0.95)
    assert np.allclose(pd.Series(p).groupby(groups).sum(), 1.0)  # one relevant candidate per list, in expectation
    for g in range(20):  # within a query, P(relevant) follows the fused score
        rows = groups == g
        assert (np.argsort(p[rows], kind="stable") == np.argsort(fused[rows], kind="stable")).all()


@pytest.mark.parametrize("strength", [0.0, -1.0])
def test_score_fusion_gives_an_lf_at_chance_or_worse_no_weight(strength):
    """Issue 30, without gold: an LF no better than chance (or one that ranks against relevance, as the
    answer-type LF did on web passages) on a collection gets (next to) no weight there."""
    scores, groups, y = simulate_scores(2000, 8, [2.0, 1.5, 1.0, strength], seed=2)
    model = ScoreFusionModel().fit(scores, groups)
    weights = np.asarray(model.state_.weights)
    assert abs(weights[3]) <= 0.02 * weights.sum()
    fused = model.fused(scores, groups)
    without = ScoreFusionModel().fit(scores[:, :3], groups).fused(scores[:, :3], groups)
    assert mean_auc(fused, y, groups) >= mean_auc(without, y, groups) - 0.002


def test_score_fusion_gives_a_copied_lf_no_extra_weight():
    scores, groups, y = simulate_scores(1500, 8, [2.0, 1.0, 1.0, 0.8], seed=1)
    copied = np.column_stack([scores, scores[:, 3], scores[:, 3]])  # the weakest LF twice more
    once = ScoreFusionModel().fit(scores, groups)
    thrice = ScoreFusionModel().fit(copied, groups)
    assert thrice.state_.clusters == ((0,), (1,), (2,), (3, 4, 5))
    assert np.allclose(thrice.fused(copied, groups), once.fused(scores, groups))
    # the vote models instead count the copies: majority vote follows the copied LF
    votes = np.where(copied > 1.0, 1, -1).astype(np.int8)
    copies, original = MajorityVote().predict_proba(votes), MajorityVote().predict_proba(votes[:, :4])
    assert ((copies > 0.5).mean()) != ((original > 0.5).mean())


def test_fit_predict_on_a_votes_table_runs_vote_and_score_models():
    import pandas as pd

    from weakrank.label_models import fit_predict

    scores, groups, y = simulate_scores(200, 6, [2.0, 1.0, 0.5], seed=2)
    votes = pd.DataFrame({"query_id": groups.astype(str), "passage_id": np.arange(len(y)).astype(str)})
    for i in range(3):
        votes[f"score_lf{i}"] = scores[:, i]
        votes[f"vote_lf{i}"] = np.where(scores[:, i] > 1.0, 1, -1).astype(np.int8)
    for name in ("majority", "generative", "dawid_skene", "fusion"):
        p = fit_predict(votes, make_label_model(name))
        assert p.shape == (len(votes),) and ((0 <= p) & (p <= 1)).all()
        assert mean_auc(p, y, groups) > 0.7


def test_the_shipped_average_weighs_the_ranker_as_its_teacher():
    """The second round (the shipped ranker's average): the ranker's and the LF fusion's scores, standardised
    within each query, get the label-free shares (the ranker :data:`STUDENT_WEIGHT`) however many LFs agree with the
    ranker; a strong ranker lifts the fusion, a copy of the teacher leaves its ranking as it was."""
    from weakrank.fusion_state import STUDENT_WEIGHT
    from weakrank.labeling import score_matrix
    from weakrank.lists import standardize_within
    from weakrank.ranker import average_views

    def fuse_ranker(votes, run, split):
        rows = votes[votes["split"] == split].merge(run, on=["query_id", "passage_id"], validate="one_to_one")
        scores, groups = score_matrix(rows, [f"lf{i}" for i in range(3)]), rows["query_id"].to_numpy()
        fused = average_views(ScoreFusionModel().fit(scores, groups).fused(scores, groups), rows["score"], groups)
        return rows[["query_id", "passage_id"]].assign(score=fused)

    scores, groups, y = simulate_scores(300, 6, [1.0, 0.8, 0.6], seed=5)
    votes = pd.DataFrame({"query_id": groups.astype(str), "passage_id": np.arange(len(y)).astype(str),
                          "split": np.where(groups < 150, "train", "test")})
    for i in range(3):
        votes[f"score_lf{i}"] = scores[:, i]
        votes[f"vote_lf{i}"] = np.where(scores[:, i] > 1.0, 1, -1).astype(np.int8)
    in_test = (votes["split"] == "test").to_numpy()
    test = votes[in_test]
    test_scores, test_groups, test_y = scores[in_test], groups[in_test], y[in_test]
    teacher = ScoreFusionModel().fit(test_scores, test_groups).fused(test_scores, test_groups)
    noise = np.random.default_rng(0).normal(size=len(test))
    strong = test[["query_id", "passage_id"]].assign(score=3.0 * test_y + noise)
    fused = fuse_ranker(votes, strong, "test")
    assert len(fused) == len(test) and (fused["passage_id"].to_numpy() == test["passage_id"].to_numpy()).all()
    views = standardize_within(np.column_stack([teacher, strong["score"]]), test_groups)
    np.testing.assert_allclose(fused["score"], views @ [1 - STUDENT_WEIGHT, STUDENT_WEIGHT])
    assert mean_auc(fused["score"].to_numpy(), test_y, test_groups) > mean_auc(teacher, test_y, test_groups)
    copy = fuse_ranker(votes, strong.assign(score=5.0 * teacher + 2.0), "test")
    within = pd.DataFrame({"query": test_groups, "copy": copy["score"].to_numpy(), "teacher": teacher})
    ranks = within.groupby("query")[["copy", "teacher"]].rank(method="first")
    assert (ranks["copy"] == ranks["teacher"]).all()


def test_score_fusion_judges_an_abstaining_lf_where_it_ranks():
    """An LF that ranks only 30% of the lists (all tied elsewhere, an abstain) but is strong where it does is
    weighted by those lists: as fitted on them alone, not diluted by the tied ones."""
    scores, groups, y = simulate_scores(2000, 8, [1.5, 1.0, 0.8, 2.0], seed=3)
    speaks = np.isin(groups, np.arange(0, 2000, 10)) | np.isin(groups, np.arange(1, 2000, 10)) \
        | np.isin(groups, np.arange(2, 2000, 10))
    scores[~speaks, 3] = 0.0
    model = ScoreFusionModel().fit(scores, groups)
    alone = ScoreFusionModel().fit(scores[speaks], groups[speaks])
    assert abs(model.state_.loadings[3] - alone.state_.loadings[3]) < 0.05
    assert np.argmax(np.asarray(model.state_.weights)) == 3
    without = ScoreFusionModel().fit(scores[:, :3], groups)
    rows = speaks
    assert mean_auc(model.fused(scores, groups)[rows], y[rows], groups[rows]) > \
        mean_auc(without.fused(scores[:, :3], groups)[rows], y[rows], groups[rows])


def test_score_fusion_gives_no_view_all_the_weight_when_pairs_share_errors():
    """Two pairs of LFs that share errors (0.87 correlation within a pair, below the duplicate threshold; 0.54
    across), all four equally strong: every LF gets a similar weight (maximum likelihood gave one pair six
    times the weight of the other, as it gave TF-IDF the largest weight on SciFact)."""
    rng = np.random.default_rng(4)
    groups = np.repeat(np.arange(1500), 8)
    y = np.zeros(len(groups))
    y[np.arange(1500) * 8 + rng.integers(8, size=1500)] = 1
    a, b = rng.normal(size=(2, len(y)))
    lexical = [a, 0.74 * a + 0.67 * rng.normal(size=len(y))]
    semantic = [b, 0.74 * b + 0.67 * rng.normal(size=len(y))]
    scores = np.column_stack([3.0 * y + noise for noise in lexical + semantic])
    model = ScoreFusionModel().fit(scores, groups)
    assert len(model.state_.clusters) == 4
    weights = np.asarray(model.state_.weights)
    assert weights.max() < 1.5 * weights.min()


def test_an_lf_that_abstains_everywhere_changes_no_vote_model():
    """The answer-type LF abstains on every pair of a collection of claims: every model fits as without it."""
    votes, _ = simulate(3000, [0.85, 0.7, 0.65], [0.9, 0.6, 0.5], gamma=0.3, seed=7)
    silent = np.column_stack([votes, np.zeros(len(votes), dtype=np.int8)])
    for name in ("majority", "generative", "dawid_skene", "snorkel"):
        with_it = make_label_model(name).fit(silent).predict_proba(silent)
        without = make_label_model(name).fit(votes).predict_proba(votes)
        assert np.allclose(with_it, without, atol=1e-3), name


def test_lists_of_one_candidate_leave_nothing_to_fit_and_say_so():
    groups = np.arange(6)  # one candidate a query: no LF ranks any list, no vote is cast
    with pytest.raises(WeakrankError, match="every LF abstains on every pair"):
        ScoreFusionModel().fit(np.random.default_rng(0).normal(size=(6, 2)), groups)
    with pytest.raises(WeakrankError, match="every LF abstains on every pair"):
        make_label_model("dawid_skene").fit(np.zeros((6, 3), dtype=np.int8))


def test_a_fusion_state_is_read_back_from_the_labels_file_as_written_and_a_changed_one_is_located(tmp_path):
    import json

    import pyarrow.parquet as pq

    from weakrank.errors import DataError, NotFittedError
    from weakrank.fusion_state import FusionState
    from weakrank.io import read_metadata
    from weakrank.label_models.labels_file import LabelsInfo, read_labels_info, write_labels

    with pytest.raises(NotFittedError, match="ScoreFusionModel is not fitted"):
        ScoreFusionModel().state()
    rng = np.random.default_rng(0)
    scores, groups = rng.normal(size=(40, 3)), np.repeat(np.arange(8), 5)
    state = ScoreFusionModel(temperature=0.5).fit(scores, groups).state()
    path = write_labels(pd.DataFrame({"p_relevant": [0.5]}), tmp_path / "labels.parquet",
                        LabelsInfo("fusion", ["a", "b", "c"], state))
    saved = read_metadata(path)
    assert list(saved["params"]) == ["clusters", "loadings", "weights", "scales", "combine", "choice", "judged",
                                     "options"]  # the keys labels.parquet has always kept
    info = read_labels_info(path)
    assert isinstance(info.params, FusionState) and info.params == state
    assert np.array_equal(ScoreFusionModel.from_state(info.params).fused(scores, groups),
                          ScoreFusionModel(temperature=0.5).fit(scores, groups).fused(scores, groups))
    saved["params"]["weights"][0] = -1.0  # someone edited it
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({b"weakrank": json.dumps(saved).encode()}), path)
    with pytest.raises(DataError, match=r"labels\.parquet: params\.weights: weights must be >= 0"):
        read_labels_info(path)
    assert read_labels_info(write_labels(pd.DataFrame({"x": [1]}), tmp_path / "g.parquet",
                                         LabelsInfo("generative", ["a"], {"alpha": [0.5]}))).params == {"alpha": [0.5]}
    judged = write_labels(pd.DataFrame({"x": [1]}), tmp_path / "j.parquet",
                          LabelsInfo("majority", ["a"], judged_queries=["q1", "q2"]))
    saved = read_metadata(judged)
    assert saved["gold_queries"] == ["q1", "q2"]  # the key labels were always saved with: older files load
    assert read_labels_info(judged).judged_queries == ["q1", "q2"]
    table = pq.read_table(judged)
    pq.write_table(table.replace_schema_metadata({b"weakrank": json.dumps({**saved, "gold_queries": "q1"}).encode()}),
                   judged)
    with pytest.raises(DataError, match=r"j\.parquet: gold_queries: expected a list, got str 'q1'"):
        read_labels_info(judged)
