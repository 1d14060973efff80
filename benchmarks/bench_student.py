"""The student against where it started and against its teacher: does training ever leave it below them?

Per collection (the seven shared ones, ``pipelines/<name>.toml``, and the five no constant was fitted on,
``benchmarks/collections/<name>.toml``, where built), 1 seed, each pipeline's own defaults and, with ``--budgets``,
the README's fast option (``--max-steps 100``): the test MAP of the student alone (what ``SentenceTransformer`` or
``CrossEncoder`` loads), its teacher (the labels), the shipped ranker (``load_ranker``: the student at its earned
weight beside the teacher), the best encoder LF (where the student starts), the best LF, CombSUM and RRF of the LFs; and
how the student was kept (the share of its fine-tuned weights, its agreement with the teacher on held-out lists
against its start's) and its weight. Trained models are cached as ``bench_quality.py`` caches them (one cache: its
``student`` rows are these). Writes ``benchmarks/student.csv``; ``--markdown`` prints it as the docs' table with the
issue's bounds checked.

Run: ``python benchmarks/bench_student.py [--datasets ...] [--budgets default 100]``.
"""

from __future__ import annotations

import argparse
import json

import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT, shipped_run, trained_name, trained_run

from labeling_functions import BUILTIN
from weakrank import pipeline
from weakrank.baselines import column_run, fusion_runs
from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet, write_text
from weakrank.labeling import SCORE, lf_names
from weakrank.paths import RunPaths
from weakrank.ranker.teacher_state import read_teacher_state
from weakrank.run_models import model_dir
from weakrank.training.start_check import StartCheck

UNSEEN = ["med", "cisi", "cacm", "msmarco", "dbpedia"]
ENCODER_LFS = ("embedding_cosine", "bert_cosine")
BUDGETS = {"default": {}, "100": {"max_steps": 100}}
CSV = ROOT / "benchmarks" / "student.csv"


def config_of(name: str):
    """The pipeline config of a shared collection or of an unseen one."""
    path = ROOT / "pipelines" / f"{name}.toml"
    return load_config(path if path.exists() else ROOT / "benchmarks" / "collections" / f"{name}.toml")


def measured(name: str, budget: str, quiet: bool) -> dict:
    """One row of ``student.csv``: collection ``name`` trained with ``BUDGETS[budget]``."""
    cfg = config_of(name)
    paths = RunPaths(cfg.run_dir)
    if not paths.labels.exists():
        pipeline.ingest(cfg)
        pipeline.label(cfg, progress=not quiet)
        pipeline.aggregate(cfg)
    split, require = EVAL_SPLIT.get(name, cfg.evaluate.split), REQUIRE.get(name, cfg.evaluate.require)
    votes, qrels = read_parquet(paths.votes), read_parquet(paths.dataset / "qrels.parquet")
    labels = read_parquet(paths.labels, columns=["query_id", "passage_id", "split", "score"])
    overrides = BUDGETS[budget]
    student, minutes = trained_run(cfg, split, 0, False, quiet, **overrides)
    runs = {"student": student, "shipped": shipped_run(cfg, split, 0, **overrides),
            "teacher": column_run(labels, "score", split),
            **{lf: column_run(votes, SCORE + lf, split) for lf in lf_names(votes)},
            **{system.split(":")[1]: column_run(run, "score", split) for system, run in fusion_runs(votes).items()}}
    maps = {system: float(evaluate_run(run, qrels, require=require, rn=())["MAP"].mean()) for system, run in runs.items()}
    lfs = lf_names(votes)
    encoders = [lf for lf in lfs if lf in ENCODER_LFS]
    best_encoder = max(encoders, key=maps.get) if encoders else None
    best_lf = max(lfs, key=maps.get)
    directory = model_dir(cfg, f"bench/models/{trained_name(cfg, 0, False, **overrides)}")
    check = StartCheck.load(directory.parent)  # None for a student not checked against its start
    weight = read_teacher_state(directory, set(BUILTIN)).student_weight
    return {"dataset": name, "budget": budget, "student": maps["student"], "teacher": maps["teacher"],
            "shipped": maps["shipped"], "best_encoder_lf": best_encoder, "best_encoder_map": maps.get(best_encoder),
            "best_lf": best_lf, "best_lf_map": maps[best_lf], "combsum": maps.get("combsum"), "rrf": maps.get("rrf"),
            "share": check and check.share, "start_agreement": check and check.start,
            "kept_agreement": check and check.kept,
            "weight": weight, "minutes": round(minutes, 2)}


def markdown(table: pd.DataFrame) -> str:
    """``student.csv`` as the docs' table, with the bounds: the student ≥ the best encoder LF − 0.01 and ≥ its
    teacher − 0.01, the shipped ranker ≥ its teacher − 0.005."""
    out = table.assign(**{
        "student ≥ encoder LF − 0.01": (table["student"] >= table["best_encoder_map"] - 0.01).map({True: "yes", False: "no"}),
        "student ≥ teacher − 0.01": (table["student"] >= table["teacher"] - 0.01).map({True: "yes", False: "no"}),
        "shipped ≥ teacher − 0.005": (table["shipped"] >= table["teacher"] - 0.005).map({True: "yes", False: "no"}),
    })
    columns = ["dataset", "budget", "student", "best_encoder_map", "teacher", "shipped", "combsum", "rrf", "share",
               "weight", "student ≥ encoder LF − 0.01", "student ≥ teacher − 0.01", "shipped ≥ teacher − 0.005"]
    return to_markdown(out[columns].set_index("dataset"), ".3f")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=[*EVAL_SPLIT, *UNSEEN])
    parser.add_argument("--budgets", nargs="+", default=["default"], choices=list(BUDGETS))
    parser.add_argument("--markdown", action="store_true", help="only print student.csv as the docs' table")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    if not args.markdown:
        for name in args.datasets:
            for budget in args.budgets:
                row = measured(name, budget, args.quiet)
                print(json.dumps(row), flush=True)
                old = pd.read_csv(CSV) if CSV.exists() else pd.DataFrame(columns=list(row))
                old = old[~((old["dataset"] == name) & (old["budget"].astype(str) == budget))]
                write_text(pd.concat([old, pd.DataFrame([row])], ignore_index=True).to_csv(
                    index=False, float_format="%.4f"), CSV)
    print(markdown(pd.read_csv(CSV, dtype={"budget": str})))


if __name__ == "__main__":
    main()
