"""A user's judging files, judged gold and run directories, as a user types the commands: each case the command,
the files before and after (every watched file byte-identical where the command stops), and what it says."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from test_judge import Terminal, relevance
from test_no_qrels import own_config

from tests.test_lock import HOLD, _start
from weakrank.cli import main
from weakrank.judged.judging_file import read_judging_file, write_judging_file
from weakrank.paths import RunPaths
from weakrank.ranker.teacher_state import FUSION_FILE

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "data" / "fixtures" / "own_collection"
CONFIG = str(OWN / "pipeline.toml")
JUDGING = ("query_id\tpassage_id\tquery\tpassage\trelevance\tnote\n"
           "tq1\td1\twhat is the capital of germany\tParis is the capital and largest city of France.\t\tread twice\n"
           "tq1\td2\twhat is the capital of germany\tBerlin is the capital of Germany and its largest city.\tskip\t\n")


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> Path:
    """The own collection ingested, labelled and aggregated without judgments."""
    run = tmp_path_factory.mktemp("labelled") / "run"
    assert main(["run", CONFIG, "--run-dir", str(run), "--stages", "ingest,label,aggregate", "--quiet"]) == 0
    return run


@pytest.fixture
def run_dir(labelled, tmp_path) -> Path:
    """A copy of ``labelled`` of the test's own."""
    return Path(shutil.copytree(labelled, tmp_path / "run"))


def snapshot(*paths: Path) -> dict[Path, bytes]:
    """The bytes of each file under ``paths`` (a file, or a folder's files)."""
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.rglob("*")))]
    return {f: f.read_bytes() for f in files if f.is_file() and not f.is_symlink()}


