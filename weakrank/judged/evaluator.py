"""Judged mode's evaluator, handed to the trainer as any other (:mod:`weakrank.training.evaluators`): the model's
MAP over the whole lists of the judged queries, estimated from their judged sample
(:func:`sample_estimate`), never read as gold; and the judged lists it ranks, taken from a
labels table (:func:`judged_pairs`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from weakrank.dataset import Dataset
from weakrank.evaluation.sampled_map import Estimate, estimate, query_totals

DESIGN = ("judged_inclusion", "judged_weight")  # the sample's design columns of a labels table, where it has them


class Scorer(Protocol):
    """A model that scores (query, passage) pairs: a ranker of either architecture."""

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> Any:
        """One score a pair."""
        ...


class JudgedEstimateEvaluator:
    """The model's MAP over the whole lists of the judged queries, estimated from their judged sample (``pairs``:
    ``query_id, passage_id, query, passage, judged``, with the design's ``judged_inclusion`` and ``judged_weight``
    where it has one; :func:`sample_estimate`): ``dev_judged_map``, over
    ``dev_judged_queries`` queries with a relevant passage."""

    primary_metric = "dev_judged_map"

    def __init__(self, pairs: pd.DataFrame, batch_size: int = 64) -> None:
        self.pairs, self.batch_size = pairs.reset_index(drop=True), batch_size

    def __call__(self, model: Scorer, temperature: float) -> dict[str, float]:
        """The estimate of the model's ranking of the judged lists (``temperature`` unused)."""
        texts = list(zip(self.pairs["query"], self.pairs["passage"], strict=True))
        scores = pd.DataFrame({"model": np.asarray(model.predict(texts, batch_size=self.batch_size), dtype=float)})
        found = sample_estimate(self.pairs, scores)
        return {"dev_judged_map": float(found.map["model"]), "dev_judged_queries": found.queries}

    @staticmethod
    def describe(figures: dict[str, float]) -> tuple[dict[str, float], str]:
        """Every figure, against the judged sample."""
        return figures, ("Measured on the judged queries (judged mode): MAP over their whole lists estimated from "
                         "the judged sample, not against full qrels.")


def judged_pairs(table: pd.DataFrame, queries: Sequence[str], dataset: Dataset, dev_split: str) -> pd.DataFrame:
    """The whole lists of the judged queries (``queries``, a labels record's) of labels ``table`` that choose the
    checkpoint, with texts and judgments (``judged``, and the sample's design where it has one): with a judging
    file, its queries of ``dev_split``; with ``gold_queries``, every judged query, its gold as its judgments."""
    rows = table[table["query_id"].isin(set(queries))]
    return judged_lists(rows[rows["split"] == dev_split] if "judged" in rows.columns else
                        rows.assign(judged=rows["gold"]), dataset)


def judged_lists(rows: pd.DataFrame, dataset: Dataset) -> pd.DataFrame:
    """The whole lists of the queries of labels ``rows`` with a judged pair, with texts and judgments (``judged``,
    and the sample's design where it has one)."""
    rows = rows[rows["query_id"].isin(set(rows.loc[rows["judged"].notna(), "query_id"]))]
    design = [c for c in DESIGN if c in rows.columns]
    return dataset.pairs().merge(rows[["query_id", "passage_id", "judged", *design]], on=["query_id", "passage_id"])


def judged_evaluator(table: pd.DataFrame, queries: Sequence[str], dataset: Dataset,
                     dev_split: str) -> JudgedEstimateEvaluator | None:
    """The evaluator that picks the checkpoint of a run trained on labels ``table`` whose record names judged
    ``queries``: the estimate on their lists (:func:`judged_pairs`); None where no judged query has one (or none
    is named): the run is measured as a plain one."""
    pairs = judged_pairs(table, queries, dataset, dev_split) if queries else None
    return JudgedEstimateEvaluator(pairs) if pairs is not None and len(pairs) else None


def sample_estimate(pairs: pd.DataFrame, scores: pd.DataFrame, baseline: str | None = None) -> Estimate:
    """:func:`~weakrank.evaluation.sampled_map.estimate` of each column of ``scores`` (a candidate's score of each row
    of ``pairs``) from the judged sample ``pairs`` holds: ``query_id`` and ``judged`` (1/0, NaN unjudged: whole lists),
    with ``judged_inclusion`` and ``judged_weight`` (the sample's design) where the judgments came with one (else every
    judged pair and query counts once)."""
    pairs = pairs.reset_index(drop=True)
    judged = pd.to_numeric(pairs["judged"], errors="coerce").to_numpy(float)
    inclusion = (pairs["judged_inclusion"].to_numpy(float) if "judged_inclusion" in pairs.columns
                 else np.where(np.isfinite(judged), 1.0, np.nan))
    weights = (pairs[np.isfinite(judged)].groupby("query_id")["judged_weight"].first()
               if "judged_weight" in pairs.columns else None)
    totals = query_totals(scores.reset_index(drop=True), pairs["query_id"].to_numpy(), judged, inclusion)
    return estimate(totals, weights, baseline)
