import textwrap

import numpy as np
import pandas as pd
import pytest

from tests.conftest import shared
from weakrank.cli import main
from weakrank.config import load_config
from weakrank.errors import ConfigError
from weakrank.io import read_metadata
from weakrank.paths import RunPaths
from weakrank.pipeline import aggregate, analyze, ingest, label


def write_config(tmp_path, lfs='["bm25", "tfidf", "my_lfs.py:length_ratio"]', extra=""):
    (tmp_path / "my_lfs.py").write_text(
        textwrap.dedent(
            '''
            from weakrank import ranking_lf

            @ranking_lf(top_k=2)
            def length_ratio(query: str, passage: str) -> float:
                """Shorter passages first (a weak prior of answer sentences)."""
                return -len(passage) / (1 + len(query))
            '''
        )
    )
    cfg = tmp_path / "trecqa.toml"
    cfg.write_text(
        textwrap.dedent(
            f"""
            name = "trecqa-small"
            run_dir = "{tmp_path / 'run'}"
            [dataset]
            loader = "trecqa"
            path = "{shared('trecqa')}"
            max_queries = 15
            [label]
            lfs = {lfs.replace("my_lfs.py", str(tmp_path / "my_lfs.py"))}
            [label.options.bm25]
            top_k = 1
            bottom_fraction = 0.5
            [aggregate]
            model = "generative"
            [analyze]
            splits = ["test"]
            {extra}
            """
        )
    )
    return cfg


@pytest.mark.slow
def test_cli_runs_every_stage_on_real_data(tmp_path, capsys):
    train = ("[train]\nbatch_size = 2\nmax_length = 32\nmax_steps = 2\neval_every = 0\ncheckpoint_every = 0\n"
             "output = 'weak'\nfuse_lfs = true")
    cfg = write_config(tmp_path, extra=train)
    assert main(["run", str(cfg), "--quiet"]) == 0
    paths = RunPaths(tmp_path / "run")
    queries = pd.read_parquet(paths.dataset / "queries.parquet")
    assert queries.groupby("split").size().le(15).all()
    votes = pd.read_parquet(paths.votes)
    assert {"score_bm25", "vote_bm25", "score_length_ratio", "vote_length_ratio"} <= set(votes.columns)
    assert votes.groupby("query_id")["vote_length_ratio"].apply(lambda v: (v == 1).sum()).max() <= 2  # top_k=2
    labels = pd.read_parquet(paths.labels)
    assert labels["confidence"].between(0.5, 1).all() and set(labels["label"]) <= {0, 1}
    assert ((labels["p_relevant"] > 0.5) == (labels["label"] == 1)).all()
    meta = read_metadata(paths.labels)
    assert meta["model"] == "generative" and len(meta["params"]["alpha"]) == 3
    quality = pd.read_csv(paths.analysis / "quality.csv", index_col=0)
    assert {"bm25", "tfidf", "length_ratio", "majority", "generative", "snorkel"} <= set(quality.index)
    assert (paths.analysis / "quality.png").stat().st_size > 1000
    # with a [train] section, `run` also trains, reranks the test split and compares with BM25
    assert (paths.root / "weak" / "final" / "head.safetensors").exists()
    run = (paths.root / "runs" / "weak.trec").read_text().splitlines()
    assert len(run) == (votes["split"] == "test").sum()
    evaluation = pd.read_csv(paths.root / "runs" / "evaluation.csv", index_col=0)
    # side by side: BM25 (the t-tests' baseline), the other LFs, RRF and CombSUM, the labels, the trained ranker
    assert list(evaluation.index) == ["bm25", "tfidf", "length_ratio", "fusion-rrf", "fusion-combsum", "labels-generative",
                                      "weak"]
    assert evaluation["MAP"].between(0, 1).all()
    out = capsys.readouterr().out
    assert "== quality ==" in out and "P@1" in out

    # label noise on the pseudo-labels, then undone from its log
    assert main(["corrupt", str(cfg), "--ratio", "0.2", "--seed", "3"]) == 0
    noisy = pd.read_parquet(paths.root / "labels_noise0.2_seed3.parquet")
    log = paths.root / "labels_noise0.2_seed3_log.parquet"
    assert 0 < (noisy["label"] != labels["label"]).sum() == 2 * pd.read_parquet(log)["query_id"].nunique()
    assert main(["corrupt", str(cfg), "--labels", str(paths.root / "labels_noise0.2_seed3.parquet"), "--undo", str(log)]) == 0
    restored = pd.read_parquet(paths.root / "labels_noise0.2_seed3_restored.parquet")
    pd.testing.assert_frame_equal(restored, labels)


