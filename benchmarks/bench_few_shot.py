"""Few-shot mode, label model only: is judging N queries worth it? Test MAP of the fusion label model's labels
with N = 0, 10, 30 judged queries choosing its LF weighting (``[aggregate] gold_queries``), beside the best LF.

The judged queries come from the dev split (WikiQA, TrecQA) or from the train split (SemEval, whose dev split
is the evaluation split, and SciFact, which has none); ``--draws`` random sets of N of them (the mean and
spread say how much the choice depends on which queries a user judged). No ranker is trained here: a student
of better labels is measured by ``bench_quality.py`` on a run with ``gold_queries`` set.
Writes ``benchmarks/few_shot.csv``.

Run: ``python benchmarks/bench_few_shot.py`` (datasets whose votes.parquet exists)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from bench_quality import EVAL_SPLIT, REQUIRE, ROOT

from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet, to_markdown, write_text
from weakrank.label_models import fit_predict, judged_queries
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import SCORE, lf_names
from weakrank.paths import RunPaths

GOLD_SPLIT = {"wikiqa": "dev", "trecqa": "dev", "semeval": "train", "scifact": "train"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(EVAL_SPLIT), choices=list(EVAL_SPLIT))
    parser.add_argument("--sizes", nargs="+", type=int, default=[0, 10, 30])
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--markdown", action="store_true", help="only print few_shot.csv as the docs' table")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "few_shot.csv"
    if args.markdown:
        table = pd.read_csv(csv)
        wide = table.groupby(["dataset", "gold_queries"], sort=False).agg(
            labels_map=("labels_map", "mean"), spread=("labels_map", "std"), best_lf=("best_lf_map", "first"))
        print(to_markdown(wide, ".3f"))
        return
    rows = []
    for name in args.datasets:
        cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
        paths = RunPaths(cfg.run_dir)
        if not paths.votes.exists():
            print(f"{name}: no votes.parquet (run bench_quality.py first)")
            continue
        votes, split = read_parquet(paths.votes), EVAL_SPLIT[name]
        qrels = read_parquet(paths.dataset / "qrels.parquet")
        judged = judged_queries(votes, GOLD_SPLIT[name], len(votes))
        evaluated = votes[votes["split"] == split]

        def test_map(scores: np.ndarray) -> float:
            run = evaluated[["query_id", "passage_id"]].assign(score=scores[evaluated.index])
            return float(evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"].mean())

        best_lf = max(test_map(votes[SCORE + lf].to_numpy()) for lf in lf_names(votes))
        rng = np.random.default_rng(0)
        for n in args.sizes:
            for draw in range(args.draws if n else 1):
                gold = list(rng.choice(judged, size=n, replace=False)) if n else []
                model = ScoreFusionModel(**cfg.aggregate.options)
                labels = fit_predict(votes, model, gold)
                rows.append({"dataset": name, "gold_queries": n, "draw": draw, "choice": model.choice_,
                             "labels_map": test_map(labels), "best_lf_map": best_lf})
        table = pd.DataFrame([r for r in rows if r["dataset"] == name])
        print(table.groupby("gold_queries")["labels_map"].agg(["mean", "std", "count"]).assign(best_lf=best_lf)
              .to_string(float_format=lambda v: f"{v:.4f}"), flush=True)
        print(table.groupby("gold_queries")["choice"].agg(lambda c: ", ".join(sorted(set(c)))).to_string())
    table = pd.DataFrame(rows)
    old = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=table.columns)
    table = pd.concat([old[~old["dataset"].isin(table["dataset"])], table], ignore_index=True)
    write_text(table.to_csv(index=False, float_format="%.4f"), csv)


if __name__ == "__main__":
    main()
