"""Few-shot mode, label model only: is judging N queries worth it? Test MAP of the fusion label model's labels
with N = 0, 10, 30 judged queries choosing its LF weighting (``[aggregate] gold_queries``), beside the best LF.

The judged queries come from the dev split (WikiQA, TrecQA) or from the train split (SemEval, whose dev split
is the evaluation split, and SciFact, which has none); ``--draws`` random sets of N of them: the mean over the
draws is what a user can expect from judging N queries, the spread and the share of draws below N = 0 what
they risk. The label-free fit does not read gold, so it is fitted once and each draw only makes the few-shot
choice among its weightings (``few_shot_weights``, as ``aggregate`` does: the mean of the weightings within one
standard error of the best on the judged queries), beside the rule it replaced (the best weighting alone) on the
same draws. No ranker is trained here: a student of few-shot labels is measured by
``bench_few_shot_students.py``. Writes ``benchmarks/few_shot.csv``.

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
from weakrank.label_models import gold_of, judged_queries
from weakrank.label_models.fusion import FEW_SHOT_WITHIN, ScoreFusionModel, few_shot_aps, few_shot_weights
from weakrank.labeling import SCORE, lf_names, score_matrix
from weakrank.paths import RunPaths

GOLD_SPLIT = {"wikiqa": "dev", "trecqa": "dev", "semeval": "train", "scifact": "train"}
RULES = {f"within {FEW_SHOT_WITHIN:g} SE of the best": FEW_SHOT_WITHIN, "best": 0.0}  # aggregate's rule first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(EVAL_SPLIT), choices=list(EVAL_SPLIT))
    parser.add_argument("--sizes", nargs="+", type=int, default=[0, 10, 30])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--markdown", action="store_true", help="only print few_shot.csv as the docs' table")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "few_shot.csv"
    if args.markdown:
        table = pd.read_csv(csv)
        label_free = table[table["gold_queries"] == 0].set_index("dataset")["labels_map"]
        table["below"] = table["labels_map"] < table["dataset"].map(label_free) - 1e-9
        wide = table.groupby(["dataset", "gold_queries", "rule"], sort=False).agg(
            labels_map=("labels_map", "mean"), spread=("labels_map", "std"), below_n0=("below", "mean"),
            draws=("draw", "count"), best_lf=("best_lf_map", "first")).reset_index()
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
        scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
        model = ScoreFusionModel(**cfg.aggregate.options).fit(scores, groups)
        views, label_free = model.scaled_views(scores, groups), model.weights_
        test_maps: dict[str, float] = {}  # test MAP of each weighting chosen
        rng = np.random.default_rng(0)
        for n in args.sizes:
            for draw in range(args.draws if n else 1):
                if n:
                    gold = gold_of(votes, list(rng.choice(judged, size=n, replace=False)))
                    aps = few_shot_aps(views, groups, gold, label_free)
                    choices = {rule: few_shot_weights(aps, label_free, within) for rule, within in RULES.items()}
                else:
                    choices = {"none": ("factor model", label_free)}
                for rule, (choice, weights) in choices.items():
                    if choice not in test_maps:
                        test_maps[choice] = test_map(views @ weights)
                    rows.append({"dataset": name, "gold_queries": n, "rule": rule, "draw": draw, "choice": choice,
                                 "labels_map": test_maps[choice], "best_lf_map": best_lf})
        table = pd.DataFrame([r for r in rows if r["dataset"] == name])
        print(table.groupby(["gold_queries", "rule"])["labels_map"].agg(["mean", "std", "count"])
              .assign(best_lf=best_lf).to_string(float_format=lambda v: f"{v:.4f}"), flush=True)
        print(table[table["rule"] == "best"].groupby("gold_queries")["choice"].value_counts().to_string())
    table = pd.DataFrame(rows)
    old = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=table.columns)
    table = pd.concat([old[~old["dataset"].isin(table["dataset"])], table], ignore_index=True)
    write_text(table.to_csv(index=False, float_format="%.4f"), csv)


if __name__ == "__main__":
    main()
