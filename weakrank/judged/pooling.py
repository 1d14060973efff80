"""The pooled design of an evaluation sample: judge, for each sampled query, the passages where the systems compared
differ at the top — the union of their top k — and measure them exactly there.

**The queries** are a simple random sample of the evaluated split's queries where the systems' top k differ (of
those with two candidates or more, in the baseline's run): where every system's top k is the baseline's, in the same
order, every top-k difference is 0 whatever is relevant, so judging such a query would tell nothing (the idea of
Carterette, Allan & Sitaraman's minimal test collections, applied to queries). They are drawn as
:mod:`.evaluation` draws its sample (each with inclusion probability n / N_d, N_d the queries that differ), in
drawing order: any first part of the sample is itself a simple random sample, which is what lets a person stop
early (:mod:`.sequential`).

**The passages of a query** are the union of each compared system's top :func:`depth` (pooling, as TREC builds its
test collections), each with probability 1; where the union leaves room in the budget (the systems agree on some of
their tops), the rest of it is drawn uniformly from the query's other candidates, with probability ``drawn / rest``,
so that :mod:`.estimate`'s MAP stays unbiased where it can. Each row carries the passage's rank in each system's
top k (``rank_<system>``), the pool's depth, the population N_d, the split's queries N and the sample's size when
the query was drawn (``planned``: ``select --more`` grows a sample): the file alone tells the measures below.

**The measures.** Where every pooled system's top k is judged, its P@k, RR@k and nDCG@k on the query are exact (no
estimation within the query): P@k the share of its top k that is relevant, RR@k one over the rank of the first
relevant passage in its top k (0 if none), nDCG@k its DCG@k over the best DCG@k that the pool's relevant passages
allow (binary gains; a query with none in the pool counts 0 for every system). The estimand is the paired
difference from BM25 averaged over every query of the split: the queries whose tops agree add 0, so it is N_d / N
times the mean over the queries that differ, which the sample's mean estimates without bias, with a t interval
(finite-population corrected) over the judged queries; each system's own mean is given over the queries that
differ (where the tops agree nothing was judged). RR@k's difference is the one that answers "better than BM25?":
it reads what a person reads first, a query with one relevant passage (most of them) moves it by up to 1 where P@k
moves by 1/k, and it is exact, unlike MAP's estimate, whose sampled passages add variance (and which misses
relevant passages that are no candidate). It is named in advance: choosing, after judging, whichever measure looks
best would make the stated coverage untrue. A passage the person skipped counts as not relevant.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import t

from weakrank.judged.design import Pool, depth_order, draw
from weakrank.judged.sequential import LEVEL, confidence_sequence

BASELINE = "bm25"  # the system the others are compared with
MEASURES = ("RR", "P", "nDCG")  # the exact top-k measures, the first the one that answers "better than BM25?"
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


def pooled_passages(lists: Sequence[list[str]], k: int, per_query: int, query_id: str, seed: int = 0,
                    candidates: Sequence[str] = ()) -> dict[str, float]:
    """The passages of one query to judge (module doc) with their inclusion probabilities: the union of ``lists``'
    top ``k`` (probability 1), then the budget's remainder drawn from the other passages of ``lists`` and
    ``candidates``, seeded by ``seed`` and the query id."""
    pooled = depth_order([ranking[:k] for ranking in lists if ranking])
    rest = [p for p in dict.fromkeys([*depth_order([r for r in lists if r]), *candidates]) if p not in set(pooled)]
    drawn = max(0, min(per_query - len(pooled), len(rest)))
    found = dict.fromkeys(pooled, 1.0)
    if drawn:
        rng = np.random.default_rng([seed, zlib.crc32(query_id.encode())])
        found.update({rest[i]: drawn / len(rest) for i in sorted(rng.choice(len(rest), size=drawn, replace=False))})
    return found


def pooled_pairs(runs: Mapping[str, pd.DataFrame], systems: Sequence[str], queries: int, per_query: int = 6,
                 seed: int = 0, baseline: str = BASELINE) -> pd.DataFrame:
    """A simple random sample of ``queries`` queries of the baseline's run and, for each, the pool of ``systems``'
    and the baseline's top k (module doc): ``query_id, passage_id, query_inclusion, passage_inclusion, stratum,
    pool_depth, population, split_queries, planned`` and one ``rank_<system>`` column per system compared (blank
    below its top k)."""
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
    return "pool_depth" in table.columns and f"{RANK}{BASELINE}" in table.columns


def measures(ranks: Sequence[int], relevant_in_pool: int, k: int) -> dict[str, float]:
    """P@k, RR@k and nDCG@k (module doc) of one system on one query: ``ranks`` the ranks (1 … k) of the relevant
    passages in its top k, ``relevant_in_pool`` how many the pool holds."""
    ranks = sorted(r for r in ranks if 1 <= r <= k)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(relevant_in_pool, k) + 1))
    dcg = sum(1 / math.log2(r + 1) for r in ranks)
    return {"RR": 1 / ranks[0] if ranks else 0.0, "P": len(ranks) / k, "nDCG": dcg / ideal if ideal else 0.0}


def query_values(table: pd.DataFrame) -> pd.DataFrame:
    """Per judged query of a pooled judging table (every row answered; in drawing order, stopping at the first query
    that is not), each system's exact top-k measures: one row per query, columns ``(system, measure)``."""
    systems = [c[len(RANK):] for c in table.columns if c.startswith(RANK)]
    k = whole(table, "pool_depth")
    rows = {}
    for query, judged in in_drawing_order(table).groupby("query_id", sort=False):
        if (judged["relevance"] == "").any():
            break
        relevant = judged["relevance"].map(lambda v: v not in ("skip", "0")).to_numpy()
        ranks = {name: pd.to_numeric(judged[f"{RANK}{name}"], errors="coerce").to_numpy() for name in systems}
        pooled = int((relevant & np.isfinite(np.column_stack(list(ranks.values()))).any(axis=1)).sum())
        values = {}
        for name in systems:
            found = measures([int(r) for r in ranks[name][relevant & np.isfinite(ranks[name])]], pooled, k)
            values.update({(name, m): v for m, v in found.items()})
        rows[query] = values
    return pd.DataFrame.from_dict(rows, orient="index", columns=pd.MultiIndex.from_product([systems, MEASURES]))


