"""What a model directory is, said by its ``weakrank_model.json``: :class:`ModelManifest`, written by
:func:`write_manifest` when a student is saved (``kind = "student"``) and when its teacher is saved beside it
(``"shipped"``, :func:`weakrank.ranker.directory.mark_shipped`), read by :func:`read_manifest` as untrusted input (a
regular file of at most :data:`MAX_BYTES`, every field's type and value checked, each problem a
:class:`~weakrank.errors.DataError` naming the file and field; nothing in it runs). Loaders ask
:func:`weakrank.ranker.directory.model_manifest`, which also answers for a directory saved before manifests.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from weakrank.checked import COUNT, LIST, TEXT, TEXTS, read_field, read_object
from weakrank.errors import DataError
from weakrank.files import read_bytes
from weakrank.io import write_text
from weakrank.names import ARCHITECTURES, BACKENDS, PRECISIONS

MANIFEST_FILE = "weakrank_model.json"
MAX_BYTES = 64 * 1024  # a manifest is a few lines
FORMAT = 1
TAUGHT_KEY = "judged_splits"  # the file's key of taught_splits (manifests have always kept it)
TAUGHT_WHAT = "this model was taught, or its checkpoint chosen, by judgments of"  # how, as weakrank.apart says it
KINDS = ("student", "shipped")  # shipped: the student with its teacher (weakrank_fusion.json)


@dataclass(frozen=True)
class ModelManifest:
    """A model directory's kind (``student``, or ``shipped``: with its teacher), its student's ``architecture``,
    the ``backends`` and ``precisions`` that student runs on (:mod:`weakrank.names`), and the splits whose
    relevance labels (a person's judgments, or gold) taught it or chose its checkpoint (``taught_splits``: never the
    split it is scored on, :mod:`weakrank.apart`)."""

    kind: str
    architecture: str
    backends: tuple[str, ...]
    precisions: tuple[str, ...]
    taught_splits: tuple[str, ...] = ()
    format: int = FORMAT

    @property
    def teacher(self) -> bool:
        """Whether the directory carries the student's teacher."""
        return self.kind == "shipped"


def student_manifest(student: type) -> ModelManifest:
    """The manifest of a directory that holds a student of class ``student`` alone (its ``architecture`` and
    ``backends``)."""
    return ModelManifest("student", student.architecture, tuple(student.backends), PRECISIONS)


def write_manifest(directory: str | Path, manifest: ModelManifest) -> Path:
    """Write ``manifest`` into model directory ``directory``."""
    saved = {_saved_key(key): value for key, value in asdict(manifest).items()}
    return write_text(json.dumps(saved, indent=1), Path(directory) / MANIFEST_FILE)


def _saved_key(field: str) -> str:
    """The file's key of :class:`ModelManifest`'s ``field``."""
    return TAUGHT_KEY if field == "taught_splits" else field


def read_manifest(directory: str | Path) -> ModelManifest:
    """The checked manifest of model directory ``directory``."""
    path = Path(directory) / MANIFEST_FILE
    data = read_bytes(path, MAX_BYTES)
    try:
        saved = json.loads(data)
    except (ValueError, RecursionError) as err:
        raise DataError(f"not JSON ({type(err).__name__})", file=path) from None
    saved = read_object(saved, "a model directory's manifest", path)
    unknown = sorted(set(saved) - {_saved_key(field) for field in ModelManifest.__dataclass_fields__})
    if unknown:
        raise DataError(f"unknown field {unknown[0]!r}", file=path)
    if read_field(saved, "format", COUNT, path) != FORMAT:
        raise DataError(f"{saved['format']!r}: this weakrank reads format {FORMAT}; upgrade weakrank", file=path,
                        field="format")
    taught = read_field(saved, TAUGHT_KEY, TEXTS, path, default=[])
    return ModelManifest(_one_of(saved, "kind", KINDS, path), _one_of(saved, "architecture", ARCHITECTURES, path),
                         _some_of(saved, "backends", BACKENDS, path), _some_of(saved, "precisions", PRECISIONS, path),
                         tuple(taught))


def _one_of(saved: dict, key: str, known: tuple[str, ...], path: Path) -> str:
    value = read_field(saved, key, TEXT, path)
    if value not in known:
        raise DataError(f"{value!r} is not one of {list(known)}", file=path, field=key)
    return value


def _some_of(saved: dict, key: str, known: tuple[str, ...], path: Path) -> tuple[str, ...]:
    values = read_field(saved, key, LIST, path)
    bad = [v for v in values if not isinstance(v, str) or v not in known]
    if not values or bad or len(set(values)) != len(values):
        raise DataError(f"expected distinct names of {list(known)}, at least one, got {values!r}", file=path, field=key)
    return tuple(values)
