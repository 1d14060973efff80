import csv
import gzip
import re

import pandas as pd
import pytest

from tests.conftest import shared
from weakrank.dataset import Dataset
from weakrank.errors import ConfigError, DataError
from weakrank.loaders import load_dataset


def test_wikiqa_matches_the_files():
    path = shared("wikiqa")
    ds = load_dataset("wikiqa", path)
    raw = pd.read_csv(path / "WikiQA-test.tsv", sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)
    test = ds.candidates[ds.candidates["split"] == "test"]
    assert len(test) == len(raw)
    assert test["query_id"].nunique() == raw["QuestionID"].nunique()
    assert int(test["gold"].sum()) == int((raw["Label"] == "1").sum())
    # candidate order is the file order within each question
    first = raw.groupby("QuestionID", sort=False).head(1)["SentenceID"].tolist()
    assert test[test["rank"] == 0]["passage_id"].tolist() == first


def test_trecqa_positive_and_negative_blocks():
    path = shared("trecqa")
    ds = load_dataset("trecqa", path, splits=("test",))
    text = (path / "TEST.xml").read_text()
    assert int(ds.candidates["gold"].sum()) == text.count("<positive>")
    assert len(ds.candidates) == text.count("<positive>") + text.count("<negative>")
    q = ds.queries.set_index("query_id").loc["32.1", "text"]
    assert q == "What do practitioners of Wicca worship ?"


def test_semeval_subtasks():
    path = shared("semeval2016-task3")
    a = load_dataset("semeval", path, subtask="A", splits=("dev",))
    b = load_dataset("semeval", path, subtask="B", splits=("dev",))
    xml = (path / "SemEval2016-Task3-CQA-QL-dev.xml").read_text()
    assert b.queries["query_id"].nunique() == len(set(re.findall(r'ORGQ_ID="([^"]+)"', xml)))
    assert len(b.candidates) == xml.count("<RelQuestion ")
    assert a.candidates.groupby("query_id").size().max() == 10  # a related question has at most 10 comments
    assert 0.2 < a.candidates["gold"].mean() < 0.5


def test_scifact_gets_bm25_candidates_with_gold_from_qrels():
    ds = load_dataset("beir", shared("scifact"), splits=("test",), k=20)
    assert ds.candidates.groupby("query_id").size().eq(20).all()
    assert len(ds.queries) == ds.qrels["query_id"].nunique()
    # BM25 finds a judged-relevant abstract in the top 20 for most claims
    hit = ds.candidates.groupby("query_id")["gold"].max().mean()
    assert hit > 0.6


def test_dataset_round_trips_through_parquet(tiny, tmp_path):
    tiny.save(tmp_path / "ds")
    back = Dataset.load(tmp_path / "ds")
    pd.testing.assert_frame_equal(back.candidates, tiny.candidates)
    assert back.splits == ["test"]


def _wikiqa_dir(tmp_path, rows):
    header = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
    for split in ("train", "dev", "test"):
        (tmp_path / f"WikiQA-{split}.tsv").write_text(header + "".join("\t".join(r) + "\n" for r in rows))
    return tmp_path


def test_wikiqa_bm25_candidates_pool_every_sentence(tmp_path):
    rows = [["Q1", "when did the apple tree bloom", "D1", "t", "D1-0", "the apple tree bloomed in may", "1"],
            ["Q1", "when did the apple tree bloom", "D1", "t", "D1-1", "apples are red", "0"],
            ["Q2", "how deep is the sea", "D2", "t", "D2-0", "the sea is deep and blue", "1"],
            ["Q2", "how deep is the sea", "D2", "t", "D2-1", "an apple tree by the sea", "0"]]
    header = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
    (tmp_path / "WikiQA-train.tsv").write_text(header + "".join("\t".join(r) + "\n" for r in rows))
    listed = load_dataset("wikiqa", tmp_path, splits=("train",))
    ds = load_dataset("wikiqa", tmp_path, splits=("train",), candidates="bm25", k=3)
    assert ds.candidates.groupby("query_id").size().eq(3).all()  # three of the four sentences, not the two listed
    got = ds.candidates.set_index(["query_id", "passage_id"])["gold"]
    assert got[("Q1", "D1-0")] == 1 and got[("Q2", "D2-0")] == 1
    assert got[("Q1", "D2-1")] == 0  # another question's sentence is judged not relevant
    assert ("Q1", "D1-0") in set(zip(ds.qrels["query_id"], ds.qrels["passage_id"]))
    pd.testing.assert_frame_equal(ds.passages, listed.passages)
    with pytest.raises(ConfigError, match="options.candidates must be 'listed' or 'bm25'"):
        load_dataset("wikiqa", tmp_path, splits=("train",), candidates="dense")


def test_bad_label_names_file_row_and_field(tmp_path):
    rows = [["Q1", "what is x", "D1", "t", "D1-0", "x is y", "1"], ["Q1", "what is x", "D1", "t", "D1-1", "z", "yes"]]
    with pytest.raises(DataError, match=r"WikiQA-train.tsv:3: Label: label 'yes' is not 0 or 1"):
        load_dataset("wikiqa", _wikiqa_dir(tmp_path, rows))


def test_empty_passage_text_is_refused(tmp_path):
    rows = [["Q1", "what is x", "D1", "t", "D1-0", " ", "1"]]
    with pytest.raises(DataError, match=r"WikiQA-train.tsv:2: Sentence: empty text for passage_id 'D1-0'"):
        load_dataset("wikiqa", _wikiqa_dir(tmp_path, rows), splits=("train",))


