"""``weakrank judge FILE``: a person judges the unjudged rows of a judging file (written by ``weakrank select``,
:mod:`weakrank.commands.select`) in the terminal, one key per answer, each saved at once, or (``--qrels OUT``)
converts the judged rows to TREC qrels. The judge screen shows the file's texts, never a control sequence they hold;
keys typed ahead are answers in turn; a resized window is redrawn."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
import textwrap
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from weakrank.commands import AddCommand
from weakrank.errors import DataError, WeakrankError
from weakrank.paths import program, shell_path

if TYPE_CHECKING:
    import pandas as pd

ANSWERS = {"y": "1", "1": "1", "n": "0", "0": "0", "s": "skip"}
KEYS = "[y/1] relevant  [n/0] not relevant  [s] skip  [b] back  [q] quit"
# words too common to be worth highlighting in a passage
STOP_WORDS = frozenset("a an and are as at be by did do does for from has have how in is it of on or that the this "
                       "to was were what when where which who whom why with".split())
_WORD = re.compile(r"\w+")
KEY = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|O.|.)?|.", re.DOTALL)  # one key: a character, or an escape sequence
RESIZED = "\x00resized"  # what single_keys' function returns when the window changed size


def cmd_judge(args: argparse.Namespace) -> None:
    if args.qrels:
        convert(Path(args.file), Path(args.qrels), args.force)
        return
    if not sys.stdin.isatty():
        raise WeakrankError(f"judge reads single keys from a terminal, and standard input is none; to convert the "
                            f"judged rows to TREC qrels without one: weakrank judge {shlex.quote(args.file)} --qrels OUT")
    styled = sys.stdout.isatty()
    colour = styled and not os.environ.get("NO_COLOR")
    with single_keys(sys.stdin.fileno()) as read_key:
        judge(Path(args.file), read_key, sys.stdout, styled, colour)


def convert(path: Path, out: Path, force: bool = False) -> None:
    """Write the judged rows of judging file ``path`` (or a TREC qrels file) to TREC qrels ``out``: never ``path``
    itself, nor (unless ``force``) a file weakrank did not write (:func:`~weakrank.files.output_file`)."""
    from weakrank.files import output_file
    from weakrank.io import write_qrels
    from weakrank.judged.judgments import read_judged_qrels

    with output_file(out, {"judging": path}, force) as target:
        qrels = read_judged_qrels(path)
        if qrels.empty:
            raise DataError(f"no judged row yet; judge some first: weakrank judge {shlex.quote(str(path))}", file=path)
        write_qrels(qrels, target)
    print(f"wrote {len(qrels)} judgements of {qrels['query_id'].nunique()} queries → {out}")


@contextmanager
def single_keys(fd: int) -> Iterator[Callable[[], str]]:
    """A function that waits for the next key on terminal ``fd``, lower-cased: each key of a burst in turn (keys
    typed ahead), an escape sequence as one key, :data:`RESIZED` when the window changed size, ``"q"`` at end of
    input. The terminal's settings and the resize handler are put back on leaving, by an exception or Ctrl-C too."""
    import codecs
    import select
    import signal
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    woken, wake = os.pipe()
    os.set_blocking(wake, False)

    def resized(*_: object) -> None:
        with suppress(BlockingIOError):  # a resize is already waiting to be read
            os.write(wake, b".")

    previous = signal.signal(signal.SIGWINCH, resized)
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
    keys: list[str] = []

    def read_key() -> str:
        while not keys:
            if woken in select.select([fd, woken], [], [])[0]:
                os.read(woken, 64)
                return RESIZED
            data = os.read(fd, 64)
            if not data:
                return "q"
            keys.extend(KEY.findall(decode(data)))
        return keys.pop(0).lower()

    tty.setcbreak(fd)
    try:
        yield read_key
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        signal.signal(signal.SIGWINCH, previous)
        os.close(woken)
        os.close(wake)