def error(capsys) -> str:
    """What the last command wrote to stderr, one line expected."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# data loss

def test_judge_qrels_onto_the_judging_file_it_reads_is_refused_even_with_force(tmp_path, capsys):
    judging = tmp_path / "judging.tsv"
    judging.write_text(JUDGING)
    for flags in ([], ["--force"]):
        assert main(["judge", str(judging), "--qrels", str(judging), *flags]) == 2
        assert "is the judging file this command reads; write the output elsewhere" in error(capsys)
    assert judging.read_text() == JUDGING


def test_judge_qrels_keeps_a_file_weakrank_did_not_write_unless_force(tmp_path, capsys):
    judging, mine = tmp_path / "judging.tsv", tmp_path / "mine.qrels"
    judging.write_text(JUDGING.replace("\t\tread twice", "\t1\tread twice"))
    mine.write_text("my own qrels\n")
    assert main(["judge", str(judging), "--qrels", str(mine)]) == 2
    assert "exists and weakrank did not write it" in error(capsys) and mine.read_text() == "my own qrels\n"
    assert main(["judge", str(judging), "--qrels", str(mine), "--force"]) == 0
    assert mine.read_text() == "tq1 0 d1 1\n"
    assert main(["judge", str(judging), "--qrels", str(mine)]) == 0  # weakrank's own now: replaced without --force


def test_a_lock_that_is_a_link_leaves_what_it_leads_to_alone(run_dir, tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("a user's notes\n")
    (run_dir / ".weakrank.lock").symlink_to(notes)
    before = snapshot(run_dir)
    assert main(["label", CONFIG, "--run-dir", str(run_dir), "--quiet"]) == 2
    assert ".weakrank.lock: is not a lock file of weakrank's" in error(capsys)
    assert notes.read_text() == "a user's notes\n" and (run_dir / ".weakrank.lock").is_symlink()
    assert snapshot(run_dir) == before


def test_select_keeps_a_judging_file_a_person_changed_since(run_dir, tmp_path, capsys):
    config = str(own_config(tmp_path, qrels=True))  # its judging files go beside it
    assert main(["select", config, "--run-dir", str(run_dir), "--queries", "2", "--per-query", "3"]) == 0
    judging = tmp_path / "pipeline.judgments" / "judging.tsv"
    lines = judging.read_text().splitlines()
    # no judgment yet, but skips and a column of notes of the person's own
    edited = [lines[0] + "\tnote", *(line.replace("\t\t", "\tskip\t", 1) + "\tseen" for line in lines[1:])]
    judging.write_text("\n".join(edited) + "\n")
    before = judging.read_bytes()
    assert main(["select", config, "--run-dir", str(run_dir), "--queries", "2", "--per-query", "3"]) == 2
    assert "judging.tsv: exists and weakrank did not write it (or it changed since)" in error(capsys)
    assert judging.read_bytes() == before


# gold of the evaluated split reaching training

def test_run_refuses_judgments_of_the_split_its_eval_split_flag_evaluates(tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copy(OWN / "dev.qrels", tmp_path / "dev.qrels")
    assert main(["run", CONFIG, "--run-dir", str(run), "--judgments", str(tmp_path / "dev.qrels"), "--eval-split",
                 "dev", "--quiet"]) == 2
    said = error(capsys)
    assert "dev.qrels" in said and "queries of the evaluated split 'dev'" in said
    assert not RunPaths(run).labels.exists() and not RunPaths(run).models().exists()


def test_gold_queries_of_the_evaluated_split_are_refused(run_dir, tmp_path, capsys):
    config = tmp_path / "gold.toml"
    config.write_text((OWN / "pipeline.toml").read_text().replace('path = "."', f'path = "{OWN}"').replace(
        'model = "fusion"', 'model = "fusion"\ngold_queries = 1\ngold_split = "test"'))
    before = snapshot(run_dir)
    assert main(["aggregate", str(config), "--run-dir", str(run_dir), "--quiet"]) == 2
    assert "[aggregate] gold_split 'test' is the split this run evaluates ([evaluate] split)" in error(capsys)
    assert snapshot(run_dir) == before


# silent wrong results, tracebacks: judgments nothing of which can be used

@pytest.mark.parametrize("name, text, message", [
    ("empty.qrels", "", "nothing judged yet"),
    ("elsewhere.qrels", "tq1 0 nowhere 1\ntq2 0 d404 0\n", "none of its 2 judged pairs is a candidate of this run"),
    ("judging.tsv", JUDGING, "nothing judged yet"),
    ("other.tsv", JUDGING.replace("capital of germany", "capital of peru").replace("\t\tread", "\t1\tread"),
     "other.tsv:2: query: query tq1's text is not this dataset's ('what is the capital of peru' here"),
    ("twice.qrels", "tq1 0 d1 1\ntq1 0 d2 0\ntq1 0 d1 0\n", "twice.qrels:3: relevance: pair tq1 / d1 is judged twice"),
], ids=["empty qrels", "no candidate", "nothing judged", "other texts", "one pair two grades"])
def test_judgments_nothing_of_which_can_be_used_are_refused_and_the_labels_kept(run_dir, tmp_path, capsys, name,
                                                                                text, message):
    (tmp_path / name).write_text(text)
    before = snapshot(run_dir)
    assert main(["aggregate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(tmp_path / name)]) == 2
    said = error(capsys)
    assert f"{tmp_path / name}" in said and message in said
    assert snapshot(run_dir) == before


def test_judgments_partly_unusable_are_counted_in_one_line(run_dir, tmp_path, capsys):
    (tmp_path / "some.qrels").write_text("tq1 0 d1 0\ntq1 0 d2 1\ntq1 0 nowhere 1\n")
    assert main(["aggregate", CONFIG, "--run-dir", str(run_dir), "--judgments", str(tmp_path / "some.qrels"),
                 "--quiet"]) == 0
    assert f"judgments {tmp_path / 'some.qrels'}: 2 judged pairs of 1 query used, 1 not candidates (left out)\n" in \
        capsys.readouterr().out


# tracebacks

def test_select_seed_below_zero_is_a_one_line_error(run_dir, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["select", CONFIG, "--run-dir", str(run_dir), "--seed", "-1"])
    assert stop.value.code == 2 and "argument --seed: expected a whole number >= 0, got '-1'" in capsys.readouterr().err
    assert not (run_dir / "judging.tsv").exists()


def test_a_relevance_that_is_a_digit_but_no_number_is_a_located_error(tmp_path, capsys):
    judging = tmp_path / "judging.tsv"
    judging.write_text(JUDGING.replace("\t\tread twice", "\t²\tread twice"))
    assert main(["judge", str(judging), "--qrels", str(tmp_path / "out.qrels")]) == 2
    assert "judging.tsv:2: relevance: '²' is not a relevance" in error(capsys)
    assert not (tmp_path / "out.qrels").exists()


def test_a_passage_over_128_kib_that_weakrank_writes_it_reads_back(tmp_path, capsys):
    import pandas as pd

    passage = "a long passage " * 20_000  # 300 kB
    rows = pd.DataFrame({"query_id": ["q1"], "passage_id": ["p1"], "query": ["long"], "passage": [passage],
                         "relevance": ["1"]})
    judging = write_judging_file(rows, tmp_path / "judging.tsv")  # as select writes it
    assert read_judging_file(judging)["passage"].iloc[0] == passage
    assert main(["judge", str(judging), "--qrels", str(tmp_path / "out.qrels")]) == 0
    assert (tmp_path / "out.qrels").read_text() == "q1 0 p1 1\n"


# a model directory shared with a user: its teacher's file and its encoder options

@pytest.fixture
def model(trained, tmp_path) -> Path:
    """A copy of the trained best model (its teacher names a user's LF file) and a run of new queries to rerank."""
    cfg, _ = trained
    (tmp_path / "q.tsv").write_text("n1\tcapital of spain\n")
    (tmp_path / "c.tsv").write_text("a\tMadrid is the capital of Spain.\nb\tSpain is in Europe.\n")
    (tmp_path / "r.run").write_text("n1 Q0 a 1 2 bm25\nn1 Q0 b 2 1 bm25\n")
    return Path(shutil.copytree(RunPaths(cfg.run_dir).models() / "best", tmp_path / "model"))


def rerank(model: Path, *flags: str) -> subprocess.CompletedProcess:
    """``weakrank rerank --run`` over ``model`` in a process of its own (a test that would hang stops)."""
    where = model.parent
    args = ["rerank", "--model-dir", str(model), "--run", str(where / "r.run"), "--queries", str(where / "q.tsv"),
            "--collection", str(where / "c.tsv"), "--output", str(where / "out.trec"), *flags]
    return subprocess.run([sys.executable, "-m", "weakrank.cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=where, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("make, kind", [(lambda path: path.symlink_to("/dev/zero"), "is a device"),
                                        (lambda path: os.mkfifo(path), "is a named pipe")],
                         ids=["link to /dev/zero", "named pipe"])
def test_a_teacher_file_that_is_no_file_is_refused_unread(model, make, kind):
    (model / FUSION_FILE).unlink()
    make(model / FUSION_FILE)
    done = rerank(model, "--quiet")
    assert done.returncode == 2 and f"{FUSION_FILE}: {kind}; expected a file" in done.stderr
    assert "Traceback" not in done.stderr and not (model.parent / "out.trec").exists()


@pytest.mark.parametrize("where", ["absolute", "../"])
def test_an_encoder_option_outside_the_model_directory_needs_trust_code(model, tmp_path, where):
    (tmp_path / "elsewhere").mkdir()
    saved = json.loads((model / FUSION_FILE).read_text())
    entry = next(lf for lf in saved["lfs"] if lf["spec"] == "embedding_cosine")
    entry["options"]["model"] = str(tmp_path / "elsewhere") if where == "absolute" else "../elsewhere"
    del saved["lfs"][-1]  # the user's LF file too needs trust: leave it out, so the option alone asks for it
    saved["teacher"]["clusters"] = [[i for i in c if i < len(saved["lfs"])] for c in saved["teacher"]["clusters"]]
    keep = [k for k, c in enumerate(saved["teacher"]["clusters"]) if c]
    for key in ("clusters", "loadings", "weights", "scales"):
        saved["teacher"][key] = [saved["teacher"][key][k] for k in keep]
    (model / FUSION_FILE).write_text(json.dumps(saved))
    done = rerank(model, "--quiet")
    assert done.returncode == 0 and "reads a model outside the directory" in done.stderr
    assert f"options.model = {entry['options']['model']!r}" in done.stderr and "loaded as the student alone" in done.stderr


def test_rerank_quiet_still_says_when_the_teacher_is_left_out(model):
    done = rerank(model, "--quiet")
    assert done.returncode == 0 and (model.parent / "out.trec").exists()
    warned = [line for line in done.stderr.splitlines() if not line.startswith("reranking: query ")]  # its progress
    assert len(warned) == 1 and warned[0].startswith("weakrank: warning: ")
    assert "its teacher runs Python code" in done.stderr and "loaded as the student alone" in done.stderr



def test_a_manifest_edited_to_student_says_so_rather_than_that_no_teacher_is_there(model):
    manifest = json.loads((model / "weakrank_model.json").read_text())
    (model / "weakrank_model.json").write_text(json.dumps({**manifest, "kind": "student"}))
    done = rerank(model, "--quiet", "--trust-code")
    assert done.returncode == 0 and "holds no teacher" not in done.stderr
    assert "weakrank_model.json: kind: its manifest says 'student', yet weakrank_fusion.json is beside it" in done.stderr


def test_onnx_of_a_model_directory_it_cannot_write_is_exported_once_into_the_cache(model, tmp_path):
    pytest.importorskip("onnxruntime")
    (model / "onnx").write_text("")  # its onnx/ folder cannot be made (as in a read-only directory, which root writes)
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    where = model.parent
    args = [sys.executable, "-m", "weakrank.cli", "rerank", "--model-dir", str(model), "--run", str(where / "r.run"),
            "--queries", str(where / "q.tsv"), "--collection", str(where / "c.tsv"), "--output",
            str(where / "out.trec"), "--backend", "onnx"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp), "WEAKRANK_CACHE": str(cache)}
    done = [subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=where, env=env) for _ in range(2)]
    assert [d.returncode for d in done] == [0, 0], done[0].stderr
    exports = list(cache.rglob("model.onnx"))
    assert len(exports) == 1 and f"its ONNX export is kept in {exports[0].parent}" in done[0].stderr
    assert not list(tmp.glob("weakrank-onnx-*"))  # nothing of weakrank left in TMPDIR
    assert "its ONNX export is kept in" in done[1].stderr and len(list(cache.rglob("model.onnx"))) == 1


