"""More unlabelled queries: does a student trained on every split's lists (their qrels never read) beat the one
trained on the train split alone?

Inductive (the default, bench_quality's ``weak``): the student learns the train split's lists. Transductive:
the same labels, but the dev and evaluation splits' lists are training lists too (the label model already
scored them without gold; their qrels are read by the evaluation only). No early stopping (the dev lists are
training lists): 400 steps. Both the student alone and the shipped ranker; ``benchmarks/transductive.csv``.

Run: ``python benchmarks/bench_transductive.py --datasets trecqa --seeds 2``
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from common import compare_systems, shipped_run, trained_run

from weakrank.io import read_metadata, read_parquet, write_parquet
from weakrank.paths import RunPaths


def every_split_labels(cfg) -> str:
    """labels.parquet with every row in the train split (what the student sees; gold is never read in weak mode)."""
    path = cfg.run_dir / "bench" / "transductive_labels.parquet"
    if not path.exists():
        labels = RunPaths(cfg.run_dir).labels  # its metadata keeps the label model's state: the same teacher
        write_parquet(read_parquet(labels).assign(split="train"), path, metadata=read_metadata(labels))
    return str(path)


def systems(cfg, split: str, seed: int, args) -> dict[str, pd.DataFrame]:
    """The inductive and transductive students and shipped rankers on ``split``."""
    every = {"labels": every_split_labels(cfg), "dev_split": "", "max_epochs": 0.0}
    return {"inductive student": trained_run(cfg, split, seed, False, args.quiet)[0],
            "inductive shipped": shipped_run(cfg, split, seed),
            "transductive student": trained_run(cfg, split, seed, False, args.quiet, **every)[0],
            "transductive shipped": shipped_run(cfg, split, seed, **every)}


def main() -> None:
    compare_systems(__doc__, "transductive.csv", systems, [("transductive student", "inductive student"),
                                                           ("transductive shipped", "inductive shipped")], ["trecqa"])


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
