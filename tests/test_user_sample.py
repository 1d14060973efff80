"""A pooled evaluation sample as a user keeps it: judged in a spreadsheet (numbers respelt, rows sorted), edited by
hand, or judged before a retrain. `evaluate --judgments` prints the same figures or refuses, naming the file, the
line, the column and the query (or the run that changed); never figures of a sample that no longer is the one drawn.
"""

from __future__ import annotations

import csv
import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_no_qrels import judge_as_a_person
from test_user_runs import CONFIG, drawn_and_judged, figures

from weakrank.cli import main
from weakrank.io import read_parquet, write_run
from weakrank.paths import RunPaths


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    """:func:`~test_user_runs.drawn_and_judged` in a folder of the module's."""
    return drawn_and_judged(tmp_path_factory.mktemp("sampled") / "run")


@pytest.fixture
def run_dir(sampled, tmp_path) -> Path:
    return Path(shutil.copytree(sampled, tmp_path / "run"))


def rows_of(path: Path) -> list[list[str]]:
    return list(csv.reader(path.open(encoding="utf-8"), delimiter="\t"))


def write_rows(path: Path, rows: list[list[str]]) -> None:
    """Save as a spreadsheet saves a TSV."""
    with path.open("w", encoding="utf-8", newline="") as out:
        csv.writer(out, delimiter="\t", lineterminator="\n").writerows(rows)


def evaluate(run_dir: Path, config: str = CONFIG) -> int:
    return main(["evaluate", config, "--run-dir", str(run_dir), "--judgments", str(run_dir / "evaluation-judging.tsv")])


def error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def edited(run_dir: Path, line: int, column: str, value: str) -> Path:
    """The sample with the cell of ``column`` on ``line`` (1-based, the header 1) set to ``value``."""
    path = run_dir / "evaluation-judging.tsv"
    rows = rows_of(path)
    rows[line - 1][rows[0].index(column)] = value
    write_rows(path, rows)
    return path


def test_a_retrained_ranker_is_refused_naming_the_run_and_how_to_redraw(run_dir, capsys):
    assert evaluate(run_dir) == 0
    capsys.readouterr()
    votes = read_parquet(RunPaths(run_dir).votes)
    test = votes[votes["split"] == "test"]
    bm25 = test.groupby("query_id")["score_bm25"].rank(ascending=False).astype(int)  # 1 … 4
    score = np.where(test["query_id"] == "sq1", bm25, bm25.map({1: 2, 2: 1, 3: 4, 4: 3}))  # sq2 reranked
    model = RunPaths(run_dir).runs / "model.trec"  # retrained: sq1 ranked as before (BM25's reversed), sq2 not
    write_run(test[["query_id", "passage_id"]].assign(score=score.astype(float)), model, "model")
    assert evaluate(run_dir) == 2  # was: MAP of the new ranking beside the old one's exact top-k figures
    said = error(capsys)
    assert f"evaluation-judging.tsv:6: ranking_model: {model} ranks otherwise than when select drew this sample " \
           "from 'model' (its top 3 of query 'sq2' changed since" in said
    assert "--evaluation --seed N --output NEW.tsv" in said and "put that run of 'model' back" in said
    path = run_dir / "evaluation-judging.tsv"
    assert main(["select", CONFIG, "--run-dir", str(run_dir), "--evaluation", "--more", "--output", str(path)]) == 2
    assert "ranking_model: was drawn from another ranking of 'model' than its run holds now" in error(capsys)


@pytest.mark.parametrize(("line", "column", "value"), [
    (2, "rank_model", "1"),  # a relevant passage put into the model's top 3, first
    (3, "pool_depth", "10"),  # a deeper pool claimed
    (5, "population", "20"), (2, "planned", "5"), (2, "draw", "2"), (4, "query_rows", "3"),
    (2, "ranking_model", "0000000000/0000000000"), (2, "split_queries", "9"),
])
def test_an_edited_design_cell_is_refused_with_its_line_column_and_query(run_dir, capsys, line, column, value):
    path = edited(run_dir, line, column, value)
    query = rows_of(path)[line - 1][0]
    assert evaluate(run_dir) == 2
    assert f"{path}:{line}: {column}: {value!r} was changed since select wrote it (query {query!r})" in error(capsys)


def test_a_deleted_row_or_query_is_refused(run_dir, capsys):
    path = run_dir / "evaluation-judging.tsv"
    rows = rows_of(path)
    relevant = next(i for i, row in enumerate(rows) if row[rows[0].index("relevance")] == "1")
    write_rows(path, rows[:relevant] + rows[relevant + 1:])
    assert evaluate(run_dir) == 2
    first = next(i for i, row in enumerate(rows) if row[0] == rows[relevant][0])  # its query's first row, still there
    assert f"{path}:{first + 1}: query_rows: query {rows[relevant][0]!r} has 3 rows, select drew 4" in error(capsys)
    write_rows(path, [row for row in rows if row[0] != "sq2"])  # a whole query
    assert evaluate(run_dir) == 2
    assert f"{path}:5: draw: holds 1 queries, select drew 2 (the one drawn 2. is missing)" in error(capsys)


