"""What measures never teaches, and a sample's design stays as select drew it: each case as a user types the
commands (a careless or hostile one), the files before and after, and the one line weakrank says."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.test_user_data import CONFIG, OWN, error, snapshot
from weakrank.cli import main
from weakrank.io import read_qrels
from weakrank.judged.judging_file import read_judging_file, write_judging_file
from weakrank.label_models.labels_file import read_labels_info
from weakrank.paths import RunPaths


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> Path:
    """The own collection ingested, labelled and aggregated without judgments, with two judged evaluation samples
    drawn before any judgment made the labels: of test (``evaluation-judging.tsv``) and of dev (``dev-sample.tsv``)."""
    run = tmp_path_factory.mktemp("labelled") / "run"
    assert main(["run", CONFIG, "--run-dir", str(run), "--stages", "ingest,label,aggregate", "--quiet"]) == 0
    assert main(["select", CONFIG, "--run-dir", str(run), "--evaluation", "--design", "today", "--output",
                 str(run / "evaluation-judging.tsv")]) == 0
    dev = dev_config(run.parent)
    assert main(["select", dev, "--run-dir", str(run), "--evaluation", "--design", "today", "--output", str(run / "dev-sample.tsv")]) == 0
    judge(run / "evaluation-judging.tsv", OWN / "test.qrels")
    judge(run / "dev-sample.tsv", OWN / "dev.qrels")
    return run


@pytest.fixture
def run_dir(labelled, tmp_path) -> Path:
    """A copy of ``labelled`` of the test's own."""
    return Path(shutil.copytree(labelled, tmp_path / "run"))


def dev_config(folder: Path) -> str:
    """The own collection's config, evaluating dev instead of test."""
    path = folder / "dev.toml"
    path.write_text(Path(CONFIG).read_text().replace('path = "."', f'path = "{OWN}"')
                    + '\n[evaluate]\nsplit = "dev"\n')
    return str(path)


def judge(path: Path, qrels: Path) -> None:
    """Fill in the relevance column of judging file ``path`` from ``qrels`` (0 where it says nothing), as a person
    would: nothing else changes."""
    grades = read_qrels(qrels).set_index(["query_id", "passage_id"])["relevance"].to_dict()
    table = read_judging_file(path)
    table["relevance"] = [str(grades.get(pair, 0)) for pair in zip(table["query_id"], table["passage_id"])]
    write_judging_file(table, path)


def edit(path: Path, line: int, column: str, value: str | None) -> None:
    """Set ``column`` of ``line`` (every line: 0) of ``path`` to ``value`` as an editor would; None: drop the
    column."""
    rows = [row.split("\t") for row in path.read_text().splitlines()]
    at = rows[0].index(column)
    for number, row in enumerate(rows[1:], 2):
        if value is None:
            del row[at]
        elif line in (0, number):
            row[at] = value
    if value is None:
        del rows[0][at]
    path.write_text("".join("\t".join(row) + "\n" for row in rows))


# an evaluation sample never trains, whatever split is evaluated

@pytest.mark.parametrize("command", [
    lambda run: ["aggregate", dev_config(run.parent), "--judgments", str(run / "evaluation-judging.tsv")],
    lambda run: ["run", CONFIG, "--stages", "aggregate", "--eval-split", "dev", "--judgments",
                 str(run / "evaluation-judging.tsv")],
    lambda run: ["aggregate", CONFIG, "--judgments", str(run / "dev-sample.tsv")],
], ids=["test sample, config evaluates dev", "test sample, run --eval-split dev", "dev sample, config evaluates test"])
def test_an_evaluation_sample_is_refused_as_training_judgments(run_dir, capsys, command):
    before = snapshot(run_dir)
    assert main([*command(run_dir), "--run-dir", str(run_dir), "--quiet"]) == 2
    said = error(capsys)
    assert ".tsv:2: use: an evaluation sample" in said and "never trains" in said
    assert snapshot(run_dir) == before


# labels made from a split's judgments never score that split

