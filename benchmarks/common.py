"""What the quality benchmarks share: the collections' evaluation splits and judged-query rule, and the trained
systems each compares, cached per training config, labels and seed under ``<run_dir>/bench/``.

- :func:`trained_run`: the scores of a split by a ranker trained as the pipeline's ``[train]`` (+ overrides) says;
- :func:`shipped_run`: the same model as a user loads it (``load_ranker``: the student with its teacher);
- :func:`compare_systems`: the command line of a benchmark that compares trained systems seed by seed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from dataclasses import asdict, replace
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
from scipy.stats import ttest_rel

from labeling_functions import BUILTIN
from weakrank.config import load_config
from weakrank.dataset import Dataset
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.tables import to_markdown
from weakrank.fusion_state import STUDENT_WEIGHT
from weakrank.io import read_metadata, read_parquet, write_parquet, write_text
from weakrank.paths import RunPaths
from weakrank.ranker.teacher import Teacher
from weakrank.ranker.teacher_state import FUSION_FILE, read_teacher_state
from weakrank.records import StudentWeightRecord
from weakrank.run_models import model_dir
from weakrank.stages.rerank import score_split
from weakrank.stages.stage import train_config
from weakrank.stages.train import run_teacher, train_labels, train_ranker
from weakrank.training.build import training_data
from weakrank.training.config import AUTO, TrainConfig
from weakrank.training.lengths import resolve_max_length
from weakrank.training.start_check import START_CHECK

ROOT = Path(__file__).resolve().parents[1]
# wikiqa_bm25: WikiQA's questions over BM25's top 20 of all its sentences (pipelines/wikiqa_bm25.toml), a stand-in for
# web-search passages that BM25 retrieved
# cranfield, stackfaq: collections built from public repositories (benchmarks/collections/), BM25 top 20 of a pool
EVAL_SPLIT = {"wikiqa": "test", "trecqa": "test", "semeval": "dev", "scifact": "test", "wikiqa_bm25": "test",
              "cranfield": "test", "stackfaq": "test"}
SEEDS = {"wikiqa": 3, "trecqa": 3, "semeval": 1, "scifact": 3, "wikiqa_bm25": 1, "cranfield": 1, "stackfaq": 1}
# BEIR qrels judge only relevant documents: every query with a relevant one is evaluated, unjudged = not relevant
REQUIRE = {"wikiqa": "both", "trecqa": "both", "semeval": "both", "scifact": "relevant", "wikiqa_bm25": "both",
           "cranfield": "relevant", "stackfaq": "relevant"}


# keys added to TrainConfig after runs were cached: left out of the cache key at their default value, so the
# cached runs (trained identically) stay valid
LATER_KEYS = {"architecture": "cross-encoder", "pooling": "cls", "scale": 20.0, "interpolate": 1.0, "max_epochs": 0.0,
              "list_fraction": 1.0, "average_weights": 0.0, "keep_checkpoint": False, "anchor": 0.0,
              "judged_share": 0.3, "judged_after": 0.0, "freeze_layers": 0}  # as earlier runs trained: their caches stay valid


def effective(cfg, tc: TrainConfig) -> TrainConfig:
    """``tc`` as it trains: its ``max_length`` resolved (``"auto"``), the number of steps it trains
    (``max_epochs`` applied) and no cap: a cap that does not bind leaves the cache key as it was."""
    if not tc.max_epochs and tc.max_length != AUTO:
        return tc
    paths = RunPaths(cfg.run_dir)
    data = training_data(train_labels(paths, tc).table, Dataset.load(paths.dataset), tc, tc.train_split)  # as train() sees it
    tc = resolve_max_length(tc, data)
    if not tc.max_epochs:
        return tc
    per_epoch = data.steps_per_epoch(tc.batch_size, tc.mode == "listwise")
    return replace(tc, max_steps=tc.total_steps(per_epoch), max_epochs=0.0)


def trained_run(cfg, split: str, seed: int, supervised: bool, quiet: bool, **overrides) -> tuple[pd.DataFrame, float]:
    """Scores of ``split`` by a ranker trained as ``[train]`` (+ ``overrides``) says (cached per config, labels
    and seed)."""
    name = trained_name(cfg, seed, supervised, **overrides)
    cached = cfg.run_dir / "bench" / f"{name}.parquet"
    if cached.exists():
        return read_parquet(cached), float(read_metadata(cached).get("minutes", 0.0))
    output = f"bench/models/{name}"
    started = time.perf_counter()
    train_ranker(cfg, train_config(cfg, seed=seed, supervised=supervised or None, output=output, **overrides),
                 progress=not quiet)
    minutes = (time.perf_counter() - started) / 60
    run = score_split(cfg, model_dir(cfg, output), split)
    write_parquet(run, cached, metadata={"minutes": minutes})
    return run, minutes


def trained_name(cfg, seed: int, supervised: bool, **overrides) -> str:
    """The cache name of a ranker trained as ``[train]`` (+ ``overrides``) says: its config, labels and seed."""
    tc = train_config(cfg, seed=seed, supervised=supervised or None, **overrides)
    content, judged = "gold", False  # a supervised ranker never reads the pseudo-labels: new labels leave its cache valid
    if not supervised:
        path = tc.labels or RunPaths(cfg.run_dir).labels
        labels = read_parquet(path, columns=["query_id", "passage_id", "label", "score"])
        content = hashlib.sha1(pd.util.hash_pandas_object(labels, index=False).to_numpy().tobytes()).hexdigest()
        judged = "judged" in pq.read_schema(path).names
    unread = {"fuse_lfs", "labels"} | (set() if judged else {"judged_after"})  # fuse_lfs: at rerank only
    training = {k: v for k, v in asdict(effective(cfg, tc)).items()
                if k not in unread and LATER_KEYS.get(k, object()) != v}
    source = {"labels_file": Path(tc.labels).name} if tc.labels else {}  # the same pairs and scores, other splits
    blob = json.dumps({**training, "labels": content, **source}, sort_keys=True, default=str)
    key = hashlib.sha1(blob.encode()).hexdigest()[:12]
    return f"{'supervised' if supervised else 'weak'}_seed{seed}_{key}"


def shipped_run(cfg, split: str, seed: int, **overrides) -> pd.DataFrame:
    """Scores of ``split`` by the shipped ranker of a cached weak ranker, as a user loads it
    (``load_ranker(model_dir)``: the student with its teacher); the teacher is written into a model trained
    before models carried it, and a model whose student's weight was neither chosen by judgments nor earned on held-out
    lists (:mod:`weakrank.training.start_check`), saved with another label-free share, gets today's
    (:data:`~weakrank.fusion_state.STUDENT_WEIGHT`)."""
    name = trained_name(cfg, seed, False, **overrides)
    directory = model_dir(cfg, f"bench/models/{name}")
    if not (directory / FUSION_FILE).exists():
        run_teacher(cfg).save(directory)
    saved = read_teacher_state(directory, set(BUILTIN))
    # the weight earned by judgments (their record among the notes) or on held-out lists
    earned = StudentWeightRecord.saved_as in saved.notes or (directory.parent / START_CHECK).exists()
    weight = saved.student_weight if earned else STUDENT_WEIGHT
    if weight != saved.student_weight:  # re-saved by the file's one writer, the teacher as it was
        Teacher.from_checked(directory, saved).save(directory, student_weight=weight)
    cached = cfg.run_dir / "bench" / f"{name}.shipped{'' if weight == 0.5 else f'-w{weight:g}'}.{split}.parquet"
    if cached.exists():
        return read_parquet(cached)
    run = score_split(cfg, directory, split, student_only=False)
    write_parquet(run, cached)
    return run


def compare_systems(description: str, csv_name: str, systems, contrasts: list[tuple[str, str]],
                    datasets: list[str], arguments=None) -> None:
    """The command line of a benchmark that compares trained systems seed by seed: ``systems(cfg, split, seed,
    args)`` gives each system's run of the evaluation split (``args``: the parsed command line, with the
    options ``arguments(parser)`` adds); per dataset, test MAP per seed, and a paired t-test of each
    ``(a, b)`` of ``contrasts`` present (per-query MAP, mean over seeds); ``benchmarks/<csv_name>`` keeps the
    rows (those of the datasets run are replaced); ``--markdown`` prints it as a table."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=datasets, choices=list(EVAL_SPLIT))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--markdown", action="store_true", help=f"only print {csv_name} as the docs' table")
    if arguments:
        arguments(parser)
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / csv_name
    if args.markdown:
        table = pd.read_csv(csv).groupby(["dataset", "system"], sort=False)["map"].agg(["mean", "std", "count"])
        print(to_markdown(table.rename(columns={"mean": "test MAP", "count": "seeds"}), ".4f"))
        return
    rows = []
    for name in args.datasets:
        cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
        split, qrels = EVAL_SPLIT[name], read_parquet(cfg.run_dir / "dataset" / "qrels.parquet")
        per_query: dict[str, list[pd.Series]] = {}
        for seed in range(args.seeds):
            for system, run in systems(cfg, split, seed, args).items():
                metrics = evaluate_run(run, qrels, require=REQUIRE[name], rn=())
                per_query.setdefault(system, []).append(metrics["MAP"])
                rows.append({"dataset": name, "seed": seed, "system": system, "map": metrics["MAP"].mean(),
                             "p1": metrics["P@1"].mean()})
        for a, b in [(a, b) for a, b in contrasts if a in per_query and b in per_query]:
            x, y = (sum(per_query[s]) / args.seeds for s in (a, b))
            x, y = x.align(y, join="inner")
            print(f"{name}: {a} − {b} = {x.mean() - y.mean():+.4f} MAP (p = {ttest_rel(x, y).pvalue:.3g}, "
                  f"{len(x)} queries, {args.seeds} seeds)", flush=True)
    table = pd.DataFrame(rows)
    old = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=table.columns)
    table = pd.concat([old[~old["dataset"].isin(table["dataset"])], table], ignore_index=True)
    write_text(table.to_csv(index=False, float_format="%.4f"), csv)
    print(table.groupby(["dataset", "system"], sort=False)["map"].agg(["mean", "std", "count"]).to_string(
        float_format=lambda v: f"{v:.4f}"))

