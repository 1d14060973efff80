import math
import textwrap

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import Success
from scipy.stats import ttest_rel

from tests.conftest import shared
from weakrank.bm25 import BM25Index
from weakrank.cli import main
from weakrank.evaluation.calibration import ece, memorisation_gap
from weakrank.evaluation.metrics import evaluate_run, r_n_at_k
from weakrank.evaluation.significance import paired_tests
from weakrank.evaluation.tables import format_table, queries_note, results_table
from weakrank.loaders import load_dataset


def test_metrics_by_hand():
    qrels = pd.DataFrame({"query_id": ["a"] * 4 + ["b"] * 3, "passage_id": list("wxyz") + list("uvt"),
                          "relevance": [1, 0, 1, 0, 0, 0, 1]})
    run = pd.DataFrame({"query_id": ["a"] * 4 + ["b"] * 3, "passage_id": list("xwzy") + list("uvt"),
                        "score": [4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    table = evaluate_run(run, qrels, rn=((3, 1),), negatives=run)
    # a: ranking x(0) w(1) z(0) y(1): AP = (1/2 + 2/4)/2, RR = 1/2, P@1 = 0, P@5 = 2/5 (trec_eval divides by 5)
    assert table.loc["a", "MAP"] == pytest.approx(0.5)
    assert table.loc["a", "MRR"] == pytest.approx(0.5)
    assert table.loc["a", "P@1"] == 0.0 and table.loc["a", "P@5"] == pytest.approx(0.4)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    assert table.loc["a", "nDCG@10"] == pytest.approx(dcg / (1 + 1 / math.log2(3)))
    # b: the relevant t is last of 3: AP = RR = 1/3
    assert table.loc["b", "MAP"] == pytest.approx(1 / 3) and table.loc["b", "MRR"] == pytest.approx(1 / 3)
    # R_3@1: a: w ranks below x → 0; y ranks below x and z → 0; b: t below u, v → 0
    assert table["R_3@1"].tolist() == [0.0, 0.0]


def test_r_n_at_1_over_full_lists_equals_success_at_1_on_real_data():
    ds = load_dataset("wikiqa", shared("wikiqa"), splits=("test",))
    pairs = ds.pairs()
    index = BM25Index(ds.passages["text"].tolist())
    rows = pd.Index(ds.passages["passage_id"]).get_indexer(pairs["passage_id"])
    run = pairs.assign(score=index.score_pairs(pairs["query"].tolist(), rows))[["query_id", "passage_id", "score"]]
    run["score"] += np.random.default_rng(0).random(len(run)) * 1e-3  # no ties (trec_eval compares scores in float32)
    qrels = ds.qrels
    n_rel = qrels.groupby("query_id")["relevance"].sum()
    one = set(n_rel[n_rel == 1].index) & set(qrels.loc[qrels["relevance"] == 0, "query_id"])
    run, qrels = run[run["query_id"].isin(one)], qrels[qrels["query_id"].isin(one)]
    ours = r_n_at_k(run, qrels, negatives=run, n=1000, k=1)
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc(
        [Success @ 1], qrels.rename(columns={"passage_id": "doc_id"}), run.rename(columns={"passage_id": "doc_id"}))}
    assert len(ours) > 100
    assert ours.to_dict() == pytest.approx({q: theirs[q] for q in ours.index})


def test_ties_are_broken_at_random_not_by_document_id():
    # 200 queries, each a relevant "q-0" tied with a non-relevant "q-1": trec_eval's order by document id
    # puts one of them first on every query; the expected value over tie orders is MAP = (1 + 1/2)/2.
    qids = [f"q{i}" for i in range(200)]
    qrels = pd.DataFrame({"query_id": np.repeat(qids, 2), "passage_id": [f"{q}-{j}" for q in qids for j in (0, 1)],
                          "relevance": [1, 0] * 200})
    run = qrels[["query_id", "passage_id"]].assign(score=1.0)
    by_docid = {m.value for m in ir_measures.iter_calc(
        [ir_measures.AP], qrels.rename(columns={"passage_id": "doc_id"}), run.rename(columns={"passage_id": "doc_id"}))}
    assert by_docid in ({0.5}, {1.0})  # every query scored the same way: the docid order decides
    table = evaluate_run(run, qrels, rn=())
    assert table["MAP"].mean() == pytest.approx(0.75, abs=0.02)
    assert table["P@1"].mean() == pytest.approx(0.5, abs=0.03)
    assert evaluate_run(run, qrels, rn=(), seed=3).equals(evaluate_run(run, qrels, rn=(), seed=3))  # seeded
    # a run without ties keeps its order exactly
    distinct = run.assign(score=np.tile([2.0, 1.0], 200))
    assert evaluate_run(distinct, qrels, rn=())["MAP"].eq(1.0).all()


def test_r_n_at_k_takes_the_bm25_hardest_negatives():
    qrels = pd.DataFrame({"query_id": ["q"] * 4, "passage_id": list("rabc"), "relevance": [1, 0, 0, 0]})
    run = pd.DataFrame({"query_id": ["q"] * 4, "passage_id": list("rabc"), "score": [2.0, 3.0, 1.0, 0.0]})
    bm25 = run.assign(score=[5.0, 9.0, 4.0, 1.0])  # a is the hardest negative, then b
    # R_2@1: r against a alone (ranked above it) → 0; R_3@1: against a, b → 0; R_3@2 → 1
    assert r_n_at_k(run, qrels, bm25, n=2, k=1)["q"] == 0.0
    assert r_n_at_k(run, qrels, bm25, n=3, k=1)["q"] == 0.0 and r_n_at_k(run, qrels, bm25, n=3, k=2)["q"] == 1.0
    # with c as the hardest negative instead, r wins at n = 2
    assert r_n_at_k(run, qrels, bm25.assign(score=[5.0, 1.0, 4.0, 9.0]), n=2, k=1)["q"] == 1.0
    with pytest.raises(Exception, match="negative-sampler score"):
        r_n_at_k(run, qrels, bm25.iloc[:3], n=2, k=1)


def test_paired_t_test_and_bonferroni():
    base = pd.DataFrame({"MAP": [0.1, 0.2, 0.3, 0.4, 0.5]}, index=list("abcde"))
    better = base + np.array([[0.10], [0.12], [0.09], [0.11], [0.10]])
    same = base.copy()
    tests = paired_tests({"bm25": base, "better": better, "same": same}, "bm25").set_index("system")
    p = ttest_rel(better["MAP"], base["MAP"]).pvalue
    assert tests.loc["better", "p"] == pytest.approx(p)
    assert tests.loc["better", "p_bonferroni"] == pytest.approx(min(1, 2 * p))
    assert bool(tests.loc["better", "significant"]) and not bool(tests.loc["same", "significant"])
    table = results_table({"bm25": [base], "better": [better, better + 0.02]})
    assert table.loc["better", "MAP"] == pytest.approx(base["MAP"].mean() + 0.104 + 0.01)
    assert format_table(table).loc["better", "MAP"].startswith("0.414 ± 0.014")
    assert format_table(table)["queries"].tolist() == [5, 5]  # tables state how many queries were evaluated
    assert queries_note(table) == "n = 5 queries (with a relevant and a non-relevant candidate)"
    assert queries_note(table.assign(queries=[4, 5]), "relevant") == "n = 4–5 queries (with a relevant candidate)"


def test_ece_by_hand():
    prob = np.array([0.1, 0.1, 0.9, 0.9, 0.6])
    gold = np.array([0, 1, 1, 1, 0])
    # bins: [0.1, 0.1] → acc 0.5 conf 0.1; [0.6] → acc 0 conf 0.6; [0.9, 0.9] → acc 1 conf 0.9
    expected = (2 * 0.4 + 1 * 0.6 + 2 * 0.1) / 5
    assert ece(prob, gold, bins=10) == pytest.approx(expected, abs=1e-6)


def test_memorisation_gap_table():
    history = [{"step": 10, "train_recall@1": 0.5, "dev_recall@1": 0.45}, {"step": 20, "train_recall@1": 0.9, "dev_recall@1": 0.5}]
    gap = memorisation_gap(history)
    assert gap["gap"].tolist() == pytest.approx([0.05, 0.4])


def write_config(tmp_path):
    cfg = tmp_path / "exp.toml"
    cfg.write_text(textwrap.dedent(f"""
        name = "trecqa-exp"
        run_dir = "{tmp_path / 'run'}"
        [dataset]
        loader = "trecqa"
        path = "{shared('trecqa')}"
        max_queries = 20
        [label]
        lfs = ["bm25", "tfidf", "word_overlap"]
        [experiment]
        split = "test"
        seeds = [0, 1]
        label_models = ["majority", "generative"]
        variants = ["hinge", "twsls"]
        epsilons = [0.1, 0.3]
        """))
    return cfg


def test_experiment_grid_is_cached_per_cell_and_resumes(tmp_path, monkeypatch, capsys):
    from weakrank.reproduction import grid

    cfg_path = write_config(tmp_path)
    assert main(["run", str(cfg_path), "--quiet", "--stages", "ingest,label,analyze"]) == 0
    calls = []

    def fake_runner(cfg, cell, workdir):
        """Stands in for training: ranks by BM25 plus a seed- and ε-dependent perturbation."""
        calls.append(cell.key)
        if len(calls) == 3 and not getattr(fake_runner, "resumed", False):
            raise KeyboardInterrupt  # interrupted in the middle of the grid
        votes = pd.read_parquet(tmp_path / "run" / "votes.parquet")
        rows = votes[votes["split"] == "test"]
        noise = np.random.default_rng(cell.seed).random(len(rows)) * dict(cell.params).get("epsilon", 0.05)
        return pd.DataFrame({"query_id": rows["query_id"], "passage_id": rows["passage_id"], "score": rows["score_bm25"] + noise})

    monkeypatch.setattr(grid, "trained_run", fake_runner)
    from weakrank.config import load_config

    cfg = load_config(cfg_path)
    with pytest.raises(KeyboardInterrupt):
        grid.run_experiment(cfg, progress=False, runner=fake_runner)
    done = len(list((tmp_path / "run" / "experiment" / "cells").glob("*.parquet")))
    plan = grid.plan_experiment(cfg)  # the dry run: trained cells, the two done before the interruption cached
    assert len(plan) == 8 and plan["cached"].tolist() == [True, True] + [False] * 6
    assert plan["measured"].tolist() == plan["cached"].tolist()
    # no speed is assumed: the fake cells took no measurable time, so the others' minutes are unknown ...
    assert plan.attrs["pairs_per_second"] is None and plan.loc[~plan["cached"], "minutes"].isna().all()
    assert (grid.plan_experiment(cfg, pairs_per_second=28.0).loc[~plan["cached"], "minutes"] > 0).all()  # ... or given
    from weakrank.io import read_metadata, read_parquet, write_parquet

    first = tmp_path / "run" / "experiment" / "cells" / f"{plan['key'][0]}.parquet"
    write_parquet(read_parquet(first), first, metadata={**read_metadata(first), "minutes": 2.0})
    measured = grid.plan_experiment(cfg)  # ... or measured on the cells trained here: all of these do as much work
    assert measured.attrs["rate_cells"] == 1 and measured.attrs["pairs_per_second"] > 0
    np.testing.assert_allclose(measured.loc[~measured["cached"], "minutes"], 2.0)
    from weakrank.commands.evaluate import print_plan

    print_plan(measured)
    assert "left: 6 cells, about 12 minutes at " in capsys.readouterr().out
    print_plan(plan)
    assert "their minutes are unknown" in capsys.readouterr().out
    fake_runner.resumed = True
    results = grid.run_experiment(cfg, progress=False, runner=fake_runner)
    assert grid.plan_experiment(cfg)["cached"].all()
    trained_cells = (1 + 2) * 2 + 2  # hinge + T-WSLS at 2 ε, 2 seeds each; supervised, 2 seeds
    assert len(calls) == trained_cells + 1  # the interrupted cell ran twice, the two before it once
    assert done == 7 + 2  # 3 LFs + RRF and CombSUM fusions + 2 label models, then 2 trained cells before it
    calls.clear()
    again = grid.run_experiment(cfg, progress=False, runner=fake_runner)
    assert calls == [] and set(again) == set(results)
    assert {"bm25", "tfidf", "word_overlap", "fusion:rrf", "fusion:combsum", "majority", "generative",
            "BERT-PR supervised"} <= set(results)
    assert len(results["BERT-PR T-WSLS ε=0.3 (generative, NS bm25)"]) == 2  # two seeds

    from weakrank.reproduction.report import build_report

    report = build_report(cfg, results)
    text = report.read_text()
    assert "| BERT-PR T-WSLS ε=0.1 (generative, NS bm25)" in text and "± " in text
    n = results_table(results).loc["bm25", "queries"]
    assert f"n = {n} queries (with a relevant and a non-relevant candidate)" in text and "queries |" in text
    assert f"n = {n} queries" in (report.parent / "report.html").read_text()
    out = report.parent
    for png in ("ns_scores.png", "sensitivity.png", "reliability.png", "lf_quality.png"):
        assert (out / png).stat().st_size > 5000, png
    assert "<img src='sensitivity.png'" in (out / "report.html").read_text()


def test_action_figure_pools_policy_runs_over_seeds(tmp_path):
    from weakrank.reproduction.report import action_figure

    cells = pd.DataFrame({"key": ["a", "b", "c"], "row": ["AC-IR", "AC-IR", "fixed"], "sampler": ["policy", "policy", "bm25"]})
    for key, first in (("a", "bm25"), ("b", "random")):
        steps = pd.DataFrame({"step": range(1, 41), "sampler": [first] * 20 + ["bm25"] * 20})
        steps.to_csv(tmp_path / f"{key}.csv", index=False)
    path = action_figure(cells, tmp_path, tmp_path / "actions.png")
    assert path is not None and path.stat().st_size > 5000
    assert action_figure(cells[cells["sampler"] == "bm25"], tmp_path, tmp_path / "none.png") is None


def test_bi_encoder_noise_grid_trains_on_gold_labels(tmp_path):
    """Sharma et al.'s (label relaxation) noise study: PR / PR+LR bi-encoder cells on gold labels."""
    from weakrank.config import load_config
    from weakrank.reproduction import grid
    from weakrank.reproduction.labels import gold_labels

    cfg_path = write_config(tmp_path)
    text = cfg_path.read_text().replace('variants = ["hinge", "twsls"]', textwrap.dedent('''\
        variants = ["pr", "pr_relax"]
        train_label_models = ["gold"]
        noise_ratios = [0.0, 0.05]
        supervised = false'''))
    cfg_path.write_text(text + '[experiment.train]\narchitecture = "bi-encoder"\n')
    cfg = load_config(cfg_path)
    votes = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "passage_id": ["a", "b", "c"], "split": "train",
                          "gold": [1.0, 0.0, np.nan], "score_bm25": [1.0, 2.0, 3.0]})
    rows = [c.row for c in grid.grid_cells(cfg, votes) if c.kind == "weak"]
    assert rows[:2] == ["bi-encoder PR (gold, NS bm25)"] * 2  # two seeds
    assert "bi-encoder PR+LR α=0.1 (gold, NS bm25, noise 0.05)" in rows and len(rows) == 2 * 2 * 2
    labels = gold_labels(votes)
    assert labels["label"].tolist() == [1, 0] and (labels["confidence"] == 1).all()  # unjudged pairs dropped