@pytest.fixture
def dev_taught(run_dir, capsys) -> Path:
    """``run_dir`` aggregated with dev's qrels as judgments (allowed: the config evaluates test)."""
    assert main(["aggregate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(OWN / "dev.qrels"), "--quiet"]) == 0
    capsys.readouterr()
    return run_dir


def test_labels_say_which_splits_judgments_made_them(dev_taught):
    info = read_labels_info(RunPaths(dev_taught).labels)
    assert info.judged_splits == ["dev"] and info.judgments == "dev.qrels"


@pytest.mark.parametrize("command", [
    lambda run: ["run", CONFIG, "--stages", "train,rerank,evaluate", "--eval-split", "dev"],
    lambda run: ["evaluate", dev_config(run.parent), str(OWN / "dev.run")],
    lambda run: ["evaluate", dev_config(run.parent), "--judgments", str(run / "dev-sample.tsv")],
    lambda run: ["rerank", CONFIG, "--split", "dev"],
], ids=["run train,rerank,evaluate --eval-split dev", "evaluate a run of dev", "evaluate dev's sample",
        "rerank dev"])
def test_a_split_whose_judgments_made_the_labels_is_never_scored(dev_taught, capsys, command):
    before = snapshot(dev_taught)
    assert main([*command(dev_taught), "--run-dir", str(dev_taught), "--quiet"]) == 2
    said = error(capsys)
    assert "labels.parquet: judged_splits: " in said and "these labels were made from judgments" in said
    assert "of the evaluated split 'dev'" in said
    assert snapshot(dev_taught) == before and not RunPaths(dev_taught).models().exists()


def test_the_other_split_is_still_measured(dev_taught, capsys):
    sample = dev_taught / "evaluation-judging.tsv"
    assert main(["evaluate", CONFIG, "--run-dir", str(dev_taught), "--judgments", str(sample), "--quiet"]) == 0
    assert "MAP (estimated)" in capsys.readouterr().out


# one reader for judged files: checked before anything is written

def test_evaluate_judgments_with_a_repeated_qrels_line_counts_it_once(run_dir, tmp_path, capsys):
    (tmp_path / "repeated.qrels").write_text("sq1 0 d1 1\nsq1 0 d1 1\nsq1 0 d2 0\n")
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(tmp_path / "repeated.qrels"),
                 "--quiet"]) == 0
    assert "estimated from 1 judged queries" in capsys.readouterr().out


@pytest.mark.parametrize("text, message", [
    ("sq1 0 d1 1\nsq1 0 d2 0\nsq1 0 d1 0\n", "x.qrels:3: relevance: pair sq1 / d1 is judged twice"),
    ("sq1 0 d1 1\nvq1 0 d3 1\n", "x.qrels:2: query_id: judges query 'vq1', which is not of the evaluated split"),
], ids=["two grades", "a query of another split"])
def test_a_refused_evaluate_judgments_has_written_nothing(run_dir, tmp_path, capsys, text, message):
    (tmp_path / "x.qrels").write_text(text)
    before = snapshot(run_dir)
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(tmp_path / "x.qrels")]) == 2
    assert message in error(capsys)
    assert snapshot(run_dir) == before and not RunPaths(run_dir).runs.exists()


def test_an_evaluation_sample_of_another_collection_is_refused(run_dir, capsys):
    sample = run_dir / "evaluation-judging.tsv"  # as select writes it on another collection: sealed, other texts
    table = read_judging_file(sample)
    write_judging_file(table.assign(query=table["query"].str.replace("france", "peru")).drop(columns="seal"), sample,
                       seal=True)
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(sample), "--quiet"]) == 2
    assert "evaluation-judging.tsv:2: query: query sq1's text is not this dataset's" in error(capsys)
    assert not RunPaths(run_dir).runs.exists()


# the design is sealed; judgments stay editable

@pytest.mark.parametrize("line, column, value", [
    (2, "query_inclusion", "0.05"),
    (3, "passage_inclusion", "0.5"),
    (0, "sample_seed", "7"),
    (4, "stratum", "2"),
    (5, "passage", "Bananas are the capital of France."),
    (0, "use", None),
], ids=["query_inclusion", "passage_inclusion", "every sample_seed", "stratum", "a passage's text",
        "the use column dropped"])
def test_an_edited_design_is_refused_naming_line_and_column(run_dir, capsys, line, column, value):
    sample = run_dir / "evaluation-judging.tsv"
    edit(sample, line, column, value)
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(sample), "--quiet"]) == 2
    said = error(capsys)
    assert f"evaluation-judging.tsv:{line or 2}: {column}: " in said and "changed since select wrote it" in said
    assert not RunPaths(run_dir).runs.exists()


def test_a_dropped_seal_is_refused(run_dir, capsys):
    sample = run_dir / "evaluation-judging.tsv"
    edit(sample, 0, "seal", None)
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(sample), "--quiet"]) == 2
    assert "evaluation-judging.tsv:1: query_inclusion: holds a sample's design" in error(capsys)


def test_judgments_and_a_persons_own_columns_stay_editable(run_dir, capsys):
    sample = run_dir / "evaluation-judging.tsv"
    edit(sample, 3, "relevance", "skip")
    lines = sample.read_text().splitlines()
    sample.write_text("".join(f"{line}\t{'note' if n == 0 else 'seen'}\n" for n, line in enumerate(lines)))
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(sample), "--quiet"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("line, column, value", [(3, "passage_inclusion", "0.9"), (0, "sample_seed", "7")],
                         ids=["passage_inclusion", "every sample_seed"])
def test_select_more_refuses_an_edited_design(run_dir, capsys, line, column, value):
    judging = run_dir / "judging.tsv"
    assert main(["select", CONFIG, "--run-dir", str(run_dir), "--queries", "2", "--per-query", "3", "--output",
                 str(judging)]) == 0
    edit(judging, line, column, value)
    before = judging.read_bytes()
    capsys.readouterr()
    assert main(["select", CONFIG, "--run-dir", str(run_dir), "--queries", "1", "--per-query", "3", "--more",
                 "--output", str(judging)]) == 2
    assert f"judging.tsv:{line or 2}: {column}: " in error(capsys)
    assert judging.read_bytes() == before


