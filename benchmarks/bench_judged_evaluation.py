"""How often the intervals of an evaluation by sample cover the full-qrels figures (the user with no qrels).

For each collection, ``--draws`` samples of N queries of the evaluated split are drawn as ``weakrank select
--evaluation`` draws them (:func:`weakrank.judged.evaluation.sample_pairs`: a simple random sample, each query's
passages as select asks them), judged by the split's qrels (BEIR: an unlisted candidate is not relevant), and
:func:`~weakrank.judged.evaluation.sample_table` estimates each candidate combination's MAP (BM25 alone the
baseline) with 95 % intervals. Reported per collection and system: how often the interval covers the full-qrels
MAP (``evaluate``'s figure) and the figure the estimator targets (each relevant passage counted once, which is MAP
where queries have one relevant passage), and how often the interval of the difference from BM25 covers the
full-qrels difference and excludes 0 in the right direction (the power to say "better than BM25").

Writes ``benchmarks/judged_evaluation.csv``.

Run: ``python benchmarks/bench_judged_evaluation.py`` (collections whose votes.parquet exists)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT
from judged_sim import list_ap, load, sample_arguments, test_maps

from weakrank.evaluation.tables import to_markdown
from weakrank.io import write_text
from weakrank.judged.design import rankings
from weakrank.judged.evaluation import sample_pairs, sample_table
from weakrank.judged.judgments import Judgments

BASELINE = "bm25 alone"


def measure(name: str, queries: int, draws: int, per_query: int) -> list[dict]:
    """A row per system: coverage and power over ``draws`` samples of ``queries`` queries."""
    coll = load(name)
    split = EVAL_SPLIT[name]
    where = (coll.votes["split"] == split).to_numpy()
    votes = coll.votes[where]
    gold = pd.to_numeric(votes["gold"], errors="coerce").to_numpy(float)
    if REQUIRE[name] == "relevant":
        gold = np.nan_to_num(gold, nan=0.0)
    runs = {c: votes[["query_id", "passage_id"]].assign(score=coll.scored[c].to_numpy()[where]) for c in coll.names}
    full = test_maps(coll, split)
    weighted = {}
    for c in coll.names:
        aps, weights = [], []
        for _, rows in votes.assign(y=gold, s=runs[c]["score"].to_numpy()).groupby("query_id", sort=False):
            if np.isfinite(rows["y"]).all() and rows["y"].sum() > 0:
                aps.append(list_ap(rows["s"].to_numpy(), rows["y"].to_numpy()))
                weights.append(rows["y"].sum())
        weighted[c] = float(np.average(aps, weights=weights))
    key = votes.assign(y=gold).set_index(["query_id", "passage_id"])["y"]
    hits = {c: {"map": 0, "weighted": 0, "diff": 0, "better": 0} for c in coll.names}
    lists = rankings(votes, coll.cfg.aggregate.options_for("fusion"))
    for draw in range(draws):
        pairs = sample_pairs(*lists, queries, per_query, draw)
        y = key.reindex(pd.MultiIndex.from_frame(pairs[["query_id", "passage_id"]])).to_numpy()
        judged = pairs.assign(relevance=np.nan_to_num(y, nan=0.0).astype(int))[np.isfinite(y)]
        table = sample_table(runs, Judgments(judged.reset_index(drop=True)), BASELINE)
        for c in coll.names:
            row = table.loc[c]
            hits[c]["map"] += row["low"] <= full[c] <= row["high"]
            hits[c]["weighted"] += row["low"] <= weighted[c] <= row["high"]
            diff = full[c] - full[BASELINE]
            hits[c]["diff"] += row["diff low"] <= diff <= row["diff high"]
            hits[c]["better"] += (row["diff low"] > 0) if diff > 0 else (row["diff high"] < 0) if diff < 0 else 0
    return [{"dataset": name, "system": c, "queries": queries, "draws": draws, "map": full[c],
             "weighted_map": weighted[c], "diff_vs_bm25": full[c] - full[BASELINE],
             **{f"covers_{k}": v / draws for k, v in hits[c].items()}} for c in coll.names]


def main() -> None:
    parser = sample_arguments(__doc__)
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "judged_evaluation.csv"
    table = pd.read_csv(csv) if csv.exists() else None
    for name in args.datasets:
        if not (ROOT / "data" / name / "votes.parquet").exists():
            print(f"{name}: no votes.parquet (weakrank run pipelines/{name}.toml --stages ingest,label)")
            continue
        rows = pd.DataFrame(measure(name, args.queries, args.draws, args.per_query))
        table = rows if table is None else pd.concat([table[table["dataset"] != name], rows], ignore_index=True)
        write_text(table.to_csv(index=False, float_format="%.4f"), csv)
        print(to_markdown(rows.set_index("system"), ".3f"), flush=True)


if __name__ == "__main__":
    main()
