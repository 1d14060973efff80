"""The up-front time of each stage from the work (weakrank.estimates), the plan line, and the time left once the
first batches are timed (weakrank.pace): own-made tiny data, nothing timed."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import OWN

from weakrank import pace
from weakrank.config import load_config
from weakrank.dataset import Dataset
from weakrank.encoders import content_hash, resolve_model
from weakrank.estimates import estimate, lf_encoder
from weakrank.paths import RunPaths
from weakrank.similarity import encodings_file, text_key


def run_dir(tmp_path, words: int, lfs: list[str]):
    """A run directory holding two queries of three candidates each, every passage ``words`` words long, and its
    config with ``lfs``."""
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["red apples", "blue sea"], "split": ["test"] * 2})
    texts = [("red apples " if i < 3 else "blue sea ") * (i % 3) + " ".join(f"w{i}x{k}" for k in range(words))
             for i in range(6)]  # the query's words 0, 1 and 2 times in a list
    passages = pd.DataFrame({"passage_id": [f"p{i}" for i in range(6)], "text": texts})
    candidates = pd.DataFrame({"query_id": ["q1"] * 3 + ["q2"] * 3, "passage_id": [f"p{i}" for i in range(6)],
                               "split": ["test"] * 6, "rank": [0, 1, 2] * 2, "gold": pd.array([pd.NA] * 6, "Int8")})
    folder = tmp_path / f"run{words}"
    Dataset("own", queries, passages, candidates).save(RunPaths(folder).dataset)
    return load_config(OWN / "pipeline.toml", run_dir=folder, label={"lfs": lfs}), ["red apples", "blue sea", *texts]


def test_the_label_estimate_grows_with_the_texts_length_at_equal_pairs(tmp_path):
    lfs = ["bm25", "embedding_cosine"]
    short, _ = run_dir(tmp_path, 20, lfs)
    long, _ = run_dir(tmp_path, 2000, lfs)  # 2,600 tokens: the first window and 19 later ones
    seconds = [estimate(cfg, ["label"], None, "test").seconds["label"] for cfg in (short, long)]
    assert seconds[1] > seconds[0] + 0.5
    # a lexical LF alone is counted by pairs: the same at either length
    lexical = [estimate(run_dir(tmp_path / str(n), n, ["bm25"])[0], ["label"], None, "test").seconds["label"]
               for n in (20, 2000)]
    assert lexical[0] == lexical[1] > 0


def test_texts_the_encodings_cache_holds_are_not_counted_again(tmp_path):
    cfg, texts = run_dir(tmp_path, 300, ["bm25", "embedding_cosine", "bert_cosine"])
    encoder = lf_encoder("embedding_cosine", None)
    assert encoder == lf_encoder("bert_cosine", None)  # one MiniLM pass serves both (256 tokens each)
    fresh = estimate(cfg, ["label"], None, "test").seconds["label"]
    lexical = estimate(run_dir(tmp_path / "lexical", 300, ["bm25"])[0], ["label"], None, "test").seconds["label"]
    path = encodings_file(RunPaths(cfg.run_dir).encodings, content_hash(resolve_model("minilm")), 256)
    path.parent.mkdir(parents=True)

    def keep(kept: list[str]) -> float:
        np.savez(path, keys=np.array([text_key(t) for t in kept], dtype="S20"))
        return estimate(cfg, ["label"], None, "test").seconds["label"]

    assert lexical < keep(texts[:4]) < fresh  # half the texts kept: fewer to encode
    assert keep(texts) == pytest.approx(lexical)  # all kept: a re-run's label is the lexical LFs' alone
    assert estimate(cfg, ["label"], None, "test", force=True).seconds["label"] == pytest.approx(fresh)  # --force


def test_the_plan_says_it_assumes_idle_cores_and_when_they_are_busy(capsys, monkeypatch):
    monkeypatch.setattr("os.getloadavg", lambda: (0.2, 0.2, 0.2))
    pace.print_plan(["label", "train"], {"label": 100.0, "train": 200.0})
    line = capsys.readouterr().out.strip()
    assert line.startswith("stages ahead: label ~2 min, train ~3 min; roughly 5 min in all from the work")
    assert "assuming 2 idle CPU cores" in line and "busy" not in line
    assert line.endswith("label and train say their time left once their first batches are timed, rerank once training is done")
    monkeypatch.setattr("os.getloadavg", lambda: (3.4, 2.0, 1.0))
    pace.print_plan(["label"], {"label": 100.0})
    assert "assuming 2 idle CPU cores (these are busy, load 3.4: expect longer)" in capsys.readouterr().out


def test_the_first_batches_say_the_time_left_once():
    said = []
    with pace.pacing("label", 100.0, lambda *args: said.append(args)):
        pace._PACES["label"].add(5.0, 4.0)  # 4 s timed: too little to say
        assert not said
        pace._PACES["label"].add(5.0, 8.0)  # 12 s for what the estimate gave 10: 1.2×
        pace._PACES["label"].add(5.0, 30.0)  # said once only
    assert len(said) == 1 and said[0][0] == "label" and said[0][2] == pytest.approx(1.2)
    assert 119 < said[0][1] <= 120  # 1.2 × 100 s less the (tiny) time since the stage started
    assert "label" not in pace._PACES


def test_training_steps_after_the_first_set_the_pace():
    said = []
    with pace.pacing("train", 100.0, lambda *args: said.append(args), per_unit=2.0):
        pace.stepped(1, 30.0)  # the first step (its warm-up) is left out
        pace.stepped(3, 34.0)
        pace.stepped(6, 40.0)  # 5 steps in 10 s: as estimated
    assert said[0][2] == pytest.approx(1.0)
    pace.stepped(9, 60.0)  # no stage paced: nothing happens


def test_a_slow_step_scales_the_steps_not_the_set_up_and_evaluations():
    said = []  # 10 steps estimated at 1 s (10 s of 100): measured at 10 s a step, 90 s of steps are added, not 900
    with pace.pacing("train", 100.0, lambda *args: said.append(args), per_unit=1.0, paced=10.0):
        pace.stepped(1, 5.0)
        pace.stepped(3, 25.0)  # 2 steps in 20 s: 10x the estimate
    (stage, left, factor), = said
    assert stage == "train" and factor == pytest.approx(10.0)
    assert 150.0 < left <= 190.0  # 10 x 10 s of steps + 90 s of the rest, less the time the test took


def test_an_encoder_batch_counts_for_the_label_stage_only_while_it_is_paced():
    config = SimpleNamespace(num_hidden_layers=6, hidden_size=384)
    model = [SimpleNamespace(auto_model=SimpleNamespace(config=config))]
    said = []
    pace.timed([8] * 10, model, 60.0)  # outside the label stage: nothing
    with pace.pacing("label", 50.0, lambda *args: said.append(args)):
        pace.timed([8] * 100, model, 60.0)  # 100 texts of 6 tokens (and 2 special ones)
    assert len(said) == 1 and said[0][2] > 1  # 60 s for 100 short texts: far slower than 2 idle cores


def test_a_labelled_run_says_its_label_stage_is_nearly_free(tmp_path):
    from weakrank import pipeline

    cfg, _ = run_dir(tmp_path, 20, ["bm25", "word_overlap"])
    before = estimate(cfg, ["label"], None, "test").seconds["label"]
    pipeline.label(cfg, progress=False)  # the LFs' scores are cached in lf_scores/
    assert estimate(cfg, ["label"], None, "test").seconds["label"] == 0.0 < before
    assert estimate(cfg, ["label"], None, "test", force=True).seconds["label"] == pytest.approx(before)  # --force


def test_unreadable_caches_are_counted_as_empty(tmp_path):
    cfg, _ = run_dir(tmp_path, 300, ["bm25", "embedding_cosine"])
    fresh = estimate(cfg, ["label"], None, "test").seconds["label"]
    paths = RunPaths(cfg.run_dir)
    for path in (encodings_file(paths.encodings, content_hash(resolve_model("minilm")), 256),
                 paths.lf_scores / "bm25.parquet"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"not what it should be")
    assert estimate(cfg, ["label"], None, "test").seconds["label"] == pytest.approx(fresh)


def test_training_evaluations_are_left_out_of_its_pace():
    from weakrank.progress import tqdm

    said, now = [], [0.0]
    bar = tqdm(total=20, unit="step", file=io.StringIO())
    bar._time, bar.start_t, bar.last_print_t = (lambda: now[0]), 0.0, 0.0  # a clock of its own: nothing timed
    with pace.pacing("train", 100.0, lambda *args: said.append(args), per_unit=2.0):
        now[0] = 3.0
        bar.update()  # the first step, its warm-up left out
        with bar.paused():
            now[0] += 30.0  # an evaluation
        for _ in range(5):
            now[0] += 2.0
            bar.update()  # 5 steps of 2 s, as estimated
    bar.close()
    assert said and said[0][2] == pytest.approx(1.0)


def test_timings_record_each_stage_estimate_and_what_its_first_batches_said(tmp_path, monkeypatch):
    from weakrank import pipeline

    cfg, _ = run_dir(tmp_path, 20, ["bm25", "embedding_cosine"])
    monkeypatch.setattr(pace, "MIN_TIMED", 0.0)  # the first encoded batch is enough: nothing here takes 10 s
    said = []
    done = pipeline.run(cfg, ["label", "aggregate"], progress=False, on_plan=lambda *args: None,
                        on_pace=lambda *args: said.append(args))
    assert [stage for stage, *_ in said] == ["label"]  # once
    assert set(done.timings["label"]) == {"seconds", "peak_rss_mib", "estimated_s", "paced_s"}
    assert "paced_s" not in done.timings["aggregate"] and done.timings["aggregate"]["estimated_s"] > 0


def test_rerank_is_paced_by_what_training_kept_and_training_s_pace():
    """Once training is done, rerank's time is known better than up front: a student's forward pass at the pace
    training's first steps measured (label's where train was not timed); where the student weighs 0 in the shipped
    ranker no student runs, and the lexical LFs' one-core time is said as the plan gave it, at no encoder's pace."""
    assert pace.rerank_ahead(40.0, False, {}) == 40.0
    assert pace.rerank_ahead(40.0, False, {"label": 1.5, "train": 2.0}) == 80.0
    assert pace.rerank_ahead(40.0, False, {"label": 1.5}) == 60.0
    assert pace.rerank_ahead(1.0, True, {"label": 1.5, "train": 3.0}) == 1.0


def test_the_plan_says_rerank_with_and_without_the_student(capsys):
    """Before training nothing knows whether the student will earn weight: the plan says rerank's time both ways."""
    pace.print_plan(["train", "rerank"], {"train": 200.0, "rerank": 40.0}, 0.4)
    line = capsys.readouterr().out
    assert "train ~3 min, rerank ~40 s (~<1 s if the student earns no weight); roughly 4 min in all" in line, line
    pace.print_plan(["train", "rerank"], {"train": 200.0, "rerank": 40.0}, None)  # a student alone: no teacher
    assert "rerank ~40 s;" in capsys.readouterr().out
