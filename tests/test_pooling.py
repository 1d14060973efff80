"""The pooled design of an evaluation sample (the union of the compared systems' top k, measured exactly there) and
the confidence sequence that lets a person stop judging whenever the answer is settled."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t
from test_judge import Terminal

from weakrank.cli import main
from weakrank.evaluation.confidence_sequence import confidence_path, confidence_sequence
from weakrank.io import read_parquet, write_run
from weakrank.judged.judging_file import read_judging_file, write_judging_file
from weakrank.judged.pooling import pooled_pairs, pooled_passages
from weakrank.judged.topk import measures, pooled_table, query_values, settled, verdict
from weakrank.paths import RunPaths

ANSWER = {"y": "1", "n": "0"}
OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"


def population(queries: int = 60, size: int = 12, seed: int = 0) -> tuple[dict[str, pd.DataFrame], pd.Series]:
    """Runs of BM25 and a better system over ``queries`` queries of ``size`` candidates, and the full gold (one or
    two relevant passages a query, none for some): the better system ranks a relevant passage higher more often."""
    rng = np.random.default_rng(seed)
    rows, gold = [], {}
    for q in range(queries):
        relevant = set(rng.choice(size, size=rng.integers(0, 3), replace=False).tolist())
        for i in range(size):
            gold[(f"q{q}", f"q{q}p{i}")] = int(i in relevant)
            rows.append({"query_id": f"q{q}", "passage_id": f"q{q}p{i}", "bm25": rng.normal() + (i in relevant) * 0.8,
                         "better": rng.normal() + (i in relevant) * 2.5})
    table = pd.DataFrame(rows)
    runs = {name: table[["query_id", "passage_id"]].assign(score=table[name]) for name in ("bm25", "better")}
    return runs, pd.Series(gold)


def full_measures(run: pd.DataFrame, gold: pd.Series, k: int) -> pd.DataFrame:
    """Each query's P@k and RR@k from the full gold (every candidate judged)."""
    out = {}
    for q, rows in run.groupby("query_id", sort=False):
        top = rows.sort_values("score", ascending=False, kind="stable")["passage_id"].tolist()[:k]
        hits = [gold[(q, p)] for p in top]
        out[q] = {"P": sum(hits) / k, "RR": next((1 / (i + 1) for i, h in enumerate(hits) if h), 0.0)}
    return pd.DataFrame.from_dict(out, orient="index")


def judged_as_gold(pairs: pd.DataFrame, gold: pd.Series) -> pd.DataFrame:
    """A pooled sample as a judging table whose person answers by the gold (every column a string, as read)."""
    relevance = [str(gold[(q, p)]) for q, p in zip(pairs["query_id"], pairs["passage_id"])]
    return pairs.assign(relevance=relevance).astype(str).replace({"nan": ""})


def test_the_pool_holds_each_system_s_top_k_and_fills_the_budget_with_known_probabilities():
    lists = [list("abcdefgh"), list("bxaycdef")]
    found = pooled_passages(lists, 3, 6, "q", seed=0)
    assert list(found)[:4] == ["a", "b", "x", "c"] and all(found[p] == 1.0 for p in "abxc")  # the union of top 3
    drawn = [p for p, pi in found.items() if pi < 1]
    assert len(found) == 6 and len(drawn) == 2 and all(found[p] == 2 / 6 for p in drawn)  # 2 of d, e, f, g, h, y
    counts = pd.Series([p for seed in range(2000) for p, pi in pooled_passages(lists, 3, 6, "q", seed).items()
                        if pi < 1]).value_counts() / 2000
    assert set(counts.index) == set("defghy") and np.allclose(counts, 2 / 6, atol=0.04)  # 6 in the rest: 2/6 each
    assert pooled_passages([list("abcdef"), list("ghijkl")], 3, 6, "q") == dict.fromkeys("agbhci", 1.0)  # no room


