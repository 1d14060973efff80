"""The judged-mode constants, fitted on the train splits only: the sample's design (how much the answerable strata
are oversampled, how many of a query's passages are drawn at random) and the rule's (least judged queries with a
relevant passage, least estimated lead, margin in standard errors).

For each collection and each of ``--draws`` draws, a judged sample of N train queries is drawn as ``weakrank select
--seed D`` would draw it (the person simulated by the train gold), the rule chooses from its estimate, and the
choice is scored by full-judgment MAP on the rest of the train queries against the label-free weighting's. No test or dev split is read. The constants shipped are those with the largest mean gain
over the tuning collections among those that lose more than :data:`LOSS` in at most 5 % of the draws on every one of
them, at every N.

Writes ``benchmarks/judged_rule.csv`` (a row per constants, collection and N: mean gain, share of losses, share of
changes); ``--markdown`` prints the best rows.

Run: ``python benchmarks/bench_judged_rule.py`` (collections whose votes.parquet exists)
"""

from __future__ import annotations

import argparse
import itertools

import pandas as pd
from common import ROOT
from judged_sim import estimate_of, load, sample, write_per_dataset

from weakrank.combinations import LABEL_FREE
from weakrank.evaluation.tables import to_markdown
from weakrank.judged.rule import Rule, choose

TUNING = ["wikiqa", "trecqa", "semeval", "scifact", "wikiqa_bm25"]  # their train splits fit the constants
OVERSAMPLE = (1.0, 2.0, 4.0)
SAMPLED = (2, 3, 4)
MARGINS = (0.5, 1.0, 1.5, 2.0, 2.5)
MIN_LEADS = (0.0, 0.02, 0.05)
MIN_QUERIES = (3, 5)
LOSS = 0.005  # a choice this far below the label-free weighting on the held-out half counts as a loss


def simulate(name: str, sizes: list[int], draws: int, per_query: int) -> pd.DataFrame:
    """A row per design, rule, N and draw: the chosen candidate's MAP gain on the held-out half."""
    coll = load(name)
    queries = list(coll.found.ranked)
    rules = [Rule(m, lead, q) for m, lead, q in itertools.product(MARGINS, MIN_LEADS, MIN_QUERIES)]
    rows = []
    for draw in range(draws):
        for oversample, sampled, n in itertools.product(OVERSAMPLE, SAMPLED, sizes):
            judged = sample(coll, n, draw, "select", None, per_query, oversample, sampled)
            held_out = coll.pool_map([q for q in queries if q not in set(judged.queries)])
            found = estimate_of(coll, judged)
            for rule in rules:
                choice = choose(found, rule).name
                rows.append({"dataset": name, "oversample": oversample, "sampled": sampled, "n": n, "draw": draw,
                             "margin": rule.margin, "min_lead": rule.min_lead, "min_queries": rule.min_queries,
                             "gain": held_out[choice] - held_out[LABEL_FREE], "changed": choice != LABEL_FREE,
                             "with_relevant": found.queries})
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """A row per constants, collection and N: mean gain, share of losses, share of changes."""
    keys = ["oversample", "sampled", "margin", "min_lead", "min_queries", "dataset", "n"]
    return table.groupby(keys).agg(gain=("gain", "mean"), losses=("gain", lambda g: float((g < -LOSS).mean())),
                                   changed=("changed", "mean"), with_relevant=("with_relevant", "mean")).reset_index()


def best(rows: pd.DataFrame) -> pd.DataFrame:
    """Per constants: mean gain over collections and sizes, the worst share of losses; the admissible ones first."""
    constants = ["oversample", "sampled", "margin", "min_lead", "min_queries"]
    tuning = rows[rows["dataset"].isin(TUNING)]
    out = tuning.groupby(constants).agg(gain=("gain", "mean"), worst_losses=("losses", "max"),
                                        changed=("changed", "mean")).reset_index()
    out["admissible"] = out["worst_losses"] <= 0.05
    return out.sort_values(["admissible", "gain"], ascending=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=TUNING)
    parser.add_argument("--sizes", nargs="+", type=int, default=[5, 10, 20])
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--per-query", type=int, default=6)
    parser.add_argument("--markdown", action="store_true", help="only print the best constants from judged_rule.csv")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "judged_rule.csv"
    if not args.markdown:
        write_per_dataset(csv, args.datasets, lambda name: summary(simulate(name, args.sizes, args.draws, args.per_query)))
    print(to_markdown(best(pd.read_csv(csv)).head(15).set_index("oversample"), ".4f"))


if __name__ == "__main__":
    main()
