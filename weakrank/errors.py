"""Errors that name the file, row and field where bad input was found."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class WeakrankError(Exception):
    """Base class of every error weakrank raises on purpose."""


class DataError(WeakrankError, ValueError):
    """Bad input data, located as ``<file>:<line>: <field>: <what>`` where known.

    ``line`` is the 1-based line in a source file; ``row`` a 0-based row of a table (a Parquet file).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = None if file is None else str(file)
        self.line, self.row, self.field = line, row, field
        where = []
        if self.file:
            where.append(self.file if line is None else f"{self.file}:{line}")
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(field)
        super().__init__(": ".join([*where, message]))


class LFError(WeakrankError):
    """A labeling function misbehaved (wrong length, NaN/inf scores, ...)."""

    def __init__(self, lf: str, message: str, where: str | None = None) -> None:
        self.lf, self.where = lf, where  # where: the file and line that declared it (``file.py:12``), where known
        super().__init__(f"{where}: " * bool(where) + f"labeling function {lf!r}: {message}")


class LeftOutWarning(UserWarning):
    """Part of what was asked for is left out (a model's teacher that needs the caller's trust): the command line
    says so even with ``--quiet``."""


class NotFittedError(WeakrankError):
    """A model used before it was fitted; the message names the model."""


class ConfigError(WeakrankError):
    """A pipeline config is missing a key or has a bad value."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` with the known name closest to a misspelt ``name``, else ``""``."""
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def located(source: str | Path | None, where: str) -> str:
    """``"<file>: <where>"``, the start of every config error."""
    return f"{source}: {where}" if source else where