def test_top_k_measures_on_the_judged_pool_equal_the_full_gold_s():
    runs, gold = population()
    pairs = pooled_pairs(runs, ["better"], queries=25, per_query=6, seed=3)
    assert pairs.groupby("query_id").size().max() <= 6 and pairs["query_id"].nunique() == 25
    assert (pairs["pool_depth"] == 3).all() and (pairs["population"] == 60).all()
    values = query_values(judged_as_gold(pairs, gold))
    for name, row in (("bm25", "bm25 (weakrank)"), ("better", "better")):  # named as evaluate's MAP table does
        full = full_measures(runs[name], gold, 3).loc[values.index]
        assert np.allclose(values[(row, "P")], full["P"]) and np.allclose(values[(row, "RR")], full["RR"])
    assert values.xs("nDCG", axis=1, level=1).stack().between(0, 1).all()
    # every query judged, with other passages drawn below the pool: the same figures (exact, not estimated)
    every = [query_values(judged_as_gold(pooled_pairs(runs, ["better"], queries=60, seed=s), gold)).sort_index()
             for s in (0, 1)]
    pd.testing.assert_frame_equal(*every)
    assert measures([2], 1, 3) == {"RR": 0.5, "P": 1 / 3, "nDCG": pytest.approx(1 / np.log2(3))}


def test_the_judged_queries_stop_at_the_first_one_not_fully_answered_and_a_skip_counts_as_not_relevant():
    runs, gold = population(queries=10)
    table = judged_as_gold(pooled_pairs(runs, ["better"], queries=4, seed=0), gold)
    first = table["query_id"].iloc[0]
    relevant = table.index[(table["query_id"] == first) & (table["relevance"] == "1")]
    skipped = table.assign(relevance=table["relevance"].where(~table.index.isin(relevant), "skip"))
    assert query_values(skipped).loc[first].sum() == 0
    second = table["query_id"].unique()[1]
    half = table.assign(relevance=table["relevance"].where(table["query_id"] != second, ""))
    assert list(query_values(half).index) == [first]


def test_the_confidence_sequence_covers_at_every_look_where_a_peeked_t_interval_does_not():
    """Drawn without replacement from a population of paired differences whose mean is 0: the sequence excludes
    the mean at some look in under 5 % of samples; the t interval, looked at after each query from the fifth, in
    far more."""
    rng = np.random.default_rng(0)
    values = np.concatenate([np.zeros(120), np.ones(40), -np.ones(40)])  # mean 0, SD 0.63
    missed_sequence = missed_t = 0
    for _ in range(200):
        x = rng.permutation(values)[:40]
        path = confidence_path(x, len(values), planned=20)
        missed_sequence += any(not (s.low <= 0 <= s.high) for s in path)
        looks = [abs(x[:n].mean()) > t.ppf(0.975, n - 1) * x[:n].std(ddof=1) / np.sqrt(n) for n in range(5, 41)]
        missed_t += any(looks)
    assert missed_sequence / 200 < 0.05 < missed_t / 200
    assert all(a.low <= b.low and b.high <= a.high for a, b in zip(path, path[1:]))  # the running intersection
    whole = confidence_sequence(rng.permutation(values), len(values), planned=20)
    assert whole.high - whole.low < 0.02 and whole.low <= 0 <= whole.high  # every value drawn: the mean itself


def test_the_verdict_says_yes_no_or_not_yet_and_the_table_keeps_intervals_in_range():
    assert verdict(np.ones(12), 100, np.full(20, 20))[0] == "yes" and verdict(-np.ones(12), 100, [20] * 20)[0] == "no"
    assert verdict(np.array([1.0, 0.0, -1.0, 0.0]), 100, [20] * 20)[0] == "not yet"
    runs, gold = population()
    table = judged_as_gold(pooled_pairs(runs, ["better"], queries=20, seed=1), gold)
    topk = pooled_table(table)
    assert topk["low"].ge(0).all() and topk["high"].le(1).all() and topk["diff low"].ge(-1).all()
    assert (topk["seq high"] - topk["seq low"] > topk["diff high"] - topk["diff low"]).all()  # validity's price
    assert topk["seq low"].ge(-1).all() and topk["seq high"].le(1).all()
    assert topk.loc[("bm25 (weakrank)", "RR"), "vs bm25 (weakrank)"] == 0 and topk.attrs["queries"] == 20
    [line] = list(settled(table).values())
    assert line.startswith("better better than bm25 (weakrank) (RR@3, 20 of 20 queries): ")


