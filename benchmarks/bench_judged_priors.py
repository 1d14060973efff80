"""Judgments that update the LFs' quality priors (:mod:`weakrank.judged.prior_update`) against the combination rule
(:mod:`weakrank.judged.rule`) and against no judgment, by simulation.

Per collection (its votes must exist: ``weakrank run pipelines/<name>.toml --stages ingest,label``), the fusion model
is fitted as ``aggregate`` fits it (the LFs' declared priors). For each of ``--draws`` draws and each size N, a judged
sample of N *train* queries is drawn as ``weakrank select --seed D`` draws it; the train split's gold stands in for the
person (:mod:`judged_sim`), so no test or dev judgment is read. Each method's teacher is then scored on the
collection's evaluation split (test MAP, :func:`weakrank.evaluation.metrics.evaluate_run`):

- ``none``: no judgment (the fit with the declared priors);
- ``rule``: the combination rule (``bench_judgments.CombinationSelector``'s choice among the
  candidates);
- ``priors τ=…``: the priors updated by the judged pairs, prior spread τ (:class:`~weakrank.judged.prior_update.
  PriorSelector`).

Writes ``benchmarks/judged_priors.csv``: a row per collection, method and N with the mean gain over ``none``, the
share of samples losing more than :data:`LOSS` and the worst loss; ``--markdown`` prints a summary per method and N.

Run: ``python benchmarks/bench_judged_priors.py`` (about 12 minutes on 2 cores once the votes exist; each collection's run directory as its
pipelines/<name>.toml names it)
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT
from judged_sim import judged_rows, load, sample, test_maps, write_per_dataset

from weakrank.combinations import LABEL_FREE
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.sampled_map import estimate
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet
from weakrank.judged.aligned import judged_totals
from weakrank.judged.design import candidate_scores
from weakrank.judged.prior_update import PRIOR_SD, PriorSelector
from weakrank.judged.rule import choose
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import score_matrix
from weakrank.paths import RunPaths

COLLECTIONS = ["wikiqa", "trecqa", "semeval", "scifact", "wikiqa_bm25", "cranfield", "stackfaq"]
LOSS = 0.01  # a sample whose teacher is this far below no judgment, in test MAP, counts as a loss
SPREADS = (PRIOR_SD,)  # τ: the shipped prior spread; others with --spreads


def simulate(name: str, sizes: list[int], draws: int, spreads: list[float]) -> pd.DataFrame:
    """A row per method, N and draw: the teacher's test MAP gain over no judgment."""
    coll = load(name)
    base = ScoreFusionModel(**coll.cfg.fusion_options())
    _, scored = candidate_scores(coll.votes, type(base)(**base.get_params()).fit_table(coll.votes))
    coll = replace(coll, scored=scored, names=list(scored.columns))
    split = EVAL_SPLIT[name]
    candidates = test_maps(coll, split)
    where = (coll.votes["split"] == split).to_numpy()
    keys = coll.votes.loc[where, ["query_id", "passage_id"]]
    test = coll.votes[where].reset_index(drop=True)
    scores, groups = score_matrix(test), test["query_id"].to_numpy()
    qrels = read_parquet(RunPaths(coll.cfg.run_dir).dataset / "qrels.parquet")

    def test_map(model: ScoreFusionModel) -> float:
        run = keys.assign(score=model.fused(scores, groups))
        return float(evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"].mean())

    none = float(candidates[LABEL_FREE])
    rows = []
    for n in sizes:
        for draw in range(draws):
            judged = judged_rows(coll, sample(coll, n, draw))
            choice = choose(estimate(judged_totals(coll.votes, scored, judged), judged.weights, LABEL_FREE)).name
            found = {"rule": float(candidates[choice])}
            for spread in spreads:
                found[f"priors τ={spread:g}"] = test_map(PriorSelector(base, spread).fit(coll.votes, judged).model_)
            rows += [{"dataset": name, "method": method, "n": n, "draw": draw, "gain": value - none}
                     for method, value in found.items()]
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """A row per collection, method and N: mean gain, share of losses, worst loss."""
    return table.groupby(["dataset", "method", "n"]).agg(
        gain=("gain", "mean"), losses=("gain", lambda g: float((g < -LOSS).mean())),
        worst=("gain", "min"), draws=("gain", "size")).reset_index()


def overview(rows: pd.DataFrame) -> pd.DataFrame:
    """Per method and N: the mean gain over collections and the worst collection's share of losses."""
    return rows.groupby(["method", "n"]).agg(gain=("gain", "mean"), worst_losses=("losses", "max"),
                                             worst=("worst", "min")).reset_index()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=COLLECTIONS, choices=COLLECTIONS)
    parser.add_argument("--sizes", nargs="+", type=int, default=[10, 30, 60])
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--spreads", nargs="+", type=float, default=list(SPREADS))
    parser.add_argument("--markdown", action="store_true", help="only print the summary of judged_priors.csv")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "judged_priors.csv"
    if not args.markdown:
        write_per_dataset(csv, args.datasets, lambda name: summary(simulate(name, args.sizes, args.draws, args.spreads)))
    print(to_markdown(overview(pd.read_csv(csv)).set_index("method"), ".4f"))


if __name__ == "__main__":
    main()