def test_duplicate_and_unknown_ids(tiny):
    dup = Dataset("t", tiny.queries, pd.concat([tiny.passages, tiny.passages.iloc[:1]]), tiny.candidates)
    with pytest.raises(DataError, match="duplicate id"):
        dup.validate()
    bad = tiny.candidates.copy()
    bad.loc[3, "passage_id"] = "nope"
    with pytest.raises(DataError, match=r"row 3: passage_id: candidate references unknown passage_id 'nope'"):
        Dataset("t", tiny.queries, tiny.passages, bad).validate()


def test_missing_column_is_named(tmp_path):
    (tmp_path / "WikiQA-train.tsv").write_text("QuestionID\tQuestion\tSentence\tLabel\nQ1\tq\ts\t1\n")
    with pytest.raises(DataError, match="WikiQA-train.tsv:1: SentenceID: missing column"):
        load_dataset("wikiqa", tmp_path, splits=("train",))


def test_generic_trec_and_beir_formats(tmp_path):
    (tmp_path / "collection.tsv").write_text("d1\tred apples are sweet\nd2\tthe sea is blue\nd3\tapple pie recipe\n")
    (tmp_path / "queries.tsv").write_text("q1\tsweet apples\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d2 1 3.0 bm25\nq1 Q0 d1 2 5.0 bm25\nq1 Q0 d3 3 1.0 bm25\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    trec = load_dataset("trec", tmp_path)
    assert trec.candidates["passage_id"].tolist() == ["d1", "d2", "d3"]  # ordered by run score
    assert trec.candidates["gold"].tolist() == [1, 0, 0]

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Apples", "text": "red apples are sweet"}\n{"_id": "d2", "text": "the sea is blue"}\n'
    )
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "sweet apples"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    ds = load_dataset("beir", beir, splits=("test",), k=5)
    assert ds.candidates["passage_id"].tolist() == ["d1", "d2"] and ds.candidates["gold"].tolist() == [1, 0]
    (beir / "queries.jsonl").write_text('{"_id": "q1"}\n')
    with pytest.raises(DataError, match=r"queries.jsonl:1: text: missing field"):
        load_dataset("beir", beir, splits=("test",))


def test_trec_files_may_be_gzipped(tmp_path):
    files = {"collection.tsv": "d1\tred apples are sweet\nd2\tthe sea is blue\nd3\tapple pie recipe\n",
             "queries.tsv": "q1\tsweet apples\nq2\tblue sea\n",
             "run.trec": "q1 Q0 d2 1 3.0 bm25\nq1 Q0 d1 2 5.0 bm25\nq2 Q0 d2 1 4.0 bm25\nq2 Q0 d3 2 1.0 bm25\n",
             "qrels.txt": "q1 0 d1 1\nq1 0 d2 0\nq2 0 d2 1\n"}
    (tmp_path / "plain").mkdir()
    (tmp_path / "packed").mkdir()
    for name, text in files.items():
        (tmp_path / "plain" / name).write_text(text)
        (tmp_path / "packed" / f"{name}.gz").write_bytes(gzip.compress(text.encode()))
    plain = load_dataset("trec", tmp_path / "plain")
    packed = load_dataset("trec", tmp_path / "packed", **{key: f"{name}.gz" for key, name in
                                                         zip(("collection", "queries", "run", "qrels"), files)})
    for table in ("queries", "passages", "candidates", "qrels"):
        pd.testing.assert_frame_equal(getattr(packed, table), getattr(plain, table))
    assert packed.candidates["gold"].tolist() == [1, 0, 1, 0] and "run.trec.gz" in packed.sources["candidates"]


def test_unknown_loader_and_missing_path():
    with pytest.raises(ConfigError, match="unknown dataset loader"):
        load_dataset("nope", ".")
    with pytest.raises(ConfigError, match="does not exist"):
        load_dataset("wikiqa", "/no/such/dir")


def test_trec_splits_without_a_run_get_bm25_candidates(tmp_path):
    (tmp_path / "collection.tsv").write_text("d1\tred apples are sweet\nd2\tthe sea is blue\nd3\tapple pie recipe\n"
                                             "d4\tblue whales swim in the sea\nd5\tsweet red cherries\n")
    (tmp_path / "train.tsv").write_text("t1\tsweet apples\nt2\tblue sea\n")
    (tmp_path / "test.tsv").write_text("q1\tpie recipe\n")
    (tmp_path / "test.run").write_text("q1 Q0 d3 1 2.0 mine\nq1 Q0 d5 2 1.0 mine\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d3 1\nt1 0 d1 1\n")
    splits = {"train": {"queries": "train.tsv", "qrels": "qrels.txt"}, "test": {"queries": "test.tsv", "run": "test.run"}}
    ds = load_dataset("trec", tmp_path, splits=splits, k=2)
    lists = ds.candidates.groupby("query_id")["passage_id"].apply(list).to_dict()
    assert lists == {"t1": ["d1", "d5"], "t2": ["d2", "d4"], "q1": ["d3", "d5"]}  # BM25 best first; q1: its run
    assert ds.candidates.set_index(["query_id", "passage_id"])["gold"].loc[("t1", "d1")] == 1
    assert "BM25 top-2" in ds.sources["candidates"] and "test.run" in ds.sources["candidates"]
    (tmp_path / "queries.tsv").write_text("q9\tblue whales\n")  # the one-split form, no run.trec in the folder
    single = load_dataset("trec", tmp_path, k=1)
    assert single.candidates["passage_id"].tolist() == ["d4"] and set(single.queries["split"]) == {"test"}
