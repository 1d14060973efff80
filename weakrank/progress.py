"""Progress bars and warnings: ``tqdm`` on a terminal; on a stream that is not one (a log file), whole lines at
most every ``LOG_INTERVAL`` seconds and no library bars; no "Loading weights" bar ever; on the command line,
each warning one line, and with ``--quiet`` none but what says a part of the result is left out
(:class:`~weakrank.errors.LeftOutWarning`; :func:`configure`)."""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from tqdm.auto import tqdm as _tqdm

from weakrank.errors import LeftOutWarning
from weakrank.pace import stepped

LOG_INTERVAL = 30.0  # seconds between two lines of a bar written to a file
_NOTEBOOK = _tqdm.__module__.startswith("tqdm.notebook")  # widgets: left as they are
_quiet = False
QUIET_ENV = {"PYTHONWARNINGS": "ignore", "TRANSFORMERS_VERBOSITY": "error"}  # what child processes read


@contextmanager
def configure(quiet: bool = False) -> Iterator[None]:
    """The command line's output while a command runs: with ``quiet``, no bar and no warning but a
    :class:`~weakrank.errors.LeftOutWarning` (:func:`warnings_off`); without, each warning one line ``weakrank: warning: <message>`` (no source line); with
    ``quiet`` or stderr not a terminal, no bars from the libraries (:func:`library_bars_off`). Warnings, logging and
    the environment are as they were afterwards (a command run from Python or a test leaves its process alone)."""
    global _quiet
    was_quiet, logging_off, environ = _quiet, logging.root.manager.disable, {k: os.environ.get(k) for k in QUIET_ENV}
    with warnings.catch_warnings():
        _quiet = quiet
        if quiet or not sys.stderr.isatty():
            library_bars_off()
        if quiet:
            warnings_off()
        else:
            warnings.showwarning = one_line_warning
        try:
            yield
        finally:
            _quiet = was_quiet
            logging.disable(logging_off)
            for key, value in environ.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def _left_out_only(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    """A :func:`warnings.showwarning` that shows a :class:`~weakrank.errors.LeftOutWarning` alone, in one line."""
    if issubclass(category, LeftOutWarning):
        one_line_warning(message, category, *args, **kwargs)


def one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                     file: TextIO | None = None, line: str | None = None) -> None:
    """A :func:`warnings.showwarning` that writes ``weakrank: warning: <message>``, without its source line."""
    print(f"weakrank: warning: {message}", file=file or sys.stderr)


def warnings_off() -> None:
    """No warning from weakrank or the libraries, in child processes too (torchrun, dask workers): Python's
    warnings, whatever filter a library sets, and log records below ERROR (transformers', sentence-transformers');
    but a :class:`~weakrank.errors.LeftOutWarning`, one line: what the result lacks is said however quiet."""
    warnings.simplefilter("ignore")
    warnings.filterwarnings("default", category=LeftOutWarning)
    warnings.showwarning = _left_out_only  # a library's own "always" filter shows nothing either
    logging.disable(logging.WARNING)
    os.environ.update(QUIET_ENV)


def library_bars_off() -> None:
    """No bars from huggingface_hub, transformers and sentence-transformers ("Loading weights", "Writing model
    shards": carriage returns in a log), whether they are imported yet or not, in child processes too
    (torchrun, dask workers)."""
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # read when huggingface_hub (hence transformers) is imported
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging

        logging.disable_progress_bar()


def loading_bars_off() -> None:
    """No "Loading weights" bar from transformers: one on every model load, from Python too (transformers turns
    huggingface_hub's download bars off with it). Called where weakrank loads a model."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


def plain_logs() -> None:
    """Used from Python with stderr not a terminal (a log file, a pipe; not a notebook): no library bars."""
    if not _NOTEBOOK and "ipykernel" not in sys.modules and not sys.stderr.isatty():
        library_bars_off()


QUIET_LINE = "{desc}: {unit} {n_fmt}/{total_fmt} ({percentage:.0f}%), {elapsed} elapsed, about {remaining} left{postfix}"


class tqdm(_tqdm):  # a drop-in for tqdm.auto.tqdm
    """``tqdm.auto.tqdm`` that ``configure(quiet=True)`` turns off, and that writes whole lines (at most one every
    ``LOG_INTERVAL`` seconds, and the final state) to a stream that is not a terminal. ``steps=True`` (training's
    steps): under ``configure(quiet=True)`` it is not turned off, whatever ``disable`` says, but written as such
    lines (:data:`QUIET_LINE`: the steps done, the time taken and the time left), so that a quiet run still says
    where it is."""

    def __init__(self, *args: Any, steps: bool = False, **kwargs: Any) -> None:
        stream = kwargs.get("file") or sys.stderr
        self._lines = not _NOTEBOOK and not (hasattr(stream, "isatty") and stream.isatty())
        self._next_line, self._line_n, self._paused = 0.0, -1.0, 0.0
        if _quiet and steps:
            self._lines = True
            kwargs.update(disable=False, bar_format=QUIET_LINE)
        elif _quiet:
            kwargs["disable"] = True
        super().__init__(*args, **kwargs)

    def update(self, n: float | None = 1) -> bool | None:
        shown = super().update(n)
        if not self.disable and self.unit == "step":  # training's steps: the train stage's time left (weakrank.pace)
            stepped(self.n - self.initial, self._time() - self.start_t - self._paused)
        return shown

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        if not self._lines:
            return super().display(msg, pos)
        if msg is None and time.monotonic() >= self._next_line:  # msg "" clears a terminal line: nothing to do
            self._write_line()
        return False

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Work done between two steps (training's evaluation, a checkpoint) left out of the step rate, hence out of
        the time left: without it, the step after a long evaluation made the time left jump (2:41, then 19:28)."""
        if self.disable:  # a bar turned off keeps no time
            yield
            return
        started = self._time()
        try:
            yield
        finally:
            paused = self._time() - started
            self.last_print_t += paused
            self._paused += paused  # left out of the train stage's pace too (weakrank.pace.stepped)

    def close(self) -> None:
        if self._lines and not self.disable:
            if self.leave is not False and self.n != self._line_n:
                self._write_line()
            self.leave = False
        super().close()

    def _write_line(self) -> None:
        self.fp.write(f"{self}\n")
        self.fp.flush()
        self._next_line, self._line_n = time.monotonic() + LOG_INTERVAL, self.n
