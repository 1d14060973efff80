"""The exact top-k measures (RR@k, P@k, nDCG@k) of a judged pooled sample (:mod:`.pooling` draws it), each system's
paired difference from the sample's baseline with its intervals, and what ``judge`` and ``evaluate`` say of them. The
measures, the estimand and why RR@k answers: docs/judged-design.md."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import t

from weakrank.evaluation.confidence_sequence import LEVEL, confidence_sequence
from weakrank.evaluation.summary import BM25_ROW
from weakrank.judged.pooling import (
    MEASURES,
    RANK,
    baseline_of,
    in_drawing_order,
    planned_sizes,
    ranked_lists,
    row_name,
    split_share,
    systems_of,
    whole,
)

NO_MAP = ("no MAP from a pooled sample: a query whose relevant passages lie below the pool drops out of its "
          "estimate, which ran 0.07-0.09 high for strong systems; qrels, or a sample judged in full, measure MAP")


def measures(ranks: Sequence[int], relevant_in_pool: int, k: int) -> dict[str, float]:
    """P@k, RR@k and nDCG@k (docs/judged-design.md) of one system on one query: ``ranks`` the ranks (1 … k) of the
    relevant passages in its top k, ``relevant_in_pool`` how many the pool holds."""
    ranks = sorted(r for r in ranks if 1 <= r <= k)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(relevant_in_pool, k) + 1))
    dcg = sum(1 / math.log2(r + 1) for r in ranks)
    return {"RR": 1 / ranks[0] if ranks else 0.0, "P": len(ranks) / k, "nDCG": dcg / ideal if ideal else 0.0}


def given_tops(table: pd.DataFrame, runs: Mapping[str, pd.DataFrame]) -> tuple[dict[str, dict[str, list[str]]],
                                                                            list[str]]:
    """The top k of each of ``runs`` (name → query_id, passage_id, score) on the queries of a pooled judging table,
    for :func:`query_values`, where every passage of it on every query was judged; a line for each other run (its
    figures would not be exact: not measured)."""
    k = whole(table, "pool_depth")
    asked = table.groupby("query_id", sort=False)["passage_id"].agg(set)
    tops, notes = {}, []
    for name, lists in ranked_lists(runs).items():
        top = {q: lists.get(q, [])[:k] for q in asked.index}
        outside = [q for q in asked.index if not set(top[q]) <= asked[q]]
        if outside:
            pooled = ", ".join(row_name(s) for s in systems_of(table))
            notes.append(f"{name}: not measured, its top {k} of query {outside[0]!r} holds a passage this sample did "
                         f"not ask about (it pooled {pooled})")
        else:
            tops[name] = top
    return tops, notes


def query_values(table: pd.DataFrame, given: Mapping[str, Mapping[str, list[str]]] | None = None) -> pd.DataFrame:
    """Per judged query of a pooled judging table (every row answered; in drawing order, stopping at the first query
    that is not), each system's exact top-k measures: one row per query, columns ``(system, measure)``, the
    systems named by :func:`~weakrank.judged.pooling.row_name`, the baseline first, then ``given``'s (name → query
    → top k: :func:`given_tops`)."""
    systems, given = systems_of(table), given or {}
    k = whole(table, "pool_depth")
    rows = {}
    for query, judged in in_drawing_order(table).groupby("query_id", sort=False):
        if (judged["relevance"] == "").any():
            break
        relevant = judged["relevance"].map(lambda v: v not in ("skip", "0")).to_numpy()
        ranks = {row_name(s): pd.to_numeric(judged[f"{RANK}{s}"], errors="coerce").to_numpy() for s in systems}
        pooled = int((relevant & np.isfinite(np.column_stack(list(ranks.values()))).any(axis=1)).sum())
        for name, tops in given.items():
            places = {pid: i + 1 for i, pid in enumerate(tops.get(query, []))}
            ranks[name] = judged["passage_id"].map(places).to_numpy(float)
        values = {}
        for name, found in ranks.items():
            hits = [int(r) for r in found[relevant & np.isfinite(found)]]
            values.update({(name, m): v for m, v in measures(hits, max(pooled, len(hits)), k).items()})
        rows[query] = values
    names = [*(row_name(s) for s in systems), *given]
    return pd.DataFrame.from_dict(rows, orient="index", columns=pd.MultiIndex.from_product([names, MEASURES]))


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
               baseline: str = BM25_ROW, level: float = LEVEL) -> pd.DataFrame:
    """Each pooled system's mean top-k measures (over the queries sampled from) with their t intervals and each one's
    paired difference from ``baseline`` over the split (``share``: the queries sampled from over the split's, the rest
    adding 0) with its t interval and its confidence sequence (:mod:`~weakrank.evaluation.confidence_sequence`,
    ``planned``: the sample's size when each query was drawn, those of ``values`` first), every interval kept inside the
    measure's range; one row per (system, measure)."""
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
    """Whether the judged queries' paired differences (in drawing order) settle "better than the baseline": ``yes``,
    ``no`` or ``not yet``, with the interval that says so and its kind. ``planned``: the sample's size when each of its
    queries was drawn, all of them (those judged first). The confidence sequence
    (:mod:`~weakrank.evaluation.confidence_sequence`) at every number of queries: valid however the person stops; once a
    sample drawn at once is all judged and the sequence has not settled, the sample's t interval (valid for the sample
    as drawn, not for one stopped, or grown, because of what it showed). Looking at both costs coverage: at worst the
    two errors add (1 − level each); measured, the interval a person stopping at the first settled line is left with
    held the truth in 90–97 % of samples (``benchmarks/judged_power.csv``, ``RR@3 as judged``)."""
    planned = np.asarray(planned)
    cs = confidence_sequence(diffs, population, planned[:len(diffs)], level)
    if cs.verdict != "not yet" or len(diffs) < len(planned) or (planned != len(planned)).any():
        return cs.verdict, cs.low, cs.high, "sequence"
    low, high = t_interval(np.asarray(diffs, dtype=float), population, level)
    low, high = max(low, -1.0), min(high, 1.0)
    return ("yes" if low > 0 else "no" if high < 0 else "not yet"), low, high, "t"


def settled(table: pd.DataFrame, level: float = LEVEL) -> dict[str, str]:
    """What ``judge`` shows after each judged query of a pooled judging table: per system compared (name → line),
    whether it is better than the baseline by RR@k so far (:func:`verdict`)."""
    values = query_values(table)
    k, planned = whole(table, "pool_depth"), planned_sizes(table)
    population, share, baseline = whole(table, "population"), split_share(table), row_name(baseline_of(table))
    lines = {}
    for name in dict.fromkeys(values.columns.get_level_values(0)):
        if name == baseline:
            continue
        diffs = (values[(name, "RR")] - values[(baseline, "RR")]).to_numpy(float) * share
        answer, low, high, kind = verdict(diffs, population, planned, level)
        shown = f"{diffs.mean():+.3f}, " if len(diffs) else ""
        why = ("interval valid however you stop" if kind == "sequence" else "t interval of the whole sample")
        lines[name] = (f"{name} better than {baseline} (RR@{k}, {len(diffs)} of {len(planned)} queries): {answer} — "
                       f"{shown}{level:.0%} [{low:+.3f}, {high:+.3f}], {why}")
    return lines


def pooled_table(table: pd.DataFrame, runs: Mapping[str, pd.DataFrame] | None = None,
                 level: float = LEVEL) -> pd.DataFrame:
    """:func:`topk_table` of a pooled judging table (its judged queries, in drawing order, up to the first one not
    fully answered) and of ``runs`` (name → run, :func:`given_tops`), against its baseline; ``attrs["depth"]`` its
    k, ``attrs["unmeasured"]`` the lines of the runs not measured."""
    given, notes = given_tops(table, runs or {})
    out = topk_table(query_values(table, given), whole(table, "population"), planned_sizes(table),
                     split_share(table), row_name(baseline_of(table)), level)
    out.attrs.update(depth=whole(table, "pool_depth"), unmeasured=notes)
    return out


def pooled_lines(topk: pd.DataFrame) -> list[str]:
    """The top-k table (:func:`pooled_table`) in lines a person reads: each system's paired difference from the
    baseline in each measure with its interval, the verdict by RR@k first; the runs not measured, and why no MAP."""
    k, baseline, level = topk.attrs["depth"], topk.attrs["baseline"], topk.attrs["level"]
    lines = [f"exact on the judged pool ({topk.attrs['queries']} of {topk.attrs['planned']} queries judged, drawn "
             f"from the {topk.attrs['share']:.0%} of the split where the tops differ: each system's mean over those, "
             f"its difference from {baseline} over the whole split; {level:.0%} t intervals; a passage skipped "
             "counts as not relevant):"]
    for (name, measure), row in topk.iterrows():
        if name == baseline:
            lines.append(f"  {name} {measure}@{k} {row['mean']:.3f} [{row['low']:.3f}, {row['high']:.3f}]: the baseline")
            continue
        diff, low, high = row[f"vs {baseline}"], row["diff low"], row["diff high"]
        said = "better" if low > 0 else "worse" if high < 0 else "not told apart"
        lines.append(f"  {name} {measure}@{k} {row['mean']:.3f} [{row['low']:.3f}, {row['high']:.3f}], "
                     f"vs {baseline} {diff:+.3f} [{low:+.3f}, {high:+.3f}]: {said}"
                     + (f"   ← answers \"better than {baseline}?\" (sequence valid however judging stopped: "
                        f"[{row['seq low']:+.3f}, {row['seq high']:+.3f}])" if measure == MEASURES[0] else ""))
    return [*lines, *(f"  {note}" for note in topk.attrs.get("unmeasured", ())), NO_MAP]