def test_select_more_never_grows_an_evaluation_sample_into_a_training_one(run_dir, capsys):
    sample = run_dir / "evaluation-judging.tsv"
    before = sample.read_bytes()
    assert main(["select", CONFIG, "--run-dir", str(run_dir), "--more", "--queries", "1", "--output",
                 str(sample)]) == 2
    assert "evaluation-judging.tsv: use: is an evaluation sample" in error(capsys)
    assert sample.read_bytes() == before


@pytest.mark.parametrize("flags", [[], ["--evaluation"]], ids=["select", "select --evaluation"])
def test_select_zero_queries_is_refused(run_dir, capsys, flags):
    before = snapshot(run_dir)
    assert main(["select", CONFIG, "--run-dir", str(run_dir), "--queries", "0", *flags]) == 2
    assert "--queries must be >= 1" in error(capsys)
    assert snapshot(run_dir) == before


# a model remembers which splits' judgments taught it, whatever the labels say later

def test_a_model_taught_by_a_splits_judgments_never_scores_it_after_the_labels_change(dev_taught, capsys):
    flags = ["--run-dir", str(dev_taught), "--quiet"]
    assert main(["train", CONFIG, *flags, "--max-steps", "2"]) == 0
    manifest = json.loads((RunPaths(dev_taught).models() / "best" / "weakrank_model.json").read_text())
    assert manifest["judged_splits"] == ["dev"]
    assert main(["aggregate", CONFIG, *flags]) == 0  # labels without judgments now: they no longer say dev
    assert main(["run", CONFIG, "--stages", "rerank,evaluate", *flags]) == 0  # test: its judgments taught nothing
    assert "model" in capsys.readouterr().out
    for command in (["rerank", CONFIG, "--split", "dev"], ["evaluate", dev_config(dev_taught.parent), "--judgments",
                                                            str(dev_taught / "dev-sample.tsv")]):
        before = snapshot(dev_taught)
        assert main([*command, *flags]) == 2
        said = error(capsys)
        assert "weakrank_model.json: judged_splits: this model was taught, or its checkpoint chosen, by judgments" \
               " of the evaluated split 'dev'" in said
        assert snapshot(dev_taught) == before


# the property: whatever the order of the stages over two splits, no figure is printed for a split whose judgments
# made the labels it is printed with

def ops(run: Path) -> dict[str, tuple[list[str], set[str] | None, str | None]]:
    """Each step a user may take: its command, the splits whose judgments teach once it succeeds (None: it teaches
    nothing new), and the split it prints figures for (None: none)."""
    dev, flags = dev_config(run.parent), ["--run-dir", str(run), "--quiet"]
    return {
        "aggregate dev's training sample": (["aggregate", CONFIG, "--judgments", str(run / "dev-train.tsv"), *flags],
                                            {"dev"}, None),
        "aggregate test's qrels": (["aggregate", dev, "--judgments", str(OWN / "test.qrels"), *flags], {"test"}, None),
        "aggregate test's evaluation sample": (["aggregate", dev, "--judgments", str(run / "evaluation-judging.tsv"),
                                                *flags], {"test"}, None),
        "run evaluate --eval-split dev": (["run", CONFIG, "--stages", "evaluate", "--eval-split", "dev", *flags], None,
                                          "dev"),
        "evaluate test's sample": (["evaluate", CONFIG, "--judgments", str(run / "evaluation-judging.tsv"), *flags],
                                   None, "test"),
    }


def test_no_order_of_the_stages_prints_a_figure_for_a_split_whose_judgments_made_the_labels(labelled, tmp_path,
                                                                                            capsys):
    start = Path(shutil.copytree(labelled, tmp_path / "start"))
    assert main(["select", CONFIG, "--run-dir", str(start), "--split", "dev", "--queries", "2", "--output",
                 str(start / "dev-train.tsv")]) == 0  # a training sample of dev: allowed while test is evaluated
    judge(start / "dev-train.tsv", OWN / "dev.qrels")
    names = list(ops(start))
    seen = {"printed": 0, "taught": 0, "copies": 0}
    refused: set[str] = set()

    def walk(run: Path, taught_now: set[str], depth: int) -> None:
        for name in names:
            seen["copies"] += 1
            here = Path(shutil.copytree(run, tmp_path / f"step{seen['copies']}"))
            command, teaches, prints = ops(here)[name]
            code = main(command)
            capsys.readouterr()
            if prints is not None and code == 0:
                assert prints not in taught_now, (name, taught_now)
                seen["printed"] += 1
            if "evaluation sample" in name:
                assert code == 2
            if code == 2:
                refused.add(name)
            if teaches is not None and code == 0:
                seen["taught"] += 1
            if depth < 3:
                walk(here, teaches if teaches is not None and code == 0 else taught_now, depth + 1)
            shutil.rmtree(here)

    walk(start, set(), 1)
    assert seen["printed"] and seen["taught"]  # orders that print and that teach were run
    assert {"run evaluate --eval-split dev", "evaluate test's sample"} <= refused  # and some that close the loop