def test_judge_shows_the_settled_line_after_each_query_and_a_resumed_judge_keeps_every_judgment(tmp_path):
    runs, gold = population(queries=30, seed=2)
    pairs = pooled_pairs(runs, ["better"], queries=3, seed=0)
    rows = pairs.assign(query=pairs["query_id"].map(lambda q: f"question {q}"),
                        passage=pairs["passage_id"].map(lambda p: f"text of {p}"), use="evaluation")
    path = write_judging_file(rows, tmp_path / "evaluation-judging.tsv")
    keys = ["y" if gold[(q, p)] else "n" for q, p in zip(pairs["query_id"], pairs["passage_id"])]
    sizes = pairs.groupby("query_id", sort=False).size().tolist()
    term = Terminal(path)
    assert "better than bm25 (weakrank) (RR@3, 0 of 3 queries): not yet" in term.expect("relevant? ")
    for key in keys[:sizes[0]]:
        shown = term.press(key)
    assert "better than bm25 (weakrank) (RR@3, 1 of 3 queries): not yet — " in shown  # updated once the query is judged
    term.press(keys[sizes[0]])
    term.press("q", then="Continue with")
    assert term.finish() == 0
    kept = read_judging_file(path)["relevance"].tolist()
    assert kept[:sizes[0] + 1] == [ANSWER[k] for k in keys[:sizes[0] + 1]] and set(kept[sizes[0] + 1:]) == {""}

    term = Terminal(path)  # resumed: the first query still counts
    assert "(RR@3, 1 of 3 queries)" in term.expect("relevant? ")
    for key in keys[sizes[0] + 1:sizes[0] + sizes[1]]:
        shown = term.press(key)
    assert "(RR@3, 2 of 3 queries)" in shown
    for key in keys[sizes[0] + sizes[1]:-1]:
        term.press(key)
    done = term.press(keys[-1], then="is answered")
    assert "(RR@3, 3 of 3 queries)" in done and "t interval of the whole sample" in done
    assert term.finish() == 0
    assert read_judging_file(path)["relevance"].tolist() == [ANSWER[k] for k in keys]
    values = query_values(read_judging_file(path))
    diffs = (values[("better", "RR")] - values[("bm25 (weakrank)", "RR")]).to_numpy()
    assert f"{diffs.mean():+.3f}" in done  # the line's figure is the judged queries' mean difference


def test_select_evaluation_refuses_what_it_cannot_pool_and_keeps_today_s_design_reachable(tmp_path, capsys):
    config, run = str(OWN / "pipeline.toml"), str(tmp_path / "run")
    out = ["--output", str(tmp_path / "run" / "evaluation-judging.tsv")]  # not beside the repository's config
    assert main(["run", config, "--run-dir", run, "--stages", "ingest,label", "--quiet"]) == 0
    assert main(["select", config, "--run-dir", run, "--evaluation", *out]) == 2  # no trained ranker's run yet
    assert "no run of the trained ranker" in capsys.readouterr().err
    assert main(["select", config, "--run-dir", run, "--evaluation", "--against", "bm42", *out]) == 2
    assert "no system 'bm42'" in capsys.readouterr().err
    assert main(["select", config, "--run-dir", run, "--against", "tfidf"]) == 2  # a training sample: not pooled
    assert "with --evaluation" in capsys.readouterr().err
    # a trained ranker that ranks both test queries' candidates as the first stage (the user's run) does: no
    # judgment could tell them apart
    RunPaths(Path(run)).runs.mkdir()
    shutil.copy(OWN / "test.run", RunPaths(Path(run)).runs / "model.trec")
    assert main(["select", config, "--run-dir", run, "--evaluation", *out]) == 2
    assert ("model and first stage (your run) rank every query's top passages alike on split 'test'"
            in capsys.readouterr().err)
    assert not (tmp_path / "run" / "evaluation-judging.tsv").exists()
    assert main(["select", config, "--run-dir", run, "--evaluation", "--design", "today", *out]) == 0
    today = read_judging_file(tmp_path / "run" / "evaluation-judging.tsv")
    assert not any(c.startswith("rank_") for c in today.columns) and set(today["query_id"]) == {"sq1", "sq2"}