def test_an_unknown_query_in_the_seal_refusal_is_named(run_dir, capsys):
    path = edited(run_dir, 2, "query_id", "sq9")
    assert evaluate(run_dir) == 2
    assert (f"{path}:2: query_id: this row's ids or its seal were changed since select wrote it (query 'sq9', "
            "passage 'd2')") in error(capsys)  # the first stage's first


def test_numbers_respelt_by_a_spreadsheet_and_sorted_rows_change_nothing(run_dir, capsys):
    assert evaluate(run_dir) == 0
    before = figures(capsys)
    path = run_dir / "evaluation-judging.tsv"
    rows = rows_of(path)
    header = rows[0]
    for row in rows[1:]:
        for column, spelt in (("query_inclusion", "1"), ("passage_inclusion", "1.00"), ("pool_depth", "3.0"),
                              ("stratum", "0.0"), ("population", "2e0")):
            row[header.index(column)] = spelt
    write_rows(path, [header, *sorted(rows[1:], key=lambda row: row[header.index("passage")])])
    assert evaluate(run_dir) == 0  # was: refused as "changed since select wrote it"
    assert figures(capsys) == before


def v1_seal(row: dict[str, str]) -> str:
    """The seal an earlier weakrank wrote: seven digests over the cells as written."""
    columns = ("query", "passage", "query_inclusion", "passage_inclusion", "stratum", "sample_seed", "use")
    return ".".join(hashlib.sha256("\x1f".join([row["query_id"], row["passage_id"], c, row.get(c, "")]).encode())
                    .hexdigest()[:4] for c in columns)


def test_a_training_sample_of_an_earlier_weakrank_still_reads_and_an_earlier_pooled_one_is_refused(run_dir, capsys):
    path = run_dir / "judging.tsv"
    header = ["query_id", "passage_id", "query", "passage", "relevance", "query_inclusion", "passage_inclusion",
              "stratum", "sample_seed", "seal"]
    row = dict(zip(header, ["tq1", "d1", "what is the capital of germany", "Paris is the capital and largest city "
                            "of France.", "", "0.5", "1.0", "0", "0", ""]))
    write_rows(path, [header, [*list(row.values())[:-1], v1_seal(row)]])
    assert main(["select", CONFIG, "--run-dir", str(run_dir), "--more", "--queries", "1", "--output", str(path)]) == 0
    capsys.readouterr()
    sample = run_dir / "evaluation-judging.tsv"  # the pooled sample as an earlier weakrank wrote it
    rows = rows_of(sample)
    keep = [i for i, c in enumerate(rows[0]) if c not in ("draw", "query_rows") and not c.startswith("ranking_")]
    old = [[row[i] for i in keep] for row in rows]
    write_rows(sample, [old[0], *(r[:-1] + [v1_seal(dict(zip(old[0], r)))] for r in old[1:])])
    assert evaluate(run_dir) == 2
    assert ("a pooled sample drawn by an earlier weakrank, which did not record the rankings it was drawn from"
            in error(capsys))


# the property: any one cell edited (not relevance, not the user's), any order of rows

