"""What judged queries make of a run's labels (the aggregate stage calls :func:`judged_labels` once): the judged
pairs update the fusion model's LF quality priors (:class:`~weakrank.judged.prior_update.PriorSelector`), the judged
pairs' labels become their judgments (``judged``: :func:`with_judgments`), and the labels' record keeps their ids
and splits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.errors import DataError
from weakrank.fusion_state import FusionState
from weakrank.judged.aligned import Judged, align, gold_judgments
from weakrank.judged.checks import check_judgments
from weakrank.judged.judgments import Judgments
from weakrank.judged.prior_update import PriorSelector
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.lists import standardize_within


@dataclass(frozen=True)
class Taught:
    """Labels taught by judged queries: the ``labels`` table, the fusion ``state`` they were fitted under, the ids of
    the judged queries with a relevant passage (``queries``), the splits every judged query is of (``splits``), the
    line that counts the judged pairs used (``note``; None for ``gold_queries``) and the fusion model as fitted
    before the judgments moved anything (``unjudged``: what the run's advice and ``analyze`` read, not fitted again)."""

    labels: pd.DataFrame
    state: FusionState
    queries: list[str]
    splits: list[str]
    note: str | None
    unjudged: ScoreFusionModel


def judged_labels(votes: pd.DataFrame, model: ScoreFusionModel, judgments: Judgments | None, dataset: Path,
                  evaluated: str, gold_split: str, gold_queries: int, votes_file: Path) -> Taught | None:
    """The labels of ``votes`` that ``judgments`` (read by the stage's check) teach the fusion ``model`` after they
    are checked against the ``dataset``'s texts and the votes (:func:`~weakrank.judged.checks.check_judgments`:
    none of the ``evaluated`` split); without judgments, those that the first ``gold_queries`` queries of
    ``gold_split`` with gold teach (their gold as judgments; too few is a :class:`DataError` naming ``votes_file``);
    None where neither is asked for: the labels are the model's alone."""
    if judgments is not None:
        note = check_judgments(judgments, votes, dataset, evaluated)
        judged = align(votes, judgments)
        selector = PriorSelector(model).fit(votes, judged)
        return Taught(with_judgments(selector.model_.labels_table(votes), judged), selector.state_,
                      list(dict.fromkeys(votes.loc[judged.gold > 0, "query_id"])),
                      sorted(set(votes.loc[np.isfinite(judged.gold), "split"].astype(str))), note, selector.unjudged_)
    if not gold_queries:
        return None
    gold = gold_judgments(votes, gold_split, gold_queries)
    if len(gold.queries) < gold_queries:
        raise DataError(f"[aggregate] gold_queries = {gold_queries}, but split {gold_split!r} has {len(gold.queries)} "
                        "queries judged with a relevant and a non-relevant candidate", file=votes_file, field="gold")
    selector = PriorSelector(model).fit(votes, align(votes, gold))
    return Taught(selector.model_.labels_table(votes), selector.state_, gold.queries, [gold_split], None,
                  selector.unjudged_)


JUDGED_LEAD = 3.0  # standard deviations of a list's label score that a judged pair is put above (below) the rest


def with_judgments(labels: pd.DataFrame, judged: Judged) -> pd.DataFrame:
    """A labels table whose judged pairs carry their judgments: ``judged`` holds them (1/0, NaN unjudged; with
    ``judged_inclusion`` and ``judged_weight``, the sample's design, for grading the student on them),
    their label and P(relevant) become them with confidence 1, and their ``score`` (what a student distils) puts a
    relevant pair :data:`JUDGED_LEAD` list standard deviations above the list's best pseudo-labelled score and a
    non-relevant one as far below its worst."""
    gold = judged.gold
    judged_rows = np.isfinite(gold)
    z = standardize_within(labels["score"].to_numpy(float).reshape(-1, 1), labels["query_id"].to_numpy())[:, 0]
    by = pd.Series(z).groupby(labels["query_id"].to_numpy(), sort=False)
    top, bottom = by.transform("max").to_numpy(), by.transform("min").to_numpy()
    score = np.where(judged_rows, np.where(gold > 0, top + JUDGED_LEAD, bottom - JUDGED_LEAD), z)
    return labels.assign(
        judged=gold, judged_inclusion=judged.inclusion,
        judged_weight=labels["query_id"].map(judged.weights).where(judged_rows).to_numpy(float), score=score,
        p_relevant=np.where(judged_rows, gold, labels["p_relevant"]),
        label=np.where(judged_rows, gold, labels["label"]).astype(labels["label"].dtype),
        confidence=np.where(judged_rows, 1.0, labels["confidence"]),
    )