def test_only_queries_whose_tops_differ_are_drawn_and_the_difference_counts_the_others_as_0():
    runs, gold = population()
    half = runs["bm25"]["query_id"].str[1:].astype(int) < 30  # the first 30 queries: ranked exactly as bm25 does
    runs["half"] = runs["bm25"].assign(score=runs["bm25"]["score"].where(half, runs["better"]["score"]))
    pairs = pooled_pairs(runs, ["half"], queries=30, seed=0)
    assert set(pairs["query_id"]) == set(runs["bm25"].loc[~half, "query_id"])  # every differing one, none other
    assert (pairs["population"] == 30).all() and (pairs["split_queries"] == 60).all()
    topk = pooled_table(judged_as_gold(pairs, gold))
    whole = (full_measures(runs["half"], gold, 3) - full_measures(runs["bm25"], gold, 3)).mean()
    assert topk.loc[("half", "RR"), "vs bm25 (weakrank)"] == pytest.approx(whole["RR"])  # over all 60 queries
    assert topk.loc[("half", "P"), "vs bm25 (weakrank)"] == pytest.approx(whole["P"])


def reversed_bm25_model(config: str, run: Path) -> None:
    """The own collection ingested and labelled into ``run``, and a trained ranker's run that reverses BM25's on the
    test split (written by hand: no training needed to draw a sample)."""
    assert main(["run", config, "--run-dir", str(run), "--stages", "ingest,label", "--quiet"]) == 0
    votes = read_parquet(RunPaths(run).votes)
    test = votes[votes["split"] == "test"]
    write_run(test[["query_id", "passage_id"]].assign(score=-test["score_bm25"]), RunPaths(run).runs / "model.trec",
              "model")


def test_a_pooled_sample_grows_with_more_keeping_its_judgments_and_each_query_s_planned_size(tmp_path, capsys):
    config, run = str(OWN / "pipeline.toml"), tmp_path / "run"
    reversed_bm25_model(config, run)
    path = run / "evaluation-judging.tsv"
    assert main(["select", config, "--run-dir", str(run), "--evaluation", "--queries", "1", "--output", str(path)]) == 0
    first = read_judging_file(path)
    assert first["query_id"].nunique() == 1 and (first["planned"] == "1").all() and len(first) <= 6
    assert (first["query_inclusion"] == "0.5").all()  # 1 of the 2 test queries, both ranked otherwise than BM25
    write_judging_file(first.assign(relevance=["1"] + ["0"] * (len(first) - 1)), path)  # judged, then grown
    capsys.readouterr()
    assert main(["select", config, "--run-dir", str(run), "--evaluation", "--more", "--queries", "1", "--output", str(path)]) == 0
    assert "added 1 query" in capsys.readouterr().out
    grown = read_judging_file(path)
    assert grown["query_id"].nunique() == 2 and grown["relevance"].tolist()[:len(first)] == ["1"] + ["0"] * (len(first) - 1)
    assert grown.groupby("query_id", sort=False)["planned"].first().tolist() == ["1", "2"]
    assert (grown["query_inclusion"] == "1.0").all()  # now 2 of 2
    assert main(["select", config, "--run-dir", str(run), "--evaluation", "--more", "--queries", "1", "--output", str(path)]) == 2
    assert "holds every query of split 'test' where the systems' tops differ already" in capsys.readouterr().err
    # the line judge shows: a grown sample gets the sequence only, never the t interval
    done = grown.assign(relevance=["1"] + ["0"] * (len(grown) - 1))
    assert all("interval valid however you stop" in line for line in list(settled(done).values()))
