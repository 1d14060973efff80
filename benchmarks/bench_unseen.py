"""The whole label-free pipeline on collections no constant was fitted on: what a user of such a collection gets.

Per collection (``benchmarks/collections/<name>.toml``, built by ``benchmarks/collections/smart.py`` and
``leaderboard.py``): ``weakrank run`` with the defaults (the student learns the questions' pseudo-labels, never gold;
skipped where the run directory already holds the evaluation, unless ``--fresh``), then its evaluation's MAP of the
first stage, weakrank's BM25, the best single LF, the LFs' RRF and CombSUM, the teacher (the labels), the shipped
ranker and its student alone (what sentence-transformers loads). Writes ``benchmarks/unseen.csv`` (``dataset, system, map``); ``--markdown`` prints it as the docs' table.
Run: ``python benchmarks/bench_unseen.py`` (a few minutes a collection on 2 cores).
"""

from __future__ import annotations

import argparse

import pandas as pd
from common import ROOT

from weakrank import pipeline
from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet, write_text
from weakrank.run_models import model_dir
from weakrank.stages.rerank import score_split

COLLECTIONS = ["med", "cisi", "cacm", "msmarco", "dbpedia"]
SYSTEMS = {"first stage": "first stage", "bm25 (weakrank)": "BM25", "fusion-rrf": "RRF", "fusion-combsum": "CombSUM",
           "labels-fusion": "teacher", "model": "shipped ranker"}
LFS = ["bm25 (weakrank)", "tfidf", "embedding_cosine", "bert_cosine"]


def collected(name: str, fresh: bool = False) -> list[dict]:
    """``unseen.csv``'s rows of one collection, from its run's ``runs/evaluation.csv`` (run first where missing, or
    ``fresh``)."""
    cfg = load_config(ROOT / "benchmarks" / "collections" / f"{name}.toml")
    evaluation = cfg.run_dir / "runs" / "evaluation.csv"
    if fresh or not evaluation.exists():
        pipeline.run(cfg, progress=False)
    found = pd.read_csv(evaluation).set_index("system")["MAP"]
    first = next(s for s in found.index if s.startswith("first stage"))
    best = max((lf for lf in LFS if lf in found.index), key=found.get)
    student = score_split(cfg, model_dir(cfg), cfg.evaluate.split)  # the student alone, as sentence-transformers loads it
    qrels = read_parquet(cfg.run_dir / "dataset" / "qrels.parquet")
    rows = {**{label: found[first if system == "first stage" else system] for system, label in SYSTEMS.items()},
            "student": evaluate_run(student, qrels, require=cfg.evaluate.require, rn=())["MAP"].mean(),
            f"best LF ({best})": found[best]}
    return [{"dataset": name, "system": system, "map": round(float(v), 4)} for system, v in rows.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=COLLECTIONS, choices=COLLECTIONS)
    parser.add_argument("--markdown", action="store_true", help="only print unseen.csv as the docs' table")
    parser.add_argument("--fresh", action="store_true", help="run every pipeline again, its evaluation kept or not "
                        "(after a change to the defaults)")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "unseen.csv"
    if not args.markdown:
        write_text(pd.DataFrame([r for name in args.datasets for r in collected(name, args.fresh)]).to_csv(index=False), csv)
    table = pd.read_csv(csv)
    table["system"] = table["system"].str.replace(r"^best LF .*", "best LF", regex=True)
    wide = table.pivot(index="system", columns="dataset", values="map")
    print(to_markdown(wide.reindex([*SYSTEMS.values(), "student", "best LF"])[table["dataset"].unique()], ".3f"))


if __name__ == "__main__":
    main()
