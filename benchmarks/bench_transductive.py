"""More unlabelled queries: does a student trained on every split's lists (their qrels never read) beat the one
trained on the train split alone?

Inductive (the default, bench_quality's ``weak``): the student learns the train split's lists. Transductive:
the same labels, but the dev and evaluation splits' lists are training lists too (the label model already
scored them without gold; their qrels are read by the evaluation only). No early stopping (the dev lists are
training lists): 400 steps. Both the student alone and the shipped ranker; ``benchmarks/transductive.csv``.

Run: ``python benchmarks/bench_transductive.py --datasets trecqa --seeds 2``
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from bench_quality import EVAL_SPLIT, REQUIRE, ROOT, shipped_run, trained_run
from scipy.stats import ttest_rel

from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet, to_markdown, write_parquet, write_text
from weakrank.paths import RunPaths


def every_split_labels(cfg) -> str:
    """labels.parquet with every row in the train split (what the student sees; gold is never read in weak mode)."""
    path = cfg.run_dir / "bench" / "transductive_labels.parquet"
    if not path.exists():
        write_parquet(read_parquet(RunPaths(cfg.run_dir).labels).assign(split="train"), path)
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["trecqa"], choices=list(EVAL_SPLIT))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="only print transductive.csv as the docs' table")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "transductive.csv"
    if args.markdown:
        table = pd.read_csv(csv).groupby(["dataset", "system"], sort=False)["map"].agg(["mean", "std", "count"])
        print(to_markdown(table.rename(columns={"mean": "test MAP", "count": "seeds"}), ".4f"))
        return
    rows = []
    for name in args.datasets:
        cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
        split, qrels = EVAL_SPLIT[name], read_parquet(cfg.run_dir / "dataset" / "qrels.parquet")
        every = {"labels": every_split_labels(cfg), "dev_split": "", "max_epochs": 0.0}
        per_query: dict[str, list[pd.Series]] = {}
        for seed in range(args.seeds):
            runs = {"inductive student": trained_run(cfg, split, seed, False, args.quiet)[0],
                    "inductive shipped": shipped_run(cfg, split, seed),
                    "transductive student": trained_run(cfg, split, seed, False, args.quiet, **every)[0],
                    "transductive shipped": shipped_run(cfg, split, seed, **every)}
            for system, run in runs.items():
                ap = evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"]
                per_query.setdefault(system, []).append(ap)
                rows.append({"dataset": name, "seed": seed, "system": system, "map": ap.mean()})
        for system in ("student", "shipped"):
            a, b = (sum(per_query[f"{kind} {system}"]) / args.seeds for kind in ("transductive", "inductive"))
            a, b = a.align(b, join="inner")
            print(f"{name}: transductive − inductive {system} = {a.mean() - b.mean():+.4f} MAP "
                  f"(p = {ttest_rel(a, b).pvalue:.3g}, {len(a)} queries, {args.seeds} seeds)")
    table = pd.DataFrame(rows)
    old = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=table.columns)
    table = pd.concat([old[~old["dataset"].isin(table["dataset"])], table], ignore_index=True)
    write_text(table.to_csv(index=False, float_format="%.4f"), csv)
    print(table.groupby(["dataset", "system"], sort=False)["map"].agg(["mean", "std"]).to_string())


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
