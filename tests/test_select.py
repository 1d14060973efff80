"""``weakrank select`` draws what a person judges (a sample with known inclusion probabilities, no gold read), and
select → judge → run takes the judgments into the labels, the teacher and the model card."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_judge import Terminal
from test_no_qrels import own_config

from weakrank import pipeline
from weakrank.cli import main
from weakrank.combinations import LABEL_FREE
from weakrank.config import load_config
from weakrank.errors import ConfigError, DataError
from weakrank.fusion_state import STUDENT_WEIGHT
from weakrank.io import read_metadata, read_parquet
from weakrank.judged.design import candidates, rankings, select_pairs, views
from weakrank.judged.judging_file import read_judging_file, write_judging_file
from weakrank.judged.rule import MIN_QUERIES
from weakrank.paths import RunPaths
from weakrank.training.start_check import StartCheck, earned_weight

OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"


def votes_where(agree: int, disagree: int, size: int = 8, seed: int = 0) -> tuple[pd.DataFrame, dict[str, str]]:
    """Queries whose two LFs rank alike (``agree``) or put different passages first (``disagree``)."""
    rng = np.random.default_rng(seed)
    rows, texts = [], {}
    for q in range(agree + disagree):
        qid = f"{'a' if q < agree else 'd'}{q}"
        texts[qid] = " ".join(f"word{q}x{k}" for k in range(4))
        first = rng.normal(size=size)
        second = first if q < agree else -first
        rows += [{"query_id": qid, "passage_id": f"{qid}p{i}", "split": "train", "gold": float(i == 0),
                  "score_lexical": first[i], "score_semantic": second[i], "vote_lexical": 0, "vote_semantic": 0}
                 for i in range(size)]
    return pd.DataFrame(rows), texts


def test_select_samples_the_queries_where_the_lfs_disagree_with_their_probabilities():
    votes, texts = votes_where(agree=20, disagree=5)
    pairs = select_pairs(votes, texts, "train", queries=5, per_query=8)
    assert sorted(pairs["query_id"].unique()) == sorted(q for q in texts if q.startswith("d"))  # the agreeing: tied
    assert (pairs["query_inclusion"] == 1.0).all() and (pairs["passage_inclusion"] == 1.0).all()  # 5 of 5, 8 of 8
    few = select_pairs(votes, texts, "train", queries=2, per_query=4)
    assert few["query_id"].nunique() == 2 and few.groupby("query_id").size().max() == 4
    sampled = few[few["passage_inclusion"] < 1]
    assert len(sampled) == 6 and (sampled["passage_inclusion"] == 3 / 7).all()  # 3 of the 7 below the fixed first
    assert set(few["query_inclusion"]) <= {1 / 3, 2 / 3, 1.0, 0.5}
    blind = select_pairs(votes.assign(gold=np.nan), texts, "train", queries=2, per_query=4)
    pd.testing.assert_frame_equal(blind, few)  # no gold read
    other = select_pairs(votes, texts, "train", queries=2, per_query=4, seed=1)
    assert not other.equals(few)  # another seed, another draw


def test_select_designs_its_sample_over_the_rankings_the_judgments_weigh_an_evaluation_adds_the_fusions():
    votes, _ = votes_where(agree=0, disagree=3)
    weigh, _ = rankings(votes, fusions=False)  # select's: the label-free teacher and each LF alone
    measure, _ = rankings(votes)  # an evaluation sample of today's design: CombSUM and RRF measured too
    names = list(views(np.ones(2), np.ones(2), ["lexical", "semantic"]))
    assert names == [LABEL_FREE, "lexical alone", "semantic alone"]
    fusions = candidates(np.ones(2), np.ones(2), ["lexical", "semantic"])
    assert list(fusions) == [LABEL_FREE, "CombSUM", "RRF", *names[1:]]
    for qid, lists in weigh.items():
        assert len(lists) == 3 and lists == [measure[qid][0], *measure[qid][3:]]  # the same rankings, less the fusions
        assert lists[1] == votes[votes["query_id"] == qid].sort_values("score_lexical", ascending=False)[
            "passage_id"].tolist()  # the lexical LF's own order
    assert views(np.ones(2), np.array([True, False]), ["lexical", "semantic"]).keys() == {LABEL_FREE, "lexical alone"}


def test_select_leaves_out_near_duplicate_queries():
    votes, texts = votes_where(agree=0, disagree=6)
    texts.update({"d1": texts["d0"], "d2": texts["d0"] + " please"})  # the same question, asked three times
    chosen = set(select_pairs(votes, texts, "train", queries=4, per_query=2)["query_id"])
    assert len(chosen) == 4 and len(chosen & {"d0", "d1", "d2"}) == 1


def test_select_refuses_the_evaluated_split_and_a_file_already_judged(tmp_path):
    cfg = load_config(own_config(tmp_path, qrels=True), run_dir=tmp_path / "run")  # judging files go beside it
    for stage in (pipeline.ingest, pipeline.label):
        stage(cfg)
    with pytest.raises(ConfigError, match="the one \\[evaluate\\] scores"):
        pipeline.select(cfg, queries=2, split="test")
    path, _ = pipeline.select(cfg, queries=2, per_query=3)
    table = read_judging_file(path)
    assert (table["relevance"] == "").all() and table["query_id"].nunique() == 2
    write_judging_file(table.assign(relevance=["1", *table["relevance"].iloc[1:]]), path)  # one judged
    with pytest.raises(DataError, match="holds judgments already: .* add queries to it with --more"):
        pipeline.select(cfg, queries=2)
    # --more: the file's rows and judgment stay first, the sample's next queries follow
    _, added = pipeline.select(cfg, queries=2, per_query=3, more=True)
    grown = read_judging_file(path)
    design = ["relevance", "query_inclusion", "seal"]  # the earlier queries' inclusion grows with the sample
    pd.testing.assert_frame_equal(grown.iloc[:len(table)].drop(columns=design), table.drop(columns=design))
    assert grown["relevance"].iloc[0] == "1" and (grown["relevance"].iloc[1:] == "").all()
    assert set(added["query_id"]).isdisjoint(table["query_id"]) and grown["query_id"].nunique() == 4
    with pytest.raises(DataError, match="no judging file to add queries to"):
        pipeline.select(cfg, output=tmp_path / "none.tsv", more=True)
    write_judging_file(grown.assign(sample_seed="x"), path)  # the sample's seed edited by hand: --more cannot grow it
    with pytest.raises(DataError, match=":2: sample_seed: 'x' was changed since select wrote it"):
        pipeline.select(cfg, queries=1, per_query=3, more=True, force=True)


def test_judgments_of_the_evaluated_split_are_refused(tmp_path):
    cfg = load_config(OWN / "pipeline.toml", run_dir=tmp_path)
    for stage in (pipeline.ingest, pipeline.label):
        stage(cfg)
    (tmp_path / "test.qrels").write_text("sq1 0 d1 1\n")  # a test query: it would choose what is then scored
    with pytest.raises(DataError, match="evaluated split 'test'"):
        pipeline.aggregate(cfg, judgments=tmp_path / "test.qrels")
    with pytest.raises(ConfigError, match="label model 'majority' reads none"):
        pipeline.aggregate(cfg, model="majority", judgments=tmp_path / "test.qrels")
    (tmp_path / "other.qrels").write_text("nowhere 0 d1 1\n")
    with pytest.raises(DataError, match="other.qrels:1: query_id: judged query 'nowhere' is not in the votes"):
        pipeline.aggregate(cfg, judgments=tmp_path / "other.qrels")
    assert not RunPaths(tmp_path).labels.exists()


def test_select_judge_run_end_to_end_on_the_own_collection(tmp_path, capsys):
    config, run = str(own_config(tmp_path, qrels=True)), tmp_path / "run"
    assert main(["run", config, "--run-dir", str(run), "--stages", "ingest,label,aggregate", "--quiet"]) == 0
    assert main(["select", config, "--run-dir", str(run), "--queries", "2", "--per-query", "3"]) == 0
    printed = capsys.readouterr().out
    path = tmp_path / "pipeline.judgments" / "judging.tsv"  # beside the config, not in the run directory
    assert "6 passages to read" in printed and f"weakrank judge {path}" in printed
    # a person judges in the terminal: relevant where the passage names the query's last word
    rows = read_judging_file(path)
    terminal = Terminal(path)
    terminal.expect("relevant? ")
    keys = ["y" if query.split()[-1] in passage.lower() else "n" for query, passage in zip(rows["query"], rows["passage"])]
    for key in keys[:-1]:
        terminal.press(key)
    terminal.press(keys[-1], then="is answered")
    assert terminal.proc.wait(timeout=30) == 0
    judged = read_judging_file(path)
    assert set(judged["relevance"]) == {"0", "1"}
    assert main(["run", config, "--run-dir", str(run), "--judgments", str(path), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "judged: 2 judged queries have a relevant and a non-relevant passage, fewer than" in printed
    labels = read_parquet(RunPaths(run).labels)
    meta = read_metadata(RunPaths(run).labels)
    assert meta["judgments"] == "judging.tsv" and sorted(meta["gold_queries"]) == sorted(judged["query_id"].unique())
    relevant = judged[judged["relevance"] == "1"]
    mine = labels.merge(relevant[["query_id", "passage_id"]], on=["query_id", "passage_id"])
    assert (mine["label"] == 1).all() and (mine["judged"] == 1).all()  # judgments over pseudo-labels
    model = RunPaths(run).models() / "best"
    card = (model / "README.md").read_text()
    assert all(qid in card for qid in meta["gold_queries"])  # the card records the judged queries
    shipped = json.loads((model / "weakrank_fusion.json").read_text())
    assert shipped["teacher"]["choice"] == meta["params"]["choice"] and shipped["teacher"]["judged"]["reason"]
    # the student saved before the judged queries joined its training grades its weight on them: too few to change
    # the weight it earned without them
    label_free = earned_weight(StartCheck.load(RunPaths(run).models()), STUDENT_WEIGHT)
    assert (RunPaths(run).models() / "held_out").is_dir() and shipped["student_weight"] == label_free
    assert sorted(shipped["mix"]["queries"]) == sorted(meta["gold_queries"])
    assert f"shipped ranker: 2 judged queries have a relevant passage, fewer than the {MIN_QUERIES}" in printed
    assert f"to judge more: weakrank select {config} --more" in printed
    # as the hint says: the next query joins the judging file, the judgments stay
    assert main(["select", config, "--run-dir", str(run), "--more", "--queries", "1", "--per-query", "3"]) == 0
    assert "added 1 query of split" in capsys.readouterr().out
    grown = read_judging_file(path)
    assert grown["query_id"].nunique() == 3 and grown["relevance"].iloc[:len(judged)].tolist() == judged["relevance"].tolist()
    assert (RunPaths(run).runs / "evaluation.csv").exists()
