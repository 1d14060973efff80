"""A table's keys and values checked against type hints (a dataclass's fields): how every section of a pipeline
config and the ``[train]`` table are read. A misspelt key or a value of the wrong type is a :class:`ConfigError`
naming the file, the section and the key, with the closest known name."""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from weakrank.errors import ConfigError, did_you_mean, located


def matches(value: Any, hint: Any) -> bool:
    """Whether ``value`` (as TOML gives it) is of the type ``hint``: ``int`` passes for ``float``, ``bool`` for neither."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return True
    if origin in (Union, types.UnionType):
        return any(matches(value, arg) for arg in args)
    if origin in (list, tuple):
        return isinstance(value, (list, tuple)) and all(matches(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def type_name(hint: Any) -> str:
    return str(hint) if get_args(hint) else getattr(hint, "__name__", str(hint))


def check_keys(values: Mapping[str, Any], schema: Mapping[str, Any], where: str, source: Path | None) -> None:
    """Every key of ``values`` in ``schema`` (key → type hint) with a value of its type, else a
    :class:`ConfigError` naming the file, ``where`` (``[section]``) and the key, and the known key closest to it."""
    for key, value in values.items():
        if key not in schema:
            raise ConfigError(f"{located(source, where)} unknown key {key!r}{did_you_mean(key, schema)}; "
                              f"known: {', '.join(sorted(schema))}")
        if not matches(value, schema[key]):
            raise ConfigError(f"{located(source, where)} {key} must be {type_name(schema[key])}, got {value!r}")


def path_keys(cls: type) -> tuple[str, ...]:
    """The fields of dataclass ``cls`` that name files (``metadata={"path": True}``): a config resolves a relative
    one against its own folder."""
    return tuple(f.name for f in fields(cls) if f.metadata.get("path"))


def schema(cls: type) -> dict[str, Any]:
    """Field name → type hint of a dataclass."""
    hints = get_type_hints(cls)
    return {f.name: hints[f.name] for f in fields(cls)}
