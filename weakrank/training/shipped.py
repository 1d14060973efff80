"""Shipping a trained student with its teacher: :func:`ship` writes a fitted
:class:`~weakrank.ranker.teacher.Teacher` (:func:`weakrank.stages.train.run_teacher` fits one on a run directory)
beside the student, with the student's weight in the shipped ranker (:mod:`weakrank.ranker.fused`), so that
:func:`weakrank.ranker.load_ranker` loads it.

The weight is 0.5 (an even average) unless a person's judgments show another clearly ahead
(:func:`choose_student_weight`): on judged queries the student has not trained on (judged mode holds them out of
the first ``judged_after`` of its steps and saves the student then), each weight of :data:`WEIGHTS` is graded by
its AP estimated from the judged sample (:mod:`weakrank.judged.estimate`: each pair weighted by the inverse of its
inclusion probability), and the rule that chooses the teacher (:mod:`weakrank.judged.rule`) keeps 0.5 unless one is
clearly ahead. A student graded on queries it was trained on would grade itself (measured: its judged AP rises to
the student alone, where test MAP is lowest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.combinations import ChoiceRecord
from weakrank.judged.estimate import Totals, estimate, query_totals
from weakrank.judged.rule import Choice, choose
from weakrank.ranker.fused import average_views
from weakrank.ranker.ranking import RanksPassages
from weakrank.ranker.teacher import Teacher

EVEN = 0.5
WEIGHTS = (EVEN, 0.0, 0.25, 0.75, 1.0)  # the student's weight; the even average first, kept unless beaten


def weight_name(weight: float) -> str:
    """How a student weight is named in a choice's reason and its MAP table."""
    return f"student weight {weight:g}"


def mix_totals(student: np.ndarray, teacher: np.ndarray, groups: np.ndarray, judged: np.ndarray,
               inclusion: np.ndarray) -> Totals:
    """The estimated totals (:func:`~weakrank.judged.estimate.query_totals`) on each judged list (``judged`` 1/0 on
    judged pairs, NaN elsewhere, each judged with probability ``inclusion``) of the shipped ranker at each student
    weight of :data:`WEIGHTS`."""
    scores = pd.DataFrame({weight_name(w): average_views(teacher, student, groups, w) for w in WEIGHTS})
    return query_totals(scores, groups, judged, inclusion)


def choose_student_weight(student: RanksPassages, teacher: Teacher, pairs: pd.DataFrame) -> tuple[float, Choice, dict]:
    """The student's weight chosen on ``pairs`` (``query_id, passage_id, query, passage, judged``: the whole lists of
    judged queries the student never trained on, ``judged`` 1/0 or NaN; ``judged_inclusion`` and ``judged_weight``,
    the sample's design, where the judgments came with one), the choice, and each weight's estimated MAP there."""
    pairs = pairs.reset_index(drop=True)
    groups = pairs["query_id"].to_numpy()
    scores = student.predict(list(zip(pairs["query"], pairs["passage"])), batch_size=64)
    judged = pd.to_numeric(pairs["judged"], errors="coerce").to_numpy(float)
    inclusion = (pairs["judged_inclusion"].to_numpy(float) if "judged_inclusion" in pairs.columns
                 else np.where(np.isfinite(judged), 1.0, np.nan))
    weights = (pairs[np.isfinite(judged)].groupby("query_id")["judged_weight"].first()
               if "judged_weight" in pairs.columns else None)
    totals = mix_totals(np.asarray(scores, dtype=np.float64), teacher.score_frame(pairs), groups, judged, inclusion)
    choice = choose(estimate(totals, weights, weight_name(EVEN)), kept=f"the even average ({weight_name(EVEN)})")
    weight = WEIGHTS[list(totals.found.columns).index(choice.name)]
    return weight, choice, choice.estimates


def ship(teacher: Teacher, *directories: str | Path, student_weight: float = EVEN,
         mix: ChoiceRecord | None = None) -> list[Path]:
    """Write ``teacher`` beside the student saved in each of ``directories``, the student's weight in the shipped
    ranker with it (``mix``: how it was chosen, for a person); returns the teacher files written."""
    return [teacher.save(directory, student_weight=student_weight, mix=mix) for directory in directories]
