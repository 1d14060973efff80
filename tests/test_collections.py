"""The evaluation collections that benchmarks/collections/ builds into ../shared/datasets (and ../collections): each
loads with its pipeline's options and has the shape its README states; the conversion scripts on a tiny own-made
snapshot."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared
from weakrank.config import load_config
from weakrank.loaders import load_dataset

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "collections"))

import cranfield  # noqa: E402
import leaderboard  # noqa: E402
import smart  # noqa: E402
import stackfaq  # noqa: E402
from beir_layout import split_ids  # noqa: E402

SHAPES = {  # name → queries per split, corpus size
    "cranfield": ({"train": 100, "dev": 25, "test": 100}, 1398),
    "stackfaq": ({"train": 749, "dev": 150, "test": 350}, 719),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_collection_loads_with_its_pipeline_options(name):
    shared(name)  # skips when ../shared is absent
    cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
    ds = load_dataset(cfg.dataset.loader, cfg.dataset.path, **cfg.dataset.options)
    splits, passages = SHAPES[name]
    assert ds.queries["split"].value_counts().to_dict() == splits
    assert len(ds.passages) == passages
    per_query = ds.candidates.groupby("query_id")
    assert (per_query.size() == 20).all()
    assert per_query["gold"].max().mean() > 0.8  # most queries have a relevant passage in their BM25 top 20


@pytest.mark.parametrize(("name", "queries", "passages"), [("med", 30, 1033), ("cisi", 50, 1460), ("cacm", 52, 3204),
                                                          ("msmarco", 43, 5000), ("dbpedia", 40, 5000)])
def test_unseen_collection_loads_with_its_pipeline(name, queries, passages):
    cfg = load_config(ROOT / "benchmarks" / "collections" / f"{name}.toml")
    if not Path(cfg.dataset.path).exists():
        pytest.skip(f"{cfg.dataset.path} not built (benchmarks/collections/smart.py {name})")
    ds = load_dataset(cfg.dataset.loader, cfg.dataset.path, **cfg.dataset.options)
    assert ds.queries["split"].value_counts().to_dict() == {"test": queries}
    assert len(ds.passages) == passages
    assert (ds.candidates.groupby("query_id").size() == 20).all()
    assert ds.candidates.groupby("query_id")["gold"].max().mean() > 0.5  # most questions: a relevant one in the top 20


def test_split_ids_is_deterministic_and_cuts_in_order():
    ids = [str(i) for i in range(10)]
    a = split_ids(ids, {"test": 3, "train": 99})
    assert a == split_ids(list(reversed(ids)), {"test": 3, "train": 99})
    assert sum(s == "test" for s in a.values()) == 3 and sum(s == "train" for s in a.values()) == 7


def snapshot(tmp_path, files):
    """A bare git directory whose one commit holds ``files``; its commit id."""
    work = tmp_path / "work"
    work.mkdir()
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    return work / ".git", subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def read(out, name):
    return [json.loads(line) for line in (out / name).read_text().split("\n") if line]


def test_cranfield_conversion(tmp_path, monkeypatch):
    docs = ".I 1\n.T\nwing flow .\n.A\nx\n.B\ny\n.W\nwing flow .\nthe lift of a wing .\n.I 2\n.T\n.A\n.B\n.W\n" \
           ".I 3\n.T\nshock .\n.W\nshock waves .\n"
    queries = ".I 001\n.W\nwhat is lift ?\n.I 004\n.W\nwhat are shocks ?\n"
    git_dir, commit = snapshot(tmp_path, {"cran.all.1400": docs.replace("\n", "\r\n"), "cran.qry": queries,
                                          "cranqrel": "1 1 2\n1 3 -1\n2 3 1\n2 2 3\n"})
    monkeypatch.setattr(cranfield, "COMMIT", commit)
    monkeypatch.setattr(cranfield, "SIZES", {"test": 1, "dev": 0, "train": 1})
    cranfield.convert(git_dir, tmp_path / "out")
    out = tmp_path / "out"
    assert read(out, "corpus.jsonl") == [{"_id": "1", "text": "wing flow . the lift of a wing ."},
                                         {"_id": "3", "text": "shock waves ."}]  # 2 is empty: left out
    assert [q["_id"] for q in read(out, "queries.jsonl")] == ["1", "2"]  # positions, not the .I labels
    rows = {line for s in ("train", "dev", "test") for line in (out / "qrels" / f"{s}.tsv").read_text().splitlines()[1:]}
    assert rows == {"1\t1\t3", "1\t3\t0", "2\t3\t4"}  # code 1..4 → 4..1, -1 → 0, unknown passage dropped


def test_stackfaq_conversion(tmp_path, monkeypatch):
    xml = ("<root><qapair><rephr>how to x</rephr><rephr>*</rephr><rephr>doing x</rephr><question>X?</question>"
           "<answer>  do   x </answer><answer>or y</answer></qapair>"
           "<qapair><rephr>z &lt;b&gt;</rephr><question>Z?</question><answer>z it</answer></qapair></root>")
    git_dir, commit = snapshot(tmp_path, {stackfaq.PATH: xml})
    monkeypatch.setattr(stackfaq, "COMMIT", commit)
    monkeypatch.setattr(stackfaq, "SIZES", {"test": 1, "dev": 0, "train": 1})
    stackfaq.convert(git_dir, tmp_path / "out")
    out = tmp_path / "out"
    assert read(out, "corpus.jsonl") == [{"_id": "0-a0", "text": "do x"}, {"_id": "0-a1", "text": "or y"},
                                         {"_id": "1-a0", "text": "z it"}]
    assert read(out, "queries.jsonl") == [{"_id": "0-r0", "text": "how to x"}, {"_id": "0-r1", "text": "doing x"},
                                          {"_id": "1-r0", "text": "z <b>"}]
    rows = {line for s in ("train", "dev", "test") for line in (out / "qrels" / f"{s}.tsv").read_text().splitlines()[1:]}
    assert rows == {"0-r0\t0-a0\t1", "0-r0\t0-a1\t1", "0-r1\t0-a0\t1", "0-r1\t0-a1\t1", "1-r0\t1-a0\t1"}


def test_smart_conversion(tmp_path, monkeypatch):
    docs = ".I 1\n.T\nDewey  classes\n.A\nSmith\n.W\n  a history of\nthe DDC .\n.X\n1 5 1\n" \
           ".I 2\n.T\n.W\n.I 3\n.W\nonly an abstract\n"
    queries = ".I 1\n.W\nwhat is the DDC ?\n.I 2\n.W\nnever judged ?\n.I 3\n.W\nabstracts ?\n"
    git_dir, commit = snapshot(tmp_path, {"A.ALL": docs.replace("\n", "\r\n"), "A.QRY": queries,
                                          "A.REL": "01 1 0 0.000000\n 3     3\t0 0\n3 9 0 0\n"})
    monkeypatch.setitem(smart.SOURCES, "cisi", ("x/y", commit, "A.ALL", "A.QRY", "A.REL"))
    smart.convert("cisi", git_dir, tmp_path / "out")
    out = tmp_path / "out"
    assert read(out, "corpus.jsonl") == [{"_id": "1", "text": "Dewey classes a history of the DDC ."},
                                         {"_id": "3", "text": "only an abstract"}]  # 2 has no text: left out
    assert read(out, "queries.jsonl") == [{"_id": "1", "text": "what is the DDC ?"},
                                          {"_id": "3", "text": "abstracts ?"}]  # 2 has no judgment: left out
    rows = (out / "qrels" / "test.tsv").read_text().splitlines()
    assert rows == ["query-id\tcorpus-id\tscore", "1\t1\t1", "3\t3\t1"]  # ids unpadded; unknown passage 9 dropped


def test_leaderboard_conversion(tmp_path, monkeypatch):
    corpus = '{"_id": "p1", "title": "Fahrenheit", "text": "a scale\u2028of heat", "metadata": {}}\n' \
             '{"_id": "p2", "text": "no title"}\n'
    git_dir, commit = snapshot(tmp_path, {"datasets/msmarco/corpus.jsonl": corpus,
                                          "datasets/msmarco/queries.jsonl": '{"_id": "q1", "text": "what is F?"}\n',
                                          "datasets/msmarco/qrels/test.tsv": "query-id\tcorpus-id\tscore\n"
                                                                             "q1\tp1\t3\nq1\tp2\t1\n"})
    monkeypatch.setattr(leaderboard, "COMMIT", commit)
    leaderboard.convert("msmarco", git_dir, tmp_path / "out")
    out = tmp_path / "out"
    assert read(out, "corpus.jsonl") == [{"_id": "p1", "title": "Fahrenheit", "text": "a scale\u2028of heat"},
                                         {"_id": "p2", "title": "", "text": "no title"}]  # a line separator in a text
    assert (out / "qrels" / "test.tsv").read_text().splitlines()[1:] == ["q1\tp1\t3", "q1\tp2\t0"]  # 1: related only
