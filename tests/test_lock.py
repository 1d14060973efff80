"""The run directory's lock is one lock (two processes never both hold it, whatever its file says) and every
writing stage takes it; what a killed write left in the run directory is cleaned by the next stage."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_bad_input import _config, _trec
from weakrank import pipeline
from weakrank.config import load_config
from weakrank.errors import WeakrankError
from weakrank.lock import LOCK, run_dir_lock
from weakrank.paths import RunPaths

ROOT = Path(__file__).resolve().parents[1]

HOLD = """
import sys, time
from weakrank.lock import run_dir_lock

with run_dir_lock(sys.argv[1], sys.argv[2]):
    print("held", flush=True)
    time.sleep(120)
"""

RACE = """
import os, sys, time
from pathlib import Path
from weakrank.errors import WeakrankError
from weakrank.lock import run_dir_lock

root, go, trials = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
while not go.exists():
    time.sleep(0.001)
held = both = 0
for _ in range(trials):
    try:
        with run_dir_lock(root, "race"):
            held += 1
            try:  # no other holder may be inside now
                os.close(os.open(root / "inside", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                both += 1
                continue
            os.unlink(root / "inside")
    except WeakrankError:
        pass
print(held, both)
"""


def _start(script: str, tmp_path: Path, *args: str) -> subprocess.Popen:
    path = tmp_path / f"script_{abs(hash(script))}.py"
    path.write_text(script)
    return subprocess.Popen([sys.executable, str(path), *args], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def test_two_processes_never_both_hold_the_lock(tmp_path):
    go = tmp_path / "go"
    racers = [_start(RACE, tmp_path, str(tmp_path / "run"), str(go), "300") for _ in range(4)]
    go.touch()
    outputs = [racer.communicate(timeout=300)[0] for racer in racers]
    assert [racer.returncode for racer in racers] == [0, 0, 0, 0], outputs  # a racer that died says how
    results = [tuple(map(int, output.split())) for output in outputs]
    assert sum(held for held, _ in results) > 0
    assert [both for _, both in results] == [0, 0, 0, 0]


def test_a_held_lock_refuses_train_rerank_index_and_run_naming_its_holder(tmp_path, capsys):
    # the dataset has a test split only: train on it, or train's check of its split stops it before the lock
    cfg = load_config(_config(_trec(tmp_path), '[train]\nmax_steps = 1\ntrain_split = "test"\n').as_posix())
    paths = RunPaths(cfg.run_dir)
    root = paths.root
    pipeline.ingest(cfg)
    holder = _start(HOLD, tmp_path, str(root), "label")
    try:
        assert holder.stdout.readline().strip() == "held"
        message = rf"{root / LOCK}: the run dir is locked by process {holder.pid} \(label\); wait for it to finish"
        for stage in (pipeline.train, pipeline.rerank, pipeline.index, pipeline.ingest, pipeline.label):
            with pytest.raises(WeakrankError, match=message):
                stage(cfg)
        assert not paths.votes.exists()
        (root / LOCK).write_bytes(b"99999999999999999999999 \xff\x00garbage")  # the file is anyone's
        with pytest.raises(WeakrankError, match=r"locked by another process; wait"):
            pipeline.ingest(cfg)
        from weakrank.cli import main

        assert main(["run", str(cfg.source), "--quiet", "--stages", "ingest"]) == 2
        assert "locked by another process" in capsys.readouterr().err
    finally:
        _kill(holder)
    assert sorted(p.name for p in root.iterdir()) == [LOCK, "dataset"]  # the killed holder's file stays, not its lock
    pipeline.label(cfg, progress=False)
    assert paths.votes.exists() and not (root / LOCK).exists()


@pytest.mark.parametrize("text", ["99999999999999999999999 label\n", "-1 label\n", "0 label\n", "garbage \xff\n", ""])
def test_a_lock_file_left_with_any_content_is_taken_over(tmp_path, text):
    cfg = load_config(_config(_trec(tmp_path)))
    root = RunPaths(cfg.run_dir).root
    root.mkdir()
    (root / LOCK).write_text(text, errors="surrogateescape")
    assert pipeline.ingest(cfg).queries["query_id"].tolist() == ["q1", "q2"]
    assert not (root / LOCK).exists()


def test_a_stage_within_a_stage_of_the_same_thread_runs_under_the_held_lock(tmp_path):
    import threading

    with run_dir_lock(tmp_path, "outer"):
        with run_dir_lock(tmp_path, "inner"):
            assert (tmp_path / LOCK).read_text() == f"{os.getpid()} outer\n"
        errors = []
        thread = threading.Thread(target=lambda: errors.append(_refused(tmp_path)))
        thread.start()
        thread.join()
        assert errors == [True]  # another thread is another writer
        assert (tmp_path / LOCK).exists()
    assert not (tmp_path / LOCK).exists()


def _refused(root: Path) -> bool:
    try:
        with run_dir_lock(root, "thread"):
            return False
    except WeakrankError:
        return True


KILLED_LABEL = """
import sys, time
import weakrank.labeling
from weakrank.config import load_config
from weakrank.files import atomic_path
from weakrank.pipeline import label


def killed(df, path, metadata=None):  # an LF's cache half rewritten when the process is killed
    with atomic_path(path) as tmp:
        tmp.write_bytes(b"PAR1 half")
        print("half", flush=True)
        time.sleep(120)


weakrank.labeling.write_parquet = killed
label(load_config(sys.argv[1]), progress=False, force=True)
"""


def test_a_killed_write_s_temp_file_is_cleaned_by_the_next_run_of_the_stage(tmp_path):
    cfg = load_config(_config(_trec(tmp_path)))
    paths = RunPaths(cfg.run_dir)
    pipeline.ingest(cfg)
    votes = pipeline.label(cfg, progress=False)
    cache = paths.lf_scores / "bm25.parquet"
    before = cache.read_bytes()
    proc = _start(KILLED_LABEL, tmp_path, str(cfg.source))
    try:
        assert proc.stdout.readline().strip() == "half"
    finally:
        _kill(proc)
    assert [p.name for p in paths.lf_scores.glob(f".bm25.parquet.{proc.pid}.*.tmp")]  # what the kill left
    assert cache.read_bytes() == before
    (paths.root / ".votes.parquet.99999999999999999999.x.tmp").write_text("")  # no process has such an id
    again = pipeline.label(cfg, progress=False)  # the caches are reused: none is rewritten
    assert not list(paths.root.glob(".votes.parquet.*"))
    assert again.equals(votes)
    assert sorted(p.name for p in paths.lf_scores.iterdir()) == ["bm25.parquet", "tfidf.parquet"]
    assert cache.read_bytes() == before
