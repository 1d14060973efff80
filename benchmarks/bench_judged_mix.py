"""How much of the shipped ranker should be its student, once the judgments have chosen the teacher?

The shipped ranker averages, per query, its student's and its teacher's standardised scores (weight 0.5 each). With
judgments, item 4 of "ten judgments that count" asks for that weight to be chosen on the judged queries. This
benchmark measures, offline, on the students ``bench_judgments.py`` trained (no training here):

- ``w``: the student's weight, ``w · student + (1 − w) · teacher``, from 0 (the teacher alone) to 1;
- ``teacher``: the label-free teacher (labels.parquet's score) or the embedding LF alone (what WikiQA's ten
  select queries chose);
- ``student``: the student trained on the label-free labels (``label-free``) or on select's 10 (``select 10``);
- ``queries``: MAP on the evaluated split (``test``; SemEval: ``dev``), on the dev split where the evaluated one
  is test, and AP on the ten judged train queries (condensed to the judged passages, ``judged``).

The judged train queries are those the select-10 student was trained on, so its AP there is biased upwards; the
label-free student never saw them. Writes ``benchmarks/judged_mix.csv``.

Run: ``python benchmarks/bench_judged_mix.py`` after ``bench_judgments.py`` (its cached students).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT, trained_name

from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_metadata, read_parquet, write_text
from weakrank.labeling import SCORE
from weakrank.lists import average_precisions, standardize_within
from weakrank.paths import RunPaths
from weakrank.ranker import load_ranker
from weakrank.run_models import model_dir

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
EMBEDDING = "embedding_cosine"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["wikiqa", "trecqa", "semeval"], choices=list(EVAL_SPLIT))
    args = parser.parse_args()
    rows = [row for name in args.datasets for row in measure(name)]
    table = pd.DataFrame(rows)
    print(table.pivot_table(index=["dataset", "queries", "student", "teacher"], columns="w", values="map")
          .to_string(float_format=lambda v: f"{v:.3f}"))
    write_text(table.to_csv(index=False, float_format="%.4f"), ROOT / "benchmarks" / "judged_mix.csv")


def measure(name: str) -> list[dict]:
    """The rows of one collection: every (queries, student, teacher, w)."""
    cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
    paths = RunPaths(cfg.run_dir)
    votes, labels = read_parquet(paths.votes), read_parquet(paths.labels, columns=["query_id", "passage_id", "score"])
    selected = paths.root / "bench" / "labels_select10.parquet"
    judged = read_parquet(selected, columns=["query_id", "passage_id", "judged"])
    texts = read_parquet(paths.dataset / "queries.parquet").set_index("query_id")["text"]
    passages = read_parquet(paths.dataset / "passages.parquet").set_index("passage_id")["text"]
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    students = {"label-free": trained_name(cfg, 0, False), "select 10": trained_name(cfg, 0, False, labels=str(selected))}
    # the checkpoint the shipped ranker uses (best, else final), loaded once; the evaluated split's scores are
    # bench_quality's cached run of it
    rankers = {student: load_ranker(model_dir(cfg, f"bench/models/{key}"), student_only=True)
               for student, key in students.items()}
    splits = {"test": EVAL_SPLIT[name]} | ({"dev": "dev"} if EVAL_SPLIT[name] != "dev" else {})
    judged_queries = set(read_metadata(selected)["gold_queries"])
    out = []
    for queries, rows in [(k, votes[votes["split"] == s]) for k, s in splits.items()] + [
            ("judged", votes[votes["query_id"].isin(judged_queries)])]:
        rows = rows.reset_index(drop=True)
        groups = rows["query_id"].to_numpy()
        keys = rows[["query_id", "passage_id"]]
        teachers = {"label-free": keys.merge(labels, how="left")["score"].to_numpy(float),
                    "embedding LF": rows[SCORE + EMBEDDING].to_numpy(float)}
        gold = keys.merge(judged, how="left")["judged"].to_numpy(float)

        def quality(scores: np.ndarray) -> float:
            if queries == "judged":
                return float(average_precisions(scores, groups, gold).mean())
            run = keys.assign(score=scores)
            return float(evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"].mean())

        pairs = list(zip(texts.loc[rows["query_id"]], passages.loc[rows["passage_id"]]))
        for student, key in students.items():
            if queries == "test":
                raw = keys.merge(read_parquet(paths.root / "bench" / f"{key}.parquet"), how="left")["score"]
            else:
                raw = rankers[student].predict(pairs)
            s = standardize_within(np.asarray(raw, float)[:, None], groups)[:, 0]
            for teacher, t in teachers.items():
                t = standardize_within(t[:, None], groups)[:, 0]
                out += [{"dataset": name, "queries": queries, "student": student, "teacher": teacher, "w": w,
                         "map": quality(w * s + (1 - w) * t)} for w in WEIGHTS]
        print(f"{name} {queries}: done", flush=True)
    return out


if __name__ == "__main__":
    main()
