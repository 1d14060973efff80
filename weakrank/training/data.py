"""Training instances from labels: anchors (query, positive) and, per batch, sampled negatives.

Weak mode reads ``label``/``confidence`` of labels.parquet; supervised mode reads ``gold`` with
confidence 1. A triplet's confidence is the geometric mean of its two pairs' confidences.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from weakrank.errors import DataError
from weakrank.training.samplers import NegativeSampler, QueryList


@dataclass(frozen=True)
class Batch:
    """Texts and targets of one training batch: triplets (pos/neg) or pointwise pairs."""

    queries: list[str]
    positives: list[str]
    negatives: list[str]
    confidence: np.ndarray  # per triplet: sqrt(c+ · c−)
    ns_score: np.ndarray  # negative's normalised sampler score
    pos_confidence: np.ndarray
    neg_confidence: np.ndarray


def minmax_within(values: pd.Series, groups: pd.Series) -> np.ndarray:
    """Min-max normalisation of ``values`` within each group (0.5 where a group is constant)."""
    by = values.groupby(groups)
    low, high = by.transform("min"), by.transform("max")
    span = (high - low).to_numpy()
    return np.where(span > 0, (values - low).to_numpy() / np.where(span > 0, span, 1), 0.5)


class TrainingData:
    """The labelled lists of one split, with texts, ready to yield batches."""

    def __init__(
        self,
        labels: pd.DataFrame,
        queries: pd.DataFrame,
        passages: pd.DataFrame,
        split: str,
        supervised: bool = False,
    ) -> None:
        rows = labels[labels["split"] == split]
        if rows.empty:
            raise DataError(f"no labelled pairs in split {split!r}", field="split")
        if supervised:
            rows = rows.dropna(subset=["gold"]).assign(label=lambda d: d["gold"].astype(int), confidence=1.0)
        elif not {"label", "confidence"} <= set(rows.columns):
            raise DataError("labels lack 'label'/'confidence' columns (run `weakrank aggregate`)", field="label")
        bm25 = rows["score_bm25"] if "score_bm25" in rows.columns else pd.Series(0.0, index=rows.index)
        rows = rows.assign(bm25_norm=minmax_within(bm25, rows["query_id"]))
        self.query_text = queries.set_index("query_id")["text"].to_dict()
        self.passage_text = passages.set_index("passage_id")["text"].to_dict()
        self.lists: dict[str, QueryList] = {}
        for qid, g in rows.groupby("query_id", sort=False):
            self.lists[qid] = QueryList(
                qid, g["passage_id"].to_numpy(), g["label"].to_numpy(), g["confidence"].to_numpy(float), g["bm25_norm"].to_numpy()
            )
        self.anchors = [
            (qid, int(i)) for qid, ql in self.lists.items() for i in np.flatnonzero(ql.labels == 1)
        ]
        if not self.anchors:
            raise DataError(f"split {split!r} has no pair labelled relevant to train on", field="label")

    def epoch_order(self, seed: int, epoch: int) -> list[tuple[str, int]]:
        """The anchors of an epoch, shuffled reproducibly."""
        order = np.random.default_rng([seed, epoch]).permutation(len(self.anchors))
        return [self.anchors[i] for i in order]

    def batch(self, anchors: Sequence[tuple[str, int]], sampler: NegativeSampler, n_neg: int, rng: np.random.Generator) -> Batch:
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
