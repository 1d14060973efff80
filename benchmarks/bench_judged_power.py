"""How often 20 judged queries answer "better than BM25?": today's evaluation sample against the pooled design.

A design study: no trained ranker is needed. On each collection's evaluated split, two systems are compared with
BM25 alone: the best LF alone (the one with the highest full-qrels MAP on the split, chosen with the gold: the study
asks how well a difference of that size is found, not which system to pick) and the label-free teacher (the fusion
model's weighting, fitted without gold). The simulated person is the collection's gold (a candidate without a
judgment is judged not relevant). For each of ``--draws`` seeds, N queries are drawn at random
(:func:`weakrank.judged.design.draw`, one stratum; today's design from the split's queries with two candidates or
more, the pooled design from those where the two systems' top 3 differ) and judged:

- ``today``: ``select --evaluation --design today`` (:func:`weakrank.judged.evaluation.sample_pairs`: the top of
  the candidate combinations' lists, the rest of the budget drawn from below), MAP's paired difference estimated by
  :func:`~weakrank.judged.evaluation.sample_table` with its 95 % t interval; its truth is the full-qrels MAP
  difference (``evaluate``'s figure);
- ``pooled``: ``select --evaluation`` (:func:`weakrank.judged.pooling.pool_sample`: the union of BM25's and the
  system's top 3, the rest of the budget drawn from below), read as a judging file by
  :func:`~weakrank.judged.pooling.query_values`; per measure (RR@3, P@3, nDCG@3) the paired difference's 95 % t
  interval over the N queries, whose truth is the mean over every query of the split (exact with full gold);
  ``RR@3 sequence``: the confidence sequence alone after N queries (valid at every look); ``RR@3 as judged``: what
  ``judge`` tells a person who stops at the first settled line (:func:`~weakrank.judged.pooling.verdict`: the
  sequence while it runs, the t interval once the N queries are judged), with ``queries_judged`` the queries read
  before stopping. No MAP is estimated from the pooled judgments: ``evaluate`` gives none under that design (a
  query whose relevant passages lie below the pool drops out of the estimate, which runs high for strong systems).

Per (dataset, design, system, measure): ``true_diff``; ``found_share``, the share of samples whose interval excludes 0
on the side of the truth (0 where the truth is 0); ``coverage``, the share whose interval holds the truth;
``passages_per_query`` and ``queries_judged``, what a person reads; ``queries_for_80`` (the pooled top-k rows), about
how many queries would find the difference in 80 % of samples (from the per-query spread with full gold).

Writes ``benchmarks/judged_power.csv``; ``--readme`` rewrites the guide's table (docs/guide.md) between its ``judged-power``
markers from the CSV.

Run: ``python benchmarks/bench_judged_power.py`` (collections whose votes.parquet exists)
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT
from judged_sim import load, sample_arguments

from weakrank.combinations import LABEL_FREE
from weakrank.evaluation.confidence_sequence import confidence_path
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet, write_text
from weakrank.judged.design import rankings
from weakrank.judged.evaluation import sample_pairs, sample_table
from weakrank.judged.judgments import Judgments
from weakrank.judged.pooling import MEASURES, depth, pool_sample, ranked_lists
from weakrank.judged.topk import measures, query_values, t_interval, verdict
from weakrank.paths import RunPaths

BASELINE = "bm25 alone"
CSV = ROOT / "benchmarks" / "judged_power.csv"
DESIGN = ["query_id", "passage_id", "relevance", "query_inclusion", "passage_inclusion"]


def true_diffs(lists: dict[str, dict[str, list[str]]], system: str, key: pd.Series, k: int) -> pd.DataFrame:
    """Each top-k measure's paired difference of ``system`` from the baseline on every query of the split with two
    candidates or more, with full gold (``key``: (query, passage) → 1/0); ``attrs["differ"]``: whether the two
    tops differ there."""
    rows, differ = [], []
    for query, ranking in lists[BASELINE].items():
        if len(ranking) < 2:
            continue
        tops = {name: lists[name][query][:k] for name in (BASELINE, system)}
        relevant = {p for top in tops.values() for p in top if key.get((query, p), 0) > 0}
        found = {name: measures([i + 1 for i, p in enumerate(top) if p in relevant], len(relevant), k)
                 for name, top in tops.items()}
        rows.append({m: found[system][m] - found[BASELINE][m] for m in MEASURES})
        differ.append(tops[system] != tops[BASELINE])
    out = pd.DataFrame(rows)
    out.attrs["differ"] = np.array(differ)
    return out


def queries_needed(diffs: pd.DataFrame, measure: str) -> float:
    """About how many queries of the pooled design find the mean of ``diffs[measure]`` (:func:`true_diffs`) in 80 %
    of samples at the 5 % level: (2.8 · SD / mean)², the SD of a sampled query's difference scaled to the split."""
    differ = diffs.attrs["differ"]
    share = differ.mean()
    spread = share * diffs.loc[differ, measure].std()
    mean = diffs[measure].mean()
    return float((2.8 * spread / mean) ** 2) if mean else np.inf


