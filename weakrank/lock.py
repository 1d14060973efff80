"""The run directory's lock: a stage that writes holds ``<run_dir>/.weakrank.lock`` (its process id and name),
so that a second writer on the same run directory is refused with a message naming the lock; the lock of a
process that no longer runs is taken over."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from weakrank.errors import DataError, WeakrankError
from weakrank.io import process_alive

LOCK = ".weakrank.lock"
F = TypeVar("F", bound=Callable[..., Any])


def _holder(lock: Path) -> tuple[int, str] | None:
    """The process id and stage written in ``lock``; None when it is unreadable or holds something else."""
    try:
        pid, _, stage = lock.read_text().strip().partition(" ")
        return int(pid), stage
    except (OSError, ValueError):
        return None


@contextmanager
def run_dir_lock(root: str | Path, stage: str) -> Iterator[None]:
    """Hold the lock of run directory ``root`` (created if missing) while ``stage`` writes into it; held by a
    running process (another than this one), a :class:`WeakrankError` naming the lock file."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise DataError("run_dir is a file; expected a directory (or a path that does not exist yet)", file=root)
    root.mkdir(parents=True, exist_ok=True)
    lock = root / LOCK
    holder = _holder(lock)
    if holder is not None and holder[0] == os.getpid():  # a stage run from within another one's
        yield
        return
    if holder is not None and process_alive(holder[0]):
        raise WeakrankError(f"{lock}: the run dir is locked by process {holder[0]} ({holder[1]}); wait for it to "
                            "finish, or delete the lock if no such process runs")
    lock.unlink(missing_ok=True)  # none, or a dead process's
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
    except FileExistsError:
        raise WeakrankError(f"{lock}: the run dir was locked by another process just now; try again later") from None
    with os.fdopen(fd, "w") as out:
        out.write(f"{os.getpid()} {stage}\n")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def locked(stage: str) -> Callable[[F], F]:
    """Decorate a stage ``func(cfg, ...)`` to run under :func:`run_dir_lock` of ``cfg.run_dir``."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def run(cfg: Any, *args: Any, **kwargs: Any) -> Any:
            with run_dir_lock(cfg.run_dir, stage):
                return func(cfg, *args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
