"""``weakrank experiment``: the grid of the papers' tables, one cached cell at a time.

Cells: BM25 and every single LF, the LFs' RRF and CombSUM fusions, every label model used as a ranker, and
trained BERT-PR rankers (label model × variant × ε/α × negative sampler × noise ratio × seed) plus the
supervised ranker.
Each cell's per-query metrics are cached in ``<run_dir>/experiment/cells/<key>.parquet`` (key: a hash
of the cell's parameters), written atomically, so an interrupted grid resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.baselines import METHODS, bm25_negatives
from weakrank.config import PipelineConfig
from weakrank.errors import ConfigError, DataError, did_you_mean
from weakrank.evaluation.metrics import assessed_queries, evaluate_run
from weakrank.files import atomic_path
from weakrank.io import read_metadata, read_parquet, write_parquet, write_text
from weakrank.keys import check_keys, schema
from weakrank.labeling import lf_names
from weakrank.lock import locked
from weakrank.paths import RunPaths
from weakrank.progress import tqdm
from weakrank.reproduction.labels import check_label_sources, source_labels
from weakrank.reproduction.systems import unsupervised_runs
from weakrank.run_models import model_dir
from weakrank.stages.rerank import score_split
from weakrank.stages.stage import train_config
from weakrank.stages.train import train_ranker
from weakrank.training import TrainConfig
from weakrank.training.config import SAMPLERS

VARIANTS: dict[str, dict[str, Any]] = {
    "hinge": {"mode": "pairwise", "loss": "hinge", "target": "plain"},
    "ce": {"mode": "pairwise", "loss": "ce", "target": "plain"},  # the plain ranker LS, WSLS and LR smooth
    "noise_aware": {"mode": "pairwise", "loss": "hinge", "target": "noise_aware"},
    "ls": {"mode": "pairwise", "loss": "ce", "target": "ls"},
    "tls": {"mode": "pairwise", "loss": "ce", "target": "tls"},
    "wsls": {"mode": "pairwise", "loss": "ce", "target": "wsls"},
    "twsls": {"mode": "pairwise", "loss": "ce", "target": "twsls"},
    "lr": {"mode": "pairwise", "loss": "ce", "target": "relax"},
    "distill": {"mode": "listwise", "loss": "kl", "target": "plain"},
    # bi-encoder (architecture = "bi-encoder"), in-batch negatives: Sharma et al.'s (label relaxation) PR, LS, LR
    "pr": {"mode": "in_batch", "loss": "ce", "target": "plain"},
    "pr_ls": {"mode": "in_batch", "loss": "ce", "target": "ls"},
    "pr_relax": {"mode": "in_batch", "loss": "ce", "target": "relax"},
}
LABELS = {"hinge": "hinge", "ce": "CE", "noise_aware": "noise-aware", "ls": "LS", "tls": "T-LS", "wsls": "WSLS", "twsls": "T-WSLS",
          "lr": "LR", "distill": "listwise distillation", "pr": "PR", "pr_ls": "PR+LS", "pr_relax": "PR+LR"}
KNOBS = {"lr": "alpha", "pr_relax": "alpha", "ls": "epsilon", "tls": "epsilon", "wsls": "epsilon", "twsls": "epsilon",
         "pr_ls": "epsilon"}


@dataclass(frozen=True)
class Cell:
    """One system of the grid: a row name, its kind and the parameters its result depends on."""

    row: str
    kind: str  # "unsupervised" | "weak" | "supervised"
    params: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    seed: int = 0
    train: tuple[tuple[str, Any], ...] = field(default_factory=tuple)  # [train] with [experiment.train] on top

    @property
    def key(self) -> str:
        blob = {"row": self.row, "kind": self.kind, "params": self.params, "seed": self.seed}
        blob = json.dumps({**blob, "train": self.train} if self.train else blob, sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:16]


def check_grid(cfg: PipelineConfig) -> None:
    """The grid's variants, samplers and ``train`` keys exist, else a :class:`ConfigError` naming the file,
    the grid and the name (with the closest known one)."""
    exp, where = cfg.experiment, f"{cfg.source}: experiment grid {cfg.name!r}:"
    for kind, names, known in (("variant", exp.variants or [], VARIANTS), ("sampler", exp.samplers, SAMPLERS)):
        for name in names:
            if name not in known:
                raise ConfigError(f"{where} unknown {kind} {name!r}{did_you_mean(name, known)}; "
                                  f"choose from {sorted(known)}")
    check_keys(exp.train, schema(TrainConfig), f"{where} [train]", None)


def grid_cells(cfg: PipelineConfig, votes: pd.DataFrame) -> list[Cell]:
    """Every cell of the grid ``cfg.experiment``, in table order."""
    check_grid(cfg)
    check_label_sources(cfg, votes)
    exp = cfg.experiment
    cells = [Cell(name, "unsupervised") for name in lf_names(votes)]
    if len(lf_names(votes)) > 1:
        cells += [Cell(name, "unsupervised") for name in METHODS]  # fusion:rrf, fusion:combsum
    cells += [Cell(model, "unsupervised") for model in exp.label_models]
    seeds = exp.seeds
    train = tuple(sorted({**(cfg.train or {}), **exp.train}.items()))
    architecture = "bi-encoder" if dict(train).get("architecture") == "bi-encoder" else "BERT-PR"
    for model in exp.trained_label_models:
        for variant in list(VARIANTS) if exp.variants is None else exp.variants:
            knob = KNOBS.get(variant)
            values = (exp.alphas if knob == "alpha" else exp.epsilons) if knob else [None]
            for value in values:
                for sampler in exp.samplers:
                    for noise in exp.noise_ratios:
                        params = {**VARIANTS[variant], "sampler": sampler, "label_model": model, "noise": noise}
                        row = f"{architecture} {LABELS[variant]}"
                        if knob:
                            params[knob] = value
                            row += f" {'α' if knob == 'alpha' else 'ε'}={value:g}"
                        row += f" ({model}, NS {sampler}" + (f", noise {noise:g})" if noise else ")")
                        for seed in seeds:
                            cell_params = tuple(sorted({**params, **episode(sampler, seeds, seed)}.items()))
                            cells.append(Cell(row, "weak", cell_params, seed, train))
    if exp.supervised:
        cells += [Cell(f"{architecture} supervised", "supervised", (("loss", "hinge"),), seed, train) for seed in seeds]
    return cells


def episode(sampler: str, seeds: list[int], seed: int) -> dict[str, Any]:
    """AC-IR's seeds are successive episodes of one policy: a ``policy`` cell depends on the seeds before it."""
    return {"policy_after": tuple(seeds[: seeds.index(seed)])} if sampler == "policy" else {}


