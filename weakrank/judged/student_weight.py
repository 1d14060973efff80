"""The student's weight in the shipped ranker, chosen by judged queries the student has not trained on: judged mode's
one call after training (:func:`choose_student_weight`; :mod:`weakrank.modes.judged`): the lists of those queries
(:func:`unseen_pairs`), graded at each weight by :class:`StudentWeightSelector`, a meta-estimator as
:class:`~.prior_update.PriorSelector` is (the estimate of :mod:`~weakrank.evaluation.sampled_map`, the rule of
:mod:`.rule`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Protocol

import numpy as np
import pandas as pd

from weakrank.dataset import Dataset
from weakrank.fusion_state import STUDENT_WEIGHT
from weakrank.judged.evaluator import judged_lists, sample_estimate
from weakrank.judged.rule import Choice, Rule, choose
from weakrank.records import StudentWeightRecord

WEIGHTS = (0.0, STUDENT_WEIGHT, 0.5, 0.75, 1.0)  # the student's weights graded, after the label-free one (kept unless beaten)


class Blends(Protocol):
    """The base of :class:`StudentWeightSelector`: a shipped ranker (:class:`~weakrank.ranker.fused.FusedRanker`)
    that scores pairs at each student weight."""

    def blends(self, pairs: pd.DataFrame, weights: Sequence[float]) -> np.ndarray:
        """Scores of the rows of ``pairs`` at each of ``weights``, a column each."""


def weight_name(weight: float) -> str:
    """How a student weight is named in a choice's reason and its MAP table."""
    return f"student weight {weight:g}"


class StudentWeightSelector:
    """``fit(pairs)`` chooses the student's weight in ``base`` (the shipped ranker, left as it is) on judged queries the
    student never trained on: each weight of ``weights`` (the first kept unless another is clearly ahead) is graded by
    its MAP estimated from the judged sample, and the rule chooses. Then ``weight_``, ``choice_`` and ``record_`` (the
    choice as a shipped model keeps it, with each weight's estimated MAP and the judged queries).

    ``pairs``: ``query_id, passage_id, query, passage, judged`` (the whole lists of the judged queries; ``judged`` 1/0
    or NaN), with ``judged_inclusion`` and ``judged_weight`` (the sample's design) where the judgments came with one.

    The judged queries the student has not trained on: judged mode holds them out of the first ``judged_after`` of
    training's steps and saves the student then (:func:`unseen_pairs`); each pair of the sample is weighted by the
    inverse of its inclusion probability (:mod:`~weakrank.evaluation.sampled_map`), and the rule is the one that chooses
    the teacher (:mod:`.rule`). A student graded on queries it was trained on would grade itself (measured: its judged
    AP rises to the student alone, where test MAP is lowest)."""

    def __init__(self, base: Blends, label_free: float = STUDENT_WEIGHT, weights: Sequence[float] = WEIGHTS,
                 rule: Rule = Rule()) -> None:
        self.base, self.rule = base, rule
        self.weights = (label_free, *(w for w in weights if w != label_free))
        self.weight_: float | None = None
        self.choice_: Choice | None = None
        self.record_: StudentWeightRecord | None = None

    def fit(self, pairs: pd.DataFrame) -> StudentWeightSelector:
        """Grade and choose (class doc)."""
        pairs = pairs.reset_index(drop=True)
        names = [weight_name(w) for w in self.weights]
        scores = pd.DataFrame(self.base.blends(pairs, self.weights), columns=names)
        self.choice_ = choose(sample_estimate(pairs, scores, names[0]), self.rule,
                              kept=f"the label-free share ({names[0]})")
        self.weight_ = self.weights[names.index(self.choice_.name)]
        seen = np.isfinite(pd.to_numeric(pairs["judged"], errors="coerce").to_numpy(float))
        self.record_ = StudentWeightRecord(self.choice_.name, self.choice_.estimates,
                                           sorted(set(pairs.loc[seen, "query_id"])), self.choice_.reason(),
                                           asdict(self.rule))
        return self


def unseen_pairs(table: pd.DataFrame, dataset: Dataset, held_out: bool, train_split: str) -> pd.DataFrame | None:
    """The whole lists, with texts and judgments, of the judged queries of labels ``table`` that the student graded
    on them has not trained on: every judged query when the student saved before they joined training is graded
    (``held_out``), else those outside ``train_split``; None where there is none (or no judging file made the
    labels)."""
    if "judged" not in table.columns:
        return None
    unseen = table if held_out else table[table["split"] != train_split]
    return judged_lists(unseen, dataset) if unseen["judged"].notna().any() else None


def choose_student_weight(table: pd.DataFrame, dataset: Dataset, held_out: bool, train_split: str,
                          shipped: Callable[[], Blends], label_free: float = STUDENT_WEIGHT
                          ) -> tuple[float, StudentWeightRecord | None]:
    """The student's weight in the shipped ranker of a run trained on labels ``table`` over ``dataset``, and how it
    was chosen: the :class:`StudentWeightSelector` of ``shipped()`` (the shipped ranker, its student the one graded:
    saved before the judged queries joined training when ``held_out``; built only where there is something to
    grade) on :func:`unseen_pairs`, ``label_free`` (the weight earned without judgments) kept unless another is
    clearly ahead; ``label_free`` and None where no judging file made the labels or no judged query is unseen."""
    pairs = unseen_pairs(table, dataset, held_out, train_split)
    if pairs is None:
        return label_free, None
    selector = StudentWeightSelector(shipped(), label_free).fit(pairs)
    return selector.weight_, selector.record_
