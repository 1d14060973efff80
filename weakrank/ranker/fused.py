"""The shipped ranker: the trained student averaged with its teacher, the fusion label model over the LFs.

A trained model directory holds the student (a cross-encoder or bi-encoder that loads alone, also as
``CrossEncoder(dir)``) and, when it was trained with ``fuse_lfs``, its :class:`~weakrank.ranker.teacher.Teacher`.
Loading it runs no code of its own unless the caller trusts it (:meth:`FusedRanker.load`).
:func:`weakrank.ranker.load_ranker` returns a :class:`FusedRanker` for such a directory. Its scores are those of
``weakrank rerank`` with ``fuse_lfs``: per query, the student's scores and the teacher's fused LF scores, each
standardised over the query's list, averaged (:func:`average_views`; the student weighing
:data:`~weakrank.fusion_state.STUDENT_WEIGHT` unless a person's judgments chose its weight,
:mod:`weakrank.judged.student_weight`). They compare candidates of one list only.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from weakrank.errors import LeftOutWarning
from weakrank.fusion_state import STUDENT_WEIGHT
from weakrank.lists import standardize_within
from weakrank.ranker.ranking import RanksPassages
from weakrank.ranker.student import load_student
from weakrank.ranker.teacher import Teacher
from weakrank.ranker.teacher_state import FUSION_FILE, read_teacher_state


def average_views(teacher: np.ndarray, ranker: np.ndarray, groups: np.ndarray,
                  student_weight: float = STUDENT_WEIGHT) -> np.ndarray:
    """The weighted mean of two scores of the same pairs, each standardised within its group (query): ``ranker``'s
    weight ``student_weight``, ``teacher``'s the rest.

    The student is not one more LF of the fusion model: it learned from that fusion, so its agreement with the
    LFs is theirs, and the factor model would count it twice (measured: one more LF gave WikiQA 0.683, below its
    labels' 0.688; the average 0.694). Two views and no gold: the student's weight is at most a constant fitted on dev
    splits (:data:`~weakrank.fusion_state.STUDENT_WEIGHT`), a bi-encoder's earned on held-out lists by how much closer
    to its teacher it came than its start (:func:`~weakrank.training.start_check.earned_weight`)."""
    views = standardize_within(np.column_stack([teacher, ranker]).astype(np.float64), groups)
    return views @ np.array([1.0 - student_weight, student_weight])


class FusedRanker(RanksPassages):
    """A student and its :class:`~weakrank.ranker.teacher.Teacher`, scored together list by list, the student's
    standardised scores weighted ``student_weight`` and the teacher's the rest (``notes``: what its file kept beside
    them, saved again with them)."""

    def __init__(self, student: RanksPassages, teacher: Teacher, student_weight: float = STUDENT_WEIGHT,
                 notes: Mapping[str, Any] | None = None) -> None:
        self.student, self.teacher, self.student_weight = student, teacher, student_weight
        self.notes = dict(notes or {})

    def remembering(self) -> AbstractContextManager[None]:
        """The student's (:meth:`~weakrank.ranker.ranking.RanksPassages.remembering`)."""
        return self.student.remembering()

    @property
    def lfs(self) -> list:
        """The teacher's LFs."""
        return self.teacher.lfs

    def score_frame(self, pairs: pd.DataFrame, batch_size: int = 64) -> np.ndarray:
        """Scores of the rows of ``pairs`` (``query_id, passage_id, query, passage``); a list is a ``query_id``."""
        if pairs.empty:
            return np.zeros(0)
        pairs = pairs.reset_index(drop=True)
        zero = np.zeros(len(pairs))  # a view of weight 0 is not run
        student = (self.student.predict(list(zip(pairs["query"], pairs["passage"])), batch_size=batch_size)
                   if self.student_weight > 0 else zero)
        teacher = self.teacher.score_frame(pairs) if self.student_weight < 1 else zero
        return average_views(teacher, student, pairs["query_id"].to_numpy(), self.student_weight)

    def blends(self, pairs: pd.DataFrame, weights: Sequence[float], batch_size: int = 64) -> np.ndarray:
        """Scores of the rows of ``pairs`` (as :meth:`score_frame`) at each student weight of ``weights``, a column
        each, the student and the teacher run once (what :class:`~weakrank.judged.student_weight.StudentWeightSelector`
        chooses among); this ranker's own weight is not read."""
        pairs = pairs.reset_index(drop=True)
        student = np.asarray(self.student.predict(list(zip(pairs["query"], pairs["passage"])), batch_size=batch_size),
                             dtype=np.float64)
        teacher, groups = self.teacher.score_frame(pairs), pairs["query_id"].to_numpy()
        return np.column_stack([average_views(teacher, student, groups, w) for w in weights])

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64,
                groups: Sequence[str] | None = None) -> np.ndarray:
        """Scores of ``(query, passage)`` pairs; a list is the pairs of one query text (or of one ``groups`` id)."""
        queries, passages = [q for q, _ in pairs], [p for _, p in pairs]
        frame = pd.DataFrame({"query_id": list(groups) if groups is not None else queries,
                              "passage_id": [f"p{i}" for i in range(len(pairs))], "query": queries, "passage": passages})
        return self.score_frame(frame, batch_size)

    def save(self, directory: str | Path) -> Path:
        """Write the student and its teacher into ``directory``; :meth:`load` (and :func:`load_ranker`) read it."""
        self.student.save(directory)
        self.teacher.save(directory, student_weight=self.student_weight, notes=self.notes)
        return Path(directory)

    @classmethod
    def load(cls, directory: str | Path, trust_code: bool = False, device: str | None = None,
             backend: str = "torch", precision: str = "fp32") -> RanksPassages:
        """The shipped ranker saved in ``directory``: its student (run by ``backend`` at ``precision``,
        :func:`load_student`) with the teacher, whose encoder LFs run at that precision too where they can
        (:func:`~weakrank.lf.factory_precisions`). The teacher's state is checked as untrusted input
        (:func:`~weakrank.ranker.teacher_state.read_teacher_state`); built-in LFs are rebuilt from their options and
        saved arrays alone. A user's LF runs the file it names in the directory's ``lfs/``, and a built-in LF reads
        a model folder outside the directory, only with ``trust_code``; without it the student is returned alone,
        with a warning (:class:`UntrustedCodeWarning`, which the command line shows even with ``--quiet``)."""
        from labeling_functions import BUILTIN

        directory = Path(directory)
        student = load_student(directory, device, backend, precision)
        state = read_teacher_state(directory, set(BUILTIN))
        code = [str(lf.code) for lf in state.lfs if lf.code is not None]
        outside = [f"{FUSION_FILE}: {place}" for lf in state.lfs for place in lf.outside]
        if (code or outside) and not trust_code:
            needs = [f"runs Python code ({', '.join(code)})"] if code else []
            needs += [f"reads a model outside the directory ({', '.join(outside)})"] if outside else []
            warnings.warn(f"{directory}: its teacher {' and '.join(needs)}; loaded as the student alone. Pass "
                          "trust_code=True (`--trust-code`) if you trust it.", UntrustedCodeWarning, stacklevel=2)
            return student
        return cls(student, Teacher.from_checked(directory, state, precision), state.student_weight, state.notes)


class UntrustedCodeWarning(LeftOutWarning):
    """A model directory's teacher needs code (or a model folder outside the directory) that the caller did not
    trust: the student is used alone."""

