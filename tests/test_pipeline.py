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
    # side by side: BM25 (the t-tests' baseline), the other LFs, RRF fusion, the labels, the trained ranker
    assert list(evaluation.index) == ["bm25", "tfidf", "length_ratio", "fusion-rrf", "labels-generative", "weak"]
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
