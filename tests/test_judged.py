"""Judged mode: a sample with known inclusion probabilities, the estimate of every candidate's MAP from it, the rule,
and a fusion state that scores with a combination (as an earlier weakrank saved one) read back."""

import itertools
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from weakrank import pipeline
from weakrank.combinations import LABEL_FREE
from weakrank.config import load_config
from weakrank.errors import ConfigError, DataError
from weakrank.evaluation.sampled_map import Totals, estimate, list_totals
from weakrank.fusion_state import FusionState
from weakrank.io import read_metadata
from weakrank.judged.aligned import Judged
from weakrank.judged.design import TIED, allocation, draw, passages, pool
from weakrank.judged.rule import MIN_QUERIES, Rule, choose
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.paths import RunPaths, shell_path
from weakrank.records import ChoiceRecord
from weakrank.sections import AggregateConfig
from weakrank.stages.stage import train_config
from weakrank.stages.train import build_trainer

OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"


def full_ap(scores: np.ndarray, gold: np.ndarray) -> float:
    """AP of one list over its judged rows (``gold`` NaN elsewhere: left out, a condensed list)."""
    kept = np.isfinite(gold)
    y = gold[kept][np.lexsort((gold[kept], -scores[kept]))]
    return float((np.cumsum(y) / np.arange(1, len(y) + 1))[y == 1].mean())