def judge(path: Path, read_key: Callable[[], str], out: TextIO, styled: bool, colour: bool) -> None:
    """Show each unjudged row of ``path`` and store the key's answer at once (the file rewritten atomically);
    ``b`` blanks the answer of the row before and shows it again, ``q`` stops, :data:`RESIZED` shows the row again.
    ``styled``: clear the screen and highlight the query's words (``colour``: in colour, else in bold)."""
    from weakrank.files import settle
    from weakrank.judged.judging_file import EVALUATION_USE, read_judging_file

    settle(path)  # a temp file left by a killed write
    table = read_judging_file(path)
    saved = _stamp(path)
    note = ""
    while (position := _first_unjudged(table)) is not None:
        out.write(screen(table, position, styled, colour, note, _settled(table)))
        out.flush()
        key, note = read_key(), ""
        if key == RESIZED:
            continue
        if key in ANSWERS:
            table.loc[position, "relevance"] = ANSWERS[key]
        elif key == "b" and position > 0:
            table.loc[position - 1, "relevance"] = ""
        elif key in ("q", "\x04"):  # \x04: Ctrl-D
            out.write(f"\n{_settled(table)}stopped; every answer is saved in {path}: {_counts(table)}.\nContinue "
                      f"with: {program()} judge {shell_path(path)}\n")
            return
        else:
            note = "nothing to go back to: this is the first row" if key == "b" else f"unknown key {key!r}"
            continue
        saved = _save(table, path, saved)
    config = _config(path)
    if EVALUATION_USE in set(table.get("use", ())):  # select --evaluation's sample: it measures, never trains
        out.write(f"\n{_settled(table)}every row of {path} is answered: {_counts(table)}.\nNext, each system's "
                  f"{'exact top-k measures' if _settled(table) else 'MAP estimated'} from it:\n    {program()} evaluate {config} --judgments {shell_path(path)}   (with the "
                  "run's --run-dir, if you gave one)\n")
        return
    out.write(f"\nevery row of {path} is answered: {_counts(table)}.\n{_too_few(table, path)}"
              "Next, TREC qrels of the judged rows:\n"
              f"    {program()} judge {shell_path(path)} --qrels judged.qrels\nor in a pipeline config (an absolute "
              "path: a relative one is read from the config's folder):\n"
              f"    [aggregate] judgments = {json.dumps(str(path.resolve()))}\n")


def _config(path: Path) -> str:
    """The config whose judgments folder holds ``path`` as a printed command names it, else ``CONFIG``."""
    from weakrank.judged.judging_file import config_of

    config = config_of(path)
    return shell_path(config) if config else "CONFIG"


def _settled(table: pd.DataFrame) -> str:
    """For an evaluation sample of the pooled design, whether each system compared is better than its baseline (the
    first stage) on the queries judged so far, one line each (:func:`weakrank.judged.topk.settled`)."""
    from weakrank.judged import pooling, topk

    return "".join(f"{line}\n" for line in topk.settled(table).values()) if pooling.is_pooled(table) else ""


def _first_unjudged(table: pd.DataFrame) -> int | None:
    blank = (table["relevance"] == "").to_numpy()
    return int(blank.argmax()) if blank.any() else None


def _relevant(table: pd.DataFrame) -> pd.Series:
    """Which rows of a judging table are judged relevant (a grade above 0)."""
    from weakrank.judged.judging_file import judged

    return judged(table) & (table["relevance"] != "0")


def _counts(table: pd.DataFrame) -> str:
    from weakrank.judged.judging_file import judged

    values, answered, relevant = table["relevance"], judged(table), _relevant(table)
    return (f"{answered.sum()} judged ({relevant.sum()} relevant, {(answered & ~relevant).sum()} not), "
            f"{(values == 'skip').sum()} skipped, {(values == '').sum()} left")