def test_a_grid_trains_on_one_lfs_own_votes(tmp_path, tiny):
    """Xu et al.'s BERT-PR on BM25 votes: ``votes:bm25`` labels are the BM25 LF's +1 / −1 votes alone; an abstain
    is neither a positive nor a negative, whatever the other LFs voted; an unknown LF is named."""
    from weakrank.config import load_config
    from weakrank.errors import ConfigError
    from weakrank.reproduction import grid
    from weakrank.reproduction.labels import one_lf_labels
    from weakrank.training.data import TrainingData

    cfg_path = write_config(tmp_path)
    cfg_path.write_text(cfg_path.read_text().replace(
        'variants = ["hinge", "twsls"]', 'variants = ["hinge"]\ntrain_label_models = ["votes:bm25"]'))
    cfg = load_config(cfg_path)
    votes = tiny.candidates.assign(split="train", score_bm25=lambda d: -d["rank"].astype(float),
                                   vote_bm25=lambda d: np.select([d["rank"] == 0, d["rank"] >= 2], [1, -1], 0),
                                   score_tfidf=0.0, vote_tfidf=-1)
    assert "BERT-PR hinge (votes:bm25, NS bm25)" in [c.row for c in grid.grid_cells(cfg, votes)]
    labels = one_lf_labels(votes, "bm25")
    assert "vote_tfidf" not in labels and (labels["label"] == (votes["vote_bm25"] == 1)).all()
    assert (labels.loc[votes["vote_bm25"] != 0, "confidence"] == 1).all()
    data = TrainingData(labels, tiny.queries, tiny.passages, "train")
    roles = np.concatenate([ql.labels for ql in data.lists.values()])
    assert sorted(roles.tolist()) == sorted(np.select([votes["vote_bm25"] == 1, votes["vote_bm25"] == -1],
                                                      [1, 0], -1).tolist())
    cfg_path.write_text(cfg_path.read_text().replace("votes:bm25", "votes:bm52"))
    with pytest.raises(ConfigError, match="no LF 'bm52' in the votes.*did you mean 'bm25'"):
        grid.grid_cells(load_config(cfg_path), votes)
    cfg_path.write_text(cfg_path.read_text().replace("votes:bm52", "generatve"))  # neither a source nor a label model
    with pytest.raises(ConfigError, match="train_label_models: unknown label model 'generatve'.*did you mean 'generative'"):
        grid.grid_cells(load_config(cfg_path), votes)