def test_stages_from_python_and_bm25_beats_chance(tmp_path):
    cfg = load_config(write_config(tmp_path))
    ingest(cfg)
    votes = label(cfg, progress=False)
    aggregate(cfg, model="majority")
    tables = analyze(cfg)
    quality = tables["quality"]
    # on TrecQA, BM25 ranks relevant sentences above irrelevant ones well above chance
    assert quality.loc["bm25", "AUC"] > 0.6
    assert len(votes) == len(pd.read_parquet(RunPaths(cfg.run_dir).dataset / "candidates.parquet"))


def test_failing_lf_leaves_previous_votes_untouched(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["run", str(cfg), "--quiet", "--stages", "ingest,label"]) == 0
    before = RunPaths(tmp_path / "run").votes.read_bytes()
    (tmp_path / "my_lfs.py").write_text(
        "import math\nfrom weakrank import ranking_lf\n\n@ranking_lf()\ndef length_ratio(q, p):\n    return math.nan\n"
    )
    assert main(["label", str(cfg), "--quiet", "--force"]) == 2
    assert "'length_ratio': score nan (not finite) for query_id" in capsys.readouterr().err
    assert RunPaths(tmp_path / "run").votes.read_bytes() == before
    assert not list((tmp_path / "run").glob(".*.tmp"))  # no temp file left behind