@pytest.mark.parametrize("flags, said", [(["--backend", "gpu"], "--backend 'gpu': choose one of"),
                                         (["--precision", "fp16"], "--precision 'fp16': choose one of"),
                                         (["--backend", "onnx", "--precision", "in8"], "(did you mean 'int8'?)")],
                         ids=["backend", "precision", "misspelt precision"])
def test_a_bad_backend_or_precision_is_weakranks_one_line_error(tmp_path, capsys, flags, said):
    assert main(["rerank", "--model-dir", str(tmp_path), "--run", "r.run", "--queries", "q.tsv", "--collection",
                 "c.tsv", "--output", str(tmp_path / "out.trec"), *flags]) == 2
    err = error(capsys)
    assert err.startswith("weakrank: error: ") and said in err
    assert not (tmp_path / "out.trec").exists()


# the judge's terminal

@pytest.fixture
def judging(tmp_path) -> Path:
    path = tmp_path / "judging.tsv"
    path.write_text(JUDGING.replace("\tskip\t", "\t\t").replace(
        "Paris is", "Paris \x1b]0;owned\x07is \x1b]52;c;ZWNobyBoaQ==\x07the \x1b[8mhidden\x1b[0m \u202egnirts"))
    return path


def test_judge_shows_control_sequences_as_text_never_raw(judging):
    term = Terminal(judging)
    shown = term.expect("relevant? ")
    assert "\\x1b]0;owned\\x07" in shown and "\\x1b]52;c;ZWNobyBoaQ==\\x07" in shown and "\\u202e" in shown
    assert "\x1b]" not in term.raw and "\x07" not in term.raw and "\x1b[8m" not in term.raw and "\u202e" not in term.raw
    term.press("q", then="Continue with")
    assert term.finish() == 0


