"""Issue 17: bad input stops with an error naming file, line, field and id; nothing is de-duplicated first."""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from weakrank.cli import main
from weakrank.config import load_config
from weakrank.dataset import Dataset
from weakrank.errors import ConfigError, DataError, WeakrankError
from weakrank.loaders import load_dataset
from weakrank.paths import RunPaths
from weakrank.pipeline import ingest

HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"


def _wikiqa(tmp_path, **splits):
    for split in ("train", "dev", "test"):
        rows = splits.get(split, [[f"Q-{split}", "what is nine", "D9", "t", f"S-{split}", "nine is a number", "1"]])
        (tmp_path / f"WikiQA-{split}.tsv").write_text(HEADER + "".join("\t".join(r) + "\n" for r in rows))
    return tmp_path


def test_wikiqa_query_id_reused_with_another_text_or_split(tmp_path):
    train = [["Q1", "what is x", "D1", "t", "D1-0", "x is y", "1"]]
    dev = [["Q2", "what is z", "D2", "t", "D2-0", "z is w", "1"], ["Q1", "who is y", "D3", "t", "D3-0", "y is", "0"]]
    with pytest.raises(DataError, match=r"WikiQA-dev.tsv:3: QuestionID: query id 'Q1' reused with a different query "
                                        r"'who is y' \(first at .*WikiQA-train.tsv:2"):
        load_dataset("wikiqa", _wikiqa(tmp_path, train=train, dev=dev))
    dev[1][1] = "what is x"  # same text, other split: the dev rows would move into train
    with pytest.raises(DataError, match=r"WikiQA-dev.tsv:3: QuestionID: query id 'Q1' reused with a different split"):
        load_dataset("wikiqa", _wikiqa(tmp_path, train=train, dev=dev))


def test_wikiqa_sentence_id_reused_with_another_text(tmp_path):
    train = [["Q1", "what is x", "D1", "t", "S1", "x is y", "1"], ["Q2", "what is z", "D1", "t", "S1", "other", "0"]]
    with pytest.raises(DataError, match=r"WikiQA-train.tsv:3: SentenceID: passage id 'S1' reused with a different"):
        load_dataset("wikiqa", _wikiqa(tmp_path, train=train))
    train[1] = ["Q1", "what is x", "D1", "t", "S1", "x is y", "0"]
    with pytest.raises(DataError, match=r"WikiQA-train.tsv:3: SentenceID: duplicate candidate .* 'Q1', 'S1'"):
        load_dataset("wikiqa", _wikiqa(tmp_path, train=train))


def test_unreadable_files_are_located(tmp_path):
    _wikiqa(tmp_path)
    (tmp_path / "WikiQA-train.tsv").write_bytes(HEADER.encode() + b"Q1\twhat\tD1\tt\tS1\tcaf\xe9\t1\n")
    with pytest.raises(DataError, match=r"WikiQA-train.tsv:2: not UTF-8 \(byte 0xe9\)"):
        load_dataset("wikiqa", tmp_path)
    (tmp_path / "WikiQA-train.tsv").write_text("")
    with pytest.raises(DataError, match=r"WikiQA-train.tsv: empty file"):
        load_dataset("wikiqa", tmp_path)
    (tmp_path / "WikiQA-train.tsv").write_text(HEADER + "Q1\twhat\tD1\tt\tS1\ta\tstray tab\t1\n")
    with pytest.raises(DataError, match=r"WikiQA-train.tsv:2: 8 fields, expected 7 .*\(a stray tab\?\)"):
        load_dataset("wikiqa", tmp_path)


