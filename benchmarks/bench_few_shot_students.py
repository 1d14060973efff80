"""Few-shot mode, end to end: is judging N queries worth it for the ranker a user loads? Per N (``--sizes``,
default 0, 10, 30), the labels of the fusion label model whose LF weighting N judged queries chose
(``[aggregate] gold_queries = N``: the first N judged queries of the dev split, of the train split on SemEval
and SciFact, as ``aggregate`` takes them), a student trained on them with its checkpoint chosen by those
queries' gold MAP, and the shipped ranker (the student with that few-shot teacher), on the evaluation split.
N = 0 is bench_quality's ``weak`` and ``shipped`` (the same cached runs). Writes
``benchmarks/few_shot_students.csv``.

Run: ``python benchmarks/bench_few_shot_students.py --datasets wikiqa trecqa --sizes 0 30``
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from bench_few_shot import GOLD_SPLIT
from bench_quality import EVAL_SPLIT, compare_systems, shipped_run, trained_run

from weakrank.io import read_parquet, write_parquet
from weakrank.label_models import fit_labels, judged_queries
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names
from weakrank.paths import RunPaths


def few_shot_labels(cfg, n: int) -> Path:
    """labels.parquet as ``aggregate`` writes it with ``gold_queries = n`` (cached under ``bench/``)."""
    path = cfg.run_dir / "bench" / f"few_shot_labels_{n}.parquet"
    if not path.exists():
        votes = read_parquet(RunPaths(cfg.run_dir).votes)
        gold = judged_queries(votes, GOLD_SPLIT[cfg.run_dir.name], n)
        model = ScoreFusionModel(**cfg.aggregate.options)
        labels = fit_labels(votes, model, gold)
        write_parquet(labels, path, metadata={"model": "fusion", "lfs": lf_names(votes), "params": model.params(),
                                              "gold_queries": gold})
    return path


def systems(cfg, split: str, seed: int, args) -> dict[str, pd.DataFrame]:
    """The student and the shipped ranker of each few-shot size on ``split``."""
    out = {}
    for n in args.sizes:
        labels = {"labels": str(few_shot_labels(cfg, n))} if n else {}
        out[f"student N={n}"] = trained_run(cfg, split, seed, False, args.quiet, **labels)[0]
        out[f"shipped N={n}"] = shipped_run(cfg, split, seed, **labels)
    return out


def main() -> None:
    contrasts = [(f"{kind} N={n}", f"{kind} N=0") for n in (10, 30) for kind in ("student", "shipped")]
    compare_systems(__doc__, "few_shot_students.csv", systems, contrasts, list(EVAL_SPLIT),
                    lambda parser: parser.add_argument("--sizes", nargs="+", type=int, default=[0, 10, 30]))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
