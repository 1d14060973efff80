"""LFs bundled for workers: fit once on the driver, pickled to workers, label one partition there.

Data-derived resources (BM25 index, TF-IDF vocabulary) are fitted once on the driver and travel
with the LF, so every worker scores with exactly the same statistics. Resources marked
``per_process`` (sentence-embedding / BERT models) are never pickled: each worker process loads
them once, on first use, and keeps them in a per-process cache for all later partitions, keyed as the
local score cache keys an LF (:func:`~weakrank.labeling.cache_key`: the content of its models, not their
names), so a long-lived worker loads a model changed on disk again.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.engines.partitions import PART, ROW
from weakrank.labeling import CHUNK_SIZE, KEY_COLUMNS, SCORE, VOTE, cache_key, score_lf
from weakrank.lf_scorer import RankingLF
from weakrank.voting import rank_votes

_RESOURCES: dict[str, Any] = {}  # per-process cache of per_process resources, by key


@dataclass(frozen=True)
class LFBundle:
    """The LFs bundled for workers as one object (engines scatter/broadcast it whole, not item by item)."""

    lfs: tuple[RankingLF, ...]
    chunk_size: int = CHUNK_SIZE

    def label(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """:func:`label_partition` with these LFs."""
        return label_partition(pairs, self.lfs, self.chunk_size)


def resource_key(lf: RankingLF) -> str:
    """The key of a per-process resource: :func:`~weakrank.labeling.cache_key` of the LF, with its pickled fit
    function (which holds its options) for the options and no dataset (the resource reads none). It covers the
    content of the models it loads (:func:`~weakrank.encoders.content_hash`), so a model replaced on disk
    between two runs on the same workers is not served from the cache of the first."""
    import cloudpickle

    return cache_key(lf, hashlib.sha1(cloudpickle.dumps(lf.fit_fn)).hexdigest(), "")


def bundle_lfs(lfs: Sequence[RankingLF], dataset: Dataset, chunk_size: int = CHUNK_SIZE) -> LFBundle:
    """Copies of ``lfs`` ready to pickle: data resources fitted on ``dataset``, models left to workers."""
    shipped = []
    for lf in lfs:
        lf = copy.copy(lf)
        if lf.per_process:
            lf.resource_key = resource_key(lf)
        else:
            lf.fit(dataset)
        shipped.append(lf)
    return LFBundle(tuple(shipped), chunk_size)


def on_worker(lfs: Sequence[RankingLF]) -> list[RankingLF]:
    """The LFs with their per-process resources loaded (once per process; ``fit`` gets no dataset)."""
    for lf in lfs:
        if lf.per_process and lf.fit_fn is not None and lf.resource is None:
            key = getattr(lf, "resource_key", None) or resource_key(lf)
            if key not in _RESOURCES:
                _RESOURCES[key] = lf.fit_fn(None)
            lf.resource = _RESOURCES[key]
    return list(lfs)


def spark_schema(names: Sequence[str]) -> str:
    """The Spark DDL schema of a labelled partition."""
    keys = f"{ROW} long, {PART} int, query_id string, passage_id string, split string, rank int, gold tinyint"
    return ", ".join([keys] + [f"{SCORE}{n} double, {VOTE}{n} tinyint" for n in names])


def label_partition(pairs: pd.DataFrame, lfs: Sequence[RankingLF], chunk_size: int = CHUNK_SIZE) -> pd.DataFrame:
    """Scores and votes of every LF on one partition of whole query lists (pairs in ``_row`` order)."""
    lfs = on_worker(lfs)
    pairs = pairs.sort_values(ROW, kind="stable").reset_index(drop=True)
    out = pairs[[ROW, PART, *KEY_COLUMNS]].astype({ROW: "int64", PART: "int32", "rank": "int32", "gold": "Int8"})
    qid = pairs["query_id"].to_numpy()
    for lf in lfs:
        scores = score_lf(lf, pairs, chunk_size)
        out[SCORE + lf.name] = scores
        out[VOTE + lf.name] = rank_votes(scores, qid, lf.rule)
    return out