def _beir(tmp_path, corpus, queries, qrels):
    (tmp_path / "qrels").mkdir(exist_ok=True)
    (tmp_path / "corpus.jsonl").write_text("".join(line + "\n" for line in corpus))
    (tmp_path / "queries.jsonl").write_text("".join(line + "\n" for line in queries))
    for split, rows in qrels.items():
        (tmp_path / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    return tmp_path


CORPUS = ['{"_id": "d1", "title": "Apples", "text": "red apples"}', '{"_id": "d2", "text": "the sea is blue"}']


def test_beir_duplicates_and_nulls(tmp_path):
    queries = ['{"_id": "q1", "text": "sweet apples"}', '{"_id": "q1", "text": "blue sea"}']
    with pytest.raises(DataError, match=r"queries.jsonl:2: _id: duplicate query id 'q1' \(first at .*queries.jsonl:1\)"):
        load_dataset("beir", _beir(tmp_path, CORPUS, queries, {"test": "q1\td1\t1\n"}), splits=("test",))
    corpus = [*CORPUS, '{"_id": "d3", "title": null, "text": "x"}']
    with pytest.raises(DataError, match=r"corpus.jsonl:3: title: null value"):
        load_dataset("beir", _beir(tmp_path, corpus, queries[:1], {"test": "q1\td1\t1\n"}), splits=("test",))
    qrels = {"train": "q1\td1\t1\n", "test": "q1\td2\t0\n"}
    with pytest.raises(DataError, match=r"qrels/test.tsv:2: query-id: query id 'q1' reused with a different split"):
        load_dataset("beir", _beir(tmp_path, CORPUS, queries[:1], qrels))
    with pytest.raises(DataError, match=r"qrels/test.tsv:2: score: score 'high' is not an integer"):
        load_dataset("beir", _beir(tmp_path, CORPUS, queries[:1], {"test": "q1\td1\thigh\n"}), splits=("test",))


def _trec(tmp_path, queries="q1\tsweet apples\nq2\tblue sea\n", run="q1 Q0 d1 1 2.0 x\nq2 Q0 d2 1 1.0 x\n",
          qrels="q1 0 d1 1\n"):
    (tmp_path / "collection.tsv").write_text("d1\tred apples are sweet\nd2\tthe sea is blue\n")
    (tmp_path / "queries.tsv").write_text(queries)
    (tmp_path / "run.trec").write_text(run)
    (tmp_path / "qrels.txt").write_text(qrels)
    return tmp_path


def test_trec_located_errors(tmp_path):
    ds = load_dataset("trec", _trec(tmp_path))
    assert ds.candidates["gold"].tolist() == [1, pd.NA]  # q2 is not in the qrels: no gold
    with pytest.raises(DataError, match=r"queries.tsv:3: query_id: duplicate query id 'q1' \(first at .*queries.tsv:1\)"):
        load_dataset("trec", _trec(tmp_path, queries="q1\tsweet apples\nq2\tblue sea\nq1\tagain\n"))
    with pytest.raises(DataError, match=r"run.trec:2: query_id: run names query id 'q3', which is not in queries.tsv"):
        load_dataset("trec", _trec(tmp_path, run="q1 Q0 d1 1 2.0 x\nq3 Q0 d2 1 1.0 x\n"))
    with pytest.raises(DataError, match=r"run.trec:1: passage_id: run names passage id 'd7'"):
        load_dataset("trec", _trec(tmp_path, run="q1 Q0 d7 1 2.0 x\n"))
    with pytest.raises(DataError, match=r"run.trec:2: score: score 'high' is not a number"):
        load_dataset("trec", _trec(tmp_path, run="q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 high x\n"))
    with pytest.raises(DataError, match=r"qrels.txt:2: relevance: relevance '0.5' is not an integer"):
        load_dataset("trec", _trec(tmp_path, qrels="q1 0 d1 1\nq1 0 d2 0.5\n"))


def test_null_fields_in_tables_are_errors(tiny):
    queries = tiny.queries.copy()
    queries.loc[1, "text"] = None
    with pytest.raises(DataError, match=r"row 1: text: null text in queries"):
        Dataset("t", queries, tiny.passages, tiny.candidates)


def _config(tmp_path, extra=""):
    cfg = tmp_path / "own.toml"
    cfg.write_text(
        f'run_dir = "{tmp_path / "run"}"\n[dataset]\nloader = "trec"\npath = "{tmp_path}"\n{extra}\n'
        '[label]\nlfs = ["bm25", "tfidf"]\n'
    )
    return cfg


@pytest.mark.parametrize("value", [0, -2, "5", 1.5])
def test_max_queries_must_be_a_positive_integer(tmp_path, value):
    cfg = _config(tmp_path, f"max_queries = {value!r}".replace("'", '"'))
    with pytest.raises(ConfigError, match=r"\[dataset\] max_queries must be a positive integer .*got"):
        load_config(cfg)


def test_cli_max_queries_zero_is_refused(tmp_path, capsys):
    _trec(tmp_path)
    assert main(["ingest", str(_config(tmp_path)), "--max-queries", "0"]) == 2
    assert "weakrank: error: --max-queries must be a positive integer" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def _snapshot(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


KILLED_INGEST = """
import sys, time
import weakrank.dataset
from weakrank.config import load_config
from weakrank.pipeline import ingest

write = weakrank.dataset.write_parquet


def slow(df, path, metadata=None):
    out = write(df, path, metadata)
    if path.name == "passages.parquet":  # half the tables written: stop here until killed
        print("half", flush=True)
        time.sleep(120)
    return out


weakrank.dataset.write_parquet = slow
ingest(load_config(sys.argv[1]))
"""


def test_ingest_killed_mid_write_leaves_the_previous_dataset(tmp_path):
    cfg = _config(_trec(tmp_path))
    ingest(load_config(cfg))
    paths = RunPaths(tmp_path / "run")
    before = _snapshot(paths.dataset)
    _trec(tmp_path, queries="q1\tsweet apples\nq2\tblue sea\nq3\tred sea\n", run="q3 Q0 d2 1 1.0 x\nq1 Q0 d1 1 2.0 x\n")
    script = tmp_path / "killed_ingest.py"
    script.write_text(KILLED_INGEST)
    proc = subprocess.Popen([sys.executable, str(script), str(cfg)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    try:
        assert proc.stdout.readline().strip() == "half"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert _snapshot(paths.dataset) == before
    assert list(paths.root.glob(".dataset.*.tmp"))  # the killed run's temp directory
    assert Dataset.load(paths.dataset).queries["query_id"].tolist() == ["q1", "q2"]
    assert ingest(load_config(cfg)).queries["query_id"].tolist() == ["q1", "q2", "q3"]
    assert [p.name for p in paths.root.iterdir()] == ["dataset"]  # the next run cleaned the temp files
    assert Dataset.load(paths.dataset).queries["query_id"].tolist() == ["q1", "q2", "q3"]


def test_a_kill_between_the_two_renames_is_undone(tmp_path):
    ingest(load_config(_config(_trec(tmp_path))))
    paths = RunPaths(tmp_path / "run")
    before = _snapshot(paths.dataset)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    paths.dataset.rename(paths.root / f".dataset.{dead.pid}.abc123.old")  # moved aside, new one not yet in
    (paths.root / f".dataset.{dead.pid}.abc123.tmp").mkdir()
    assert Dataset.load(paths.dataset).queries["query_id"].tolist() == ["q1", "q2"]
    assert _snapshot(paths.dataset) == before and [p.name for p in paths.root.iterdir()] == ["dataset"]


def test_cli_errors_are_one_located_line(tmp_path, capsys, monkeypatch):
    cfg = _config(_trec(tmp_path, qrels="q1 0 d1 1\nq1 0 d2 yes\n"))
    assert main(["ingest", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == f"weakrank: error: {tmp_path / 'qrels.txt'}:2: relevance: relevance 'yes' is not an integer\n"
    _trec(tmp_path)
    assert main(["ingest", str(cfg), "--quiet"]) == 0
    queries = RunPaths(tmp_path / "run").dataset / "queries.parquet"
    queries.write_bytes(queries.read_bytes()[:40])  # truncated
    capsys.readouterr()
    assert main(["label", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"weakrank: error: {queries}: not a readable Parquet file") and err.count("\n") == 1


def test_ctrl_c_exits_130_with_one_line(tmp_path, capsys, monkeypatch):
    def interrupted(cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr("weakrank.pipeline.ingest", interrupted)
    assert main(["ingest", str(_config(_trec(tmp_path))), "--quiet"]) == 130
    assert capsys.readouterr().err == "weakrank: interrupted\n"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("max_querys = 5", r"\[dataset\] unknown key 'max_querys'"),
        ("[aggregate]\nmodle = 'majority'", r"\[aggregate\] unknown key 'modle'"),
        ("[trian]\nmax_steps = 2", r"unknown section or key 'trian'"),
    ],
)
def test_misspelt_keys_and_sections_are_errors(tmp_path, extra, message):
    with pytest.raises(ConfigError, match=message):
        load_config(_config(tmp_path, extra))


def test_a_raising_lf_names_the_pair(tiny):
    from weakrank import ranking_lf
    from weakrank.errors import LFError
    from weakrank.labeling import apply_lfs

    @ranking_lf()
    def fragile(query: str, passage: str) -> float:
        return 1 / 0 if "Leonardo" in passage else 0.0

    with pytest.raises(LFError, match=r"'fragile': raised ZeroDivisionError: division by zero on query_id 'q2', "
                                      r"passage_id 'p4' \(pair 5\)"):
        apply_lfs(tiny, [fragile], progress=False)


# Issue 26: no traceback, no silent loss, no stale result


def test_ingest_refuses_to_delete_a_users_file_in_dataset(tmp_path):
    cfg = load_config(_config(_trec(tmp_path)))
    ingest(cfg)
    paths = RunPaths(tmp_path / "run")
    (paths.dataset / "my_annotations.csv").write_text("q1,d1,good\n")
    before = _snapshot(paths.dataset)
    with pytest.raises(DataError, match=r"dataset: holds 'my_annotations.csv', which weakrank did not write"):
        ingest(cfg)
    assert _snapshot(paths.dataset) == before


LF_FILE = """
from weakrank import ranking_lf

SIGN = {sign}


@ranking_lf()
def length(query: str, passage: str) -> float:
    return {body}
"""


def _lf_run(tmp_path, sign=1, body="SIGN * len(passage)"):
    (tmp_path / "mylfs.py").write_text(LF_FILE.format(sign=sign, body=body))
    cfg = _config(_trec(tmp_path)).read_text().replace('lfs = ["bm25", "tfidf"]', 'lfs = ["bm25", "mylfs.py:length"]')
    (tmp_path / "own.toml").write_text(cfg)
    return str(tmp_path / "own.toml")


def _length_scores(tmp_path):
    votes = pd.read_parquet(RunPaths(tmp_path / "run").votes)
    return votes.filter(like="score_").iloc[:, 1].tolist()


def test_label_force_rewrites_the_score_cache(tmp_path):
    cfg = _lf_run(tmp_path)
    assert main(["ingest", cfg, "--quiet"]) == 0 and main(["label", cfg, "--quiet"]) == 0
    v1 = _length_scores(tmp_path)
    _lf_run(tmp_path, sign=-1)  # a change outside the LF's own source: --force is what recomputes it
    assert main(["label", cfg, "--quiet", "--force"]) == 0
    assert _length_scores(tmp_path) == [-s for s in v1]
    assert main(["label", cfg, "--quiet"]) == 0
    assert _length_scores(tmp_path) == [-s for s in v1]  # not v1's cached scores


def test_lf_score_cache_is_keyed_by_the_lf_source_and_the_dataset(tmp_path):
    cfg = _lf_run(tmp_path)
    assert main(["ingest", cfg, "--quiet"]) == 0 and main(["label", cfg, "--quiet"]) == 0
    v1 = _length_scores(tmp_path)
    _lf_run(tmp_path, body="2 * len(passage)")
    assert main(["label", cfg, "--quiet"]) == 0
    assert _length_scores(tmp_path) == [2 * s for s in v1]
    (tmp_path / "collection.tsv").write_text("d1\tred apples are very sweet\nd2\tthe sea is blue\n")  # same ids
    assert main(["ingest", cfg, "--quiet"]) == 0 and main(["label", cfg, "--quiet"]) == 0
    assert _length_scores(tmp_path) == [2 * len("red apples are very sweet"), 2 * len("the sea is blue")]


def _labelled(tmp_path, queries="q1\tsweet apples\nq2\tblue sea\n", run="q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n"
              "q2 Q0 d2 1 1.0 x\nq2 Q0 d1 2 0.5 x\n", edit=None):
    """A run dir with votes and labels of a two-query TREC set (split test, trained on as train_split); ``edit``
    rewrites labels.parquet (a function of the labels table)."""
    from weakrank.pipeline import aggregate, label

    path = _config(_trec(tmp_path, queries=queries, run=run), '[train]\ntrain_split = "test"\nmax_steps = 1\n')
    text = path.read_text().replace("[train]", "[aggregate]\nmodel = 'majority'\n[train]")
    path.write_text(text.replace('[label]\nlfs = ["bm25", "tfidf"]\n', "").replace("[dataset]", '[label]\nlfs = ["bm25", "tfidf"]\n[dataset]'))
    cfg = load_config(path)
    ingest(cfg), label(cfg, progress=False), aggregate(cfg)
    if edit is not None:
        path = RunPaths(cfg.run_dir).labels
        edit(pd.read_parquet(path)).to_parquet(path)
    return cfg


def _train(cfg):
    from weakrank.stages.stage import train_config
    from weakrank.stages.train import train_ranker

    return train_ranker(cfg, train_config(cfg), progress=False)


def test_labels_of_another_dataset_are_refused_at_train(tmp_path):
    cfg = _labelled(tmp_path)
    _trec(tmp_path, queries="q3\tsweet apples\nq4\tblue sea\n", run="q3 Q0 d1 1 2.0 x\nq4 Q0 d2 1 1.0 x\n",
          qrels="q3 0 d1 1\n")
    ingest(cfg)
    with pytest.raises(DataError, match=r"labels.parquet: row 0: query_id: labels do not match this dataset: "
                                        r"query_id 'q1' is not one of its queries"):
        _train(cfg)


@pytest.mark.parametrize(("field", "value"), [("p_relevant", 1.7), ("p_relevant", -0.3), ("confidence", 1.5)])
def test_labels_outside_zero_one_are_refused_at_train(tmp_path, field, value):
    cfg = _labelled(tmp_path, edit=lambda labels: labels.assign(**{field: labels[field].where(labels.index != 2, value)}))
    with pytest.raises(DataError, match=rf"labels.parquet: row 2: {field}: {value} is outside \[0, 1\]"):
        _train(cfg)


def test_nan_label_scores_on_the_train_rows_are_located(tmp_path):
    cfg = _labelled(tmp_path, edit=lambda labels: labels.assign(score=float("nan")))
    with pytest.raises(DataError, match=r"labels.parquet: row 0: score: NaN on 4 rows of split 'test' \(rows 0, 1, 2"):
        _train(cfg)


def test_labels_without_label_or_confidence_name_the_file(tmp_path):
    cfg = _labelled(tmp_path, edit=lambda labels: labels.drop(columns=["confidence"]))
    with pytest.raises(DataError, match=r"labels.parquet: confidence: missing column \(run `weakrank aggregate`\)"):
        _train(cfg)


def test_a_config_that_is_not_utf8_is_located(tmp_path):
    cfg = _config(tmp_path)
    cfg.write_bytes(cfg.read_bytes().replace(b"[label]", b"# caf\xe9\n[label]"))
    with pytest.raises(ConfigError, match=r"own.toml:6: not UTF-8 \(byte 0xe9\)"):
        load_config(cfg)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("options = { kk = 10 }", r"\[dataset\] options unknown option 'kk' of loader 'trec' \(did you mean 'k'\?\)"),
        ("[label.options.bm52]\nk1 = 1.0", r"\[label.options\] options of 'bm52', which is not in lfs "
                                            r"\(did you mean 'bm25'\?\)"),
    ],
)
def test_unknown_loader_options_and_options_of_absent_lfs_stop_before_ingest(tmp_path, capsys, extra, message):
    cfg = _config(_trec(tmp_path))
    cfg.write_text(cfg.read_text() + extra + "\n" if "label" in extra else cfg.read_text().replace("[label]", f"{extra}\n[label]"))
    assert main(["run", str(cfg), "--quiet"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(ConfigError, match=message):
        from weakrank.validation import check_inputs

        check_inputs(load_config(cfg), ("ingest", "label"))
    assert not (tmp_path / "run").exists()


def test_a_truncated_lf_score_cache_is_recomputed(tmp_path):
    cfg = load_config(_config(_trec(tmp_path)))
    from weakrank.pipeline import label

    ingest(cfg)
    first = label(cfg, progress=False)
    cache = RunPaths(cfg.run_dir).lf_scores / "bm25.parquet"
    cache.write_bytes(cache.read_bytes()[:30])
    pd.testing.assert_frame_equal(label(cfg, progress=False), first)
    assert pd.read_parquet(cache)["score"].tolist() == first["score_bm25"].tolist()


def test_a_truncated_model_head_is_a_located_error_at_rerank(tmp_path, capsys):
    from weakrank.training import CrossEncoderRanker

    cfg = _config(_trec(tmp_path), "[train]\nmax_steps = 1")
    assert main(["ingest", str(cfg), "--quiet"]) == 0
    best = CrossEncoderRanker.from_encoder("minilm", max_length=32).save(tmp_path / "run" / "model" / "best")
    head = best / "head.safetensors"
    head.write_bytes(head.read_bytes()[:20])
    capsys.readouterr()
    assert main(["rerank", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"weakrank: error: {head}: not a readable safetensors file") and err.count("\n") == 1


def test_beir_text_that_is_a_number_is_located(tmp_path):
    corpus = [*CORPUS, '{"_id": 3, "text": 42}']
    queries = ['{"_id": "q1", "text": "sweet apples"}']
    with pytest.raises(DataError, match=r"corpus.jsonl:3: text: must be a string, got int"):
        load_dataset("beir", _beir(tmp_path, corpus, queries, {"test": "q1\td1\t1\n"}), splits=("test",))


def _evaluate(tmp_path, run_text, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "base.trec").write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n")
    (tmp_path / "other.trec").write_text(run_text)
    capsys.readouterr()
    rc = main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), str(tmp_path / "base.trec"), str(tmp_path / "other.trec")])
    return rc, capsys.readouterr().err


def test_evaluate_refuses_a_run_that_repeats_a_pair_with_another_score(tmp_path, capsys):
    rc, err = _evaluate(tmp_path, "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq1 Q0 d1 3 0.5 x\n", capsys)
    assert rc == 2
    assert err == (f"weakrank: error: {tmp_path / 'other.trec'}:3: score: query 'q1', passage 'd1' is ranked twice "
                   "with two scores, 2 at line 1 and 0.5 here: keep one\n")


@pytest.mark.parametrize(("run_text", "why"), [("", "empty run file"),
                                               ("q7 Q0 d1 1 2.0 x\n", "none of its 1 queries \\(e.g. 'q7'\\) is in")])
def test_evaluate_of_an_empty_or_unjudged_run_names_it(tmp_path, capsys, run_text, why):
    rc, err = _evaluate(tmp_path, run_text, capsys)
    assert rc == 2
    assert re.fullmatch(rf"weakrank: error: {re.escape(str(tmp_path / 'other.trec'))}: {why}.*\n", err)


def test_run_with_one_lf_and_a_label_model_that_needs_two_stops_before_ingest(tmp_path, capsys):
    cfg = _config(_trec(tmp_path), '[aggregate]\nmodel = "generative"')
    cfg.write_text(cfg.read_text().replace('lfs = ["bm25", "tfidf"]', 'lfs = ["bm25"]'))
    assert main(["run", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(r"weakrank: error: .*own.toml: \[aggregate\] model 'generative' needs at least 2 LFs; "
                        r"\[label\] lfs has 1\n", err)
    assert not (tmp_path / "run").exists()
    assert main(["run", str(cfg), "--quiet", "--stages", "ingest,label"]) == 0  # no aggregate: no check


def test_a_run_dir_that_is_a_file_is_named(tmp_path, capsys):
    (tmp_path / "run").write_text("not a folder\n")
    assert main(["ingest", str(_config(_trec(tmp_path))), "--quiet"]) == 2
    assert capsys.readouterr().err == (f"weakrank: error: {tmp_path / 'run'}: run_dir is a file; expected a directory "
                                       "(or a path that does not exist yet)\n")
    assert (tmp_path / "run").read_text() == "not a folder\n"


def test_two_concurrent_ingests_one_is_refused(tmp_path):
    cfg = _config(_trec(tmp_path))
    script = tmp_path / "killed_ingest.py"
    script.write_text(KILLED_INGEST)
    slow = subprocess.Popen([sys.executable, str(script), str(cfg)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    try:
        assert slow.stdout.readline().strip() == "half"
        with pytest.raises(WeakrankError, match=rf"locked by process {slow.pid} \(ingest\)"):
            ingest(load_config(cfg))
    finally:
        os.kill(slow.pid, signal.SIGKILL)
        slow.wait()


def test_analyze_of_an_unknown_split_fails_and_keeps_the_summary(tmp_path, capsys):
    import shutil

    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection", tmp_path / "own")
    cfg = tmp_path / "own" / "pipeline.toml"
    cfg.write_text(cfg.read_text().replace('"../../own_collection"', '"../run"'))
    assert main(["run", str(cfg), "--quiet", "--stages", "ingest,label,aggregate,analyze"]) == 0
    summary = RunPaths(tmp_path / "run").analysis / "lf_summary.csv"
    before = summary.read_bytes()
    capsys.readouterr()
    assert main(["analyze", str(cfg), "--quiet", "--split", "nosuch"]) == 2
    assert "--split unknown split 'nosuch'" in capsys.readouterr().err
    assert summary.read_bytes() == before


def test_stage_outputs_follow_the_umask(tmp_path):
    cfg = load_config(_config(_trec(tmp_path)))
    previous = os.umask(0o002)
    try:
        ingest(cfg)
    finally:
        os.umask(previous)
    paths = RunPaths(cfg.run_dir)
    assert paths.dataset.stat().st_mode & 0o777 == 0o775
    assert (paths.dataset / "queries.parquet").stat().st_mode & 0o777 == 0o664