def t_interval(values: np.ndarray, population: int, level: float = LEVEL) -> tuple[float, float]:
    """The mean of ``values`` (a simple random sample of ``population``) ± t(level) standard errors, finite-population
    corrected; (−inf, inf) with fewer than two values."""
    n = len(values)
    if n < 2:
        return -math.inf, math.inf
    mean = float(np.mean(values))
    half = t.ppf(0.5 + level / 2, n - 1) * float(np.std(values, ddof=1)) / math.sqrt(n)
    half *= math.sqrt(max(0.0, 1 - n / population)) if population > n else 0.0
    return mean - half, mean + half


def topk_table(values: pd.DataFrame, population: int, planned: np.ndarray, share: float = 1.0,
               baseline: str = BASELINE, level: float = LEVEL) -> pd.DataFrame:
    """Each pooled system's mean top-k measures (over the queries sampled from) with their t intervals and each
    one's paired difference from ``baseline`` over the split (``share``: the queries sampled from over the split's,
    the rest adding 0) with its t interval and its confidence sequence (:mod:`.sequential`, ``planned``: the
    sample's size when each query was drawn, those of ``values`` first), every interval kept inside the measure's
    range; one row per (system, measure)."""
    rows = []
    for name in dict.fromkeys(values.columns.get_level_values(0)):
        for measure in MEASURES:
            own = values[(name, measure)].to_numpy(float)
            diff = (own - values[(baseline, measure)].to_numpy(float)) * share
            low, high = t_interval(own, population, level)
            diff_low, diff_high = t_interval(diff, population, level)
            cs = confidence_sequence(diff, population, planned[:len(diff)], level)
            rows.append({"system": name, "measure": measure, "mean": own.mean() if len(own) else math.nan,
                         "low": max(low, 0.0), "high": min(high, 1.0),
                         f"vs {baseline}": diff.mean() if len(diff) else math.nan, "diff low": max(diff_low, -1.0),
                         "diff high": min(diff_high, 1.0), "seq low": cs.low, "seq high": cs.high})
    out = pd.DataFrame(rows).set_index(["system", "measure"])
    out.attrs.update(queries=len(values), planned=len(planned), population=population, share=share, level=level,
                     baseline=baseline)
    return out


