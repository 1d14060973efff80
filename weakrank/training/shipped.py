"""Shipping a trained student with its teacher: :func:`ship` writes a fitted
:class:`~weakrank.ranker.teacher.Teacher` (:func:`weakrank.stages.training.run_teacher` fits one on a run directory)
beside the student, so that :func:`weakrank.ranker.load_ranker` loads the shipped ranker
(:mod:`weakrank.ranker.fused`)."""

from __future__ import annotations

from pathlib import Path

from weakrank.ranker.teacher import Teacher


def ship(teacher: Teacher, *directories: str | Path) -> list[Path]:
    """Write ``teacher`` beside the student saved in each of ``directories``; returns the teacher files written."""
    return [teacher.save(directory) for directory in directories]
