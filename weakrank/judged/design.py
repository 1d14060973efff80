"""Which queries, and which of their passages, a person judges: a stratified random sample of the pool's queries over
the rankings the judgments weigh, each query's and each passage's inclusion probability known so that
:mod:`~weakrank.evaluation.sampled_map` can weigh them. No gold is read. The design and its reasoning:
docs/judged-design.md."""

from __future__ import annotations

import zlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from weakrank.combinations import LABEL_FREE, Combination, combined
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names, score_matrix
from weakrank.lists import informative_rows, standardize_within

NEAR_DUPLICATE = 0.6  # word-set Jaccard of two query texts above which the second adds little
STRATA = 3  # answerability strata of the frame
TIED = STRATA  # the stratum of the queries every ranking orders alike
OVERSAMPLE = 2.0  # each stratum's sampling rate over the one below it (fitted with the rule: weakrank.judged.rule)
SAMPLED_PASSAGES = 4  # passages of a query drawn at random below the top of its lists (the rest fixed; fitted too)


@dataclass(frozen=True)
class Pool:
    """The pool's queries as the rankings order them: ``ranked`` (query id → one passage-id list per ranking),
    ``answerable`` (query id → how answerable it looks), ``frame`` (the queries that can be sampled, in the pool's
    order) and ``stratum`` (query id → its stratum, frame queries only: 0 … STRATA − 1 by answerability, TIED)."""

    ranked: dict[str, list[list[str]]]
    answerable: pd.Series
    frame: list[str]
    stratum: dict[str, int]

    def sizes(self) -> np.ndarray:
        """N_h: the frame's queries per stratum."""
        return np.bincount([self.stratum[q] for q in self.frame], minlength=STRATA + 1)


def views(label_free: np.ndarray, informative: np.ndarray, names: Sequence[str]) -> dict[str, Combination]:
    """The rankings a training sample is designed over, those the judgments weigh: ``label_free`` (per-LF weights of
    the factor model) and each LF alone (of the LFs that rank some list: ``informative``, one flag per LF)."""
    speaking = np.asarray(informative, dtype=float)
    found = {LABEL_FREE: Combination("linear", np.asarray(label_free, dtype=float))}
    for i, name in enumerate(names):
        if speaking[i]:
            found[f"{name} alone"] = Combination("linear", np.eye(len(names))[i])
    return found


def candidates(label_free: np.ndarray, informative: np.ndarray, names: Sequence[str]) -> dict[str, Combination]:
    """The combinations an evaluation sample of today's design measures: the :func:`views`, with CombSUM and RRF
    after the label-free weighting where two LFs or more rank some list."""
    found = views(label_free, informative, names)
    speaking = np.asarray(informative, dtype=float)
    if speaking.sum() > 1:
        found = {LABEL_FREE: found.pop(LABEL_FREE), "CombSUM": Combination("linear", speaking),
                 "RRF": Combination("rrf", speaking), **found}
    return found


def candidate_scores(votes: pd.DataFrame, model: ScoreFusionModel, fusions: bool = True
                     ) -> tuple[dict[str, Combination], pd.DataFrame]:
    """The :func:`candidates` (with ``fusions``; else the :func:`views`) of a fitted fusion ``model`` and each one's
    score of every row of ``votes``."""
    scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
    z, informative = standardize_within(scores, groups), informative_rows(scores, groups)
    found = (candidates if fusions else views)(model.lf_weights(scores.shape[1]), informative.any(axis=0),
                                               lf_names(votes))
    return found, pd.DataFrame({name: combined(z, groups, informative, c) for name, c in found.items()})


def rankings(votes: pd.DataFrame, options: dict | None = None, fusions: bool = True
             ) -> tuple[dict[str, list[list[str]]], pd.Series]:
    """Per query of ``votes`` with two candidates or more, its passage ids as each of the :func:`candidates` ranks
    them (without ``fusions``: each of the :func:`views`; the fusion model fitted without gold on every row of
    ``votes``, with ``options``), and how answerable each query looks (docs/judged-design.md)."""
    model = ScoreFusionModel(**(options or {})).fit_table(votes)
    found, scored = candidate_scores(votes, model, fusions)
    scored.insert(0, "passage_id", votes["passage_id"].to_numpy())
    groups = votes["query_id"].to_numpy()
    ranked = {qid: [rows.sort_values(name, ascending=False, kind="stable")["passage_id"].tolist() for name in found]
              for qid, rows in scored.groupby(groups, sort=False) if len(rows) > 1}
    scores, weights = score_matrix(votes), model.lf_weights(len(lf_names(votes)))
    best = pd.DataFrame(scores).groupby(groups, sort=False).max().rank(pct=True)
    answerable = best @ (weights / weights.sum() if weights.sum() > 0 else np.full(len(weights), 1 / len(weights)))
    return ranked, answerable


def pool(ranked: dict[str, list[list[str]]], answerable: pd.Series, texts: dict[str, str]) -> Pool:
    """The frame and its strata (docs/judged-design.md) of the queries of ``ranked`` (``texts``: query id → text)."""
    frame: list[str] = []
    index: dict[str, set[int]] = {}
    words: list[set[str]] = []
    for qid in ranked:
        mine = set(texts.get(qid, "").lower().split())
        near = {k for w in mine for k in index.get(w, ())}
        if any(len(mine & words[k]) / max(len(mine | words[k]), 1) > NEAR_DUPLICATE for k in near):
            continue
        for w in mine:
            index.setdefault(w, set()).add(len(words))
        words.append(mine)
        frame.append(qid)
    tied = {qid for qid in frame if all(r == ranked[qid][0] for r in ranked[qid][1:])}
    told = [qid for qid in frame if qid not in tied]
    level = answerable.reindex(told).rank(method="first", pct=True).to_numpy() if told else np.array([])
    stratum = {qid: min(int(p * STRATA - 1e-9), STRATA - 1) for qid, p in zip(told, level)}
    return Pool(ranked, answerable, frame, {**stratum, **dict.fromkeys(tied, TIED)})