def policy_file(root: Path, cell: Cell) -> Path:
    """Where the AC-IR policy a cell's training ended with is kept."""
    return root / "policies" / f"{cell.key}.pt"


def carried_policy(root: Path, cell: Cell, workdir: Path) -> Path:
    """The ``policy_path`` of a ``policy`` cell: a copy of the policy its previous seed's cell ended with
    (none for the first seed), which the cell's training loads, continues and saves."""
    path = workdir / "policy.pt"
    path.unlink(missing_ok=True)  # an interrupted attempt's policy is not an earlier episode
    params = dict(cell.params)
    after = params["policy_after"]
    if after:
        previous = replace(cell, seed=after[-1], params=tuple(sorted({**params, "policy_after": after[:-1]}.items())))
        if not policy_file(root, previous).exists():
            raise DataError(f"no policy of seed {after[-1]}: delete its cached cell {previous.key} to rerun it",
                            file=policy_file(root, previous))
        workdir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(policy_file(root, previous), path)
    return path


CellRunner = Callable[[PipelineConfig, Cell, Path], pd.DataFrame]


def trained_run(cfg: PipelineConfig, cell: Cell, workdir: Path) -> pd.DataFrame:
    """Train the cell's ranker (on label-model labels, corrupted when asked) and score the eval split."""
    exp = cfg.experiment
    paths = RunPaths(cfg.run_dir)
    root = paths.experiment
    params = dict(cell.params)
    overrides = {**cell_overrides(cfg, cell), "output": str(workdir.relative_to(cfg.run_dir))}
    if cell.kind != "supervised":
        name = f"{params['label_model'].replace(':', '-')}_noise{params['noise']:g}_seed{cell.seed}.parquet"
        labels_path = root / "labels" / name
        if not labels_path.exists():
            labels = source_labels(cfg, read_parquet(paths.votes), params["label_model"], params["noise"], cell.seed)
            write_parquet(labels, labels_path)
        overrides["labels"] = str(labels_path)
    if params.get("sampler") == "policy":
        overrides["policy_path"] = str(carried_policy(root, cell, workdir))
    train_ranker(cfg, train_config(cfg, **overrides), progress=False)
    assessed = assessed_queries(read_parquet(paths.qrels), exp.require)
    run = score_split(cfg, model_dir(cfg, overrides["output"]), exp.split, assessed)
    for log, folder in (("policy_actions.csv", "actions"), ("history.csv", "history")):  # for the report's plots
        if (workdir / log).exists():
            write_text((workdir / log).read_text(), root / folder / f"{cell.key}.csv")
    if (workdir / "policy.pt").exists():  # the next seed's episode starts from it
        with atomic_path(policy_file(root, cell)) as tmp:
            shutil.copyfile(workdir / "policy.pt", tmp)
    shutil.rmtree(workdir, ignore_errors=True)  # keep the scores, not the weights
    return run


