"""Training that wastes less (issue "the main job in six minutes"): training budgets against the default, at the
same test MAP.

Two parts, both against the default ``[train]`` measured in the same run:

* ``--steps N`` (step time): N interleaved listwise steps of every budget on the same WikiQA batches (step i of
  each, then step i + 1), so load from other processes falls on all alike; seconds per step and the ratio against
  the default's. ``torch.compile`` of the encoder is timed beside them (its first step, the compilation, apart).
  Writes ``benchmarks/train_step_time.csv``.
* the budgets' MAP (default): per dataset and seed, the student trained with each budget (cached by
  :func:`bench_quality.trained_run`), alone and shipped (with its teacher), test MAP; and the training time as
  ``steps × seconds per step`` plus its evaluations' seconds against the default's, from the step-time table (wall minutes on a shared machine
  are printed, not compared). Adds its rows to ``benchmarks/train_budget.csv`` (those of the same dataset, seed and
  budget replaced).

Run: ``python benchmarks/bench_train_budget.py --steps 12`` then
``python benchmarks/bench_train_budget.py --datasets wikiqa trecqa --seeds 3``.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from common import EVAL_SPLIT, REQUIRE, effective, shipped_run, trained_run
from scipy.stats import ttest_rel

from weakrank.config import load_config
from weakrank.dataset import Dataset
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet, write_text
from weakrank.paths import RunPaths
from weakrank.stages.stage import train_config
from weakrank.stages.train import build_trainer, train_labels
from weakrank.training.build import training_data
from weakrank.training.lengths import resolve_max_length
from weakrank.training.objectives import objective_from_config
from weakrank.training.rankers import new_ranker
from weakrank.training.samplers import UniformSampler
from weakrank.training.trainer import Trainer, prepare_run

ROOT = Path(__file__).resolve().parents[1]
STEP_CSV, BUDGET_CSV = ROOT / "benchmarks" / "train_step_time.csv", ROOT / "benchmarks" / "train_budget.csv"
# the budgets, as [train] overrides of the default; "default" is the reference
BEFORE = {"max_steps": 400, "eval_every": 100}  # [train]'s defaults, WikiQA's budget until 2026-11-27
BUDGETS: dict[str, dict] = {  # each a pipeline's [train] plus these settings
    "default": {},
    "400 steps, every 100": BEFORE,
    "freeze 2": {**BEFORE, "freeze_layers": 2},
    "freeze 3": {**BEFORE, "freeze_layers": 3},
    "freeze 4": {**BEFORE, "freeze_layers": 4},
    "groups of 6": {**BEFORE, "group_size": 6},
    "48 tokens": {**BEFORE, "max_length": 48},
    "250 steps": {**BEFORE, "max_steps": 250},
    "freeze 3, 250 steps": {**BEFORE, "freeze_layers": 3, "max_steps": 250},
    "200 steps, lr 1e-4": {**BEFORE, "max_steps": 200, "lr": 1e-4},
    "one evaluation": {**BEFORE, "eval_every": 0},
    "250 steps, one evaluation": {"max_steps": 250, "eval_every": 0},
}
STEPLESS = ("max_steps", "lr", "eval_every")  # settings that leave a step's work as it is


def per_step_settings(name: str) -> dict:
    """A budget's settings less those that leave a step's work as it is: what its step time depends on."""
    return {k: v for k, v in BUDGETS[name].items() if k not in STEPLESS}


def step_budget(name: str) -> str:
    """The budget whose step is timed for ``name``: the first with the same per-step settings."""
    return next(other for other in BUDGETS if per_step_settings(other) == per_step_settings(name))


def step_times(steps: int, compile_too: bool) -> pd.DataFrame:
    """Seconds per listwise step of each budget (its per-step settings; the step count does not matter here)."""
    cfg = load_config(ROOT / "pipelines" / "wikiqa.toml")
    paths = RunPaths(cfg.run_dir)
    tc = train_config(cfg, seed=0, eval_every=0, checkpoint_every=0)
    data = training_data(train_labels(paths, tc).table, Dataset.load(paths.dataset), tc, tc.train_split)
    tc = resolve_max_length(tc, data)
    per_step = {name: per_step_settings(name) for name in BUDGETS if step_budget(name) == name}
    if compile_too:
        per_step["torch.compile"] = {}
    trainers = {}
    for name, overrides in per_step.items():
        c = replace(tc, **overrides)
        prepare_run(c)
        trainers[name] = Trainer(new_ranker(c), objective_from_config(c), UniformSampler(), c, data=data,
                                 out_dir=Path("/tmp/weakrank-bench"))
    if compile_too:
        trainers["torch.compile"].model.encoder = torch.compile(trainers["torch.compile"].model.encoder, dynamic=True)
    evaluating = build_trainer(cfg, tc)  # the default's, with the dev split's evaluator as the train stage builds it
    order, seconds, first = list(data.lists), dict.fromkeys(trainers, 0.0), {}
    for i in range(steps + 1):  # step 0: warm-up (and compilation)
        queries = order[i * tc.batch_size : (i + 1) * tc.batch_size]
        for name, trainer in trainers.items():
            batch = trainer.data.list_batch(queries, trainer.args.group_size, np.random.default_rng([0, i]))
            start = time.perf_counter()
            trainer.step(batch)
            took = time.perf_counter() - start
            if i:
                seconds[name] += took
            else:
                first[name] = took
        if i == steps // 2:  # one evaluation amid the steps, under the load they had
            started = time.perf_counter()
            evaluating.evaluate()
            per_eval = time.perf_counter() - started
    rows = [{"budget": name, "seconds_per_step": seconds[name] / steps, "first_step_seconds": first[name],
             "speed_vs_default": seconds["default"] / seconds[name], "steps_timed": steps,
             "seconds_per_evaluation": per_eval,
             "threads": torch.get_num_threads()} for name in trainers]
    return pd.DataFrame(rows)


def budgets_map(datasets: list[str], seeds: int, names: list[str], quiet: bool) -> pd.DataFrame:
    """Per dataset, seed and budget: steps trained, wall minutes, test MAP of the student and the shipped ranker."""
    rows = []
    for dataset in datasets:
        cfg = load_config(ROOT / "pipelines" / f"{dataset}.toml")
        split, qrels = EVAL_SPLIT[dataset], read_parquet(cfg.run_dir / "dataset" / "qrels.parquet")
        for seed in range(seeds):
            for name in names:
                run, minutes = trained_run(cfg, split, seed, False, quiet, **BUDGETS[name])
                shipped = shipped_run(cfg, split, seed, **BUDGETS[name])
                steps = effective(cfg, train_config(cfg, seed=seed, **BUDGETS[name])).max_steps
                student, ship = (evaluate_run(r, qrels, require=REQUIRE[dataset], rn=())["MAP"] for r in (run, shipped))
                rows.append({"dataset": dataset, "seed": seed, "budget": name, "steps": steps,
                             "minutes": round(minutes, 2), "student_map": student.mean(), "shipped_map": ship.mean(),
                             "per_query": ship})
                print(f"{dataset} seed {seed} {name}: {steps} steps, {minutes:.1f} min, student {student.mean():.4f}, "
                      f"shipped {ship.mean():.4f}", flush=True)
    return pd.DataFrame(rows)


def training_seconds(name: str, dataset: str, steps: float, times: pd.DataFrame) -> float:
    """Seconds a budget's training on ``dataset`` takes by the step-time table: its steps and its evaluations
    (every ``eval_every`` steps of its pipeline's ``[train]`` with the budget's settings, and at the end)."""
    row = times.set_index("budget").loc[step_budget(name)]
    cfg = load_config(ROOT / "pipelines" / f"{dataset}.toml")
    every = train_config(cfg, **BUDGETS[name]).eval_every
    evaluations = math.ceil(steps / every) if every else 1
    return steps * row["seconds_per_step"] + evaluations * row["seconds_per_evaluation"]


def summary(table: pd.DataFrame, times: pd.DataFrame) -> pd.DataFrame:
    """Mean MAP over seeds per dataset and budget, its difference to the default's with a paired t-test (per-query
    shipped MAP, mean over seeds), and the training time against the default's (steps × seconds per step)."""
    out = []
    for (dataset, name), rows in table.groupby(["dataset", "budget"], sort=False):
        base = table[(table["dataset"] == dataset) & (table["budget"] == "default")]
        a = sum(rows["per_query"]) / len(rows)
        b = sum(base["per_query"]) / len(base)
        p = ttest_rel(*a.align(b, join="inner")).pvalue if name != "default" else np.nan
        seconds = training_seconds(name, dataset, rows["steps"].mean(), times)
        reference = training_seconds("default", dataset, base["steps"].mean(), times)
        out.append({"dataset": dataset, "budget": name, "seeds": len(rows), "steps": rows["steps"].mean(),
                    "student_map": rows["student_map"].mean(), "shipped_map": rows["shipped_map"].mean(),
                    "shipped_std": rows["shipped_map"].std(ddof=0),
                    "shipped_vs_default": rows["shipped_map"].mean() - base["shipped_map"].mean(), "p": p,
                    "train_seconds": seconds,
                    "speed_vs_default": reference / seconds})
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, help="time N steps of every budget (writes train_step_time.csv)")
    parser.add_argument("--compile", action="store_true", help="with --steps: also torch.compile")
    parser.add_argument("--datasets", nargs="+", default=["wikiqa", "trecqa"], choices=list(EVAL_SPLIT))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budgets", nargs="+", default=list(BUDGETS), choices=list(BUDGETS))
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    if args.steps:
        times = step_times(args.steps, args.compile)
        write_text(times.to_csv(index=False, float_format="%.4f"), STEP_CSV)
        print(times.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return
    names = ["default"] + [n for n in args.budgets if n != "default"]
    table = budgets_map(args.datasets, args.seeds, names, args.quiet)
    rows = table.drop(columns="per_query")
    if BUDGET_CSV.exists():  # rows of other budgets, datasets and seeds stay
        old = pd.read_csv(BUDGET_CSV)
        ran = old.set_index(["dataset", "seed", "budget"]).index.isin(rows.set_index(["dataset", "seed", "budget"]).index)
        rows = pd.concat([old[~ran], rows], ignore_index=True)
    write_text(rows.to_csv(index=False, float_format="%.4f"), BUDGET_CSV)
    result = summary(table, pd.read_csv(STEP_CSV))
    print(result.to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
