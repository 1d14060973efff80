"""Shipping a trained student with its teacher: :func:`ship` writes a fitted
:class:`~weakrank.ranker.teacher.Teacher` (:func:`weakrank.stages.training.run_teacher` fits one on a run directory)
beside the student, with the student's weight in the shipped ranker (:mod:`weakrank.ranker.fused`), so that
:func:`weakrank.ranker.load_ranker` loads it.

The weight is 0.5 (an even average) unless a person's judgments show another clearly ahead
(:func:`choose_student_weight`): on judged queries the student has not trained on (few-shot mode holds them out
of the first ``judged_after`` of its steps and saves the student then), each weight of :data:`WEIGHTS` is
graded by AP over the judged passages, and :func:`~weakrank.label_models.few_shot.choose`'s rule (the one that
chooses the teacher) keeps 0.5 unless one leads it by :data:`MARGIN` standard errors. A student graded on queries
it was trained on would grade itself (measured: its judged AP rises to the student alone, where test MAP is
lowest); one that was not still meets queries ``select`` chose, not a random sample (measured on SciFact: the
student alone led the even average by 0.079 judged MAP, 1.6 SE, and was 0.042 below it on the test queries)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.label_models.few_shot import Choice, choose
from weakrank.lists import average_precisions
from weakrank.ranker.fused import average_views
from weakrank.ranker.ranking import RanksPassages
from weakrank.ranker.teacher import Teacher

EVEN = 0.5
MARGIN = 2.0  # standard errors of the paired AP difference by which another weight must lead the even average
WEIGHTS = (EVEN, 0.0, 0.25, 0.75, 1.0)  # the student's weight; the even average first, kept unless beaten


def weight_name(weight: float) -> str:
    """How a student weight is named in a choice's reason and its MAP table."""
    return f"student weight {weight:g}"


def mix_aps(student: np.ndarray, teacher: np.ndarray, groups: np.ndarray, gold: np.ndarray) -> pd.DataFrame:
    """AP on each judged list (rows; ``gold`` 1/0 on judged pairs, NaN elsewhere) of the shipped ranker at each
    student weight of :data:`WEIGHTS` (columns)."""
    return pd.DataFrame({weight_name(w): average_precisions(average_views(teacher, student, groups, w), groups, gold)
                         for w in WEIGHTS})


def choose_student_weight(student: RanksPassages, teacher: Teacher, pairs: pd.DataFrame) -> tuple[float, Choice, dict]:
    """The student's weight chosen on ``pairs`` (``query_id, passage_id, query, passage, judged``: the whole lists of
    judged queries the student never trained on, ``judged`` 1/0 or NaN), the choice, and each weight's MAP there."""
    pairs = pairs.reset_index(drop=True)
    groups = pairs["query_id"].to_numpy()
    scores = student.predict(list(zip(pairs["query"], pairs["passage"])), batch_size=64)
    aps = mix_aps(np.asarray(scores, dtype=np.float64), teacher.score_frame(pairs), groups,
                  pd.to_numeric(pairs["judged"], errors="coerce").to_numpy(float))
    choice = choose(aps, MARGIN, baseline=weight_name(EVEN), kept=f"the even average ({weight_name(EVEN)})")
    weight = WEIGHTS[list(aps.columns).index(choice.name)]
    return weight, choice, {name: float(value) for name, value in aps.mean().items()}


def ship(teacher: Teacher, *directories: str | Path, student_weight: float = EVEN, mix: dict | None = None) -> list[Path]:
    """Write ``teacher`` beside the student saved in each of ``directories``, the student's weight in the shipped
    ranker with it (``mix``: how it was chosen, for a person); returns the teacher files written."""
    return [teacher.save(directory, student_weight=student_weight, mix=mix) for directory in directories]