def test_the_fusions_skip_an_lf_on_the_lists_it_cannot_rank():
    """An LF tied on a whole list abstains there: RRF and CombSUM of that list are those of the other LFs
    alone (ranx would rank the tied list in an arbitrary order); where it ranks, it counts."""
    from weakrank.baselines import fusion_runs

    rng = np.random.default_rng(0)
    votes = pd.DataFrame({"query_id": np.repeat(["q1", "q2"], 6), "passage_id": [f"p{i}" for i in range(12)],
                          "split": "test"})
    for name in ("a", "b"):
        votes[f"score_{name}"], votes[f"vote_{name}"] = rng.normal(size=12), 0
    votes["score_tied"], votes["vote_tied"] = np.r_[np.zeros(6), rng.normal(size=6)], 0  # abstains on q1 only
    with_tied, without = fusion_runs(votes), fusion_runs(votes.drop(columns=["score_tied", "vote_tied"]))
    q1, q2 = votes["query_id"] == "q1", votes["query_id"] == "q2"
    for system in ("fusion:rrf", "fusion:combsum"):
        assert np.allclose(with_tied[system]["score"][q1], without[system]["score"][q1])
        assert not np.allclose(with_tied[system]["score"][q2], without[system]["score"][q2])
    alone = fusion_runs(votes.assign(score_b=0.0, score_tied=0.0))  # only LF a ranks: its own order
    for system in ("fusion:rrf", "fusion:combsum"):
        ranks = alone[system].groupby("query_id")["score"].rank()
        assert (ranks == votes.groupby("query_id")["score_a"].rank()).all()


