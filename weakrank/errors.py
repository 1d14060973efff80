"""Errors that name the file, row and field where bad input was found."""

from __future__ import annotations

from pathlib import Path


class WeakrankError(Exception):
    """Base class of every error weakrank raises on purpose."""


class DataError(WeakrankError, ValueError):
    """Bad input data, located by file, row and field where known."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = None if file is None else str(file)
        self.row = row
        self.field = field
        where = [f"file {self.file}"] if self.file else []
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class LFError(WeakrankError):
    """A labeling function misbehaved (wrong length, NaN/inf scores, ...)."""

    def __init__(self, lf: str, message: str) -> None:
        self.lf = lf
        super().__init__(f"labeling function {lf!r}: {message}")


class ConfigError(WeakrankError):
    """A pipeline config is missing a key or has a bad value."""
