import ir_measures
import numpy as np
import pandas as pd
import pytest

from tests.conftest import shared
from weakrank.cli import main
from weakrank.commands.evaluate import runs_table
from weakrank.errors import DataError
from weakrank.evaluation.metrics import MEASURES
from weakrank.io import read_qrels, read_run, write_qrels, write_run


def small_config(tmp_path, lfs='["bm25", "tfidf"]'):
    cfg = tmp_path / "small.toml"
    cfg.write_text(f'''name = "small"\nrun_dir = "{tmp_path / 'run'}"\n[dataset]\nloader = "trecqa"\n'''
                   f'''path = "{shared('trecqa')}"\nmax_queries = 5\n[label]\nlfs = {lfs}\n''')
    return cfg


@pytest.fixture
def trec_files(tmp_path):
    """A qrels file (every query with relevant and non-relevant passages) and two runs without ties."""
    rng = np.random.default_rng(0)
    qrels = pd.DataFrame([(f"q{q}", f"d{d}", int(rng.random() < 0.3) if d else 1) for q in range(8) for d in range(12)],
                         columns=["query_id", "passage_id", "relevance"])
    qrels.loc[qrels["passage_id"] == "d11", "relevance"] = 0
    write_qrels(qrels, tmp_path / "qrels.trec")
    runs = []
    for name in ("first", "second"):
        scored = qrels[["query_id", "passage_id"]].assign(score=rng.random(len(qrels)))
        runs.append(write_run(scored, tmp_path / f"{name}.trec", name))
    return tmp_path / "qrels.trec", runs


def test_trec_files_round_trip_through_ir_measures_readers(trec_files):
    qrels_path, (run_path, _) = trec_files
    qrels = read_qrels(qrels_path)
    assert list(qrels.columns) == ["query_id", "passage_id", "relevance"] and len(qrels) == 96
    run = read_run(run_path)
    assert list(run.columns) == ["query_id", "passage_id", "score"] and len(run) == 96
    bad = run_path.with_name("bad.trec")
    bad.write_text("q1 Q0 d1 1 0.5 x\nq1 Q0 d2 2 notanumber x\n")
    with pytest.raises(DataError, match="bad.trec:2: not a TREC line"):
        read_run(bad)


def test_evaluate_plain_trec_files_equals_ir_measures(trec_files, capsys):
    qrels_path, runs = trec_files
    table = runs_table(runs, read_qrels(qrels_path))
    for run in runs:
        direct = ir_measures.calc_aggregate(list(MEASURES.values()), ir_measures.read_trec_qrels(str(qrels_path)),
                                            ir_measures.read_trec_run(str(run)))
        for name, measure in MEASURES.items():
            assert table.loc[run.stem, name] == pytest.approx(direct[measure], abs=1e-9), (run.stem, name)
    assert main(["evaluate", "--qrels", str(qrels_path), *map(str, runs)]) == 0
    out = capsys.readouterr().out
    assert "first" in out and "second" in out and f"{table.loc['second', 'MAP']:.3f}" in out


def test_ingest_writes_the_qrels_as_a_trec_file(tmp_path, capsys):
    assert main(["ingest", str(small_config(tmp_path))]) == 0
    dataset = tmp_path / "run" / "dataset"
    parquet = pd.read_parquet(dataset / "qrels.parquet").astype({"relevance": int})
    assert len(parquet) > 0
    pd.testing.assert_frame_equal(read_qrels(dataset / "qrels.trec"), parquet[["query_id", "passage_id", "relevance"]])
