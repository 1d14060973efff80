"""A user's TREC run files as a user hands them to `evaluate` (with or without `--judgments`), `ingest` and
`rerank --run`: all read by one reader (weakrank.io.read_run_file), on the own collection's files edited by hand."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from test_no_qrels import judge_as_a_person
from test_pooling import reversed_bm25_model

from weakrank.cli import main
from weakrank.paths import RunPaths

OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"
CONFIG = str(OWN / "pipeline.toml")
TEST_RUN = (OWN / "test.run").read_text()  # the first stage's run of the test split (sq1, sq2)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    """:func:`drawn_and_judged` in a folder of the module's."""
    return drawn_and_judged(tmp_path_factory.mktemp("sampled") / "run")


def drawn_and_judged(run: Path) -> Path:
    """The own collection ingested and labelled into ``run``, a trained ranker's run written by hand (BM25's order
    reversed) and a pooled evaluation sample of the test split drawn and judged as a person would
    (``evaluation-judging.tsv``)."""
    reversed_bm25_model(CONFIG, run)
    sample = run / "evaluation-judging.tsv"
    assert main(["select", CONFIG, "--run-dir", str(run), "--evaluation", "--output", str(sample)]) == 0
    judge_as_a_person(sample)
    return run


@pytest.fixture
def run_dir(sampled, tmp_path) -> Path:
    """A copy of ``sampled`` of the test's own."""
    return Path(shutil.copytree(sampled, tmp_path / "run"))


def evaluate(run_dir: Path, *runs: Path) -> int:
    """``weakrank evaluate CONFIG --judgments <the sample> RUN...`` on ``run_dir``."""
    return main(["evaluate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(run_dir / "evaluation-judging.tsv"),
                 *map(str, runs)])


def figures(capsys) -> str:
    """What the last command printed, less the line that says where it wrote (the same whatever the run's name)."""
    return "\n".join(line for line in capsys.readouterr().out.splitlines() if not line.startswith("→"))


def test_a_run_that_repeats_a_line_counts_it_once_with_or_without_judgments(run_dir, tmp_path, capsys):
    mine, twice = tmp_path / "mine.run", tmp_path / "twice" / "mine.run"
    mine.write_text(TEST_RUN)
    twice.parent.mkdir()
    twice.write_text(TEST_RUN + TEST_RUN.splitlines()[2] + "\n")  # sq1 d4 again, with the same score
    assert evaluate(run_dir, mine) == 0
    once = figures(capsys)
    assert evaluate(run_dir, twice) == 0  # was: ValueError: cannot reindex on an axis with duplicate labels
    assert figures(capsys) == once and "mine" in once
    again = Path(shutil.copy(twice, tmp_path / "again.run"))
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), str(mine), str(again)]) == 0  # against the qrels
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()}
    assert rows["again"][:len(rows["mine"])] == rows["mine"] and rows["again"][-1] == "1.000"  # p: the same run


def test_a_pair_ranked_twice_with_two_scores_is_refused_at_its_line(run_dir, tmp_path, capsys):
    mine = tmp_path / "mine.run"
    mine.write_text(TEST_RUN + "sq1 Q0 d4 9 0.1 bm25\n")
    assert evaluate(run_dir, mine) == 2
    assert (f"{mine}:9: score: query 'sq1', passage 'd4' is ranked twice with two scores, 1 at line 3 and 0.1 "
            "here: keep one") in capsys.readouterr().err
    assert main(["evaluate", "--qrels", str(OWN / "test.qrels"), str(mine)]) == 2
    assert f"{mine}:9: score: query 'sq1'" in capsys.readouterr().err
    # rerank --run reads it with the same reader, before any model is loaded
    assert main(["rerank", "--run", str(mine), "--model-dir", str(tmp_path / "no-model"), "--queries",
                 str(OWN / "test-queries.tsv"), "--collection", str(OWN / "collection.tsv"),
                 "--output", str(tmp_path / "out.trec")]) == 2
    assert f"{mine}:9: score: query 'sq1'" in capsys.readouterr().err


@pytest.mark.parametrize("judged", [True, False])
def test_an_empty_run_file_is_refused_naming_it(run_dir, tmp_path, capsys, judged):
    empty = tmp_path / "empty.run"
    empty.write_text("\n")
    before = sorted(p.name for p in RunPaths(run_dir).runs.iterdir())
    code = evaluate(run_dir, empty) if judged else main(["evaluate", CONFIG, "--run-dir", str(run_dir), str(empty)])
    assert code == 2
    assert f"{empty}: empty run file: it ranks no query" in capsys.readouterr().err
    assert sorted(p.name for p in RunPaths(run_dir).runs.iterdir()) == before  # refused before anything is written