def test_judge_takes_keys_typed_ahead_in_turn_and_redraws_on_a_resize(judging):
    term = Terminal(judging, no_color=True)
    term.expect("relevant? ")
    os.write(term.master, b"yn")  # two keys in one read
    term.expect("is answered")
    assert term.finish() == 0 and relevance(judging) == ["1", "0"]
    judging.write_text(judging.read_text().replace("\t1\t", "\t\t").replace("\t0\t", "\t\t"))
    term = Terminal(judging, no_color=True)
    term.expect("relevant? ")
    assert "unknown key '\\x1b[a'" in term.press("\x1b[A")  # an arrow key: one unknown key
    fcntl.ioctl(term.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 40, 0, 0))
    redrawn = term.expect("relevant? ")
    passage = [line for line in redrawn.splitlines() if line.startswith("    ")]
    assert len(passage) > 2 and all(len(line) <= 40 for line in passage)
    term.press("q", then="Continue with")
    assert term.finish() == 0 and relevance(judging) == ["", ""]


# others

def test_experiment_waits_for_train_s_lock(run_dir, tmp_path, capsys):
    config = tmp_path / "experiment.toml"  # a grid of one label model, nothing to train: it runs in a second
    config.write_text((OWN / "pipeline.toml").read_text().replace('path = "."', f'path = "{OWN}"')
                      + '\n[experiment]\nlabel_models = ["majority"]\nvariants = []\nsupervised = false\n')
    holder = _start(HOLD, tmp_path, str(run_dir), "train")
    try:
        assert holder.stdout.readline() == "held\n"
        before = snapshot(run_dir)
        assert main(["experiment", str(config), "--run-dir", str(run_dir), "--quiet"]) == 2
        assert f"the run dir is locked by process {holder.pid} (train)" in error(capsys)
        assert snapshot(run_dir) == before and not (run_dir / "experiment").exists()
    finally:
        holder.kill()
        holder.wait()
