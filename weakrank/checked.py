"""One dialect for every reader of a file someone may have changed (a model directory's manifest and teacher state,
a labels or votes file's metadata, a fusion state, the records of judged decisions): each field is read by its
:class:`Kind`, and one that is missing or of another kind is a :class:`~weakrank.errors.DataError` naming the file
and the field in the same words everywhere (``missing``; ``expected a number, got str 'x'``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weakrank.errors import DataError

SHOWN = 60  # characters of a wrong value that an error quotes


@dataclass(frozen=True)
class Kind:
    """What a field must hold: its ``name``, as an error says it, and the ``test`` of a value."""

    name: str
    test: Callable[[Any], bool]

    def __or__(self, other: Kind) -> Kind:
        return Kind(f"{self.name} or {other.name}", lambda value: self.test(value) or other.test(value))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


TEXT = Kind("a string", lambda value: isinstance(value, str))
NUMBER = Kind("a number", _number)
COUNT = Kind("an integer", lambda value: isinstance(value, int) and not isinstance(value, bool))
FLAG = Kind("true or false", lambda value: isinstance(value, bool))
NULL = Kind("null", lambda value: value is None)
OBJECT = Kind("an object", lambda value: isinstance(value, dict))
LIST = Kind("a list", lambda value: isinstance(value, list))
TEXTS = Kind("a list of strings", lambda value: isinstance(value, list) and all(isinstance(v, str) for v in value))
NUMBERS = Kind("an object of numbers", lambda value: isinstance(value, dict) and all(
    isinstance(k, str) and _number(v) for k, v in value.items()))


def wrong(value: Any, kind: Kind, file: str | Path | None, field: str) -> DataError:
    """The error of a ``value`` that is not of ``kind`` at ``field`` of ``file``."""
    shown = repr(value)
    shown = shown if len(shown) <= SHOWN else shown[:SHOWN - 3] + "..."
    return DataError(f"expected {kind.name}, got {type(value).__name__} {shown}", file=file, field=field)


_REQUIRED = object()


def read_field(saved: Mapping[str, Any], key: str, kind: Kind, file: str | Path | None, where: str = "",
               default: Any = _REQUIRED) -> Any:
    """``saved[key]``, checked to be of ``kind`` (``where``: the fields ``saved`` is under in ``file``); ``default``
    where the key may be absent (else its absence is an error)."""
    if key not in saved:
        if default is not _REQUIRED:
            return default
        raise DataError("missing", file=file, field=where + key)
    value = saved[key]
    if not kind.test(value):
        raise wrong(value, kind, file, where + key)
    return value


def read_object(saved: Any, what: str, file: str | Path | None, where: str = "") -> Mapping[str, Any]:
    """``saved``, checked to be an object (``what``: what it holds, as the error says it)."""
    if not isinstance(saved, dict):
        raise DataError(f"expected an object ({what}), got {type(saved).__name__}", file=file,
                        field=where.rstrip(".") or None)
    return saved
