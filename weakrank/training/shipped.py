"""Shipping a trained student with its teacher: :func:`ship` writes a fitted
:class:`~weakrank.ranker.teacher.Teacher` (:func:`weakrank.stages.train.run_teacher` fits one on a run directory)
beside the student, with the student's weight in the shipped ranker (:mod:`weakrank.ranker.fused`; 0.5, an even
average, unless the caller chose another) and the record of how it was chosen, so that
:func:`weakrank.ranker.load_ranker` loads it."""

from __future__ import annotations

from pathlib import Path

from weakrank.fusion_state import ChoiceRecord
from weakrank.ranker.teacher import Teacher


def ship(teacher: Teacher, *directories: str | Path, student_weight: float = 0.5,
         mix: ChoiceRecord | None = None) -> list[Path]:
    """Write ``teacher`` beside the student saved in each of ``directories``, the student's weight in the shipped
    ranker with it (``mix``: how it was chosen, for a person); returns the teacher files written."""
    return [teacher.save(directory, student_weight=student_weight, mix=mix) for directory in directories]
