"""Training instances from labels: anchors (query, positive) and, per batch, sampled negatives; or, for
listwise distillation, groups of a query's candidates with the label model's scores.

Weak mode reads ``label``/``confidence`` (and ``score``, the label model's ranking score) of
labels.parquet; supervised mode reads ``gold`` with confidence 1. A triplet's confidence is the geometric
mean of its two pairs' confidences. A pair is a negative only when labelled 0 with confidence ≥
``min_confidence`` and at least one LF voted on it: a pair on which every LF abstained is unlabelled. A
boosted query (``boosted``: ids the caller names; a person judged them) is always kept and repeated until the
boosted queries make up ``boost_share`` of an epoch (:func:`repeats`). An epoch can leave queries out
(:meth:`TrainingData.epoch_order`: a hold-out callback does, until they join training).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from weakrank.errors import DataError
from weakrank.lists import minmax_over, standardize_within
from weakrank.training.batches import Batch, ListBatch
from weakrank.training.samplers import NegativeSampler, QueryList


def confident_lists(lists: dict[str, QueryList], fraction: float) -> set[str]:
    """The ids of the ``fraction`` of ``lists`` whose teacher is surest of its top candidate: the largest
    margins between the top two standardised teacher scores (ties kept; a one-candidate list has margin 0)."""
    if fraction >= 1.0:
        return set(lists)
    margins = pd.Series({qid: np.diff(np.sort(ql.teacher)[-2:]).sum() for qid, ql in lists.items()}, dtype=float)
    return set(margins.index[margins >= margins.quantile(1.0 - fraction)])


def repeats(boosted: int, others: int, share: float) -> int:
    """How many times each of ``boosted`` units is put in an epoch beside ``others`` so that the boosted ones make
    up about ``share`` of it; at least once (a small split whose boosted queries are that share already: once)."""
    if not boosted or share <= 0:
        return 1
    return max(1, round(share * others / ((1 - share) * boosted)))


class TrainingData:
    """The labelled lists of one split, with texts, ready to yield batches."""

    def __init__(
        self,
        labels: pd.DataFrame,
        queries: pd.DataFrame,
        passages: pd.DataFrame,
        split: str,
        supervised: bool = False,
        ns_lf: str | None = "bm25",
        min_confidence: float = 0.0,
        list_fraction: float = 1.0,
        boosted: Collection[str] = (),
        boost_share: float = 0.0,
    ) -> None:
        self.supervised = supervised
        rows = labels[labels["split"] == split]
        if rows.empty:
            raise DataError(f"no labelled pairs in split {split!r}", field="split")
        if supervised:
            rows = rows.dropna(subset=["gold"]).assign(
                label=lambda d: d["gold"].astype(int), confidence=1.0, score=lambda d: d["gold"].astype(float)
            )
        elif not {"label", "confidence"} <= set(rows.columns):
            raise DataError("labels lack 'label'/'confidence' columns (run `weakrank aggregate`)", field="label")
        if ns_lf is not None and f"score_{ns_lf}" not in rows.columns:
            raise DataError(
                f"the negative-sampler score 'score_{ns_lf}' is missing: the BM25 sampler and WSLS need it; add the "
                f"{ns_lf!r} LF to [label] lfs or name another LF in [train] ns_lf", field=f"score_{ns_lf}")
        label = rows["label"].to_numpy(dtype=np.int64)
        negative = (label == 0) & (rows["confidence"].to_numpy(float) >= min_confidence)
        vote_cols = [c for c in rows.columns if c.startswith("vote_")]
        if vote_cols and not supervised:
            negative &= (rows[vote_cols].to_numpy() != 0).any(axis=1)
        rows = rows.assign(role=np.where(label == 1, 1, np.where(negative, 0, -1)))
        teacher = rows["score"] if "score" in rows.columns else rows.get("p_relevant", rows["label"])
        teacher = standardize_within(teacher.to_numpy(float).reshape(-1, 1), rows["query_id"].to_numpy())[:, 0]
        rows = rows.assign(teacher=teacher)
        self.query_text = queries.set_index("query_id")["text"].to_dict()
        self.passage_text = passages.set_index("passage_id")["text"].to_dict()
        self.lists: dict[str, QueryList] = {}
        for qid, g in rows.groupby("query_id", sort=False):
            roles = g["role"].to_numpy()
            ns = g[f"score_{ns_lf}"].to_numpy(float) if ns_lf is not None else np.zeros(len(g))
            self.lists[qid] = QueryList(
                qid, g["passage_id"].to_numpy(), roles, g["confidence"].to_numpy(float), minmax_over(ns, roles == 0),
                g["teacher"].to_numpy(),
            )
        self.boosted = set(boosted) & set(self.lists)
        kept = confident_lists(self.lists, list_fraction) | self.boosted
        self.anchors = [
            (qid, int(i)) for qid, ql in self.lists.items() if qid in kept for i in np.flatnonzero(ql.labels == 1)
        ]
        self.list_ids = [qid for qid, ql in self.lists.items()
                         if qid in kept and len(ql.passage_ids) > 1 and ql.teacher.std() > 0]
        # boosted lists (a person's judgments) are a handful among thousands: each seen more often, as boost_share says
        mine = ([a for a in self.anchors if a[0] in self.boosted], [q for q in self.list_ids if q in self.boosted])
        for units, theirs in zip((self.anchors, self.list_ids), mine):
            units += theirs * (repeats(len(theirs), len(units) - len(theirs), boost_share) - 1)
        self.split = split

    def units(self, listwise: bool = False, leave_out: Collection[str] = ()) -> list:
        """What an epoch goes over: the anchors, or (``listwise``) the ids of the lists the teacher ranks; none of
        the queries of ``leave_out``."""
        units = self.list_ids if listwise else self.anchors
        if not leave_out:
            return units
        return [u for u in units if (u if listwise else u[0]) not in leave_out]

    def steps_per_epoch(self, batch_size: int, listwise: bool = False) -> int:
        """Optimiser steps in one pass over :meth:`units` at ``batch_size``."""
        return -(-len(self.units(listwise)) // batch_size)

    def epoch_order(self, seed: int, epoch: int, listwise: bool = False, leave_out: Collection[str] = ()) -> list:
        """The anchors (or, ``listwise``, the query ids) of an epoch, shuffled reproducibly (:meth:`units`)."""
        units = self.units(listwise, leave_out)
        order = np.random.default_rng([seed, epoch]).permutation(len(units))
        return [units[i] for i in order]

    def list_batch(self, query_ids: Sequence[str], group_size: int, rng: np.random.Generator) -> ListBatch:
        """Per query: the teacher's top candidate and ``group_size − 1`` others drawn uniformly."""
        queries, passages, teacher = [], [], []
        for qid in query_ids:
            ql = self.lists[qid]
            top = int(np.argmax(ql.teacher))
            rest = np.delete(np.arange(len(ql.passage_ids)), top)
            pick = np.r_[top, rng.choice(rest, size=min(group_size - 1, len(rest)), replace=False)]
            queries.append(self.query_text[qid])
            passages.append([self.passage_text[p] for p in ql.passage_ids[pick]])
            teacher.append(ql.teacher[pick].astype(np.float32))
        return ListBatch(queries, passages, teacher)

    def batch(
        self, anchors: Sequence[tuple[str, int]], sampler: NegativeSampler, n_neg: int, rng: np.random.Generator
    ) -> Batch:
        """Triplets of ``anchors`` with ``n_neg`` negatives each from ``sampler`` (anchors without any are dropped)."""
        q, p, n, conf_p, conf_n, ns = [], [], [], [], [], []
        for qid, i in anchors:
            ql = self.lists[qid]
            for neg in sampler.sample(ql, n_neg, rng):
                q.append(self.query_text[qid])
                p.append(self.passage_text[ql.passage_ids[i]])
                n.append(self.passage_text[neg.passage_id])
                conf_p.append(ql.confidences[i])
                conf_n.append(neg.confidence)
                ns.append(neg.ns_score)
        cp, cn = np.asarray(conf_p, dtype=np.float32), np.asarray(conf_n, dtype=np.float32)
        return Batch(q, p, n, np.sqrt(cp * cn), np.asarray(ns, dtype=np.float32), cp, cn)
