"""What ``label`` hands on beside the votes: ``votes.parquet``'s metadata as one typed record, with its one writer and
its one reader. Beside the LFs, their vote rules and the engine, it keeps each score column's declaration (what the
fusion label model weighs: :func:`weakrank.lf.ranking_lf`'s ``family`` and ``prior``, as the config's
``[label.options]`` left them), so that no later stage builds an LF to read it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.checked import LIST, NULL, NUMBER, OBJECT, TEXT, read_field, read_object
from weakrank.errors import DataError
from weakrank.io import read_metadata, read_parquet_table, write_parquet


@dataclass(frozen=True)
class Declaration:
    """One score column's declaration: the LF as ``[label] lfs`` named it (``spec``), the fingerprint of its options
    (:meth:`~weakrank.sections.LabelConfig.fingerprint`) and the declaration keys its ``[label.options]`` gave
    (``overrides``) when it was built, and the ``family`` and ``prior`` it then declared."""

    spec: str
    fingerprint: str
    overrides: dict[str, Any]
    family: str | None
    prior: float | None

    def priors(self) -> dict[str, Any]:
        """The declaration as the fusion label model weighs it (:func:`weakrank.registry.lf_priors`'s entry)."""
        return {"family": self.family, "prior": self.prior}


@dataclass(frozen=True)
class VotesInfo:
    """How a votes table was made: the ``lfs`` (their names, in column order), each one's vote ``rules`` (their
    ``repr``), the ``engine`` they ran on and each one's :class:`Declaration` by LF name (``declarations``; empty in
    votes an earlier weakrank wrote)."""

    lfs: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    engine: str | None = None
    declarations: dict[str, Declaration] = field(default_factory=dict)


_KINDS = {"lfs": LIST, "rules": LIST, "engine": TEXT, "declarations": OBJECT}  # each may be absent (None)
_DECLARATION = {"spec": TEXT, "fingerprint": TEXT, "overrides": OBJECT, "family": TEXT | NULL, "prior": NUMBER | NULL}


def write_votes(votes: pd.DataFrame, path: str | Path, info: VotesInfo) -> Path:
    """Write a votes table with its record, atomically."""
    declarations = {name: {key: getattr(found, key) for key in _DECLARATION}
                    for name, found in info.declarations.items()}
    return write_parquet(votes, path, metadata={"lfs": info.lfs, "rules": info.rules, "engine": info.engine,
                                                "declarations": declarations})


def read_votes(path: str | Path) -> tuple[pd.DataFrame, VotesInfo]:
    """Votes file ``path``'s table and its record (:func:`read_votes_info`), from one read."""
    table, meta = read_parquet_table(path)
    return table, _votes_info(meta, path)


def read_votes_info(path: str | Path) -> VotesInfo:
    """The record of votes file ``path`` (an empty one where it carries none); a field of the wrong type is a
    :class:`DataError` naming the file and the field."""
    return _votes_info(read_metadata(path), path)


def _votes_info(meta: Mapping[str, Any], path: str | Path) -> VotesInfo:
    kept = {name: meta.get(name) for name in _KINDS}
    for name, kind in _KINDS.items():
        if kept[name] is not None:
            read_field(kept, name, kind, path)
    declarations = {name: _declaration(saved, path, f"declarations.{name}")
                    for name, saved in (kept["declarations"] or {}).items()}
    return VotesInfo(**{name: value for name, value in kept.items() if value is not None and name != "declarations"},
                     declarations=declarations)


def _declaration(saved: object, path: str | Path, where: str) -> Declaration:
    saved = read_object(saved, "an LF's declaration", path, where)
    if set(saved) != set(_DECLARATION):
        raise DataError(f"a declaration must hold {sorted(_DECLARATION)}", file=path, field=where)
    return Declaration(**{key: read_field(saved, key, kind, path, f"{where}.") for key, kind in _DECLARATION.items()})