def test_the_fusions_are_ranx_s_on_lists_without_ties():
    """ranx's ``fuse`` (RRF; CombSUM of zmuv-normalised scores) is the reference of weakrank's numpy fusions."""
    from ranx import Run, fuse

    from weakrank.baselines import fusion_runs

    rng = np.random.default_rng(1)
    sizes = rng.integers(2, 12, size=40)
    votes = pd.DataFrame({"query_id": np.repeat([f"q{i}" for i in range(40)], sizes),
                          "passage_id": [f"p{i}" for i in range(sizes.sum())], "split": "test"})
    for name in ("a", "b", "c"):
        votes[f"score_{name}"], votes[f"vote_{name}"] = rng.normal(size=len(votes)) * rng.uniform(0.1, 10), 0
    ours = fusion_runs(votes)
    runs = [Run.from_df(pd.DataFrame({"q_id": votes["query_id"].astype(object), "doc_id": votes["passage_id"].astype(object),
                                      "score": votes[f"score_{n}"]}), name=n) for n in ("a", "b", "c")]
    for system, (method, norm) in {"fusion:rrf": ("rrf", "min-max"), "fusion:combsum": ("sum", "zmuv")}.items():
        theirs = fuse(runs, norm=norm, method=method).to_dataframe().set_index(["q_id", "doc_id"])["score"]
        keys = pd.MultiIndex.from_arrays([votes["query_id"], votes["passage_id"]])
        assert np.allclose(ours[system]["score"].to_numpy(), theirs.reindex(keys).to_numpy(), atol=1e-9), system


