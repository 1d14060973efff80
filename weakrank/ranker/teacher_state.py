"""A model directory read as untrusted input: the teacher's state (``weakrank_fusion.json``) and the model files.

A model directory is data that people download and share. Its teacher file names each LF (a built-in name, or a
``lfs/<file>.py:<function>`` carried inside the directory), the LF's options and state file, and the fusion label
model's fitted state. :func:`read_teacher_state` checks all of it before anything is built: the file's size and
nesting (read from a regular file only, at most :data:`MAX_BYTES` of it), every field's type, finite numbers,
cluster indices in range, and that every path it names lies inside the directory: a built-in LF's ``model`` option
that leads elsewhere (an absolute path, ``..``, a folder of the current directory) is noted (``LFEntry.outside``),
and the teacher then needs the caller's trust, as a user's LF file does. :func:`check_model_files` refuses weights that would be unpickled and module lists naming classes
outside sentence-transformers. Each problem is a :class:`~weakrank.errors.DataError` naming the file and field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from weakrank.checked import LIST, OBJECT, TEXT, read_field, read_object
from weakrank.encoders import DEFAULT_ENCODER
from weakrank.errors import DataError
from weakrank.files import read_bytes
from weakrank.fusion_state import FusionState

FUSION_FILE, LF_DIR = "weakrank_fusion.json", "lfs"
MAX_BYTES = 4 * 2**20  # a teacher's state is a few kB; anything near this is not one
MAX_DEPTH = 8  # {"teacher": {"clusters": [[0]]}} is 4 deep
STATE_FIELDS = ("lfs", "teacher", "student_weight")  # what a teacher's state is; the rest of the file: its notes
PATH_OPTIONS = ("model",)  # built-in LF options that may name a local folder (an encoder's weights)


@dataclass(frozen=True)
class LFEntry:
    """One LF of the teacher: its name, how to build it (``spec``, ``options``), its state file (or None), the
    folder each path option names (``folders``: relative ones made whole against the directory) and which of those
    lie outside the directory (``outside``: the fields, with their values)."""

    name: str
    spec: str
    options: dict[str, Any]
    state: Path | None
    code: Path | None  # the ``lfs/*.py`` file a user's LF runs (None: a built-in)
    folders: dict[str, Path] = field(default_factory=dict)
    outside: tuple[str, ...] = ()


@dataclass(frozen=True)
class TeacherState:
    """A checked ``weakrank_fusion.json``: the LFs, in the fusion model's column order, the model's state and the
    student's weight in the shipped ranker (0.5 where the file names none) and what else the file keeps (``notes``:
    its other fields as written, such as the record of how the weight was chosen; nothing here reads them)."""

    lfs: list[LFEntry]
    teacher: FusionState
    student_weight: float = 0.5
    notes: dict[str, Any] = field(default_factory=dict)


def read_teacher_state(directory: str | Path, builtins: set[str]) -> TeacherState:
    """The checked teacher state of model directory ``directory``; ``builtins``: the LF names that need no code of
    the directory's (their specs are names, not files)."""
    directory = Path(directory)
    path = directory / FUSION_FILE
    data = read_bytes(path, MAX_BYTES)
    try:
        saved = json.loads(data)
    except (ValueError, RecursionError) as err:
        raise DataError(f"not JSON ({type(err).__name__}); re-run `weakrank train`", file=path) from None
    _check_depth(saved, path)
    saved = read_object(saved, "a teacher's state: lfs and teacher", path)
    entries = read_field(saved, "lfs", LIST, path)
    if not entries:
        raise DataError("no LF: a teacher fuses at least one", file=path, field="lfs")
    lfs = [_lf_entry(directory, entry, f"lfs[{i}]", builtins) for i, entry in enumerate(entries)]
    names = [lf.name for lf in lfs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DataError(f"LF {twice[0]!r} is named twice", file=path, field="lfs")
    teacher = FusionState.from_dict(read_field(saved, "teacher", OBJECT, path), path, "teacher.", len(lfs))
    weight = saved.get("student_weight", 0.5)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
        raise DataError(f"{weight!r} is not a number in [0, 1]", file=path, field="student_weight")
    notes = {key: value for key, value in saved.items() if key not in STATE_FIELDS}
    return TeacherState(lfs, teacher, float(weight), notes)


def inside(directory: Path, relative: object, field: str, path: Path) -> Path:
    """``directory / relative`` when ``relative`` is a relative path that stays inside ``directory`` (no ``..``,
    no absolute path, no link out of it)."""
    if not isinstance(relative, str) or not relative:
        raise DataError(f"expected a relative path, got {relative!r}", file=path, field=field)
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or "\\" in relative or ":" in pure.parts[0]:
        raise DataError(f"{relative!r} is not a path inside the model directory", file=path, field=field)
    target = directory / pure
    try:
        target.resolve().relative_to(directory.resolve())
    except ValueError:
        raise DataError(f"{relative!r} leads out of the model directory (a link)", file=path, field=field) from None
    if not target.exists():
        raise DataError(f"{relative!r} is missing from the model directory", file=path, field=field)
    return target


def check_model_files(directory: Path) -> None:
    """Refuse, with an error naming the file, what would make loading a model folder (the student, an LF's
    encoder) run code or unpickle: weights that are not safetensors (``pytorch_model.bin`` is a pickle) and a
    ``modules.json`` naming classes outside sentence-transformers."""
    pickles = sorted(found for pattern in ("*.bin", "*.pt", "*.pkl") for found in directory.glob(pattern))
    if pickles and not (directory / "model.safetensors").exists():
        raise DataError(f"weights stored as a pickle ({pickles[0].name}); weakrank loads safetensors only "
                        "(model.safetensors): save the model again with save_pretrained", file=pickles[0])
    modules = directory / "modules.json"
    if modules.exists():
        try:
            types = [entry["type"] for entry in json.loads(modules.read_text())]
        except (ValueError, TypeError, KeyError) as err:
            raise DataError(f"not a sentence-transformers module list ({type(err).__name__})", file=modules) from None
        foreign = [t for t in types if not (isinstance(t, str) and t.startswith("sentence_transformers."))]
        if foreign:
            raise DataError(f"names a module class outside sentence-transformers: {foreign[0]!r}", file=modules)


def _lf_entry(directory: Path, entry: object, field: str, builtins: set[str]) -> LFEntry:
    path = directory / FUSION_FILE
    entry = read_object(entry, "an LF: name, spec, options, state", path, field)
    name, spec = read_field(entry, "name", TEXT, path, f"{field}."), read_field(entry, "spec", TEXT, path, f"{field}.")
    options = read_field(entry, "options", OBJECT, path, f"{field}.")
    state = entry.get("state")
    state_path = None if state is None else inside(directory, state, f"{field}.state", path)
    if spec in builtins:
        places = {key: _model_place(directory, options[key], f"{field}.options.{key}") for key in PATH_OPTIONS
                  if isinstance(options.get(key), str)}
        outside = tuple(f"{field}.options.{key} = {options[key]!r}" for key, (_, out) in places.items() if out)
        folders = {key: place for key, (place, _) in places.items() if place is not None}
        return LFEntry(name, spec, options, state_path, None, folders, outside)
    target, _, attr = spec.rpartition(":")
    if not target.endswith(".py") or not PurePosixPath(target).parts[:1] == (LF_DIR,) or not attr.isidentifier():
        raise DataError(f"{spec!r} is neither a built-in LF nor a function of a file in {LF_DIR}/: a model "
                        "directory runs no code from elsewhere", file=path, field=f"{field}.spec")
    return LFEntry(name, spec, options, state_path, inside(directory, target, f"{field}.spec", path))


def _model_place(directory: Path, value: str, field: str) -> tuple[Path | None, bool]:
    """Where a built-in LF's path option ``value`` leads, and whether that is outside ``directory``: a folder inside
    it (``lfs/...``, or a relative path that is there; a link out of it refused), a path outside (absolute, ``~``,
    ``..`` resolved against the directory, or a folder of the current directory that a loader would read), or
    ``(None, False)`` for a model's name (``minilm``, a Hugging Face name)."""
    local = Path(value).expanduser()
    if value.startswith(LF_DIR + "/") or not local.is_absolute() and ".." not in local.parts and (
            directory / local).exists():
        return inside(directory, value, field, directory / FUSION_FILE), False
    if local.is_absolute() or ".." in local.parts:
        return directory / local, True
    return (local, True) if value != DEFAULT_ENCODER and local.exists() else (None, False)


def _check_depth(value: object, path: Path, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise DataError(f"nested deeper than {MAX_DEPTH} levels: not a teacher's state", file=path)
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        _check_depth(child, path, depth + 1)
