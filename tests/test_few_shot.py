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
from weakrank.label_models.few_shot import LABEL_FREE, choose
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.lists import average_precisions
from weakrank.paths import RunPaths
from weakrank.stages.training import build_trainer, train_config

OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"


def mean_average_precision(scores: np.ndarray, groups: np.ndarray, gold: np.ndarray) -> float:
    return float(average_precisions(scores, groups, gold).mean())


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
    assert unsupervised.choice_ == LABEL_FREE and few_shot.choice_ == "LF 0 alone"  # the clear winner, alone
    held_out = np.where(groups >= 20, gold, np.nan)
    before = mean_average_precision(unsupervised.fused(scores, groups), groups, held_out)
    after = mean_average_precision(few_shot.fused(scores, groups), groups, held_out)
    assert after > before + 0.2
    restored = ScoreFusionModel.from_state(few_shot.state())
    assert restored.choice_ == few_shot.choice_ and restored.few_shot_map_ == few_shot.few_shot_map_
    # the judged queries' MAP of every weighting is kept: the chosen one (clearly ahead here) is the best of them
    assert few_shot.few_shot_map_[few_shot.choice_] == max(few_shot.few_shot_map_.values())
    assert few_shot.few_shot_map_[few_shot.choice_] > few_shot.few_shot_map_[LABEL_FREE]
    assert "taken" in few_shot.few_shot_reason_ and restored.few_shot_reason_ == few_shot.few_shot_reason_
    assert np.allclose(restored.fused(scores, groups), few_shot.fused(scores, groups))
    assert unsupervised.few_shot_map_ == {}


def test_the_rule_takes_a_clear_winner_alone_and_keeps_the_label_free_weighting_within_the_noise():
    rng = np.random.default_rng(0)
    aps = pd.DataFrame({LABEL_FREE: 0.5 + rng.normal(scale=0.2, size=10)})
    aps["CombSUM"] = aps[LABEL_FREE] + 0.01  # ahead on every query, by a hair: the lead has no spread
    aps["embedding alone"] = aps[LABEL_FREE] + 0.08 + rng.normal(scale=0.05, size=10)  # far ahead: 5 SE
    choice = choose(aps)
    assert choice.name == "embedding alone" and choice.errors > 3 and "taken" in choice.reason()
    aps["embedding alone"] = aps[LABEL_FREE] + 0.03 + rng.normal(scale=0.3, size=10)  # ahead on average, in the noise
    aps["CombSUM"] = aps[LABEL_FREE] - 0.01
    choice = choose(aps)
    assert choice.best == "embedding alone" and choice.name == LABEL_FREE and "kept" in choice.reason()
    assert choose(aps, margin=0.0).name == "embedding alone"  # no margin: the best alone
    aps["embedding alone"] = aps[LABEL_FREE] + 0.015  # ahead on every query, but by too little to matter
    assert choose(aps).name == LABEL_FREE
    far = aps.assign(**{"embedding alone": aps[LABEL_FREE] + 0.3 + rng.normal(scale=0.2, size=10)})
    assert choose(far.iloc[:5]).name == "embedding alone"  # far ahead on 5 queries: taken
    few = choose(far.iloc[:4])
    assert few.name == LABEL_FREE and "fewer than the 5" in few.reason()  # far ahead, but on 4 queries


def test_rrf_chosen_is_a_state_that_fuses_the_same_after_a_round_trip():
    scores, groups, gold = distracted_lists(60, seed=3)
    model = ScoreFusionModel(few_shot_margin=0.0).fit(scores, groups)
    model.choose_combination(scores, np.ones_like(scores, dtype=bool), groups, np.where(groups < 10, gold, np.nan), ["a", "b", "c"])
    assert set(model.few_shot_map_) == {LABEL_FREE, "CombSUM", "RRF", "a alone", "b alone", "c alone"}
    model.combine_, model.weights_ = "rrf", np.ones(3)
    fused = model.fused(scores, groups)
    assert np.allclose(ScoreFusionModel.from_state(model.state()).fused(scores, groups), fused)
    first = groups == 0
    expected = (1 / (60 + 1 + np.argsort(np.argsort(-scores[first], axis=0), axis=0))).sum(axis=1)
    assert np.allclose(fused[first] * 3, expected)  # the mean of the LFs' reciprocal ranks (k = 60)


def test_judged_queries_without_a_relevant_candidate_keep_the_factor_model():
    scores, groups, _ = distracted_lists(50)
    judged = np.where(groups < 5, 0.0, np.nan)  # judged, all non-relevant: no AP to choose by
    few_shot = ScoreFusionModel().fit(scores, groups, judged)
    assert few_shot.choice_ == LABEL_FREE and "0 judged queries have a relevant passage" in few_shot.few_shot_reason_
    np.testing.assert_allclose(few_shot.weights_, ScoreFusionModel().fit(scores, groups).weights_)


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

    _print_few_shot_choice(RunPaths(tmp_path).labels, cfg)  # what `weakrank aggregate` prints in few-shot mode
    printed = capsys.readouterr().out
    maps = read_metadata(RunPaths(tmp_path).labels)["params"]["few_shot_map"]
    assert printed.startswith("few-shot: 2 judged queries have a relevant passage, fewer than")
    assert f"label-free {maps[LABEL_FREE]:.3f}" in printed
    assert f"to judge more: weakrank select {cfg.source} --more" in printed  # too few to choose: how to add more
    trainer = build_trainer(cfg, train_config(cfg, max_length=32))
    assert trainer.selection == "dev_map" and trainer.dev_data.supervised
    assert sorted(trainer.dev_data.lists) == ["vq1", "vq2"]
    # the model ships the teacher the labels came from: its few-shot weighting, not a label-free refit
    import json

    from weakrank.ranker.teacher_state import FUSION_FILE
    from weakrank.stages.training import run_teacher
    from weakrank.training.shipped import ship

    ship(run_teacher(cfg), tmp_path / "model")
    shipped = json.loads((tmp_path / "model" / FUSION_FILE).read_text())["teacher"]
    assert shipped == read_metadata(RunPaths(tmp_path).labels)["params"]