def test_the_table_prints_p_values_and_its_legend_even_when_nothing_is_significant():
    """Issue 43: `evaluate` promised t-tests "vs the first" and printed no p-value where nothing was significant."""
    from weakrank.evaluation.tables import table_legend

    base = pd.DataFrame({"MAP": [0.1, 0.2, 0.3, 0.4, 0.5]}, index=list("abcde"))
    noisy = base + np.array([[0.05], [-0.04], [0.06], [-0.03], [0.02]])
    table = results_table({"bm25": [base], "noisy": [noisy]})
    p = ttest_rel(noisy["MAP"], base["MAP"]).pvalue  # one comparison: no correction
    assert table.loc["noisy", "MAP p"] == pytest.approx(p) and p > 0.05 and np.isnan(table.loc["bm25", "MAP p"])
    shown = format_table(table, p_for="MAP")
    assert shown["p MAP"].tolist() == ["", f"{p:.3f}"] and shown.loc["noisy", "MAP"] == "0.312"  # no mark
    legend = table_legend(table, p_for="MAP")
    assert legend.startswith("† significantly better than the baseline (bm25), ‡ significantly worse")
    assert "p < 0.05 after Bonferroni (1 comparisons)" in legend and "p MAP" in legend


def evaluation_table(model_map: float, p: float) -> pd.DataFrame:
    """A hand-made evaluation table of a pipeline run, its rows' roles in ``attrs``."""
    rows = {"bm25": 0.58, "embedding_cosine": 0.72, "fusion-rrf": 0.66, "labels-fusion": 0.68, "model": model_map}
    table = pd.DataFrame({"queries": 237, "MAP": rows.values(), "MAP p": [np.nan, 1e-5, 1e-3, 1e-4, p]}, index=rows)
    table.attrs.update(baseline="bm25", alpha=0.05, architecture="cross-encoder", shipped=True,
                       roles={"bm25": "lf", "embedding_cosine": "lf", "fusion-rrf": "fusion",
                              "labels-fusion": "labels", "model": "trained"})
    return table


