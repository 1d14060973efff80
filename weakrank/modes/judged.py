"""Judged mode in training, the plug-in of the train stage where a person judged some queries
(:class:`JudgedMode`): the judged estimate picks the checkpoint, the judged training queries are held out of the
first steps (:class:`~weakrank.modes.hold_out.HoldOut`), and the student's weight in the shipped ranker is chosen on
the judged queries it had not trained on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.judged.evaluator import JudgedEstimateEvaluator, judged_evaluator
from weakrank.judged.student_weight import choose_student_weight
from weakrank.modes import TrainingMode
from weakrank.modes.hold_out import HoldOut
from weakrank.records import StudentWeightRecord

if TYPE_CHECKING:
    from weakrank.ranker.teacher import Teacher
    from weakrank.training.callbacks import TrainerCallback
    from weakrank.training.config import TrainConfig


class JudgedMode(TrainingMode):
    """A run as ``tc`` says on labels ``table`` over ``dataset``, whose record names the judged ``queries``; its
    ``boosted`` training queries, repeated to ``[train] judged_share`` of an epoch, are those of the table's ``judged``
    column (a judging file's: none where gold stood in for judgments)."""

    def __init__(self, table: pd.DataFrame, queries: Sequence[str], dataset: Dataset, tc: TrainConfig) -> None:
        self.table, self.queries, self.dataset, self.tc = table, list(queries), dataset, tc
        judged = table.loc[table["judged"].notna(), "query_id"] if "judged" in table.columns else ()
        self.boosted, self.boost_share = frozenset(judged), tc.judged_share
        self.hold_out = HoldOut(self.boosted, tc.judged_after)
        self.record_: StudentWeightRecord | None = None

    def evaluator(self) -> JudgedEstimateEvaluator | None:
        """The judged estimate on the judged queries' lists (:func:`~weakrank.judged.evaluator.judged_evaluator`)."""
        return judged_evaluator(self.table, self.queries, self.dataset, self.tc.dev_split)

    def callbacks(self) -> list[TrainerCallback]:
        """The hold-out of the judged training queries."""
        return [self.hold_out]

    def card(self) -> dict[str, Any]:
        """The judged queries."""
        return {"judged queries": self.queries}

    def student_weight(self, model: Path, teacher: Teacher, earned: float) -> float:
        """The weight chosen on the judged queries the graded student has not trained on: the one saved before they
        joined training, else trained ``model`` (:func:`~weakrank.judged.student_weight.choose_student_weight`),
        ``earned`` kept unless another is clearly ahead; its record is kept (``record_``)."""
        from weakrank.ranker import load_student
        from weakrank.ranker.fused import FusedRanker

        student = self.hold_out.student
        weight, self.record_ = choose_student_weight(self.table, self.dataset, student is not None, self.tc.train_split,
                                                     lambda: FusedRanker(load_student(student or model), teacher),
                                                     earned)
        return weight

    def shipped_notes(self) -> tuple[dict[str, Any], list[str]]:
        """The record of the student's weight (under its key, :attr:`~weakrank.records.StudentWeightRecord.saved_as`)
        and its line of the model card, where judged queries chose it."""
        if self.record_ is None:
            return {}, []
        return {self.record_.saved_as: self.record_.to_dict()}, [self.record_.card()]