def judged(pairs: pd.DataFrame, key: pd.Series) -> pd.DataFrame:
    """A sample's pairs with the gold's relevance (1/0; a candidate without a judgment: 0)."""
    y = key.reindex(pd.MultiIndex.from_frame(pairs[["query_id", "passage_id"]])).to_numpy()
    return pairs.assign(relevance=np.nan_to_num(y, nan=0.0).astype(int))


def hit(low: float, high: float, truth: float) -> tuple[bool, bool]:
    """Whether [low, high] excludes 0 on the truth's side, and whether it holds the truth."""
    return (low > 0) if truth > 0 else (high < 0) if truth < 0 else False, low <= truth <= high


def measure(name: str, queries: int, draws: int, per_query: int) -> list[dict]:
    """The rows of one collection (module doc)."""
    coll = load(name)
    split = EVAL_SPLIT[name]
    where = (coll.votes["split"] == split).to_numpy()
    votes = coll.votes[where]
    key = pd.Series(np.nan_to_num(pd.to_numeric(votes["gold"], errors="coerce").to_numpy(float), nan=0.0),
                    index=pd.MultiIndex.from_frame(votes[["query_id", "passage_id"]]))
    runs = {c: votes[["query_id", "passage_id"]].assign(score=coll.scored[c].to_numpy()[where]) for c in coll.names}
    qrels = read_parquet(RunPaths(coll.cfg.run_dir).dataset / "qrels.parquet")
    aps = {c: evaluate_run(runs[c], qrels, require=REQUIRE[name], rn=())["MAP"] for c in coll.names}  # evaluate's
    full = {c: float(ap.mean()) for c, ap in aps.items()}
    lfs = [c for c in coll.names if c.endswith(" alone") and c != BASELINE]
    systems = [max(lfs, key=lambda c: full[c]), LABEL_FREE]
    lists = ranked_lists({c: runs[c] for c in [BASELINE, *systems]})
    k = depth(per_query, 2)
    by_query = {s: true_diffs(lists, s, key, k) for s in systems}
    truth = {s: diffs.mean() for s, diffs in by_query.items()}
    candidate_lists = rankings(votes, coll.cfg.aggregate.options_for("fusion"))
    compared = {c: runs[c] for c in [BASELINE, *systems]}
    rows: dict[tuple[str, str, str], list[dict]] = {}

    def add(design: str, system: str, what: str, low: float, high: float, truth: float, passages: float,
            read: int = queries) -> None:
        found, covered = hit(low, high, truth)
        measure = what.split("@")[0]
        needed = queries_needed(by_query[system], measure) if design == "pooled" and measure in MEASURES else np.nan
        rows.setdefault((design, system, what), []).append({"true_diff": truth, "found": found, "covered": covered,
                                                           "passages": passages, "read": read, "needed": needed})

    for seed in range(draws):
        pairs = judged(sample_pairs(*candidate_lists, queries, per_query, seed), key)
        table = sample_table(compared, Judgments(pairs[DESIGN].reset_index(drop=True)), BASELINE)
        for s in systems:
            add("today", s, "MAP", table.loc[s, "diff low"], table.loc[s, "diff high"], full[s] - full[BASELINE],
                len(pairs) / pairs["query_id"].nunique())
        for s in systems:
            pooled = judged(pool_sample({BASELINE: lists[BASELINE], s: lists[s]}, queries, per_query, seed), key)
            size, population = len(pooled) / queries, int(pooled["population"].iloc[0])
            share = population / int(pooled["split_queries"].iloc[0])
            values = query_values(pooled.astype(str))  # as read from a judging file
            for m in MEASURES:
                diffs = (values[(s, m)] - values[(BASELINE, m)]).to_numpy(float) * share
                add("pooled", s, f"{m}@{k}", *t_interval(diffs, population), truth[s][m], size)
            diffs = (values[(s, "RR")] - values[(BASELINE, "RR")]).to_numpy(float) * share
            planned = np.full(queries, queries)
            path = confidence_path(diffs, population, planned)
            add("pooled", s, f"RR@{k} sequence", path[-1].low, path[-1].high, truth[s]["RR"], size)
            stop = next((t for t in range(1, queries) if path[t].verdict != "not yet"), queries)
            _, low, high, _ = verdict(diffs[:stop], population, planned)
            add("pooled", s, f"RR@{k} as judged", low, high, truth[s]["RR"], size, stop)
    out = []
    for (design, system, what), found in rows.items():
        frame = pd.DataFrame(found)
        out.append({"dataset": name, "design": design, "system": system, "measure": what,
                    "true_diff": frame["true_diff"].iloc[0], "found_share": frame["found"].mean(),
                    "coverage": frame["covered"].mean(), "passages_per_query": frame["passages"].mean(),
                    "queries_judged": frame["read"].mean(), "queries_for_80": frame["needed"].iloc[0],
                    "samples": len(frame)})
    return out


