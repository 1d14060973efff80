"""The student's share of the shipped ranker without judgments, fitted on dev splits.

The shipped ranker averages its student's and its teacher's scores, each standardised within the list
(:func:`weakrank.ranker.average_views`). Without judgments nothing on the collection says how much the student
should weigh, so the share is a constant, :data:`weakrank.ranker.STUDENT_WEIGHT`, fitted here: per collection whose
dev split is not the split its figures report (WikiQA, TrecQA, wikiqa_bm25, cranfield, stackfaq; SemEval reports its
dev split, SciFact has none), the seed's weak student that ``bench_quality.py`` trained (it must exist: run that
first) scores the dev lists, the teacher is the run's (:func:`weakrank.stages.train.run_teacher`, the LFs' scores of
``votes.parquet``), and the dev MAP of each share is measured (dev gold: never read by training, and not a reported
figure). The fitted share maximises the mean over collections of the dev MAP gained over the teacher alone; the
share fitted without each collection in turn says how much it depends on one of them.

Writes ``benchmarks/student_weight.csv`` (``dataset, seed, weight, map, queries``); ``--markdown`` prints the gain
over the teacher per share and collection. Run: ``python benchmarks/bench_student_weight.py`` (a few minutes on 2
cores: the students score the dev lists once, cached under each run directory's ``bench/``).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT, trained_name

from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet, write_parquet, write_text
from weakrank.labeling import lf_names, score_matrix
from weakrank.paths import RunPaths
from weakrank.ranker import average_views
from weakrank.run_models import model_dir
from weakrank.stages.rerank import score_split
from weakrank.stages.train import run_teacher

COLLECTIONS = ["wikiqa", "trecqa", "wikiqa_bm25", "cranfield", "stackfaq"]
DEV = "dev"
WEIGHTS = tuple(np.round(np.arange(0.0, 1.0001, 0.05), 2))
CSV = ROOT / "benchmarks" / "student_weight.csv"


def dev_maps(name: str, seed: int) -> list[dict]:
    """Dev MAP of the shipped ranker of collection ``name``'s seed-``seed`` weak student at each of :data:`WEIGHTS`."""
    cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
    assert EVAL_SPLIT[name] != DEV, f"{name} reports its dev split"
    student_name = trained_name(cfg, seed, False)
    cached = cfg.run_dir / "bench" / f"{student_name}.{DEV}.parquet"
    if not cached.exists():
        write_parquet(score_split(cfg, model_dir(cfg, f"bench/models/{student_name}"), DEV), cached)
    student = read_parquet(cached)
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    votes = votes[votes["split"] == DEV].merge(student, on=["query_id", "passage_id"], validate="one_to_one")
    teacher = run_teacher(cfg)
    assert lf_names(votes) == teacher.names, (lf_names(votes), teacher.names)
    groups = votes["query_id"].to_numpy()
    taught = teacher.fused(score_matrix(votes), groups)
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    rows = []
    for weight in WEIGHTS:
        run = votes[["query_id", "passage_id"]].assign(
            score=average_views(taught, votes["score"].to_numpy(np.float64), groups, float(weight)))
        per_query = evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"]
        rows.append({"dataset": name, "seed": seed, "weight": weight, "map": per_query.mean(),
                     "queries": len(per_query)})
    return rows


def gains(table: pd.DataFrame) -> pd.DataFrame:
    """Dev MAP gained over the teacher alone (weight 0), per share (rows) and collection (columns, mean over seeds),
    with their mean."""
    wide = table.groupby(["weight", "dataset"])["map"].mean().unstack("dataset")
    wide = wide - wide.loc[0.0]
    return wide.assign(mean=wide.mean(axis=1))


def fitted(table: pd.DataFrame) -> float:
    """The share with the largest mean gain over the teacher alone."""
    return float(gains(table)["mean"].idxmax())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=COLLECTIONS)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="only print student_weight.csv's gains as a table")
    args = parser.parse_args()
    if not args.markdown:
        rows = [row for name in args.datasets for seed in range(args.seeds) for row in dev_maps(name, seed)]
        write_text(pd.DataFrame(rows).to_csv(index=False, float_format="%.4f"), CSV)
    table = pd.read_csv(CSV)
    print(gains(table).round(4).to_markdown())
    print(f"\nfitted share: {fitted(table):g}; fitted without each collection: " + ", ".join(
        f"{name} {fitted(table[table['dataset'] != name]):g}" for name in table["dataset"].unique()))


if __name__ == "__main__":
    main()
