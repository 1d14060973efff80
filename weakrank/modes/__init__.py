"""The modes a run trains in, as plug-ins of the train stage: one object per run, built once from its labels
(:func:`training_mode`), offering the hooks the stage calls (the evaluator that picks the checkpoint, the trainer
callbacks, the model card's lines, the student's weight in the shipped ranker after training and what its files keep
of it), so that the stage names no mode. :class:`TrainingMode` is the label-free one, every hook a no-op; judged
mode, where a person judged some queries, is :class:`weakrank.modes.judged.JudgedMode`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from weakrank.dataset import Dataset

if TYPE_CHECKING:
    from weakrank.label_models.labels_file import LabelsInfo
    from weakrank.ranker.teacher import Teacher
    from weakrank.training.callbacks import TrainerCallback
    from weakrank.training.config import TrainConfig
    from weakrank.training.evaluators import Evaluator


class TrainingMode:
    """A run on labels no person judged: no query of its own to repeat (``boosted``), and every hook a no-op."""

    boosted: frozenset[str] = frozenset()  # training queries a person judged, repeated to boost_share of an epoch
    boost_share: float = 0.0

    def evaluator(self) -> Evaluator | None:
        """The evaluator that picks the checkpoint (None: the stage's own, dev lists or the start check)."""
        return None

    def callbacks(self) -> list[TrainerCallback]:
        """The trainer callbacks of the mode."""
        return []

    def card(self) -> dict[str, Any]:
        """What the model card says of the mode."""
        return {}

    def student_weight(self, model: Path, teacher: Teacher, earned: float) -> float:
        """The student's weight in the shipped ranker of trained ``model`` and its ``teacher``: ``earned``, the weight
        earned without judgments."""
        return earned

    def shipped_notes(self) -> tuple[dict[str, Any], list[str]]:
        """What the shipped ranker's files keep of the mode's choices, once :meth:`student_weight` made them: fields of
        its ``weakrank_fusion.json`` (its teacher state's ``notes``) and lines of its model card; none."""
        return {}, []


def training_mode(table: pd.DataFrame, info: LabelsInfo, dataset: Dataset, tc: TrainConfig) -> TrainingMode:
    """The mode of a run as ``tc`` says on labels ``table`` (with record ``info``) over ``dataset``: judged mode where
    the record names judged queries (:attr:`~weakrank.label_models.labels_file.LabelsInfo.judged_queries`), else
    label-free."""
    if not info.judged_queries:
        return TrainingMode()
    from weakrank.modes.judged import JudgedMode

    return JudgedMode(table, info.judged_queries, dataset, tc)
