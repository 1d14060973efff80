"""The pooled design of an evaluation sample: for a simple random sample of the queries where the systems compared
differ at the top, judge the union of their top k (the first stage's among them, the baseline) and measure them
exactly there (:mod:`.topk`). The design, and why no MAP: docs/judged-design.md."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from weakrank.evaluation.summary import BM25_ROW
from weakrank.judged.design import Pool, depth_order, draw

BASELINE = "bm25"  # weakrank's BM25 in a judging file: the baseline where the dataset has no first stage
FIRST_STAGE = "first stage"  # how the first stage's name starts (evaluate's row: first stage (your run), …)
MEASURES = ("RR", "P", "nDCG")  # the exact top-k measures, the first the one that answers "better than the baseline?"
RANK = "rank_"  # the prefix of the columns that hold a passage's rank in each system's top k
RANKING = "ranking_"  # the prefix of the columns that hold the digests of each system's ranking drawn from


def depth(per_query: int, systems: int) -> int:
    """The pool's depth: the largest k whose union of ``systems`` top-k lists fits ``per_query`` passages."""
    return max(1, per_query // max(systems, 1))


def ranked_lists(runs: Mapping[str, pd.DataFrame]) -> dict[str, dict[str, list[str]]]:
    """Each run's (``query_id, passage_id, score``) passage ids per query, highest score first (ties in the run's
    order): system → query id (in the run's order) → list."""
    out = {}
    for name, run in runs.items():
        ordered = run.assign(_order=np.arange(len(run))).sort_values(["score", "_order"], ascending=[False, True],
                                                                      kind="stable")
        lists = {q: rows.tolist() for q, rows in ordered.groupby("query_id", sort=False)["passage_id"]}
        out[name] = {q: lists[q] for q in dict.fromkeys(run["query_id"])}
    return out


def pooled_passages(lists: Sequence[list[str]], k: int, per_query: int, query_id: str,
                    seed: int = 0) -> dict[str, float]:
    """The passages of one query to judge (docs/judged-design.md) with their inclusion probabilities: the union of
    ``lists``' top ``k`` (probability 1), then the budget's remainder drawn from their other passages, seeded by
    ``seed`` and the query id."""
    pooled = depth_order([ranking[:k] for ranking in lists if ranking])
    rest = [p for p in depth_order([r for r in lists if r]) if p not in set(pooled)]
    drawn = max(0, min(per_query - len(pooled), len(rest)))
    found = dict.fromkeys(pooled, 1.0)
    if drawn:
        rng = np.random.default_rng([seed, zlib.crc32(query_id.encode())])
        found.update({rest[i]: drawn / len(rest) for i in sorted(rng.choice(len(rest), size=drawn, replace=False))})
    return found


def pooled_pairs(runs: Mapping[str, pd.DataFrame], systems: Sequence[str], queries: int, per_query: int = 6,
                 seed: int = 0, baseline: str = BASELINE) -> pd.DataFrame:
    """A simple random sample of ``queries`` queries of the baseline's run and, for each, the pool of ``systems``' and
    the baseline's top k (docs/judged-design.md): ``query_id, passage_id, query_inclusion, passage_inclusion, stratum,
    pool_depth, population, split_queries, planned`` and one ``rank_<system>`` column per system compared (blank below
    its top k)."""
    compared = [baseline, *(s for s in systems if s != baseline)]
    return pool_sample(ranked_lists({name: runs[name] for name in compared}), queries, per_query, seed)


def pool_sample(lists: Mapping[str, Mapping[str, list[str]]], queries: int, per_query: int = 6,
                seed: int = 0) -> pd.DataFrame:
    """:func:`pooled_pairs` from the systems' lists (:func:`ranked_lists`, the baseline's first); each row also
    carries its query's place in the drawing order (``draw``), its number of rows (``query_rows``) and each system's
    :func:`ranking_digests` (``ranking_<system>``): what the sample was drawn from."""
    compared = list(lists)
    baseline = compared[0]
    k = depth(per_query, len(compared))
    split = [q for q, ranking in lists[baseline].items() if len(ranking) > 1]
    frame = [q for q in split if any(lists[name].get(q, [])[:k] != lists[baseline][q][:k] for name in compared)]
    found = Pool({q: [] for q in frame}, pd.Series(0.0, index=frame), frame, dict.fromkeys(frame, 0))
    sample = draw(found, queries, seed, oversample=1.0)
    digests = ranking_digests(lists, k, sample.queries)
    rows = []
    for place, query in enumerate(sample.queries, 1):
        tops = [lists[name].get(query, []) for name in compared]
        pool = pooled_passages(tops, k, per_query, query, seed)
        for pid, p in pool.items():
            ranks = {f"{RANK}{name}": (top.index(pid) + 1 if pid in top[:k] else "") for name, top in zip(compared, tops)}
            rows.append({"query_id": query, "passage_id": pid, "query_inclusion": sample.inclusion[query],
                         "passage_inclusion": p, "stratum": 0, "pool_depth": k, "population": len(frame),
                         "split_queries": len(split), "planned": len(sample.queries), "draw": place,
                         "query_rows": len(pool), **ranks,
                         **{f"{RANKING}{name}": digests[name][query] for name in compared}})
    columns = ["query_id", "passage_id", "query_inclusion", "passage_inclusion", "stratum", "pool_depth", "population",
               "split_queries", "planned", "draw", "query_rows", *(f"{RANK}{name}" for name in compared),
               *(f"{RANKING}{name}" for name in compared)]
    return pd.DataFrame(rows, columns=columns)


def ranking_digests(lists: Mapping[str, Mapping[str, list[str]]], k: int, queries: Sequence[str]
                    ) -> dict[str, dict[str, str]]:
    """Per system of ``lists`` and query of ``queries``, ``<its top k there>/<its top k of every query>``: two
    SHA-256 digests (10 hex digits) that tell whether a sample of those queries was drawn from this ranking."""
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    out = {}
    for name, ranked in lists.items():
        whole = digest("\x1e".join(f"{q}\x1d" + "\x1f".join(ranked[q][:k]) for q in sorted(ranked)))
        out[name] = {q: f"{digest(q + chr(29) + chr(31).join(ranked.get(q, [])[:k]))}/{whole}" for q in queries}
    return out


def in_drawing_order(table: pd.DataFrame) -> pd.DataFrame:
    """A pooled judging table's rows in the order its queries were drawn (its ``draw`` column; a sample of an
    earlier weakrank, which has none, as it is): an order no sorting of the file changes."""
    if "draw" not in table.columns:
        return table
    return table.iloc[np.argsort(pd.to_numeric(table["draw"]).to_numpy(), kind="stable")]


def whole(table: pd.DataFrame, column: str) -> int:
    """The whole number a pooled judging table's ``column`` holds (every row alike: its first; ``3.0`` is 3)."""
    return int(float(table[column].iloc[0]))


def planned_sizes(table: pd.DataFrame) -> np.ndarray:
    """Each query's sample size when it was drawn, in drawing order (:func:`in_drawing_order`; one value a query)."""
    return pd.to_numeric(in_drawing_order(table).groupby("query_id", sort=False)["planned"].first()).to_numpy(int)


def split_share(table: pd.DataFrame) -> float:
    """The share of the split's queries that a pooled judging table was sampled from (those where the tops
    differ)."""
    return whole(table, "population") / whole(table, "split_queries")


def is_pooled(table: pd.DataFrame) -> bool:
    """Whether a judging table was written by the pooled design (it carries the pool's depth and ranks)."""
    return "pool_depth" in table.columns and any(c.startswith(RANK) for c in table.columns)


def baseline_of(table: pd.DataFrame) -> str:
    """The system a pooled judging table compares the others with: its first stage where it ranks one
    (:data:`FIRST_STAGE`), else :data:`BASELINE` (else its first ``rank_`` column)."""
    systems = [c[len(RANK):] for c in table.columns if c.startswith(RANK)]
    return next((s for s in systems if s.startswith(FIRST_STAGE)), BASELINE if BASELINE in systems else systems[0])


def systems_of(table: pd.DataFrame) -> list[str]:
    """The systems of a pooled judging table (its ``rank_`` columns), the baseline (:func:`baseline_of`) first."""
    baseline = baseline_of(table)
    return [baseline, *(c[len(RANK):] for c in table.columns if c.startswith(RANK) and c != f"{RANK}{baseline}")]


def row_name(system: str) -> str:
    """A pooled system's name as ``evaluate``'s MAP table gives it (weakrank's BM25: ``bm25 (weakrank)``)."""
    return BM25_ROW if system == BASELINE else system
