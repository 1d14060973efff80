"""Shipping a trained student with its teacher: :func:`ship` writes a fitted
:class:`~weakrank.ranker.teacher.Teacher` (:func:`weakrank.stages.train.run_teacher` fits one on a run directory)
beside the student, with the student's weight in the shipped ranker (:mod:`weakrank.ranker.fused`), so that
:func:`weakrank.ranker.load_ranker` loads it.

The weight is 0.5 (an even average) unless a person's judgments show another clearly ahead
(:class:`~weakrank.judged.selector.StudentWeightSelector`): on judged queries the student has not trained on (judged
mode holds them out of the first ``judged_after`` of its steps and saves the student then), each weight is graded by
its AP estimated from the judged sample (:mod:`weakrank.judged.estimate`: each pair weighted by the inverse of its
inclusion probability), and the rule that chooses the teacher (:mod:`weakrank.judged.rule`) keeps 0.5 unless one is
clearly ahead. A student graded on queries it was trained on would grade itself (measured: its judged AP rises to
the student alone, where test MAP is lowest)."""

from __future__ import annotations

from pathlib import Path

from weakrank.combinations import ChoiceRecord
from weakrank.judged.selector import EVEN
from weakrank.ranker.teacher import Teacher


def ship(teacher: Teacher, *directories: str | Path, student_weight: float = EVEN,
         mix: ChoiceRecord | None = None) -> list[Path]:
    """Write ``teacher`` beside the student saved in each of ``directories``, the student's weight in the shipped
    ranker with it (``mix``: how it was chosen, for a person); returns the teacher files written."""
    return [teacher.save(directory, student_weight=student_weight, mix=mix) for directory in directories]