def readme_table(table: pd.DataFrame) -> str:
    """The guide's table (docs/guide.md, "What 20 judged queries show"): per collection and system, the true differences, and how often each design's interval
    finds them (says "better") and covers them."""
    lines = []
    for (dataset, system), rows in table.groupby(["dataset", "system"], sort=False):
        at = rows.set_index(["design", "measure"])
        rr = next(m for d, m in at.index if d == "pooled" and m.startswith("RR@") and " " not in m)
        ndcg = rr.replace("RR", "nDCG")

        def cell(design: str, what: str) -> str:
            return f"{at.loc[(design, what), 'found_share']:.0%} / {at.loc[(design, what), 'coverage']:.0%}"

        judged = at.loc[("pooled", f"{rr} as judged")]
        lines.append({
            "collection": dataset, "system": system.replace(" alone", "").replace(LABEL_FREE, "label-free teacher"),
            "MAP diff": f"{at.loc[('today', 'MAP'), 'true_diff']:+.3f}", "today, MAP: found / covered": cell("today", "MAP"),
            f"{rr} diff": f"{at.loc[('pooled', rr), 'true_diff']:+.3f}", f"pooled, {rr}": cell("pooled", rr),
            f"pooled, {ndcg}": cell("pooled", ndcg),
            "as judged: found, queries read": f"{judged['found_share']:.0%}, {judged['queries_judged']:.1f}",
            f"queries to find {rr} in 80 %": f"{at.loc[('pooled', rr), 'queries_for_80']:.0f}",
        })
    return to_markdown(pd.DataFrame(lines).set_index("collection"), "s")


def write_readme(table: pd.DataFrame) -> None:
    """Rewrite the guide's block between ``<!-- judged-power -->`` and ``<!-- /judged-power -->``."""
    readme = ROOT / "docs" / "guide.md"
    text = readme.read_text(encoding="utf-8")
    block = f"<!-- judged-power -->\n{readme_table(table)}\n<!-- /judged-power -->"
    new, count = re.subn(r"<!-- judged-power -->.*?<!-- /judged-power -->", lambda _: block, text, flags=re.DOTALL)
    if count != 1:
        raise SystemExit("docs/guide.md has no <!-- judged-power --> block to rewrite")
    write_text(new, readme)


def main() -> None:
    parser = sample_arguments(__doc__)
    parser.add_argument("--readme", action="store_true", help="only rewrite the guide's table from the CSV")
    args = parser.parse_args()
    if args.readme:
        write_readme(pd.read_csv(CSV))
        return
    for name in args.datasets:
        if not (ROOT / "data" / name / "votes.parquet").exists():
            print(f"{name}: no votes.parquet (weakrank run pipelines/{name}.toml --stages ingest,label)")
            continue
        rows = pd.DataFrame(measure(name, args.queries, args.draws, args.per_query))
        table = pd.read_csv(CSV) if CSV.exists() else None  # read now: the other collections' rows as they are
        table = rows if table is None else pd.concat([table[table["dataset"] != name], rows], ignore_index=True)
        order = {d: i for i, d in enumerate(EVAL_SPLIT)}
        table = table.sort_values("dataset", key=lambda d: d.map(order), kind="stable")
        write_text(table.to_csv(index=False, float_format="%.4f"), CSV)
        print(to_markdown(rows.set_index(["design", "system", "measure"]).drop(columns="dataset"), ".3f"),
              flush=True)


if __name__ == "__main__":
    main()