def test_config_errors_name_the_problem(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[dataset]\nloader = "wikiqa"\n[label]\nlfs = ["bm25"]\n')
    with pytest.raises(ConfigError, match="missing key 'path' in \\[dataset\\]"):
        load_config(bad)
    assert main(["ingest", str(bad)]) == 2
    assert "missing key 'path'" in capsys.readouterr().err
    cfg = write_config(tmp_path, lfs='["bm25", "nope"]')
    assert main(["run", str(cfg), "--quiet", "--stages", "ingest,label"]) == 2
    assert "unknown LF 'nope'" in capsys.readouterr().err


def test_aggregate_refuses_a_single_lf(tmp_path, capsys):
    cfg = write_config(tmp_path, lfs='["bm25"]')
    assert main(["run", str(cfg), "--quiet", "--stages", "ingest,label,aggregate"]) == 2
    assert "[aggregate] model 'generative' needs at least 2 LFs; [label] lfs has 1" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # refused before ingest


def test_embedding_lfs_prefer_the_obvious_answer(tiny):
    from labeling_functions import bert_cosine, embedding_cosine
    from weakrank.labeling import apply_lfs

    votes = apply_lfs(tiny, [embedding_cosine, bert_cosine], progress=False)
    for name in ("embedding_cosine", "bert_cosine"):
        top = votes.loc[votes.groupby("query_id")[f"score_{name}"].idxmax(), "passage_id"].tolist()
        assert top == ["p1", "p4"], name
        assert np.all(np.abs(votes[f"score_{name}"]) <= 1 + 1e-6)


def _small(tmp_path, extra=""):
    """A two-query TREC set (split test) and its config (bm25 and tfidf; ``extra``: more TOML)."""
    (tmp_path / "collection.tsv").write_text("d1\tred apples are sweet\nd2\tthe sea is blue\n")
    (tmp_path / "queries.tsv").write_text("q1\tsweet apples\nq2\tblue sea\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq2 Q0 d2 1 1.0 x\nq2 Q0 d1 2 0.5 x\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d2 1\nq2 0 d1 0\n")
    cfg = tmp_path / "small.toml"
    cfg.write_text(f'run_dir = "{tmp_path / "run"}"\n[dataset]\nloader = "trec"\npath = "{tmp_path}"\n'
                   f'[label]\nlfs = ["bm25", "tfidf"]\n{extra}\n')
    return cfg


@pytest.mark.parametrize(
    ("extra", "argv", "call", "message"),
    [  # what the command line checks, the Python stage checks with the same message, before it writes
        ('[aggregate]\nmodel = "snorkel"', ["aggregate"], lambda p, cfg: p.aggregate(cfg),
         r"\[aggregate\] model 'snorkel' needs at least 3 LFs; \[label\] lfs has 2"),
        ("", ["aggregate", "--label-model", "snorkle"], lambda p, cfg: p.aggregate(cfg, model="snorkle"),
         r"--label-model: unknown label model 'snorkle' \(did you mean 'snorkel'\?\)"),
        ('[analyze]\nsplits = ["tset"]', ["analyze"], lambda p, cfg: p.analyze(cfg),
         r"\[analyze\] splits unknown split 'tset' \(did you mean 'test'\?\); the dataset's splits are \['test'\]"),
        ("", ["analyze", "--split", "tset"], lambda p, cfg: p.analyze(cfg, splits=["tset"]),
         r"--split unknown split 'tset' \(did you mean 'test'\?\)"),
        ('[evaluate]\nsplit = "dev"\n[train]', ["rerank"], lambda p, cfg: p.rerank(cfg),
         r"\[evaluate\] split unknown split 'dev'; the dataset's splits are \['test'\]"),
        ("[train]", ["train"], lambda p, cfg: p.train(cfg),
         r"\[train\] train_split unknown split 'train'; the dataset's splits are \['test'\]"),
        ("[train]\nmax_lenght = 32", ["run"], lambda p, cfg: p.run(cfg),
         r"unknown \[train\] key 'max_lenght' \(did you mean 'max_length'\?\)"),
        ("", ["run", "--stages", "ingest,lable"], lambda p, cfg: p.run(cfg, ["ingest", "lable"]),
         r"unknown stage\(s\) \['lable'\] \(did you mean 'label'\?\)"),
        ("", ["run", "--stages", "ingest,train"], lambda p, cfg: p.run(cfg, ["ingest", "train"]),
         r"has no \[train\] section: stages \['train', 'rerank', 'evaluate'\] need one"),
    ],
)
def test_python_stages_check_the_config_as_the_command_line_does(tmp_path, capsys, extra, argv, call, message):
    from weakrank import pipeline
    from weakrank.errors import WeakrankError

    path = _small(tmp_path, extra)
    assert main([argv[0], str(path), *argv[1:], "--quiet"]) == 2
    err = capsys.readouterr().err
    with pytest.raises(WeakrankError, match=message) as raised:
        call(pipeline, load_config(path))
    assert err == f"weakrank: error: {raised.value}\n"
    assert not (tmp_path / "run").exists()  # refused before the stage took the lock or wrote anything


def test_a_missing_dataset_file_stops_ingest_from_python_as_from_the_command_line(tmp_path, capsys):
    from weakrank import pipeline

    path = _small(tmp_path)
    (tmp_path / "queries.tsv").unlink()
    assert main(["ingest", str(path)]) == 2
    err = capsys.readouterr().err
    cfg = load_config(path)  # nothing is ingested yet: the files are checked when a stage is about to read them
    for stage in (pipeline.ingest, pipeline.run):
        with pytest.raises(ConfigError, match=r"\[dataset\] .*queries.tsv") as raised:
            stage(cfg)
        assert err == f"weakrank: error: {raised.value}\n"
    assert not (tmp_path / "run").exists()


def test_run_from_python_runs_the_stages_in_order_and_writes_their_timings(tmp_path):
    import json

    from weakrank import pipeline

    cfg = load_config(_small(tmp_path, '[aggregate]\nmodel = "fusion"'))
    seen = []
    done = pipeline.run(cfg, ["ingest", "label", "aggregate"], progress=False, on_start=seen.append,
                        on_end=lambda stage, result: seen.append((stage, type(result).__name__)))
    assert seen == ["ingest", ("ingest", "Dataset"), "label", ("label", "DataFrame"), "aggregate",
                    ("aggregate", "DataFrame")]
    assert list(done.results) == list(done.timings) == ["ingest", "label", "aggregate"]
    assert done.timings_file == RunPaths(cfg.run_dir).root / "timings.json"
    assert json.loads(done.timings_file.read_text()) == done.timings
    assert all(t["seconds"] >= 0 and t["peak_rss_mib"] > 0 for t in done.timings.values())
    assert len(done.results["aggregate"]) == len(done.results["label"]) == 4
