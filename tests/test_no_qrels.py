"""The user with no labels at all: a run without any qrels finishes and says how to measure; the evaluation by
sample measures it from a few judged queries; the commands `run`, `select` and `judge` print work when pasted."""

import csv
import json
import re
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest
import torch

from weakrank.cli import main
from weakrank.io import read_run
from weakrank.judged.judging_file import read_judging_file
from weakrank.paths import RunPaths

OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"
STAGES = ["ingest", "label", "aggregate", "analyze", "train", "rerank", "evaluate"]


@pytest.fixture(autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def own_config(folder: Path, qrels: bool) -> Path:
    """The own-made collection's config in ``folder`` (its files read from the fixture), with or without qrels."""
    lines = (OWN / "pipeline.toml").read_text().splitlines()
    kept = [line.replace('path = "."', f'path = "{OWN}"') for line in lines if qrels or not line.startswith("qrels")]
    (folder / "pipeline.toml").write_text("\n".join(kept) + "\n")
    return folder / "pipeline.toml"


def commands(line: str) -> list[list[str]]:
    """The `weakrank …` commands of a printed line, as a shell splits them (less the program name)."""
    return [shlex.split(found)[1:] for found in re.findall(r"`(weakrank [^`]+)`", line)]


def judge_as_a_person(path: Path) -> None:
    """Fill in a judging file's relevance column as a person in a spreadsheet would: a passage is relevant when it
    holds the query's last word (`weakrank judge` itself is tested through a terminal in tests/test_judge.py)."""
    rows = list(csv.reader(path.open(encoding="utf-8"), delimiter="\t"))
    at = {name: i for i, name in enumerate(rows[0])}
    for row in rows[1:]:
        row[at["relevance"]] = "1" if row[at["query"]].split()[-1] in row[at["passage"]].lower() else "0"
    with path.open("w", encoding="utf-8", newline="") as out:
        csv.writer(out, delimiter="\t", lineterminator="\n").writerows(rows)


def test_no_qrels_run_finishes_and_its_commands_measure_the_ranker(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    config = own_config(tmp_path, qrels=False)
    # a cross-encoder student (weight 0.35): on two test lists the shipped ranker then differs from BM25's top 3
    assert main(["run", "pipeline.toml", "--run-dir", "run", "--max-queries", "50", "--quiet",
                 "--architecture", "cross-encoder"]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert [line for line in out if line.startswith("--- ")] == [f"--- {stage}" for stage in STAGES]
    assert [line.split()[0] for line in out if line.endswith(" s") and " done in " in line] == STAGES  # each end
    # the plan first: the stages ahead, then, once the data's size is known, a rough time for each and in all
    assert out[0] == f"stages ahead: {', '.join(STAGES)} (a rough time once the dataset is ingested)"
    plan = out[out.index("--- label") - 1]
    assert plan.startswith("stages ahead: label ~") and all(f"{stage} ~" in plan for stage in STAGES[1:])
    assert re.search(r"; roughly \d+ (s|min) in all from the work \(texts' tokens, steps\), assuming 2 idle CPU cores",
                     plan)
    assert any(re.fullmatch(r"  in all +\d+\.\d s", line) for line in out)  # and the measured times at the end
    skip = out[out.index("--- evaluate") + 1]
    assert skip == ("skipped: split 'test' has no qrels and evaluation-judging.tsv holds no judgments: nothing "
                    "measures the ranker on it")
    assert list(json.loads((tmp_path / "run" / "timings.json").read_text())) == STAGES
    # training under --quiet says where it is: its steps, the time taken and left
    assert re.search(r"training: step 4/4 \(100%\), \S+ elapsed, about \S+ left", captured.err)
    assert re.search(r"reranking: query 2/2 \(100%\), \S+ elapsed", captured.err)  # reranking too
    # the labels in plain words: the pairs past 0.5, and how many relevant candidates a list holds by the probabilities
    labels = pd.read_parquet(RunPaths(tmp_path / "run").labels)
    per_list = labels.groupby("query_id")["p_relevant"].sum().mean()
    assert (f"{labels['label'].sum()} of 32 pairs labelled relevant (p > 0.5); on average {per_list:.1f} relevant "
            "candidate") in captured.out
    # the model card: dev figures against the pseudo-labels, no MAP that reads as one against gold
    card = (tmp_path / "run" / "model" / "best" / "README.md").read_text()
    assert "Measured against the pseudo-labels (no gold was read)" in card
    assert "dev_agreement" in card and "map" not in card.split("## Dev figures")[1].split("## ")[0].lower()

    last = out[-1]  # the closing line: why nothing is measured, and how to
    assert last.startswith(skip.removeprefix("skipped: ") + " — to measure it against first stage (your run) on 20 judged "
                           "queries: ")  # what it is measured against: the user's own run
    select, judge, evaluate = commands(last)
    assert select == ["select", "pipeline.toml", "--run-dir", "run", "--max-queries", "50", "--evaluation"]
    assert judge == ["judge", "pipeline.judgments/evaluation-judging.tsv"]  # beside the config: outlives the run
    assert main(select) == 0
    printed = capsys.readouterr().out
    assert "weakrank judge pipeline.judgments/evaluation-judging.tsv" in printed
    assert f"then: weakrank {shlex.join(evaluate)}" in printed
    sample = read_judging_file(judge[1])
    # the pooled design draws the queries where the model's top 3 is not the first stage's (the user's run:
    # elsewhere no judgment tells them apart), each with the union of the two tops
    model, first = read_run(tmp_path / "run" / "runs" / "model.trec"), read_run(OWN / "test.run")
    tops = [run.sort_values("score", ascending=False, kind="stable").groupby("query_id")["passage_id"]
            .agg(lambda p: list(p)[:3]) for run in (model, first)]
    differ = {q for q in tops[1].index if tops[0][q] != tops[1][q]}
    assert differ and set(sample["query_id"]) == differ and (sample["use"] == "evaluation").all()
    assert {"query_inclusion", "passage_inclusion", "stratum", "sample_seed"} <= set(sample.columns)
    # the pooled design: the union of the trained ranker's and the first stage's top 3, each passage's rank in each
    baseline = "first stage (your run)"  # as evaluate's MAP table names it
    assert {"pool_depth", f"rank_{baseline}", "rank_model"} <= set(sample.columns) and (sample["pool_depth"] == "3").all()
    assert sample.groupby("query_id").size().max() <= 6
    judge_as_a_person(Path(judge[1]))

    assert main(evaluate) == 0
    printed = capsys.readouterr().out
    # the exact top-k figures against the first stage, and no MAP: a pooled sample's MAP estimate runs high
    assert "exact on the judged pool" in printed and "no MAP from a pooled sample" in printed
    assert "MAP (estimated)" not in printed and "vs bm25" not in printed
    closing = f"judged sample: model better than {baseline} (RR@3, {len(differ)} of {len(differ)} queries): "
    assert printed.splitlines()[-2].startswith(closing)
    assert re.search(r"model RR@3 \d\.\d{3} \[.*\], vs first stage \(your run\) [+-]\d\.\d{3} \[.*\]: .*answers", printed)
    assert closing in (tmp_path / "run" / "runs" / "evaluation-sample.md").read_text()
    assert not (tmp_path / "run" / "runs" / "evaluation-sample.csv").exists()
    topk = pd.read_csv(tmp_path / "run" / "runs" / "evaluation-topk.csv", index_col=[0, 1])
    assert set(topk.index) == {(s, m) for s in (baseline, "model") for m in ("RR", "P", "nDCG")}
    assert topk.loc[(baseline, "RR"), f"vs {baseline}"] == 0
    # the user's own TREC runs measured beside them, given after --judgments: the first stage's file is its row
    assert main([*evaluate, str(OWN / "test.run")]) == 0
    mine = pd.read_csv(tmp_path / "run" / "runs" / "evaluation-topk.csv", index_col=[0, 1])
    assert list(dict.fromkeys(mine.index.get_level_values(0))) == [baseline, "model", "test"]
    assert mine.loc["test"].to_numpy().ravel() == pytest.approx(mine.loc[baseline].to_numpy().ravel())

    # the evaluate stage of `run` measures on the judged sample, now that there is one
    assert main(["run", "pipeline.toml", "--run-dir", "run", "--stages", "evaluate", "--quiet"]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith(closing)

    # the sample measures, it never trains: aggregate refuses it, before anything is written
    labels = RunPaths(tmp_path / "run").labels.read_bytes()
    for command in (["aggregate", str(config), "--run-dir", "run", "--judgments", judge[1]],
                    ["run", str(config), "--run-dir", "run", "--judgments", judge[1]]):
        assert main(command) == 2
        assert "evaluation-judging.tsv:2: use: an evaluation sample" in capsys.readouterr().err
    assert RunPaths(tmp_path / "run").labels.read_bytes() == labels

    # a run directory of an earlier weakrank, its judging file inside: still read there
    sample = Path(judge[1])
    judged = sample.read_bytes()
    sample.rename(tmp_path / "run" / "evaluation-judging.tsv")
    assert main(["run", "pipeline.toml", "--run-dir", "run", "--stages", "evaluate", "--quiet"]) == 0
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith(closing)
    (tmp_path / "run" / "evaluation-judging.tsv").rename(sample)
    # the person's judgments outlive the run: rerun with --force, then deleted to start over
    assert main(["run", "pipeline.toml", "--run-dir", "run", "--stages", "ingest,label", "--force", "--quiet"]) == 0
    shutil.rmtree(tmp_path / "run")
    assert sample.read_bytes() == judged and sample.resolve().parent == tmp_path / "pipeline.judgments"


def test_a_judged_rerun_keeps_the_evaluation_before_and_asks_for_new_queries(tmp_path, monkeypatch, capsys):
    """With qrels: `run`'s closing line carries the flags it was given; pasted, its commands judge queries and
    rerun with them; the rerun keeps the evaluation before the judgments and asks for other queries."""
    monkeypatch.chdir(tmp_path)
    own_config(tmp_path, qrels=True)
    flags = ["--run-dir", "run", "--max-queries", "50", "--max-steps", "4"]
    assert main(["run", "pipeline.toml", *flags, "--stages", "ingest,label,aggregate,analyze", "--quiet"]) == 0
    runs = RunPaths(tmp_path / "run").runs
    runs.mkdir()  # a trained ranker that ranks each list upside down: word_overlap alone is ahead of it
    candidates = pd.read_parquet(tmp_path / "run" / "dataset" / "candidates.parquet")
    (runs / "model.trec").write_text("".join(f"{q} Q0 {p} {r} {r}.0 model\n" for q, p, r in
                                             zip(candidates["query_id"], candidates["passage_id"], candidates["rank"])))
    capsys.readouterr()
    assert main(["run", "pipeline.toml", *flags, "--stages", "evaluate", "--quiet"]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert "ahead of it — judge 10 queries, and each LF's prior moves by what they show of it" in last
    assert last in (runs / "evaluation.md").read_text()  # evaluation.md says what the terminal said
    select, judge, rerun = commands(last)
    assert select == ["select", "pipeline.toml", "--run-dir", "run", "--max-queries", "50", "--queries", "10"]
    assert rerun == ["run", "pipeline.toml", "--run-dir", "run", "--max-queries", "50", "--max-steps", "4",
                     "--judgments", "pipeline.judgments/judging.tsv"]
    assert main(select) == 0
    # select's own next step: the flags select takes (it has no [train] ones)
    assert "then: weakrank run pipeline.toml --run-dir run --max-queries 50 --judgments pipeline.judgments/judging.tsv" in \
        capsys.readouterr().out
    judge_as_a_person(Path(judge[1]))
    before = (runs / "evaluation.csv").read_bytes()
    assert main(rerun) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert (runs / "evaluation-before.csv").read_bytes() == before  # the evaluation before the judgments, kept
    assert "(evaluation-before.png)" in (runs / "evaluation-before.md").read_text()
    assert "evaluation-before.md" in (runs / "evaluation.md").read_text()
    assert re.search(r"MAP \d\.\d{3} \(\d\.\d{3} before the judgments\)", last)
    if "ahead of it" in last:  # asked again: other queries, added to the same file, none judged twice
        assert commands(last)[0] == ["select", "pipeline.toml", "--run-dir", "run", "--max-queries", "50", "--more",
                                     "--queries", "10"]


def test_the_config_check_knows_which_splits_have_qrels(tmp_path):
    from tests.test_cli import beir_folder
    from weakrank import pipeline
    from weakrank.config import load_config
    from weakrank.validation import qrels_splits

    assert qrels_splits(load_config(own_config(tmp_path, qrels=False)), ingested=False) == set()
    cfg = load_config(own_config(tmp_path, qrels=True), run_dir=tmp_path / "run")
    assert qrels_splits(cfg, ingested=False) == {"dev", "test"}
    pipeline.ingest(cfg)
    assert qrels_splits(cfg) == {"dev", "test"}  # once ingested: the splits with an assessed candidate
    beir_folder(tmp_path / "beir")
    (tmp_path / "beir.toml").write_text('[dataset]\nloader = "beir"\npath = "beir"\noptions = { splits = ["test"], '
                                        'unlabelled = "train" }\n[label]\nlfs = ["bm25"]\n')
    assert qrels_splits(load_config(tmp_path / "beir.toml"), ingested=False) == {"test"}


def test_judgments_are_checked_before_the_first_stage(tmp_path, capsys):
    config = own_config(tmp_path, qrels=False)
    saved = tmp_path / "judging.csv"  # a judging file a spreadsheet saved as CSV
    saved.write_text("query_id,passage_id,query,passage,relevance\ntq1,d1,capital of germany,Berlin,1\n")
    for judgments, message in ((saved, f"{saved}:1: comma-separated: save as tab-separated"),
                               (tmp_path / "none.tsv", f"--judgments {tmp_path / 'none.tsv'}: file not found")):
        assert main(["run", str(config), "--run-dir", str(tmp_path / "run"), "--judgments", str(judgments)]) == 2
        assert message in capsys.readouterr().err
    config.write_text(config.read_text().replace('model = "fusion"', f'model = "fusion"\njudgments = "{saved.name}"'))
    assert main(["run", str(config), "--run-dir", str(tmp_path / "run")]) == 2
    assert "comma-separated" in capsys.readouterr().err and not (tmp_path / "run").exists()  # nothing ran


def test_printed_commands_repeat_the_train_flags_as_given():
    from weakrank.commands import build_parser
    from weakrank.commands.train import train_flags

    args = build_parser().parse_args(["run", "x.toml", "--max-steps", "100", "--no-fuse-lfs", "--lr", "3e-05"])
    again = build_parser().parse_args(["run", "x.toml", *shlex.split(train_flags(args))])
    assert {"max_steps": 100, "fuse_lfs": False, "lr": 3e-05}.items() <= vars(again).items()


def test_without_a_dev_split_no_message_points_at_dev_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    lines = own_config(tmp_path, qrels=True).read_text().split("\n\n")
    (tmp_path / "pipeline.toml").write_text("\n\n".join(block for block in lines if "[dataset.splits.dev]" not in block))
    assert main(["run", "pipeline.toml", "--run-dir", "run", "--stages", "ingest,label,aggregate,train",
                 "--max-steps", "2"]) == 0  # not quiet: the warning is said
    captured = capsys.readouterr()
    assert "no 'dev' split in the labels: training without early stopping" in captured.err
    assert "(no dev split: the last step's model, with no dev figures)" in captured.out
    assert "dev figures" not in captured.out.replace("with no dev figures", "")