def verdict(diffs: np.ndarray, population: int, planned: np.ndarray,
            level: float = LEVEL) -> tuple[str, float, float, str]:
    """Whether the judged queries' paired differences (in drawing order) settle "better than the baseline":
    ``yes``, ``no`` or ``not yet``, with the interval that says so and its kind. ``planned``: the sample's size when
    each of its queries was drawn, all of them (those judged first). The confidence sequence (:mod:`.sequential`)
    at every number of queries: valid however the person stops; once a sample drawn at once is all judged and the
    sequence has not settled, the sample's t interval (valid for the sample as drawn, not for one stopped, or grown,
    because of what it showed). Looking at both costs coverage: at worst the two errors add (1 − level
    each); measured, the interval a person stopping at the first settled line is left with held the truth in
    90–97 % of samples (``benchmarks/judged_power.csv``, ``RR@3 as judged``)."""
    planned = np.asarray(planned)
    cs = confidence_sequence(diffs, population, planned[:len(diffs)], level)
    if cs.verdict != "not yet" or len(diffs) < len(planned) or (planned != len(planned)).any():
        return cs.verdict, cs.low, cs.high, "sequence"
    low, high = t_interval(np.asarray(diffs, dtype=float), population, level)
    low, high = max(low, -1.0), min(high, 1.0)
    return ("yes" if low > 0 else "no" if high < 0 else "not yet"), low, high, "t"


def settled_lines(table: pd.DataFrame, level: float = LEVEL) -> list[str]:
    """What ``judge`` shows after each judged query of a pooled judging table: per system compared, whether it is
    better than the baseline by RR@k so far (:func:`verdict`)."""
    values = query_values(table)
    k, planned = whole(table, "pool_depth"), planned_sizes(table)
    population, share = whole(table, "population"), split_share(table)
    lines = []
    for name in dict.fromkeys(values.columns.get_level_values(0)):
        if name == BASELINE:
            continue
        diffs = (values[(name, "RR")] - values[(BASELINE, "RR")]).to_numpy(float) * share
        answer, low, high, kind = verdict(diffs, population, planned, level)
        shown = f"{diffs.mean():+.3f}, " if len(diffs) else ""
        why = ("interval valid however you stop" if kind == "sequence" else "t interval of the whole sample")
        lines.append(f"{name} better than {BASELINE} (RR@{k}, {len(diffs)} of {len(planned)} queries): {answer} — "
                     f"{shown}{level:.0%} [{low:+.3f}, {high:+.3f}], {why}")
    return lines


def pooled_table(table: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """:func:`topk_table` of a pooled judging table (its judged queries, in drawing order, up to the first one not
    fully answered), ``attrs["depth"]`` its k."""
    out = topk_table(query_values(table), whole(table, "population"), planned_sizes(table),
                     split_share(table), BASELINE, level)
    out.attrs["depth"] = whole(table, "pool_depth")
    return out


def pooled_lines(topk: pd.DataFrame) -> list[str]:
    """The top-k table (:func:`pooled_table`) in lines a person reads: each system's paired difference from the
    baseline in each measure with its interval, the verdict by RR@k first."""
    k, baseline, level = topk.attrs["depth"], topk.attrs["baseline"], topk.attrs["level"]
    lines = [f"exact on the judged pool ({topk.attrs['queries']} of {topk.attrs['planned']} queries judged, drawn "
             f"from the {topk.attrs['share']:.0%} of the split where the tops differ: each system's mean, and MAP "
             f"above, over those, its difference from {baseline} over the whole split; {level:.0%} t intervals; a "
             "passage skipped counts as not relevant):"]
    for (name, measure), row in topk.iterrows():
        if name == baseline:
            continue
        diff, low, high = row[f"vs {baseline}"], row["diff low"], row["diff high"]
        said = "better" if low > 0 else "worse" if high < 0 else "not told apart"
        lines.append(f"  {name} {measure}@{k} {row['mean']:.3f} [{row['low']:.3f}, {row['high']:.3f}], "
                     f"vs {baseline} {diff:+.3f} [{low:+.3f}, {high:+.3f}]: {said}"
                     + (f"   ← answers \"better than {baseline}?\" (sequence valid however judging stopped: "
                        f"[{row['seq low']:+.3f}, {row['seq high']:+.3f}])" if measure == MEASURES[0] else ""))
    return lines