def allocation(sizes: Sequence[int], n: int, oversample: float = OVERSAMPLE) -> np.ndarray:
    """Queries per stratum (``sizes``: N_h of the answerability strata, then of the tied queries) for a sample of ``n``
    (docs/judged-design.md): one at a time to the stratum furthest below its share N_h · oversample^h, never above N_h,
    the tied queries last; the allocation for n + 1 contains the one for n."""
    sizes = np.asarray(sizes, dtype=float)
    share = sizes * np.append(oversample ** np.arange(len(sizes) - 1), 1e-9)
    taken = np.zeros(len(sizes), dtype=int)
    for step in range(1, min(n, int(sizes.sum())) + 1):
        room = taken < sizes
        target = share / share[room].sum() * step if room.any() else share
        h = int(np.argmax(np.where(room, target - taken, -np.inf)))
        taken[h] += 1
    return taken


@dataclass(frozen=True)
class Draw:
    """The sampled queries in judging order and each one's inclusion probability π_q."""

    queries: list[str]
    inclusion: dict[str, float]


def draw(found: Pool, n: int, seed: int = 0, oversample: float = OVERSAMPLE) -> Draw:
    """A stratified sample of ``n`` queries of the frame (docs/judged-design.md); the same ``seed`` with a larger ``n``
    gives a sample that contains this one (its queries first, in the same order)."""
    rng = np.random.default_rng(seed)
    members = [[q for q in found.frame if found.stratum[q] == h] for h in range(STRATA + 1)]
    orders = [list(rng.permutation(len(m))) for m in members]
    sizes = found.sizes()
    queries: list[str] = []
    for step in range(1, min(n, len(found.frame)) + 1):
        before, now = allocation(sizes, step - 1, oversample), allocation(sizes, step, oversample)
        h = int(np.flatnonzero(now > before)[0])
        queries.append(members[h][orders[h][before[h]]])
    final = allocation(sizes, len(queries), oversample)
    inclusion = {q: float(final[found.stratum[q]] / sizes[found.stratum[q]]) for q in queries}
    return Draw(queries, inclusion)


def depth_order(lists: list[list[str]]) -> list[str]:
    """A query's passages: each ranking's first, then each one's second, …"""
    found: dict[str, None] = {}
    for depth in range(max(map(len, lists))):
        for ranking in lists:
            if depth < len(ranking):
                found.setdefault(ranking[depth], None)
    return list(found)


def passages(lists: list[list[str]], per_query: int, query_id: str, seed: int = 0,
             sampled: int = SAMPLED_PASSAGES) -> dict[str, float]:
    """The passages of one query to judge (docs/judged-design.md), each with its inclusion probability; the random part
    is seeded by ``seed`` and the query id (the same query, the same passages)."""
    order = depth_order(lists)
    if len(order) <= per_query:
        return dict.fromkeys(order, 1.0)
    sampled = min(sampled, per_query - 1)  # the first passage of the depth order always judged
    fixed, rest = order[:per_query - sampled], order[per_query - sampled:]
    rng = np.random.default_rng([seed, zlib.crc32(query_id.encode())])
    chosen = rng.choice(len(rest), size=sampled, replace=False)
    return {**dict.fromkeys(fixed, 1.0), **{rest[i]: sampled / len(rest) for i in sorted(chosen)}}


def select_pairs(votes: pd.DataFrame, texts: dict[str, str], split: str, queries: int, per_query: int = 6,
                 seed: int = 0, options: dict | None = None, keep: Collection[str] = ()) -> pd.DataFrame:
    """The sample of ``queries`` queries of ``split`` (``texts``: query id → text) and their passages to judge
    (docs/judged-design.md): ``query_id, passage_id, query_inclusion, passage_inclusion, stratum`` in judging order.
    ``keep``: the queries of an earlier sample with the same ``seed`` (``select --more``): they must be its first
    queries, and the sample grows by ``queries`` after them."""
    found = pool(*rankings(votes[votes["split"] == split], options, fusions=False), texts)
    kept = list(dict.fromkeys(keep))
    return pairs_of(found, draw(found, len(kept) + queries, seed), per_query, seed)


def pairs_of(found: Pool, sample: Draw, per_query: int, seed: int) -> pd.DataFrame:
    """The rows to judge of a drawn ``sample`` of ``found``: ``query_id, passage_id, query_inclusion,
    passage_inclusion, stratum``, the queries in drawing order, each with its passages (:func:`passages`)."""
    rows = [{"query_id": qid, "passage_id": pid, "query_inclusion": sample.inclusion[qid],
             "passage_inclusion": p, "stratum": found.stratum[qid]}
            for qid in sample.queries for pid, p in passages(found.ranked[qid], per_query, qid, seed).items()]
    return pd.DataFrame(rows, columns=["query_id", "passage_id", "query_inclusion", "passage_inclusion", "stratum"])