def cell_overrides(cfg: PipelineConfig, cell: Cell) -> dict[str, Any]:
    """The ``[train]`` overrides a trained cell runs with (its labels and output aside)."""
    params = dict(cell.params)
    overrides = {**dict(cell.train), "seed": cell.seed}
    overrides.update({k: params[k] for k in ("mode", "loss", "target", "epsilon", "alpha", "sampler") if k in params})
    if cell.kind == "supervised":
        overrides.update({"supervised": True, "mode": "pairwise", "target": "plain"})
    return overrides


def cell_pairs(cfg: PipelineConfig, cell: Cell, votes: pd.DataFrame) -> float:
    """The work of a trained cell in pairs of 64 tokens: its steps (``max_epochs`` applied, an epoch counted as
    the train split's queries, or its relevant pairs when pairwise) × pairs a step, and the evaluation split
    scored at a third of a trained pair's cost, scaled by its length over 64 tokens (``auto`` counted as 64)."""
    tc = train_config(cfg, **cell_overrides(cfg, cell))
    train = votes[votes["split"] == tc.train_split]
    anchors = train["query_id"].nunique() if tc.mode == "listwise" else max(int((train["gold"] > 0).sum()),
                                                                            train["query_id"].nunique())
    steps = tc.total_steps(max(1, -(-anchors // tc.batch_size)))
    per_step = {"listwise": tc.group_size, "in_batch": 2}.get(tc.mode, 1 + tc.negatives) * tc.batch_size
    eval_pairs = int((votes["split"] == cfg.experiment.split).sum())
    return (steps * per_step + eval_pairs / 3) * (tc.max_length if isinstance(tc.max_length, int) else 64) / 64


def measured_rate(cfg: PipelineConfig, votes: pd.DataFrame) -> tuple[float | None, int]:
    """The trainer's speed on this machine, in pairs of 64 tokens a second, and how many cells it is measured on:
    the work (:func:`cell_pairs`) of the trained cells of the run directory's grids (``[experiment]`` and every
    ``[experiment_<name>]``) that have their minutes recorded, over those minutes; ``(None, 0)`` before any."""
    cells = {}
    for grid in [cfg.experiment, *cfg.grids.values()]:
        grid_cfg = replace(cfg, experiment=grid)  # its evaluation split
        try:
            cells.update((c.key, (grid_cfg, c)) for c in grid_cells(grid_cfg, votes) if c.kind != "unsupervised")
        except (ConfigError, DataError):  # a grid these votes cannot run measures nothing
            continue
    work = seconds = 0.0
    n = 0
    for key, (grid_cfg, cell) in cells.items():
        cached = RunPaths(cfg.run_dir).experiment / "cells" / f"{key}.parquet"
        minutes = read_metadata(cached).get("minutes") if cached.exists() else None
        if minutes:  # recorded and not rounded to 0
            work, seconds, n = work + cell_pairs(grid_cfg, cell, votes), seconds + 60 * minutes, n + 1
    return (work / seconds, n) if n else (None, 0)


def estimated_minutes(cfg: PipelineConfig, cell: Cell, votes: pd.DataFrame, pairs_per_second: float) -> float:
    """Minutes a trained cell should take at ``pairs_per_second`` pairs of 64 tokens a second
    (:func:`measured_rate`, or the user's figure): its work (:func:`cell_pairs`) over that speed."""
    return cell_pairs(cfg, cell, votes) / pairs_per_second / 60


def plan_experiment(cfg: PipelineConfig, pairs_per_second: float | None = None) -> pd.DataFrame:
    """The grid's trained cells without running any: row, seed, whether it is cached, and its minutes (as
    measured when cached and recorded, else :func:`estimated_minutes` at ``pairs_per_second``, by default the
    speed measured on the cells already trained in this run directory: :func:`measured_rate`; NaN before
    any). ``attrs``: ``pairs_per_second`` (None when unknown) and ``rate_cells`` (the cells it is measured on,
    0 when given)."""
    if pairs_per_second is not None and not pairs_per_second > 0:
        raise ConfigError(f"--pairs-per-second must be above 0, got {pairs_per_second}")
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    rate, measured_on = (pairs_per_second, 0) if pairs_per_second else measured_rate(cfg, votes)
    rows = []
    for cell in grid_cells(cfg, votes):
        if cell.kind == "unsupervised":
            continue
        cached = paths.experiment / "cells" / f"{cell.key}.parquet"
        measured = read_metadata(cached).get("minutes") if cached.exists() else None
        estimate = estimated_minutes(cfg, cell, votes, rate) if rate else float("nan")
        rows.append({"row": cell.row, "seed": cell.seed, "cached": cached.exists(),
                     "minutes": measured if measured is not None else estimate,
                     "measured": measured is not None, "key": cell.key})
    plan = pd.DataFrame(rows, columns=["row", "seed", "cached", "minutes", "measured", "key"])
    plan.attrs.update(pairs_per_second=rate, rate_cells=measured_on)
    return plan


@locked("experiment")
def run_experiment(
    cfg: PipelineConfig, progress: bool = True, runner: CellRunner = trained_run
) -> dict[str, list[pd.DataFrame]]:
    """Run (or load from cache) every cell, under the run-dir lock; returns ``row → [per-query metrics of each
    seed]`` and writes each cell's per-query metrics and scores under ``<run_dir>/experiment/``."""
    exp = cfg.experiment
    paths = RunPaths(cfg.run_dir)
    root = paths.experiment
    votes = read_parquet(paths.votes)
    qrels = read_parquet(paths.qrels)
    cells = grid_cells(cfg, votes)
    unsupervised: dict[str, pd.DataFrame] | None = None
    results: dict[str, list[pd.DataFrame]] = {}
    for cell in tqdm(cells, desc="experiment", unit="cell", disable=not progress):
        cached = root / "cells" / f"{cell.key}.parquet"
        if not cached.exists():
            if cell.kind == "unsupervised":
                if unsupervised is None:
                    models = [c.row for c in cells
                              if c.kind == "unsupervised" and c.row not in lf_names(votes) and c.row not in METHODS]
                    options = {m: cfg.aggregate.options_for(m) for m in models}
                    unsupervised = unsupervised_runs(votes, exp.split, options)
                run = unsupervised[cell.row]
                minutes = None
            else:
                started = time.perf_counter()
                run = runner(cfg, cell, root / "models" / cell.key)
                minutes = round((time.perf_counter() - started) / 60, 2)
            write_parquet(run, root / "runs" / f"{cell.key}.parquet", metadata={"row": cell.row, "seed": cell.seed})
            metrics = evaluate_run(run, qrels, require=exp.require, rn=tuple(tuple(x) for x in exp.rn),
                                   negatives=bm25_negatives(votes))
            write_parquet(metrics.reset_index(), cached, metadata={"row": cell.row, "params": dict(cell.params),
                                                                   "seed": cell.seed, "minutes": minutes})
        results.setdefault(cell.row, []).append(read_parquet(cached).set_index("query_id"))
    return results