def test_an_empty_run_is_refused_by_rerank_run_too(tmp_path, capsys):
    empty = tmp_path / "empty.run"
    empty.write_text("")
    assert main(["rerank", "--run", str(empty), "--model-dir", str(tmp_path / "no-model"), "--queries",
                 str(OWN / "test-queries.tsv"), "--collection", str(OWN / "collection.tsv"),
                 "--output", str(tmp_path / "out.trec")]) == 2
    assert f"{empty}: empty run file" in capsys.readouterr().err


def test_a_run_of_another_split_is_refused_naming_the_file_and_the_split(run_dir, tmp_path, capsys):
    dev = tmp_path / "dev-only.run"
    shutil.copy(OWN / "dev.run", dev)
    assert evaluate(run_dir, dev) == 2  # was: estimated at some MAP on the test sample
    assert (f"{dev}: none of its 2 queries (e.g. 'vq1') is of the evaluated split 'test': nothing to measure there"
            in capsys.readouterr().err)


def test_a_run_that_ranks_every_split_is_measured_on_the_evaluated_one(run_dir, tmp_path, capsys):
    mine, every = tmp_path / "mine.run", tmp_path / "every" / "mine.run"
    mine.write_text(TEST_RUN)
    every.parent.mkdir()
    every.write_text((OWN / "dev.run").read_text() + TEST_RUN)
    assert evaluate(run_dir, mine) == 0
    once = figures(capsys)
    assert evaluate(run_dir, every) == 0
    assert figures(capsys) == once


def test_queries_the_dataset_lacks_are_named_and_left_out(run_dir, tmp_path, capsys):
    mine, more = tmp_path / "mine.run", tmp_path / "more" / "mine.run"
    mine.write_text(TEST_RUN)
    more.parent.mkdir()
    more.write_text(TEST_RUN + "".join(f"zz{i} Q0 d1 1 1.0 x\n" for i in range(5)))
    assert evaluate(run_dir, mine) == 0
    once = figures(capsys)
    assert evaluate(run_dir, more) == 0
    captured = capsys.readouterr()
    assert "\n".join(line for line in captured.out.splitlines() if not line.startswith("→")) == once
    assert (f"{more}: 5 of its 7 queries are not in the dataset and are left out ('zz0', 'zz1', 'zz2', …)"
            in captured.err)


def test_the_pooled_sample_compares_with_the_user_s_run_as_evaluate_measures_that_run_file(run_dir, capsys):
    """The first stage is the user's run (test.run): select pooled the trained ranker with it, and the top-k block,
    judge's settled line and the closing line compare with it, named as the MAP table names it; its figures are
    those of the run file itself, given to evaluate beside the sample, and those evaluate finds for that file
    against the qrels (the person judged as they do)."""
    from weakrank.judged.judging_file import read_judging_file
    from weakrank.judged.topk import settled

    sample = read_judging_file(run_dir / "evaluation-judging.tsv")
    first = "first stage (your run)"
    assert {f"rank_{first}", "rank_model", f"ranking_{first}"} <= set(sample.columns)
    assert "rank_bm25" not in sample.columns  # weakrank's BM25 is no longer pooled
    ranked = {(q, p): rank for q, _, p, rank, *_ in map(str.split, TEST_RUN.splitlines())}  # the run file's ranks
    expected = [ranked[(q, p)] if int(ranked[(q, p)]) <= 3 else "" for q, p in zip(sample["query_id"], sample["passage_id"])]
    assert sample[f"rank_{first}"].tolist() == expected
    said = list(settled(sample).values())
    assert len(said) == 1 and said[0].startswith(f"model better than {first} (RR@3, 2 of 2 queries): ")
    mine = run_dir / "test.run"
    mine.write_text(TEST_RUN)
    assert evaluate(run_dir, mine) == 0
    printed = capsys.readouterr().out
    assert "model RR@3" in printed and f"vs {first} " in printed and "vs bm25" not in printed
    assert "no MAP from a pooled sample" in printed and "MAP (estimated)" not in printed
    assert printed.splitlines()[-2] == f"judged sample: {said[0]}"  # the closing line, as judge said it
    runs = RunPaths(run_dir).runs
    assert not (runs / "evaluation-sample.csv").exists() and first in (runs / "evaluation-sample.md").read_text()
    topk = pd.read_csv(runs / "evaluation-topk.csv", index_col=[0, 1])
    assert topk.loc[(first, "RR"), f"vs {first}"] == 0
    assert topk.loc["test"].to_numpy().ravel() == pytest.approx(topk.loc[first].to_numpy().ravel())
    # evaluate of the user's run file against the qrels: the same MRR (every relevant passage in its top 3)
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), str(mine)]) == 0
    capsys.readouterr()
    table = pd.read_csv(runs / "evaluation.csv", index_col=0)
    assert topk.loc[(first, "RR"), "mean"] == pytest.approx(table.loc["test", "MRR"]) == 0.75
