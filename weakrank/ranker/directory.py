"""What a model directory holds, as loaders ask it: :func:`model_manifest`, its manifest
(:mod:`~weakrank.ranker.manifest`) or, for a directory saved before manifests, the same facts guessed from which
files it holds (the one place that guesses); :func:`saved_teacher`, the teacher's state where it holds one;
:func:`mark_shipped`, the manifest's change when a teacher is saved
beside the student (with the splits whose judgments taught it), and :func:`mark_taught`, when training says which
splits' judgments taught a model saved without a teacher."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from weakrank.ranker.bi_encoder import CONFIG_FILE as BI_ENCODER_FILE
from weakrank.ranker.bi_encoder import BiEncoder
from weakrank.ranker.cross_encoder import CONFIG_FILE as CROSS_ENCODER_FILE
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.ranker.manifest import MANIFEST_FILE, ModelManifest, read_manifest, student_manifest, write_manifest
from weakrank.ranker.teacher_state import FUSION_FILE, TeacherState, read_teacher_state


def saved_teacher(directory: str | Path) -> TeacherState | None:
    """The teacher's checked state saved in model directory ``directory`` (None where it holds the student alone)."""
    from labeling_functions import BUILTIN

    return read_teacher_state(directory, set(BUILTIN)) if model_manifest(directory).teacher else None


def model_manifest(directory: str | Path) -> ModelManifest:
    """What model directory ``directory`` is: its checked manifest, or, saved before manifests, guessed from its
    files (the student's config file, the teacher's state file); FileNotFoundError when it holds no student."""
    directory = Path(directory)
    if (directory / MANIFEST_FILE).exists():
        return read_manifest(directory)
    student = _guessed_student(directory)
    if student is None:
        raise FileNotFoundError(f"{directory} holds no weakrank ranker ({MANIFEST_FILE} missing)")
    manifest = student_manifest(student)
    return replace(manifest, kind="shipped") if (directory / FUSION_FILE).exists() else manifest


def mark_shipped(directory: str | Path, taught_splits: set[str] | None = None) -> None:
    """Say in ``directory``'s manifest that its teacher was saved beside the student and, where given, which
    ``taught_splits``' relevance labels taught the model or chose its checkpoint, in one write (a folder without a
    student gets none)."""
    try:
        manifest = model_manifest(directory)
    except FileNotFoundError:
        return
    taught = manifest.taught_splits if taught_splits is None else tuple(sorted(taught_splits))
    write_manifest(directory, replace(manifest, kind="shipped", taught_splits=taught))


def mark_taught(directory: str | Path, splits: set[str]) -> None:
    """Say in ``directory``'s manifest which ``splits``' relevance labels taught the model or chose its checkpoint
    (a folder without a student gets none)."""
    try:
        manifest = model_manifest(directory)
    except FileNotFoundError:
        return
    write_manifest(directory, replace(manifest, taught_splits=tuple(sorted(splits))))


def _guessed_student(directory: Path) -> type | None:
    """The student class whose config file ``directory`` holds, or None."""
    if (directory / BI_ENCODER_FILE).exists():
        return BiEncoder
    return CrossEncoderRanker if (directory / CROSS_ENCODER_FILE).exists() else None