def own_collection(folder: Path, queries: int = 14, candidates: int = 8, seed: int = 0) -> Path:
    """A TREC collection of the test's own (random words; train and test queries with BM25 candidates, no
    qrels) and its config: enough queries and candidates that a pooled sample draws passages below the pool."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(40)]
    passages = {f"p{i}": " ".join(rng.choice(words, 12)) for i in range(queries * candidates)}
    (folder / "collection.tsv").write_text("".join(f"{p}\t{t}\n" for p, t in passages.items()))
    for split, count in (("train", 4), ("test", queries)):
        (folder / f"{split}.tsv").write_text("".join(f"{split[:2]}{i}\t{' '.join(rng.choice(words, 3))}\n"
                                                      for i in range(count)))
    config = folder / "pipeline.toml"
    config.write_text(f'name = "own"\nrun_dir = "run"\n[dataset]\nloader = "trec"\npath = "{folder}"\n'
                      'options = {{ collection = "collection.tsv", k = {candidates} }}\n'.format(candidates=candidates)
                      + "".join(f'[dataset.splits.{s}]\nqueries = "{s}.tsv"\n' for s in ("train", "test"))
                      + '[label]\nlfs = ["bm25", "tfidf"]\n')
    return config


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> tuple[str, Path]:
    folder = tmp_path_factory.mktemp("large")
    config = str(own_collection(folder))
    run = folder / "run"
    assert main(["run", config, "--run-dir", str(run), "--stages", "ingest,label", "--quiet"]) == 0
    votes = read_parquet(RunPaths(run).votes)
    test = votes[votes["split"] == "test"]
    score = np.random.default_rng(1).normal(size=len(test))
    write_run(test[["query_id", "passage_id"]].assign(score=score), RunPaths(run).runs / "model.trec", "model")
    sample = run / "evaluation-judging.tsv"
    assert main(["select", config, "--run-dir", str(run), "--evaluation", "--queries", "8", "--per-query", "5",
                 "--output", str(sample)]) == 0
    judge_as_a_person(sample)
    rows = rows_of(sample)
    rng = np.random.default_rng(2)  # a relevant passage or two a query, wherever the person found one
    for row in rows[1:]:
        row[rows[0].index("relevance")] = str(int(rng.random() < 0.35))
    write_rows(sample, [rows[0] + ["note"], *(row + ["mine"] for row in rows[1:])])  # a column of the person's
    return config, run


def test_any_one_cell_edited_is_refused_at_its_line_and_column_or_changes_no_figure(large, tmp_path, capsys):
    config, kept = large
    run_dir = Path(shutil.copytree(kept, tmp_path / "run"))
    path = run_dir / "evaluation-judging.tsv"
    rows = rows_of(path)
    assert evaluate(run_dir, config) == 0
    before = figures(capsys)
    assert "exact on the judged pool" in before and any(r[rows[0].index("passage_inclusion")] != "1.0" for r in rows[1:])
    header, rng = rows[0], np.random.default_rng(0)
    editable = [c for c in header if c not in ("relevance", "note")]
    refused = same = 0
    for trial in range(120):
        line, column = int(rng.integers(2, len(rows) + 1)), editable[int(rng.integers(len(editable)))]
        cell = rows[line - 1][header.index(column)]
        other = rows[int(rng.integers(1, len(rows)))][header.index(column)]
        choices = [other, cell + "0", "1", "0", "", "x", cell.upper(), f"{float(cell):.3e}" if _number(cell) else cell]
        value = choices[int(rng.integers(len(choices)))]
        write_rows(path, [*rows[:line - 1], [value if c == column else v for c, v in zip(header, rows[line - 1])],
                          *rows[line:]])
        code = evaluate(run_dir, config)
        if code == 0:
            assert figures(capsys) == before, (line, column, cell, value)
            same += 1
        else:
            said = error(capsys)
            assert code == 2 and re.search(rf"{re.escape(str(path))}:{line}: [\w ()]+: ", said), (line, column, value, said)
            refused += 1
    for trial in range(8):  # any order of the rows
        order = rng.permutation(len(rows) - 1)
        write_rows(path, [header, *(rows[1 + i] for i in order)])
        assert evaluate(run_dir, config) == 0 and figures(capsys) == before
    assert refused > 40 and same > 10, (refused, same)  # both kinds were met


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_a_pooled_sample_drawn_against_weakrank_s_bm25_still_reads_and_grows_against_it(run_dir, capsys):
    """A pooled sample drawn as weakrank drew them before the first stage was the baseline (against weakrank's
    BM25, on a dataset with a first stage): evaluate compares with BM25, named as the MAP table names it, and
    select --more grows it against BM25 still."""
    from weakrank.dataset import Dataset
    from weakrank.judged.evaluation import pooled_runs
    from weakrank.judged.judging_file import read_judging_file, write_judging_file
    from weakrank.judged.pooling import pooled_pairs
    from weakrank.stages.select import judging_rows
    from weakrank.stages.systems import evaluated_systems

    paths, path = RunPaths(run_dir), run_dir / "earlier.tsv"
    pairs = pooled_pairs(pooled_runs(evaluated_systems(paths, "test", "model")[0]), ["model"], 1, 6, 0)
    rows = judging_rows(pairs, Dataset.load(paths.dataset), 0)
    rows = pd.concat([rows, pairs.drop(columns=[c for c in pairs.columns if c in rows.columns])], axis=1)
    write_judging_file(rows.assign(use="evaluation"), path, seal=True)
    judge_as_a_person(path)
    assert main(["evaluate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "vs bm25 (weakrank) " in printed and "first stage" not in printed
    assert "judged sample: model better than bm25 (weakrank) (RR@3, 1 of 1 queries)" in printed
    assert main(["select", CONFIG, "--run-dir", str(run_dir), "--evaluation", "--more", "--queries", "1",
                 "--output", str(path)]) == 0
    grown = read_judging_file(path)
    assert grown["query_id"].nunique() == 2 and "rank_bm25" in grown.columns
    assert not any(c.startswith("rank_first") for c in grown.columns)
