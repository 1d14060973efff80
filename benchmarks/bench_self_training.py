"""Self-training (Noisy Student, Xie et al. 2020): does a second student, distilled from the shipped ranker of
the first round (the round-1 student averaged with its teacher) instead of from the teacher alone, beat the
first, alone and shipped?

Per dataset and seed: the round-1 student is bench_quality's cached weak ranker; its shipped ranker scores
every pair of every split (no gold read); those scores become the ``score`` column a round-2 student distils
(``[train] labels``; same ``[train]`` otherwise, a fresh encoder). The round-2 shipped ranker is the round-2
student averaged with the same teacher (the fusion label model over the LFs): one cross-encoder to run, as in
round 1. Test MAP of both rounds, alone and shipped, goes to ``benchmarks/self_training.csv``.

Run after ``bench_quality.py`` (it trains round 1 when it is not cached):
``python benchmarks/bench_self_training.py --datasets trecqa wikiqa --seeds 1``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from bench_quality import EVAL_SPLIT, REQUIRE, ROOT, shipped_run, trained_run
from scipy.stats import ttest_rel

from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet, to_markdown, write_parquet, write_text
from weakrank.label_models.fusion import standardize_within
from weakrank.paths import RunPaths


def round_two_labels(cfg, seed: int, quiet: bool) -> Path:
    """labels.parquet with ``score`` replaced by the round-1 shipped ranker's score of every pair."""
    path = cfg.run_dir / "bench" / f"round2_labels_seed{seed}.parquet"
    if path.exists():
        return path
    labels = read_parquet(RunPaths(cfg.run_dir).labels)
    runs = [shipped_run(cfg, split, seed) for split in labels["split"].unique()]
    shipped = pd.concat(runs, ignore_index=True).rename(columns={"score": "shipped"})
    merged = labels.drop(columns=["score"]).merge(shipped, on=["query_id", "passage_id"], how="left",
                                                  validate="one_to_one")
    if merged["shipped"].isna().any():
        raise RuntimeError(f"{merged['shipped'].isna().sum()} labelled pairs have no shipped score")
    merged["score"] = standardize_within(merged[["shipped"]].to_numpy(), merged["query_id"].to_numpy())[:, 0]
    write_parquet(merged.drop(columns=["shipped"])[labels.columns], path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(EVAL_SPLIT), choices=list(EVAL_SPLIT))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="only print self_training.csv as the docs' table")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "self_training.csv"
    if args.markdown:
        table = pd.read_csv(csv).groupby(["dataset", "system"], sort=False)["map"].agg(["mean", "std", "count"])
        print(to_markdown(table.rename(columns={"mean": "test MAP", "count": "seeds"}), ".4f"))
        return
    rows = []
    for name in args.datasets:
        cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
        split = EVAL_SPLIT[name]
        qrels = read_parquet(cfg.run_dir / "dataset" / "qrels.parquet")
        per_query: dict[str, list[pd.Series]] = {}
        for seed in range(args.seeds):
            labels = str(round_two_labels(cfg, seed, args.quiet))
            runs = {"round 1 student": trained_run(cfg, split, seed, False, args.quiet)[0],
                    "round 1 shipped": shipped_run(cfg, split, seed),
                    "round 2 student": trained_run(cfg, split, seed, False, args.quiet, labels=labels)[0],
                    "round 2 shipped": shipped_run(cfg, split, seed, labels=labels)}
            for system, run in runs.items():
                ap = evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"]
                per_query.setdefault(system, []).append(ap)
                rows.append({"dataset": name, "seed": seed, "system": system, "map": ap.mean()})
        means = {system: sum(aps) / len(aps) for system, aps in per_query.items()}
        for system in ("student", "shipped"):
            a, b = means[f"round 2 {system}"].align(means[f"round 1 {system}"], join="inner")
            print(f"{name}: round 2 − round 1 {system} = {a.mean() - b.mean():+.4f} MAP "
                  f"(p = {ttest_rel(a, b).pvalue:.3g}, {len(a)} queries, {args.seeds} seeds)")
    table = pd.DataFrame(rows)
    old = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=table.columns)
    old = old[~old["dataset"].isin(table["dataset"])]
    table = pd.concat([old, table], ignore_index=True)
    write_text(table.to_csv(index=False, float_format="%.4f"), csv)
    print(table.groupby(["dataset", "system"], sort=False)["map"].agg(["mean", "std", "count"]).to_string(
        float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
