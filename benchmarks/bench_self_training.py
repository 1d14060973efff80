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

from pathlib import Path

import numpy as np
import pandas as pd
from common import EVAL_SPLIT, compare_systems, shipped_run, trained_run

from weakrank.io import read_parquet, write_parquet
from weakrank.lists import standardize_within
from weakrank.paths import RunPaths


def round_two_labels(cfg, seed: int) -> Path:
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


def systems(cfg, split: str, seed: int, args) -> dict[str, pd.DataFrame]:
    """Both rounds' students and shipped rankers on ``split``."""
    labels = str(round_two_labels(cfg, seed))
    return {"round 1 student": trained_run(cfg, split, seed, False, args.quiet)[0],
            "round 1 shipped": shipped_run(cfg, split, seed),
            "round 2 student": trained_run(cfg, split, seed, False, args.quiet, labels=labels)[0],
            "round 2 shipped": shipped_run(cfg, split, seed, labels=labels)}


def main() -> None:
    compare_systems(__doc__, "self_training.csv", systems,
                    [("round 2 student", "round 1 student"), ("round 2 shipped", "round 1 shipped")], list(EVAL_SPLIT))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
