"""Writing without losing anything, and reading only what is a file: every write goes to a temp file (or folder)
renamed into place, and what a killed write left is put back or cleaned by the next (:func:`settle`); a file a
user names is replaced only when weakrank wrote it and nobody changed it since (:func:`output_file`); an input is
read only when it is a regular file, within a size limit (:func:`read_bytes`). The formats written and read this
way are :mod:`weakrank.io`'s."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import stat
import tempfile
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from weakrank.errors import DataError

# what atomic_path and atomic_dir leave when killed: ``.<name>.<pid>.<random>.tmp`` and ``.<name>.<pid>.<random>.old``
LEFTOVER = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.[a-z0-9_]+\.(?:tmp|old)")


def _owner_alive(leftover: Path, name: str) -> bool | None:
    """For a leftover of an atomic write of ``name``: whether its writer runs; None for any other name."""
    found = LEFTOVER.fullmatch(leftover.name)
    if found is None or found["name"] != name:
        return None
    return _process_alive(int(found["pid"]))


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (this one included; one of another user counts as running; no id that is not
    a process's, 0, negative or huge, does). Only :func:`settle` asks, of a leftover's writer: the run-dir lock
    (:mod:`weakrank.lock`) reads no process id, and it imports this module, so this stays here."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


def settle(path: str | Path) -> None:
    """Undo what a killed atomic write of ``path`` left: put back a previous version moved aside
    (``.<name>.<pid>.*.old``) if ``path`` is missing, and delete temp files and directories of dead writers."""
    path = Path(path)
    if not path.parent.is_dir():
        return
    for leftover in sorted(path.parent.glob(f".{path.name}.*")):
        if _owner_alive(leftover, path.name) is not False:
            continue
        if leftover.suffix == ".old" and not path.exists():
            os.replace(leftover, path)
        elif leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def settle_tree(root: str | Path) -> None:
    """:func:`settle` every file and folder under ``root`` that a killed atomic write left something beside."""
    for folder, dirs, files in os.walk(root):
        leftovers = [found for name in dirs + files if (found := LEFTOVER.fullmatch(name))]
        dirs[:] = [name for name in dirs if not LEFTOVER.fullmatch(name)]
        for name in sorted({found["name"] for found in leftovers}):
            settle(Path(folder) / name)


def _prefix(path: Path) -> str:
    return f".{path.name}.{os.getpid()}."


def _umask() -> int:
    """The process's umask (Python reads it only by setting it: it is put back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temp path next to ``path``; rename it onto ``path`` only if the block succeeds, with the mode
    a plain ``open`` gives (0644 under umask 022; the temp file itself is private until then).

    Temp files left by a killed writer are deleted by the next write (:func:`settle`).
    """
    path = Path(path)
    if path.is_dir():
        raise DataError("is a folder; expected a file to write", file=path)
    path.parent.mkdir(parents=True, exist_ok=True)
    settle(path)
    fd, tmp = tempfile.mkstemp(prefix=_prefix(path), suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Yield an empty temp directory next to ``path``; swap it in for ``path`` only if the block succeeds.

    Readers see the previous directory or the new one, whole: the previous one is moved aside and the new
    one renamed into place (two renames); if a kill falls between them, :func:`settle` (run by the next
    write, and by :meth:`weakrank.dataset.Dataset.load`) puts the previous one back. The directory gets the
    mode ``mkdir`` gives (0755 under umask 022).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    settle(path)
    tmp = Path(tempfile.mkdtemp(prefix=_prefix(path), suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if path.exists():
            old = tmp.with_suffix(".old")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _mark(path: Path) -> Path:
    return path.with_name(f".{path.name}.weakrank")


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read a MiB at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def mark_written(path: str | Path) -> Path:
    """Keep beside ``path`` (in ``.<name>.weakrank``) the SHA-256 of what weakrank just wrote there: a later write
    may replace it as long as nobody changed it (:func:`check_output`)."""
    path = Path(path)
    with atomic_path(_mark(path)) as tmp:
        tmp.write_text(file_sha256(path) + "\n")
    return path


def check_output(path: str | Path, inputs: Mapping[str, str | Path], force: bool = False) -> None:
    """A :class:`DataError` naming ``path`` when writing it would lose what a user has: it is one of ``inputs``
    (flag → file), or a folder, or (unless ``force``) a file that weakrank did not write (:func:`mark_written`),
    or that someone changed since."""
    path = Path(path)
    if not path.exists():
        return
    for flag, source in inputs.items():
        if os.path.exists(source) and os.path.samefile(path, source):
            raise DataError(f"is the {flag} file this command reads; write the output elsewhere", file=path)
    if path.is_dir():
        raise DataError("is a folder; expected the file to write", file=path)
    mark = _mark(path)
    ours = mark.is_file() and mark.read_text().strip() == file_sha256(path)
    if not ours and not force:
        raise DataError("exists and weakrank did not write it (or it changed since); give --force to replace it, "
                        "or write elsewhere", file=path)


@contextmanager
def output_file(path: str | Path, inputs: Mapping[str, str | Path], force: bool = False) -> Iterator[Path]:
    """A command's output ``path``, the one way every command writes a file a user names: checked before the block
    runs (:func:`check_output`: never one of ``inputs``, a folder or, unless ``force``, a file that weakrank did not
    write), written (atomically) by the block, then marked as weakrank's (:func:`mark_written`)."""
    check_output(path, inputs, force)
    yield Path(path)
    mark_written(path)


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened to read its bytes, if it is a regular file (or a link to one): a folder, a named pipe, a
    device or a socket is a :class:`DataError` before a byte is read (opening a pipe waits for no writer)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise DataError("file not found", file=path) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise DataError(f"is {kind}; expected a file", file=path)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of regular file ``path`` (:func:`open_regular`; ``.gz`` decompressed as PyTerrier's ``autoopen``
    does), at most ``limit`` of them: a longer file (what is read counts, not what ``stat`` says) is a
    :class:`DataError`; a broken gzip file too."""
    path = Path(path)
    try:
        with open_regular(path) as raw, (gzip.GzipFile(fileobj=raw) if path.suffix == ".gz" else raw) as f:
            data = f.read() if limit is None else f.read(limit + 1)
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:  # not gzip, truncated, or corrupt
        raise DataError(f"not a readable gzip file ({err})", file=path) from None
    if limit is not None and len(data) > limit:
        raise DataError(f"larger than {limit} bytes: too large for this file", file=path)
    return data


def read_utf8(path: str | Path, limit: int | None = None) -> str:
    """The text of ``path`` (:func:`read_bytes`: a regular file, ``.gz`` decompressed, at most ``limit`` bytes; a
    byte-order mark dropped); a missing, non-UTF-8 or broken gzip file raises :class:`DataError` naming ``path``
    (at the line of the first bad byte)."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise DataError(f"not UTF-8 (byte 0x{data[err.start]:02x})", file=path, line=line) from None
