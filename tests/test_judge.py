"""The judging file and ``weakrank judge``: a person's keys through a real pseudo-terminal, the screen read back."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pandas as pd
import pytest

from weakrank.cli import main
from weakrank.commands.judge import screen
from weakrank.errors import DataError
from weakrank.io import read_qrels, write_qrels
from weakrank.judged.judging_file import JUDGING_COLUMNS, read_judging_file, write_judging_file
from weakrank.judged.judgments import read_judged_qrels

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def judging(tmp_path) -> Path:
    """Two queries of three passages each; one passage with a tab, a newline and quotes."""
    rows = pd.DataFrame({
        "query_id": ["q1"] * 3 + ["q2"] * 3,
        "passage_id": ["p1", "p2", "p3", "p4", "p5", "p6"],
        "query": ["capital of france"] * 3 + ["who painted the mona lisa"] * 3,
        "passage": ["Paris is the capital of France.", "Bananas are\trich in potassium.", 'The "stock"\nmarket fell.',
                    "Leonardo da Vinci painted the Mona Lisa.", "Rain is expected tomorrow.", "Cats sleep all day."],
    })
    return write_judging_file(rows, tmp_path / "judging.tsv")


def relevance(path: Path) -> list[str]:
    return read_judging_file(path)["relevance"].tolist()


def _own_terminal() -> None:
    """In the child: the pseudo-terminal as its controlling terminal, and Ctrl-C's SIGINT not ignored (a test run
    started in the background, `pytest &`, hands its children SIGINT ignored)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """``weakrank judge FILE`` run on a pseudo-terminal of 80 x 24: keys written in, the screen read back."""

    def __init__(self, path: Path, no_color: bool = False) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
        env.update(PYTHONPATH=str(ROOT), TERM="xterm", **({"NO_COLOR": "1"} if no_color else {}))
        # a session of its own with the terminal as its controlling one, so that Ctrl-C sends it SIGINT
        self.proc = subprocess.Popen([sys.executable, "-m", "weakrank.cli", "judge", str(path)], stdin=self.slave,
                                     stdout=self.slave, stderr=self.slave, env=env, start_new_session=True,
                                     preexec_fn=_own_terminal)
        self.raw, self.seen = "", 0

    def expect(self, marker: str, timeout: float = 30) -> str:
        """The screen text (ANSI codes removed) from the last match up to ``marker``'s next appearance."""
        deadline = time.monotonic() + timeout
        while (found := ANSI.sub("", self.raw).find(marker, self.seen)) < 0:
            ready, _, _ = select.select([self.master], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"{marker!r} did not appear within {timeout} s; the screen so far:\n{self.text()}"
            self.raw += os.read(self.master, 4096).decode(errors="replace")
        text = ANSI.sub("", self.raw)[self.seen : found + len(marker)]
        self.seen = found + len(marker)
        return text

    def text(self) -> str:
        return ANSI.sub("", self.raw)[self.seen :]

    def press(self, key: str, then: str = "relevant? ") -> str:
        """Press ``key``; the next screen, up to ``then``."""
        os.write(self.master, key.encode())
        return self.expect(then)

    def finish(self) -> int:
        """The exit status; the terminal's local modes after it are kept in ``lflag``."""
        code = self.proc.wait(timeout=30)
        self.lflag = termios.tcgetattr(self.slave)[3]
        os.close(self.master)
        os.close(self.slave)
        return code


def test_the_file_round_trips_with_texts_made_safe_and_a_spreadsheet_s_answers_read(judging):
    text = judging.read_text()
    assert text.splitlines()[0].split("\t") == list(JUDGING_COLUMNS) and len(text.splitlines()) == 7
    table = read_judging_file(judging)
    assert table["passage_id"].tolist() == ["p1", "p2", "p3", "p4", "p5", "p6"]
    assert table.loc[1, "passage"] == "Bananas are rich in potassium."
    assert table.loc[2, "passage"] == 'The "stock" market fell.'
    assert relevance(judging) == [""] * 6
    # a spreadsheet user's answers, and a column of notes of their own
    lines = text.splitlines()
    answers = ["Y", "n", "?", "2", "skip", " "]
    edited = [lines[0] + "\tnote"] + [f"{line}{a}\tseen" for line, a in zip(lines[1:], answers)]
    judging.write_text("\n".join(edited) + "\n")
    table = read_judging_file(judging)
    assert table["relevance"].tolist() == ["1", "0", "skip", "2", "skip", ""]
    write_judging_file(table, judging)
    assert read_judging_file(judging)["note"].tolist() == ["seen"] * 6
    qrels = read_judged_qrels(judging)
    assert qrels.to_dict("list") == {"query_id": ["q1", "q1", "q2"], "passage_id": ["p1", "p2", "p4"],
                                     "relevance": [1, 0, 2]}


@pytest.mark.parametrize("edit, where, message", [
    (lambda lines: ["query_id\tpassage_id\tquery\tpassage"] + lines[1:], ":1: relevance", "lacks column(s)"),
    (lambda lines: lines[:2] + [lines[2] + "\textra"] + lines[3:], ":3:", "6 tab-separated fields, expected 5"),
    (lambda lines: lines + [lines[1]], ":8: passage_id", "listed twice (first at line 2)"),
    (lambda lines: lines[:3] + [lines[3] + "maybe"] + lines[4:], ":4: relevance", "'maybe' is not a relevance"),
    (lambda lines: lines[:4] + ["\t" + lines[4].split("\t", 1)[1]] + lines[5:], ":5: query_id", "is empty"),
    (lambda lines: lines[:5] + [lines[5].replace("Rain", '"Rain')] + lines[6:], ":6:", "double quote"),
    (lambda lines: [], ":1:", "empty file"),
])
def test_a_bad_judging_file_is_located_by_line_and_field(judging, edit, where, message):
    judging.write_text("".join(line + "\n" for line in edit(judging.read_text().splitlines())))
    with pytest.raises(DataError) as err:
        read_judging_file(judging)
    assert f"{judging}{where}" in str(err.value) and message in str(err.value)


def test_qrels_conversion_needs_no_terminal_and_takes_a_trec_file_too(judging, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    assert main(["judge", str(judging), "--qrels", str(tmp_path / "out.qrels")]) == 2
    assert "no judged row yet" in capsys.readouterr().err and not (tmp_path / "out.qrels").exists()
    table = read_judging_file(judging).assign(relevance=["1", "0", "", "skip", "0", "1"])
    write_judging_file(table, judging)
    assert main(["judge", str(judging), "--qrels", str(tmp_path / "out.qrels")]) == 0
    qrels = read_qrels(tmp_path / "out.qrels")
    assert list(zip(qrels["passage_id"], qrels["relevance"])) == [("p1", 1), ("p2", 0), ("p5", 0), ("p6", 1)]
    write_qrels(qrels, tmp_path / "own.qrels")  # a TREC qrels file brought along reads as it is
    pd.testing.assert_frame_equal(read_judged_qrels(tmp_path / "own.qrels"), qrels)
    assert main(["judge", str(judging)]) == 2  # no terminal and no --qrels
    assert "standard input is none" in capsys.readouterr().err and relevance(judging)[2] == ""


def test_the_screen_wraps_the_passage_and_highlights_the_query_s_words(judging, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    table = read_judging_file(judging)
    table.loc[3, "passage"] = "Leonardo da Vinci painted the Mona Lisa " * 5
    coloured = screen(table, 3, styled=True, colour=True)
    assert "\x1b[1;33mpainted\x1b[0m" in coloured and "\x1b[1;33mMona\x1b[0m" in coloured
    assert "\x1b[1;33mthe\x1b[0m" not in coloured  # too common to point at anything
    assert "\x1b[1mLisa\x1b[0m" in screen(table, 3, styled=True, colour=False)
    plain = screen(table, 3, styled=False, colour=False)
    assert "\x1b" not in plain and "query 2/2 · passage 4/6 · 0 judged, 0 skipped · 3 left of this query" in plain
    passage = [line for line in plain.splitlines() if line.startswith("    ")]
    assert len(passage) > 3 and all(len(line) <= 40 for line in passage)


def test_a_person_judges_goes_back_quits_and_resumes_where_they_stopped(judging):
    term = Terminal(judging)
    first = term.expect("relevant? ")
    assert "query 1/2 · passage 1/6 · 0 judged, 0 skipped · 3 left of this query" in first
    assert "query q1: capital of france" in first and "Paris is the capital of France." in first
    assert "nothing to go back to" in term.press("b") and relevance(judging)[0] == ""
    assert "passage p2:" in term.press("y") and relevance(judging)[:2] == ["1", ""]
    assert "passage p3:" in term.press("n") and relevance(judging)[:3] == ["1", "0", ""]
    assert "passage p4:" in term.press("s") and relevance(judging)[:4] == ["1", "0", "skip", ""]
    again = term.press("b")  # the skip is undone, p3 shown again
    assert "passage p3:" in again and "2 judged, 0 skipped" in again and relevance(judging)[:3] == ["1", "0", ""]
    assert "unknown key 'x'" in term.press("x") and relevance(judging)[2] == ""
    term.press("q", then="Continue with: ")  # the program as it was run: python -m weakrank.cli, this interpreter
    assert term.expect(f"{sys.executable} -m weakrank.cli judge {judging}")
    assert term.finish() == 0 and relevance(judging) == ["1", "0", "", "", "", ""]

    term = Terminal(judging)  # resumed at the first unjudged row
    assert "passage p3:" in term.expect("relevant? ")
    for key, shown in (("1", "p4"), ("0", "p5"), ("y", "p6")):
        assert f"passage {shown}:" in term.press(key)
    done = term.press("n", then="judged.qrels")
    assert "every row of" in done and "6 judged (3 relevant, 3 not)" in done
    assert "2 judged queries have a relevant and a non-relevant passage; moving the LFs' priors takes 5" in done
    assert f"--more --output {judging}" in done
    assert term.finish() == 0 and relevance(judging) == ["1", "0", "1", "0", "1", "0"]
    assert list(judging.parent.iterdir()) == [judging]  # no temp file left


def test_a_killed_judge_keeps_every_answer_and_the_next_run_cleans_up(judging):
    term = Terminal(judging)
    term.expect("relevant? ")
    term.press("y")
    assert "passage p3:" in term.press("n")
    os.kill(term.proc.pid, signal.SIGKILL)
    assert term.finish() == -signal.SIGKILL
    assert relevance(judging) == ["1", "0", "", "", "", ""]
    # what a kill in the middle of a write would leave: a temp file of the dead process beside the file
    leftover = judging.parent / f".{judging.name}.{term.proc.pid}.abc.tmp"
    leftover.write_text("query_id\tpass")
    term = Terminal(judging)
    assert "passage p3:" in term.expect("relevant? ") and not leftover.exists()
    term.press("q", then="Continue with")
    assert term.finish() == 0 and relevance(judging) == ["1", "0", "", "", "", ""]


def test_ctrl_c_puts_the_terminal_back_and_an_edit_elsewhere_is_not_overwritten(judging):
    term = Terminal(judging, no_color=True)
    term.expect("relevant? ")
    assert not termios.tcgetattr(term.slave)[3] & termios.ICANON  # single keys while judging
    os.write(term.master, b"\x03")
    term.expect("interrupted")
    assert term.finish() == 130 and term.lflag & termios.ICANON and term.lflag & termios.ECHO  # put back
    term = Terminal(judging, no_color=True)
    term.expect("relevant? ")
    assert "\x1b[1;33m" not in term.raw and "\x1b[1mcapital\x1b[0m" in term.raw  # NO_COLOR: bold, no colour
    table = read_judging_file(judging).assign(relevance=["0", "", "", "", "", ""])
    write_judging_file(table, judging)  # someone else's edit, while judge waits for a key
    term.press("y", then="was changed by another program")
    assert term.finish() == 2 and relevance(judging)[:2] == ["0", ""] and term.lflag & termios.ICANON


def test_judging_ends_with_next_steps_that_work_where_pasted(judging, tmp_path):
    """A training sample's end: a config line with the file's absolute path (a relative one is read from the
    config's folder); an evaluation sample's (select --evaluation): the command that measures with it, never
    [aggregate] judgments."""
    term = Terminal(judging)
    term.expect("relevant? ")
    for key in "ynnyn":
        term.press(key)
    term.press("n", then="[aggregate] judgments = ")
    assert json.dumps(str(judging.resolve())) in term.expect("\n") and term.finish() == 0
    sample = write_judging_file(read_judging_file(judging).assign(relevance="", use="evaluation"),
                                tmp_path / "evaluation-judging.tsv")
    term = Terminal(sample)
    term.expect("relevant? ")
    for key in "ynnyn":
        term.press(key)
    done = term.press("n", then=f"--judgments {sample}")
    assert "each system's MAP estimated from it" in done and "-m weakrank.cli evaluate CONFIG" in done
    assert term.finish() == 0 and "[aggregate]" not in done + term.text()


@pytest.mark.parametrize("name, separator", [("judging.tsv", ","), ("judging.csv", ","), ("judging.csv", ";")])
def test_a_judging_file_saved_as_csv_is_refused_in_one_line(tmp_path, name, separator):
    path = tmp_path / name
    path.write_text(separator.join(JUDGING_COLUMNS) + "\n" + separator.join(["q1", "p1", "a", "b", "1"]) + "\n")
    for read in (read_judging_file, read_judged_qrels):
        with pytest.raises(DataError, match=f"^{re.escape(str(path))}:1: comma-separated: save as tab-separated"):
            read(path)