def test_the_closing_line_says_what_happened_and_when_to_judge():
    """Issue 43: a line in words — the shipped ranker against BM25 (with its p-value) and the best LF, and the
    commands that judge a few queries when an LF is ahead."""
    from weakrank.evaluation.summary import closing_line, rows_legend
    from weakrank.judged.report import judge_advice, judge_commands

    judge = judge_commands("pipelines/wikiqa.toml", "pipelines/wikiqa.judgments/judging.tsv", "--run-dir data/quickstart")
    assert judge == ("`weakrank select pipelines/wikiqa.toml --run-dir data/quickstart --queries 10`, `weakrank judge "
                     "pipelines/wikiqa.judgments/judging.tsv`, then `weakrank run pipelines/wikiqa.toml --run-dir "
                     "data/quickstart --judgments pipelines/wikiqa.judgments/judging.tsv`")
    line = closing_line(evaluation_table(0.69, 2e-6), advice=judge_advice(judge))
    assert line.startswith("the shipped ranker (model): MAP 0.690 vs bm25 0.580 (+19%, p < 0.001; 237 queries); "
                           "embedding_cosine alone: 0.720, ahead of it — judge 10 queries, and each LF's prior moves "
                           "by what they show of it: `weakrank select")
    line = closing_line(evaluation_table(0.73, 0.2), advice=judge_advice(judge))
    assert line == ("the shipped ranker (model): MAP 0.730 vs bm25 0.580 (+26%, p = 0.200, not significant; 237 "
                    "queries); above every LF and fusion (the best, embedding_cosine: 0.720)")
    legend = rows_legend(evaluation_table(0.69, 0.01)).splitlines()
    assert legend[0] == "bm25, embedding_cosine: each LF's own ranking"
    assert legend[-1].startswith("model: the shipped ranker: the trained cross-encoder (the student) averaged per "
                                 "query with its teacher, the fusion label model over the LFs")