def own_lists(queries: int, size: int = 20, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Lists of ``size`` with 1–4 relevant passages, some deep: per list a system A, a system B that often puts a
    relevant passage first, and gold."""
    rng = np.random.default_rng(seed)
    lists = []
    for _ in range(queries):
        gold = np.zeros(size)
        gold[rng.choice(size, size=rng.integers(1, 5), replace=False)] = 1
        a = gold * rng.normal(1.0, 1.0, size) + rng.normal(size=size)
        b = gold * rng.normal(2.0, 1.5, size) + rng.normal(size=size)
        lists.append((a, b, gold))
    return lists


def sample(a: np.ndarray, b: np.ndarray, gold: np.ndarray, per_query: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """The design of :func:`weakrank.judged.design.passages` on one list (ids are row numbers)."""
    ids = [str(i) for i in range(len(gold))]
    ranked = [[ids[i] for i in np.argsort(-s, kind="stable")] for s in (a, b)]
    chosen = passages(ranked, per_query, "q", seed=int(rng.integers(1 << 30)))
    judged, inclusion = np.full(len(gold), np.nan), np.full(len(gold), np.nan)
    for pid, p in chosen.items():
        judged[int(pid)], inclusion[int(pid)] = gold[int(pid)], p
    return judged, inclusion


def test_each_query_total_is_unbiased_exactly_over_every_sample_of_the_design():
    """R̂ and the estimated R · AP average, over every possible sample, to the full-judgment values."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        scores, gold = rng.normal(size=9), (rng.random(9) < 0.4).astype(float)
        gold[rng.integers(9)] = 1
        fixed, rest, s = [0, 1, 2], list(range(3, 9)), 3
        order = np.argsort(-scores)
        hits = np.cumsum(gold[order])
        target = (hits / np.arange(1, 10))[gold[order] == 1].sum()  # R · AP
        totals = []
        for drawn in itertools.combinations(rest, s):
            judged, inclusion = np.full(9, np.nan), np.full(9, np.nan)
            judged[fixed], inclusion[fixed] = gold[fixed], 1.0
            judged[list(drawn)], inclusion[list(drawn)] = gold[list(drawn)], s / len(rest)
            totals.append(list_totals(scores, judged, inclusion))
        found, relevant = np.mean(totals, axis=0)
        assert relevant == pytest.approx(gold.sum(), abs=1e-9)
        assert found == pytest.approx(target, abs=1e-9)


def test_the_map_estimate_averages_to_the_full_judgment_value_where_the_condensed_list_does_not():
    """Over 300 samples of the passages of 100 own-made lists (1–4 relevant passages of 20, 6 judged a list), each
    system's estimated MAP (its totals' ratio) and their difference average to the full-judgment figures within
    0.01; condensed-list MAP (unjudged passages dropped) over the same judged passages is over 0.1 above."""
    lists = own_lists(100)
    weights = np.array([lst[2].sum() for lst in lists])  # the estimate counts a query by its relevant passages
    true = {k: np.average([full_ap(lst[k], lst[2]) for lst in lists], weights=weights) for k in (0, 1)}
    rng = np.random.default_rng(0)
    estimated, condensed = {0: [], 1: []}, {0: [], 1: []}
    for _ in range(300):
        found = {0: [], 1: []}
        flat = {0: [], 1: []}
        for a, b, gold in lists:
            judged, inclusion = sample(a, b, gold, 6, rng)
            for k, s in ((0, a), (1, b)):
                found[k].append(list_totals(s, judged, inclusion))
                flat[k].append(full_ap(s, judged) if np.nansum(judged) else np.nan)
        for k in (0, 1):
            totals = Totals(pd.DataFrame({"x": [f for f, _ in found[k]]}), pd.Series([r for _, r in found[k]]))
            estimated[k].append(estimate(totals).map["x"])
            condensed[k].append(np.nanmean(flat[k]))
    for k in (0, 1):
        assert abs(np.mean(estimated[k]) - true[k]) < 0.01
        assert np.mean(condensed[k]) - true[k] > 0.1
    lead = np.mean(estimated[1]) - np.mean(estimated[0])
    assert abs(lead - (true[1] - true[0])) < 0.01


def test_queries_are_drawn_with_the_probabilities_written_beside_them():
    ranked = {f"q{i}": [["a", "b"], ["b", "a"]] for i in range(60)}
    ranked.update({f"tied{i}": [["a", "b"], ["a", "b"]] for i in range(10)})  # all candidates agree: drawn last
    answerable = pd.Series({q: i for i, q in enumerate(ranked)}, dtype=float)
    found = pool(ranked, answerable, {q: q for q in ranked})
    assert [found.stratum[f"tied{i}"] for i in range(10)] == [TIED] * 10
    assert not any(q.startswith("tied") for q in draw(found, 60, 0).queries)
    assert sum(q.startswith("tied") for q in draw(found, 63, 0).queries) == 3
    counts = pd.Series(0.0, index=[q for q in found.frame if found.stratum[q] != TIED])
    for seed in range(3000):
        sample = draw(found, 9, seed)
        counts[sample.queries] += 1
        assert len(sample.queries) == 9
    inclusion = draw(found, 9, 0).inclusion
    for stratum in range(3):
        members = [q for q in found.frame if found.stratum[q] == stratum]
        expected = allocation(found.sizes(), 9)[stratum] / len(members)
        assert counts[members].mean() / 3000 == pytest.approx(expected, abs=0.01)
        assert all(inclusion[q] == expected for q in inclusion if found.stratum[q] == stratum)
    assert allocation(found.sizes(), 9).tolist() == [1, 3, 5, 0]  # shares 1 : 2 : 4, the answerable third first
    bigger = draw(found, 12, 7)
    assert bigger.queries[:9] == draw(found, 9, 7).queries  # more queries: the same sample, extended


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


def votes_of(scores: np.ndarray, groups: np.ndarray, gold: np.ndarray) -> pd.DataFrame:
    votes = pd.DataFrame({"query_id": [f"q{g}" for g in groups], "passage_id": [f"p{i}" for i in range(len(groups))],
                          "split": "train", "gold": gold})
    for k in range(scores.shape[1]):
        votes[f"score_lf{k}"], votes[f"vote_lf{k}"] = scores[:, k], 0
    return votes


def judged_rows(votes: pd.DataFrame, gold: np.ndarray, queries: set[str]) -> Judged:
    rows = votes["query_id"].isin(queries).to_numpy()
    return Judged(np.where(rows, gold, np.nan), np.where(rows, 1.0, np.nan), pd.Series(1.0, index=sorted(queries)))


def leads(aps: pd.DataFrame):
    """The estimate from per-query APs of lists with one relevant passage each."""
    return estimate(Totals(aps, pd.Series(1.0, index=aps.index)), baseline=LABEL_FREE)


def test_the_rule_takes_a_clear_winner_alone_and_keeps_the_label_free_weighting_within_the_noise():
    rng = np.random.default_rng(0)
    aps = pd.DataFrame({LABEL_FREE: 0.5 + rng.normal(scale=0.2, size=10)})
    aps["CombSUM"] = aps[LABEL_FREE] + 0.01  # ahead on every query, by a hair: the lead has no spread
    aps["embedding alone"] = aps[LABEL_FREE] + 0.08 + rng.normal(scale=0.05, size=10)  # far ahead: 5 SE
    choice = choose(leads(aps))
    assert choice.name == "embedding alone" and choice.errors > 3 and "taken" in choice.reason()
    aps["embedding alone"] = aps[LABEL_FREE] + 0.03 + rng.normal(scale=0.3, size=10)  # ahead on average, in the noise
    aps["CombSUM"] = aps[LABEL_FREE] - 0.01
    choice = choose(leads(aps))
    assert choice.best == "embedding alone" and choice.name == LABEL_FREE and "kept" in choice.reason()
    assert choose(leads(aps), Rule(margin=-10.0, min_lead=0.0)).name == "embedding alone"  # no margin: the best
    aps["embedding alone"] = aps[LABEL_FREE] + 0.015  # ahead on every query, but by too little to matter
    assert choose(leads(aps)).name == LABEL_FREE
    far = aps.assign(**{"embedding alone": aps[LABEL_FREE] + 0.3 + rng.normal(scale=0.02, size=10)})
    assert choose(leads(far.iloc[:MIN_QUERIES])).name == "embedding alone"
    few = choose(leads(far.iloc[:MIN_QUERIES - 1]))
    assert few.name == LABEL_FREE and f"fewer than the {MIN_QUERIES}" in few.reason()


def test_query_weights_count_a_query_as_often_as_it_stands_for():
    aps = pd.DataFrame({LABEL_FREE: [0.2, 0.4, 0.6], "RRF": [0.3, 0.4, 0.9]}, index=["a", "b", "c"])
    found = estimate(Totals(aps, pd.Series(1.0, index=aps.index)), pd.Series({"a": 1.0, "b": 1.0, "c": 2.0}),
                     LABEL_FREE)
    assert found.map[LABEL_FREE] == pytest.approx((0.2 + 0.4 + 2 * 0.6) / 4)
    assert found.lead["RRF"] == pytest.approx((0.1 + 0 + 2 * 0.3) / 4)


BY_HAND = ChoiceRecord("RRF", "RRF", 0.1, 3.0, 5, {"RRF": 0.6}, "by hand", {"margin": 2.5})


def test_rrf_chosen_is_a_state_that_fuses_the_same_after_a_round_trip():
    from weakrank.combinations import Combination

    scores, groups, _ = distracted_lists(60, seed=3)
    fitted = ScoreFusionModel().fit(scores, groups).state_
    state = fitted.using("RRF", Combination("rrf", np.ones(3)), BY_HAND)
    assert fitted.choice == LABEL_FREE and fitted.record is None and state.record == BY_HAND  # a new state
    fused = ScoreFusionModel.from_state(state).fused(scores, groups)
    assert np.allclose(ScoreFusionModel.from_state(FusionState.from_dict(state.to_dict())).fused(scores, groups), fused)
    first = groups == 0
    expected = (1 / (60 + 1 + np.argsort(np.argsort(-scores[first], axis=0), axis=0))).sum(axis=1)
    assert np.allclose(fused[first] * 3, expected)  # the mean of the LFs' reciprocal ranks (k = 60)


def test_gold_queries_need_the_fusion_model_and_enough_judged_queries(tmp_path):
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
    labels = pipeline.aggregate(cfg)
    assert read_metadata(RunPaths(tmp_path).labels)["gold_queries"] == ["vq1", "vq2"]
    from weakrank.commands.stages import _print_judged_choice

    _print_judged_choice(labels.attrs["state"], cfg)  # what `weakrank aggregate` prints in judged mode
    printed = capsys.readouterr().out
    estimates = read_metadata(RunPaths(tmp_path).labels)["params"]["judged"]["estimates"]
    assert printed.startswith("judged: 2 judged queries have a relevant and a non-relevant passage, fewer than")
    assert "combined as" not in printed.splitlines()[0]  # an update of the LFs' priors is no choice of a combination
    assert f"label-free {estimates[LABEL_FREE]:.3f}" in printed
    assert f"to judge more: weakrank select {shell_path(cfg.source)} --more" in printed  # too few to choose: how to add more
    trainer = build_trainer(cfg, train_config(cfg, max_length=32))
    # measured one way, by the judged estimate on their whole lists: never handed on as gold dev lists
    assert trainer.selection == "dev_judged_map" and trainer.dev_data is None
    assert sorted(set(trainer.evaluator.pairs["query_id"])) == ["vq1", "vq2"]
    # the model ships the teacher the labels came from: its judged update, not a label-free refit
    from weakrank.ranker.teacher_state import FUSION_FILE
    from weakrank.stages.train import run_teacher

    run_teacher(cfg).save(tmp_path / "model")
    shipped = json.loads((tmp_path / "model" / FUSION_FILE).read_text())["teacher"]
    assert shipped == read_metadata(RunPaths(tmp_path).labels)["params"]


def test_a_sample_estimates_each_systems_map_and_its_difference_from_the_baseline_with_intervals():
    """Fully judged, the estimate is the full-judgment figure; sampled (10 of 100 own-made lists, 6 of 20
    passages), the 95 % intervals of the difference cover the full-judgment one in most of 200 samples."""
    from weakrank.judged.evaluation import sample_table
    from weakrank.judged.judgments import Judgments

    lists = own_lists(100, seed=5)
    runs = {name: pd.DataFrame([{"query_id": f"q{q}", "passage_id": f"q{q}p{i}", "score": lst[k][i]}
                                for q, lst in enumerate(lists) for i in range(20)]) for k, name in ((0, "bm25"),
                                                                                                   (1, "model"))}
    relevant = np.array([lst[2].sum() for lst in lists])
    true = {k: np.average([full_ap(lst[k], lst[2]) for lst in lists], weights=relevant) for k in (0, 1)}
    everything = Judgments(pd.DataFrame([{"query_id": f"q{q}", "passage_id": f"q{q}p{i}", "relevance": int(lst[2][i]),
                                          "query_inclusion": 1.0, "passage_inclusion": 1.0}
                                         for q, lst in enumerate(lists) for i in range(20)]))
    table = sample_table(runs, everything, "bm25")
    assert table.loc["model", "MAP"] == pytest.approx(true[1]) and table.loc["bm25", "MAP"] == pytest.approx(true[0])
    assert table.loc["model", "vs bm25"] == pytest.approx(true[1] - true[0]) and table.attrs["queries"] == 100
    rng = np.random.default_rng(0)
    covered = covered_map = 0
    for _ in range(200):
        rows = []
        for q in rng.choice(100, size=10, replace=False):
            a, b, gold = lists[q]
            judged, inclusion = sample(a, b, gold, 6, rng)
            rows += [{"query_id": f"q{q}", "passage_id": f"q{q}p{i}", "relevance": int(judged[i]),
                      "query_inclusion": 0.1, "passage_inclusion": inclusion[i]} for i in np.flatnonzero(inclusion > 0)]
        drawn = sample_table(runs, Judgments(pd.DataFrame(rows)), "bm25")
        assert drawn[["low", "MAP", "high"]].stack().between(0, 1).all()  # intervals within the measure's range
        assert drawn[["diff low", "vs bm25", "diff high"]].stack().between(-1, 1).all()
        assert (drawn["low"] <= drawn["MAP"]).all() and (drawn["MAP"] <= drawn["high"]).all()
        found = drawn.loc["model"]
        covered += found["diff low"] <= true[1] - true[0] <= found["diff high"]
        covered_map += found["low"] <= true[1] <= found["high"]
    assert covered / 200 > 0.85 and covered_map / 200 > 0.85


def test_an_interval_near_the_top_of_the_range_stays_below_1():
    """Three judged queries, the model first on two and last on one: MAP 0.75, whose plain interval (± t·se) went
    past 1; on the logit scale it stays within [0, 1], lopsided towards the middle."""
    from scipy.stats import t

    from weakrank.judged.evaluation import sample_table
    from weakrank.judged.judgments import Judgments

    rows, runs = [], {"bm25": [], "model": []}
    for q, top in enumerate((0, 0, 2)):
        for i in range(4):
            rows.append({"query_id": f"q{q}", "passage_id": f"p{i}", "relevance": int(i == 0),
                         "query_inclusion": 1.0, "passage_inclusion": 1.0})
            runs["model"].append({"query_id": f"q{q}", "passage_id": f"p{i}", "score": -abs(i - top) - 0.1 * i})
            runs["bm25"].append({"query_id": f"q{q}", "passage_id": f"p{i}", "score": float(i)})
    table = sample_table({k: pd.DataFrame(v) for k, v in runs.items()}, Judgments(pd.DataFrame(rows)), "bm25")
    model = table.loc["model"]
    assert model["MAP"] == pytest.approx((1 + 1 + 1 / 4) / 3)
    plain = model["MAP"] + t.ppf(0.975, 2) * np.std([1, 1, 1 / 4], ddof=1) / np.sqrt(3)
    assert plain > 1 and model["MAP"] < model["high"] < 1 and 0 < model["low"] < model["MAP"]
    assert -1 <= model["diff low"] < model["vs bm25"] < model["diff high"] <= 1


def test_a_leader_not_taken_says_about_how_many_judged_queries_would_tell(capsys):
    from types import SimpleNamespace

    from weakrank.commands.stages import _print_judged_choice

    rule = {"margin": 2.5, "min_lead": 0.05, "min_queries": 3}
    kept = ChoiceRecord(LABEL_FREE, "bm25 alone", 0.06, 0.85, 10, {"bm25 alone": 0.7, LABEL_FREE: 0.64}, "kept", rule)
    assert kept.queries_to_tell() == 87  # 10 × (2.5 / 0.85)²: the error shrinks as one over √queries
    taken = ChoiceRecord("bm25 alone", "bm25 alone", 0.2, 3.0, 10, {}, "taken", rule)
    assert taken.queries_to_tell() is None and replace(kept, best=LABEL_FREE).queries_to_tell() is None
    _print_judged_choice(FusionState.of([[0]], [1.0], [1.0], [1.0], record=kept), SimpleNamespace(source="pipe.toml"))
    out = capsys.readouterr().out
    assert "whether bm25 alone is ahead: about 87 judged queries with a relevant passage (now 10)" in out
    assert "weakrank select pipe.toml --more --queries 77" in out
