"""The run directory's lock: a stage that writes holds an exclusive ``fcntl.flock`` on ``<run_dir>/.weakrank.lock``
(the file names its process and stage) while it runs, so that a second writer on the same run directory is refused
with a message naming the lock. The kernel grants the lock to one open file at a time and drops it when its holder
exits, however it ends: a killed stage's lock is free at once, and no process id is read to decide it. Taking the
lock first puts back what killed writes left in the run directory (:func:`weakrank.files.settle_tree`). The lock file
is never opened through a link, nor used when it is not a plain file of its own (a shared run directory's lock
that leads to someone's file leaves that file alone)."""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from weakrank.errors import DataError, WeakrankError
from weakrank.files import settle_tree

LOCK = ".weakrank.lock"
F = TypeVar("F", bound=Callable[..., Any])
_HOLDER = re.compile(r"(\d{1,10}) ([\w-]{1,40})\n?")
_held = threading.local()  # .roots: the run directories this thread holds (a stage run from within another's)


def _holder(fd: int) -> str:
    """Who holds the lock, as its file says (``process 12 (label)``); the file is anyone's, so anything else in it
    (nothing yet, a garbage or huge process id) reads as ``another process``."""
    try:
        found = _HOLDER.fullmatch(os.pread(fd, 64, 0).decode("utf-8", "replace"))
    except OSError:
        found = None
    return f"process {found[1]} ({found[2]})" if found else "another process"


def _open_lock(lock: Path) -> int:
    """``lock`` opened (created if missing) to be truncated and written: never through a link, and only a regular
    file of one name (a hard link would make it another file's too), else a :class:`DataError` naming it."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666)
    except OSError as err:
        if err.errno not in (errno.ELOOP, errno.EISDIR):
            raise
        fd = None
    found = None if fd is None else os.fstat(fd)
    if found is None or not stat.S_ISREG(found.st_mode) or found.st_nlink > 1:  # 0: its holder just deleted it
        if fd is not None:
            os.close(fd)
        raise DataError("is not a lock file of weakrank's (a link, a folder, a pipe, a device, or a file with another "
                        "name too); remove it, and what it leads to is left as it is", file=lock)
    return fd


def _acquire(lock: Path, stage: str) -> int:
    """An open descriptor of ``lock`` holding its flock, the file naming this process and ``stage``."""
    while True:
        fd = _open_lock(lock)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise WeakrankError(f"{lock}: the run dir is locked by {holder}; wait for it to finish") from None
        try:  # a holder deletes the file before letting go: the lock is this file's only if it is still there
            ours = os.path.samestat(os.fstat(fd), os.lstat(lock))
        except FileNotFoundError:
            ours = False
        if ours:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {stage}\n".encode(), 0)
            return fd
        os.close(fd)


@contextmanager
def run_dir_lock(root: str | Path, stage: str) -> Iterator[None]:
    """Hold the lock of run directory ``root`` (created if missing) while ``stage`` writes into it; held by
    another process (or thread), a :class:`WeakrankError` naming the lock file. A stage run from within another
    one's in the same thread runs under the lock already held."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise DataError("run_dir is a file; expected a directory (or a path that does not exist yet)", file=root)
    root.mkdir(parents=True, exist_ok=True)
    held: set[str] = _held.__dict__.setdefault("roots", set())
    key = os.path.realpath(root)
    if key in held:
        yield
        return
    lock = root / LOCK
    fd = _acquire(lock, stage)
    held.add(key)
    try:
        settle_tree(root)
        yield
    finally:
        held.discard(key)
        with suppress(FileNotFoundError):  # before letting go (see _acquire); the file if it is still ours
            if os.path.samestat(os.fstat(fd), os.lstat(lock)):
                lock.unlink()
        os.close(fd)


def locked(stage: str) -> Callable[[F], F]:
    """Decorate a stage ``func(cfg, ...)`` to run under :func:`run_dir_lock` of ``cfg.run_dir``."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def run(cfg: Any, *args: Any, **kwargs: Any) -> Any:
            with run_dir_lock(cfg.run_dir, stage):
                return func(cfg, *args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
