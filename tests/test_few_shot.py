"""Few-shot mode: a few judged queries choose the fusion label model's LF weighting and the checkpoint."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from weakrank import pipeline
from weakrank.config import AggregateConfig, load_config
from weakrank.errors import ConfigError, DataError
from weakrank.io import read_metadata
from weakrank.label_models.fusion import (
    ScoreFusionModel,
    describe_choice,
    few_shot_candidates,
    few_shot_weights,
    mean_average_precision,
)
from weakrank.paths import RunPaths
from weakrank.training.run import build_trainer, train_config

OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"


def distracted_lists(queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lists of 10 with one relevant candidate: LF 0 finds it, LFs 1 and 2 agree with each other (a shared
    distractor, e.g. passage length) and not with gold, so a label-free factor model trusts them."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(queries), 10)
    gold = np.tile(np.eye(10)[0], queries)
    distractor = rng.normal(size=len(groups))
    scores = np.column_stack([gold + rng.normal(scale=0.8, size=len(groups)),
                              distractor + rng.normal(scale=0.5, size=len(groups)),
                              distractor + rng.normal(scale=0.5, size=len(groups))])
    return scores, groups, gold


def test_judged_queries_choose_a_weighting_that_holds_on_other_queries():
    scores, groups, gold = distracted_lists(200)
    unsupervised = ScoreFusionModel().fit(scores, groups)
    judged = np.where(groups < 20, gold, np.nan)  # 20 of 200 queries judged
    few_shot = ScoreFusionModel().fit(scores, groups, judged)
    assert unsupervised.choice_ == "factor model" and few_shot.choice_ != "factor model"
    held_out = np.where(groups >= 20, gold, np.nan)
    before = mean_average_precision(unsupervised.fused(scores, groups), groups, held_out)
    after = mean_average_precision(few_shot.fused(scores, groups), groups, held_out)
    assert after > before + 0.2
    restored = ScoreFusionModel.from_params(few_shot.params())
    assert restored.choice_ == few_shot.choice_ and restored.few_shot_map_ == few_shot.few_shot_map_
    # the judged queries' MAP of every weighting is kept: the chosen one (clearly ahead here) is the best of them
    assert few_shot.few_shot_map_[few_shot.choice_] == max(few_shot.few_shot_map_.values())
    assert few_shot.few_shot_map_[few_shot.choice_] > few_shot.few_shot_map_["factor model"]
    assert unsupervised.few_shot_map_ == {}


def test_few_shot_averages_the_weightings_the_judged_queries_cannot_tell_apart():
    weights = np.array([2.0, 1.0, 1.0])
    rng = np.random.default_rng(0)
    aps = pd.DataFrame({name: np.full(30, 0.3) for name in few_shot_candidates(weights)})
    aps["view 0 alone"] = 0.8 + rng.normal(scale=0.1, size=30)
    # 0.005 below the best on average, ± 0.05 query by query: within one standard error (0.009) of it
    aps["equal weights"] = aps["view 0 alone"] - 0.005 + 0.05 * (-1) ** np.arange(30)
    name, mean = few_shot_weights(aps, weights)
    assert name == "mean of equal weights; view 0 alone"  # in candidate order
    np.testing.assert_allclose(mean, (np.ones(3) / 3 + np.array([1.0, 0, 0])) / 2)
    name, mean = few_shot_weights(aps, weights, within=0.0)  # the best alone
    assert name == "view 0 alone" and np.allclose(mean, np.eye(3)[0])
    aps["equal weights"] -= 0.2  # now clearly behind: the best alone
    assert few_shot_weights(aps, weights)[0] == "view 0 alone"
    # dropping a view that has no weight is the factor model itself: not a second candidate
    assert "factor model without view 1" not in few_shot_candidates(np.array([2.0, 0.0, 1.0]))


def test_judged_queries_without_a_relevant_candidate_keep_the_factor_model():
    scores, groups, _ = distracted_lists(50)
    judged = np.where(groups < 5, 0.0, np.nan)  # judged, all non-relevant: no AP to choose by
    few_shot = ScoreFusionModel().fit(scores, groups, judged)
    assert few_shot.choice_ == "factor model"
    label_free = ScoreFusionModel().fit(scores, groups).weights_
    np.testing.assert_allclose(few_shot.weights_, label_free / label_free.sum())


def test_a_choice_names_its_views_by_their_lfs():
    clusters, lfs = [[0, 1], [2], [3]], ["bm25", "tfidf", "embedding_cosine", "bert_cosine"]
    assert describe_choice("factor model without view 2", clusters, lfs) == "factor model without bert_cosine"
    assert describe_choice("view 0 alone", clusters, lfs) == "bm25+tfidf alone"
    assert describe_choice("equal weights", clusters, lfs) == "equal weights"


def test_mean_average_precision_by_hand():
    groups = np.array([0, 0, 0, 1, 1, 2, 2])
    gold = np.array([0, 1, 0, 1, 0, np.nan, np.nan])  # query 2 unjudged
    assert mean_average_precision(np.array([3, 2, 1, 5, 1, 0, 0.0]), groups, gold) == pytest.approx((0.5 + 1) / 2)
    assert mean_average_precision(np.array([1, 1, 1, 2, 2, 0, 0.0]), groups, gold) == pytest.approx((1 / 3 + 0.5) / 2)


def test_few_shot_needs_the_fusion_model_and_enough_judged_queries(tmp_path):
    with pytest.raises(ConfigError, match="gold_queries needs model = 'fusion'"):
        AggregateConfig(model="majority", gold_queries=10)
    with pytest.raises(ConfigError, match="whole number"):
        AggregateConfig(model="fusion", gold_queries=-1)
    cfg = load_config(OWN / "pipeline.toml")
    cfg = replace(cfg, run_dir=tmp_path, aggregate=replace(cfg.aggregate, gold_queries=3))
    pipeline.ingest(cfg)
    pipeline.label(cfg, progress=False)
    with pytest.raises(DataError, match="has 2 queries judged"):  # the fixture's dev split judges two
        pipeline.aggregate(cfg)
    assert not RunPaths(tmp_path).labels.exists()


def test_the_judged_queries_pick_the_checkpoint_by_gold_map(tmp_path, capsys):
    cfg = load_config(OWN / "pipeline.toml")
    cfg = replace(cfg, run_dir=tmp_path, aggregate=replace(cfg.aggregate, gold_queries=2))
    pipeline.ingest(cfg)
    pipeline.label(cfg, progress=False)
    pipeline.aggregate(cfg)
    assert read_metadata(RunPaths(tmp_path).labels)["gold_queries"] == ["vq1", "vq2"]
    from weakrank.commands.stages import _print_few_shot_choice

    _print_few_shot_choice(RunPaths(tmp_path).labels)  # what `weakrank aggregate` prints in few-shot mode
    printed = capsys.readouterr().out
    maps = read_metadata(RunPaths(tmp_path).labels)["params"]["few_shot_map"]
    assert printed.startswith("few-shot: the 2 judged queries chose '")
    assert f"the label-free factor model {maps['factor model']:.3f}" in printed
    trainer = build_trainer(cfg, train_config(cfg, max_length=32))
    assert trainer.selection == "dev_map" and trainer.dev_data.supervised
    assert sorted(trainer.dev_data.lists) == ["vq1", "vq2"]
    # the model ships the teacher the labels came from: its few-shot weighting, not a label-free refit
    import json

    from weakrank.training.shipped import FUSION_FILE, ship

    ship(cfg, tmp_path / "model")
    shipped = json.loads((tmp_path / "model" / FUSION_FILE).read_text())["teacher"]
    assert shipped == read_metadata(RunPaths(tmp_path).labels)["params"]
