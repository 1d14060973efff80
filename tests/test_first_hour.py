"""Issue 74, a new user's first hour: the README's own-collection recipe run on a copy of the fixture without any
qrels, on a pseudo-terminal, and what it says read off the screen as the user reads it; then the commands it printed
(``select --evaluation``, ``judge`` with keys typed, ``evaluate``), run as printed, through the same kind of
terminal."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import shlex
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from test_judge import ANSI, Terminal, _own_terminal

from weakrank.fusion_state import STUDENT_WEIGHT
from weakrank.io import read_run
from weakrank.pace import duration
from weakrank.ranker.directory import saved_teacher
from weakrank.training.start_check import StartCheck

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "data" / "fixtures" / "own_collection"
STAGES = ["ingest", "label", "aggregate", "analyze", "train", "rerank", "evaluate"]
ME = f"{shlex.quote(sys.executable)} -m weakrank.cli"  # the program as the user ran it, as printed commands name it
BASELINE = "first stage (your run)"  # as evaluate's MAP table names the user's run


class Session(Terminal):
    """Any weakrank command on a pseudo-terminal of 80 x 24 in ``folder`` (:class:`test_judge.Terminal`'s, which
    runs ``judge``): keys written in, the screen read back."""

    def __init__(self, command: str, folder: Path) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
        env.update(PYTHONPATH=str(ROOT), TERM="xterm", HF_HUB_OFFLINE="1")
        self.proc = subprocess.Popen(shlex.split(command), cwd=folder, stdin=self.slave, stdout=self.slave,
                                     stderr=self.slave, env=env, start_new_session=True, preexec_fn=_own_terminal)
        self.raw, self.seen = "", 0

    def to_the_end(self, timeout: float = 300) -> list[str]:
        """Everything shown until the command ends, from the last :meth:`expect`, as :func:`screen_lines`."""
        deadline = time.monotonic() + timeout
        while True:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                self.raw += os.read(self.master, 65536).decode(errors="replace")
            elif self.proc.poll() is not None:
                break
            assert time.monotonic() < deadline, f"still running after {timeout} s; the screen:\n{self.text()}"
        shown = screen_lines(ANSI.sub("", self.raw)[self.seen:])
        self.seen = len(ANSI.sub("", self.raw))
        return shown


def screen_lines(raw: str) -> list[str]:
    """The lines a terminal shows for ``raw``, as a person reads them: a carriage return goes back to the start of
    the line (what was drawn over is read as last drawn), ANSI codes left out."""
    lines = []
    for line in ANSI.sub("", raw).split("\n"):
        shown = ""
        for part in line.split("\r"):
            shown = part + shown[len(part):]
        lines.append(shown.rstrip())
    return lines


def commands(line: str) -> list[str]:
    """The commands a printed line names between backquotes."""
    return re.findall(r"`([^`]+)`", line)


def no_qrels_collection(folder: Path) -> Path:
    """The fixture as a user without judgments has it: its files less the qrels, its config less the qrels lines."""
    shutil.copytree(OWN, folder, ignore=shutil.ignore_patterns("*.qrels"))
    config = folder / "pipeline.toml"
    config.write_text("".join(line for line in config.read_text().splitlines(keepends=True)
                              if not line.startswith("qrels")))
    assert "qrels =" not in config.read_text() and not list(folder.glob("*.qrels"))
    return config


def test_the_own_collection_recipe_without_qrels_read_off_a_terminal(tmp_path):
    mine = tmp_path / "mine"
    no_qrels_collection(mine)
    # the README's command (`weakrank run data/fixtures/own_collection/pipeline.toml --quiet`), in the user's folder,
    # with a run directory there (the fixture's run_dir points outside it)
    term = Session(f"{ME} run pipeline.toml --run-dir run --quiet", mine)
    shown = term.to_the_end()
    assert term.finish() == 0, "\n".join(shown)
    assert [line for line in shown if line.startswith("--- ")] == [f"--- {stage}" for stage in STAGES]
    timings = json.loads((mine / "run" / "timings.json").read_text())

    # (1) up front, once the data is ingested: a rough time for each stage, the one the run recorded, and in all,
    # saying that it assumes idle cores (and when these are busy)
    plan = shown[shown.index("--- label") - 1]
    estimated = {stage: t["estimated_s"] for stage, t in timings.items() if "estimated_s" in t}
    assert list(estimated) == STAGES[1:]
    said = re.fullmatch(r"stages ahead: (.+); roughly (.+) in all from the work \(texts' tokens, steps\), assuming 2 "
                        r"idle CPU cores.*", plan)
    assert said, plan
    each = dict(part.split(" (~")[0].split(" ~") for part in said[1].split(", "))
    assert list(each) == list(estimated), plan

    def near(seconds: float, slack: float) -> set[str]:  # the record keeps the estimate rounded to 0.1 s
        return {duration(max(seconds + d, 0.0)) for d in (-slack, 0.0, slack)}

    assert all(each[stage] in near(seconds, 0.05) for stage, seconds in estimated.items()), (plan, estimated)
    assert said[2] in near(sum(estimated.values()), 0.05 * len(estimated)), (plan, estimated)
    alone = re.search(r"rerank ~[^(,]+ \(~(.+?) if the student earns no weight\)", plan)  # said both ways
    assert alone and alone[1] in near(timings["rerank"]["teacher_alone_s"], 0.05), plan
    assert re.search(r"idle CPU cores( \(these are busy, load \d+\.\d: expect longer\))?; label and train say their "
                     r"time left once their first batches are timed, rerank once training is done$", plan), plan
    for stage, t in timings.items():  # and the time left, where the first batches took long enough to time, and
        source = "what training kept and its pace" if stage == "rerank" else "the first batches"  # rerank's, always
        said = [line for line in shown if line.startswith(f"    {stage}: ~") and f"left from {source}" in line]
        assert len(said) == ("paced_s" in t), (stage, said)
        whose = "the plan's figure for it" if stage == "rerank" else "the estimate for 2 idle cores"
        assert all(re.search(rf"\([\d.e-]+x {whose}\)$", line) for line in said), said
    assert "paced_s" in timings["rerank"]
    measured = shown[shown.index(f"time per stage (→ {mine / 'run' / 'timings.json'}):") + 1:]
    assert [line.split()[0] for line in measured[:len(STAGES)]] == STAGES  # and at the end, the time each took

    # the evaluate stage says why it measured nothing
    skip = shown[shown.index("--- evaluate") + 1]
    assert skip == ("skipped: split 'test' has no qrels and evaluation-judging.tsv holds no judgments: nothing "
                    "measures the ranker on it")

    # the closing lines, after the times: what the user reads last
    closing = [line for line in shown[shown.index(next(line for line in shown if line.startswith("  in all"))) + 1:]
               if line]
    # (3) without qrels: how to measure, the commands as the user would paste them
    measure = closing[-1]
    assert measure.startswith(skip.removeprefix("skipped: ") + " — to measure it against first stage (your run) on 20 "
                              "judged queries: "), measure  # (2) against the user's own run
    select_cmd, judge_cmd, evaluate_cmd = commands(measure)
    sample = "pipeline.judgments/evaluation-judging.tsv"  # beside the config: it outlives the run directory
    assert select_cmd == f"{ME} select pipeline.toml --run-dir run --evaluation"
    assert judge_cmd == f"{ME} judge {sample}"
    assert evaluate_cmd == f"{ME} evaluate pipeline.toml --run-dir run --judgments {sample}"
    # (3) the student against its teacher on held-out lists, said at the train stage, and again last with the budget
    # that helps where the run's own record says it ended at its start or earned less than its full share
    model = mine / "run" / "model"
    check, state = StartCheck.load(model), saved_teacher(model / "best")
    assert check is not None and state is not None  # the shipped ranker carries its teacher
    assert any(line.startswith(f"student: {check.metric} {check.kept:.3f} on held-out lists, its start (the "
                               f"pretrained encoder) {check.start:.3f}") for line in shown)
    budget = [line for line in closing if "--max-steps" in line]
    if check.share == 0:
        assert budget == [("warning: training did not bring the student closer to its teacher than its start, so the "
                           "start encoder is kept as the student and the shipped ranker is its teacher alone (never "
                           "below it); where this happened on the shared collections at 100 steps, 200 (--max-steps) "
                           "kept the start too")], closing
    elif state.student_weight < STUDENT_WEIGHT:
        assert len(budget) == 1 and budget[0].startswith("note: the student surely made up "), closing
        assert f"so it weighs {state.student_weight:g} (of {STUDENT_WEIGHT:g}) in the shipped ranker" in budget[0]
    else:
        assert budget == [], closing
    assert closing == [*budget, measure]  # nothing else last
    # (4) no warning without evidence against the weighting: on this collection the LFs agree, none is overridden
    assert "of the label model's weight" not in "\n".join(shown) and "judge 10 queries" not in "\n".join(shown)
    warned = {line for line in budget if line.startswith("warning:")}  # said at the train stage and again last
    assert {line for line in shown if line.startswith("warning:")} == warned

    # the first command, as printed: a sample of the queries where the trained ranker's top 3 and the user's run's
    # differ, to be judged with the next one, then measured with the third
    term = Session(select_cmd, mine)
    drawn = term.to_the_end(120)
    assert term.finish() == 0, "\n".join(drawn)
    assert any(line.startswith("drew ") and "to measure model on it against first stage (your run)" in line
               and line.endswith(f"→ {sample}") for line in drawn), drawn
    assert f"next: {judge_cmd}   (or fill in its relevance column: 1 relevant, 0 not)" in drawn
    assert f"then: {evaluate_cmd}" in drawn
    tops = {name: run.sort_values(["query_id", "score"], ascending=[True, False], kind="stable")
            .groupby("query_id")["passage_id"].agg(lambda p: list(p)[:3])
            for name, run in (("model", read_run(mine / "run" / "runs" / "model.trec")),
                              (BASELINE, read_run(mine / "test.run")))}
    differ = sorted(q for q in tops[BASELINE].index if tops["model"][q] != tops[BASELINE][q])
    assert differ, "the trained ranker's top 3 is the user's run's on every test query: nothing to judge"

    # the second, typed as a person would: y where the passage holds the query's last word, n where it does not
    term = Session(judge_cmd, mine)
    seen: dict[str, set[str]] = {}
    page = term.expect("relevant? ", timeout=60)
    while True:
        lines = screen_lines(page)
        query_id, query = next(line.split(": ", 1) for line in lines if line.startswith("query ") and ": " in line)
        passage_at = next(i for i, line in enumerate(lines) if line.startswith("passage ") and line.endswith(":"))
        passage = " ".join(line.strip() for line in lines[passage_at + 1:lines.index("", passage_at)])
        seen.setdefault(query_id.removeprefix("query "), set()).add(lines[passage_at][8:-1])
        # above each passage, whether "better than the first stage" is settled on the queries judged so far
        progress_at = next(i for i, line in enumerate(lines) if line.startswith("query ") and " · passage " in line)
        assert lines[progress_at + 1].startswith(f"model better than {BASELINE} (RR@3, "), lines
        os.write(term.master, b"y" if query.split()[-1] in passage.lower() else b"n")
        page = term.expect("relevant? " if sum(map(len, seen.values())) < judged_rows(mine / sample) else
                           "(with the run's --run-dir, if you gave one)", timeout=60)
        if page.endswith("if you gave one)"):
            break
    assert term.finish() == 0
    # the passages asked about hold the union of the two tops, of the queries where they differ: the pool of the
    # trained ranker and the user's own first stage (the budget of 6 a query filled from below it)
    assert sorted(seen) == differ
    assert all(set(tops["model"][q]) | set(tops[BASELINE][q]) <= seen[q] and len(seen[q]) <= 6 for q in differ), \
        (seen, tops)
    end = screen_lines(page)
    # judge's settled line compares with the user's first stage, named as the MAP table names it
    settled = next(line for line in end if line.startswith("model better than "))
    assert re.fullmatch(rf"model better than {re.escape(BASELINE)} \(RR@3, {len(differ)} of {len(differ)} queries\): "
                        r"(yes|no|not yet) — [+-]\d\.\d{3}, 95% \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\], .+", settled), settled
    assert "Next, each system's exact top-k measures from it:" in end

    # the third, as the run printed it: the exact top-k measures against the first stage, no MAP
    term = Session(evaluate_cmd, mine)
    measured = term.to_the_end(120)
    assert term.finish() == 0, "\n".join(measured)
    text = "\n".join(measured)
    assert any(line.startswith(f"  {BASELINE} RR@3 ") and line.endswith(": the baseline") for line in measured), text
    assert re.search(rf"^  model RR@3 \d\.\d{{3}} \[.*\], vs {re.escape(BASELINE)} [+-]\d\.\d{{3}} \[.*\]: .*← answers "
                     rf"\"better than {re.escape(BASELINE)}\?\"", text, re.MULTILINE), text
    assert "no MAP from a pooled sample" in text and "MAP (estimated)" not in text
    assert "vs bm25" not in text and "than bm25" not in text
    *_, closing_line, written = [line for line in measured if line]
    assert closing_line == f"judged sample: {settled}", text  # the line judge settled on, said last
    assert written == f"→ {mine / 'run' / 'runs'}: evaluation-topk.csv, evaluation-sample.md"

    # the user's own run file measured beside them, as the README offers: the first stage's row is that file
    term = Session(f"{evaluate_cmd} test.run", mine)
    beside = term.to_the_end(120)
    assert term.finish() == 0, "\n".join(beside)
    first = next(line for line in beside if line.startswith(f"  {BASELINE} RR@3 "))
    mine_rr = next(line for line in beside if line.startswith("  test RR@3 "))
    assert mine_rr.split(", vs ")[0].removeprefix("  test ") == first.split(": ")[0].removeprefix(f"  {BASELINE} ")
    assert f", vs {BASELINE} +0.000 " in mine_rr


def judged_rows(path: Path) -> int:
    """The rows of a judging file (its header left out)."""
    return len(path.read_text(encoding="utf-8").splitlines()) - 1