def _too_few(table: pd.DataFrame, path: Path) -> str:
    """A line saying how to judge more queries where too few have a relevant and a non-relevant passage judged for
    the judgments to move the LFs' priors (:data:`~weakrank.judged.prior_update.MIN_QUERIES`); else nothing."""
    from weakrank.judged.judging_file import judged
    from weakrank.judged.prior_update import MIN_QUERIES

    relevant = _relevant(table)
    both = table.assign(yes=relevant, no=judged(table) & ~relevant).groupby("query_id")[["yes", "no"]].any()
    queries = int(both.all(axis=1).sum())
    if queries >= MIN_QUERIES:
        return ""
    return (f"{queries} judged {'query has' if queries == 1 else 'queries have'} a relevant and a non-relevant "
            f"passage; moving the LFs' priors takes {MIN_QUERIES}: {program()} select {_config(path)} --more "
            f"--output {shell_path(path)} adds queries to this file.\n")


def _stamp(path: Path) -> tuple[int, int, int]:
    stat = path.stat()
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _save(table: pd.DataFrame, path: Path, saved: tuple[int, int, int]) -> tuple[int, int, int]:
    """Write ``table`` to ``path`` unless another program changed the file since ``saved`` (its stamp then)."""
    from weakrank.judged.judging_file import write_judging_file

    if _stamp(path) != saved:
        raise WeakrankError(f"{path} was changed by another program while judging; the last answer is not saved. "
                            f"Run weakrank judge {shlex.quote(str(path))} again to go on from the file as it is now")
    write_judging_file(table, path)
    return _stamp(path)


def screen(table: pd.DataFrame, position: int, styled: bool, colour: bool, note: str = "", status: str = "") -> str:
    """What the terminal shows for row ``position``: a progress line (and ``status``, lines on what the judgments
    so far settle), the query, the passage wrapped to the terminal's width with the query's words highlighted, and
    the keys."""
    from weakrank.text import tokenize

    row = table.iloc[position].map(visible)
    queries = list(dict.fromkeys(table["query_id"]))
    same = table["query_id"] == row["query_id"]
    left = (same & (table["relevance"] == "")).sum()
    skipped = (table["relevance"] == "skip").sum()
    judged = (table["relevance"] != "").sum() - skipped
    progress = (f"query {queries.index(row['query_id']) + 1}/{len(queries)} · passage {position + 1}/{len(table)} · "
                f"{judged} judged, {skipped} skipped · {left} left of this query")
    width = min(shutil.get_terminal_size().columns, 100) - 4
    words = {word for word in tokenize(row["query"]) if word not in STOP_WORDS}
    start, end = ("\x1b[1;33m" if colour else "\x1b[1m", "\x1b[0m") if styled else ("", "")
    passage = [_WORD.sub(lambda m: f"{start}{m[0]}{end}" if m[0].lower() in words else m[0], line)
               for line in textwrap.wrap(row["passage"], width) or [""]]
    parts = ["\x1b[H\x1b[2J" if styled else "\n", progress, *status.splitlines(), "", f"query {row['query_id']}: {row['query']}", "",
             f"passage {row['passage_id']}:", *("    " + line for line in passage), "", KEYS]
    return "\n".join([*parts, note, "relevant? "] if note else [*parts, "relevant? "])


def visible(text: str) -> str:
    """``text`` as a terminal may show it: a control or format character (an escape sequence's start, a
    bidirectional override) written as its code (``\\x1b``), any other space as a space."""
    kinds = (unicodedata.category(char)[0] for char in text)
    return "".join(" " if kind == "Z" else char.encode("unicode_escape").decode() if kind == "C" else char
                   for char, kind in zip(text, kinds))


def register(add: AddCommand) -> None:
    """Add ``judge``."""
    p = add("judge", cmd_judge, "judge the unjudged rows of a judging file (written by weakrank select) in the "
            "terminal, one key each, every answer saved at once; or convert the judged rows to TREC qrels",
            config=False)
    p.add_argument("file", help="judging file: a TSV of query_id, passage_id, query, passage, relevance")
    p.add_argument("--qrels", metavar="OUT", help="write the judged rows as TREC qrels to OUT instead (no terminal "
                   "needed; FILE may also be a TREC qrels file); never FILE, nor a file weakrank did not write unless "
                   "--force")
    p.add_argument("--force", action="store_true", help="with --qrels: replace OUT even if weakrank did not write it")

