"""The next steps weakrank prints run when pasted into a fresh shell after the README's set-up, where `weakrank` is
`.venv/bin/weakrank` and not on PATH: each names the program as the user ran it, and the config by its path."""

import os
import re
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_no_qrels import judge_as_a_person, own_config

from weakrank.cli import main

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|.)")
PATH = "/usr/bin:/bin"  # a fresh shell's PATH: no virtual environment on it


def set_up(folder: Path) -> Path:
    """``.venv/bin/weakrank`` as pip writes a console script (this interpreter, this checkout's weakrank)."""
    script = folder / ".venv" / "bin" / "weakrank"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom weakrank.cli import main\nsys.exit(main())\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def paste(command: str, folder: Path, keys: str = "", timeout: float = 120) -> tuple[int, str]:
    """``bash -c command`` in ``folder`` on a pseudo-terminal, with a fresh shell's PATH; ``keys`` typed once it
    has started; its exit status and what the terminal showed (ANSI codes removed)."""
    master, slave = os.openpty()
    env = {"PATH": PATH, "HOME": str(folder), "TERM": "xterm", "PYTHONPATH": str(ROOT), "NO_COLOR": "1",
           "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(["bash", "-c", command], cwd=folder, stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True)
    os.close(slave)
    shown, deadline, typed = b"", time.monotonic() + timeout, False
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:  # the terminal closed: the command ended
                break
            if not data:
                break
            shown += data
        if keys and not typed and b"relevant?" in shown:
            os.write(master, keys.encode())
            typed = True
        assert time.monotonic() < deadline, f"{command!r} still running after {timeout} s:\n{shown.decode()}"
    os.close(master)
    return proc.wait(timeout=30), ANSI.sub("", shown.decode(errors="replace")).replace("\r", "")


def printed(line_start: str, text: str) -> str:
    """The command a printed line starting with ``line_start`` names (up to three spaces: a note follows)."""
    line = next(line.strip() for line in text.splitlines() if line.strip() and line.strip().startswith(line_start))
    return line.removeprefix(line_start).strip().split("   ")[0]


def test_printed_next_steps_run_when_pasted_into_a_fresh_shell(tmp_path, monkeypatch):
    if subprocess.run(["bash", "-c", "command -v weakrank"], env={"PATH": PATH}, capture_output=True).returncode == 0:
        pytest.skip("a weakrank on the system PATH: the set-up's case cannot be made")
    monkeypatch.chdir(tmp_path)
    set_up(tmp_path)
    own_config(tmp_path, qrels=False)
    assert main(["run", "pipeline.toml", "--run-dir", "run", "--stages", "ingest,label,aggregate", "--quiet"]) == 0

    code, shown = paste(".venv/bin/weakrank select pipeline.toml --run-dir run --evaluation --design today", tmp_path)
    assert code == 0, shown
    judge, evaluate = printed("next:", shown), printed("then:", shown)
    assert judge == ".venv/bin/weakrank judge pipeline.judgments/evaluation-judging.tsv"
    assert evaluate == (".venv/bin/weakrank evaluate pipeline.toml --run-dir run --judgments "
                        "pipeline.judgments/evaluation-judging.tsv")
    code, shown = paste(judge, tmp_path, keys="q")  # the judging screen, quit at once: how to go on
    assert code == 0 and "relevant?" in shown and f"Continue with: {judge}" in shown, shown

    judge_as_a_person(tmp_path / "pipeline.judgments" / "evaluation-judging.tsv")
    code, shown = paste(judge, tmp_path)  # every row answered: the judge's last screen, naming this config
    assert code == 0 and "is answered" in shown, shown
    last = printed("", shown.split("Next, each system's MAP estimated from it:")[1])
    assert last == ".venv/bin/weakrank evaluate pipeline.toml --judgments pipeline.judgments/evaluation-judging.tsv"
    for command in (f"{last} --run-dir run", evaluate):
        code, shown = paste(command, tmp_path)
        assert code == 0 and "MAP (estimated)" in shown and "estimated on 2 judged queries" in shown, shown
    code, shown = paste("weakrank --help", tmp_path)
    assert code == 127 and "command not found" in shown  # what pasting the bare name gave
