"""One quality benchmark: every system a user could already have, beside the weak ranker, on test splits.

Per dataset (``pipelines/<name>.toml``, its own defaults, no per-collection tuning here): BM25, the first stage
(the candidates' own order, where it ranks anything), each LF, RRF and CombSUM fusions of the LFs, each label
model used as a ranker, the weak ranker (the student) trained with the config's ``[train]`` on its ``[aggregate]``
labels (``--seeds`` seeds), ``shipped``: that model as a user loads it (``load_ranker(model_dir)``: the student
averaged with its teacher, the fusion label model over the LFs fitted without gold on every labelled pair),
``weak+lfs``: the same average with a teacher fitted on the evaluation split's pairs alone (the batch fusion
measured before models carried their teacher), and the supervised ranker (gold labels, the same ``[train]``
budget, 1 seed). Metrics by :func:`weakrank.evaluation.metrics.evaluate_run` (ties broken at random), on queries
with a relevant and a non-relevant candidate (SciFact: with a relevant one; its qrels judge only relevant
abstracts). Paired t-tests of the student and the shipped ranker against BM25, their labels and the best LF are
printed.

Writes ``benchmarks/quality.csv`` (``dataset,system,seeds,map,mrr,p1,ndcg10,minutes``; rows of the
datasets run are replaced) and ``benchmarks/quality.png``. Trained systems are cached per seed under
``<run_dir>/bench/`` (keyed by the training config and, for a weak ranker, its labels), so a rerun only trains what changed.

Run: ``python benchmarks/bench_quality.py`` (all four; ``--datasets wikiqa trecqa`` for some)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from scipy.stats import ttest_rel

from labeling_functions import BUILTIN
from weakrank import pipeline
from weakrank.baselines import column_run, fusion_runs
from weakrank.config import load_config
from weakrank.dataset import Dataset
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.tables import to_markdown
from weakrank.fusion_state import STUDENT_WEIGHT
from weakrank.io import read_metadata, read_parquet, write_parquet, write_text
from weakrank.label_models import fit_predict, usable
from weakrank.labeling import SCORE, lf_names, score_matrix
from weakrank.lists import informative_rows
from weakrank.loaders import first_stage
from weakrank.paths import RunPaths
from weakrank.plots import bar_table
from weakrank.ranker import average_views
from weakrank.ranker.teacher import Teacher
from weakrank.ranker.teacher_state import FUSION_FILE, read_teacher_state
from weakrank.run_models import model_dir
from weakrank.stages.evaluate import first_stage_run
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
LABEL_MODELS = ["majority", "generative", "dawid_skene", "fusion"]
BI_ENCODER = {"architecture": "bi-encoder", "lr": 2e-5}  # the rest as the pipeline's [train]
METRICS = {"MAP": "map", "MRR": "mrr", "P@1": "p1", "nDCG@10": "ndcg10"}


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
    earned = saved.mix is not None or (directory.parent / START_CHECK).exists()  # by judgments, or on held-out lists
    weight = saved.student_weight if earned else STUDENT_WEIGHT
    if weight != saved.student_weight:  # re-saved by the file's one writer, the teacher as it was
        Teacher.from_checked(directory, saved).save(directory, student_weight=weight)
    cached = cfg.run_dir / "bench" / f"{name}.shipped{'' if weight == 0.5 else f'-w{weight:g}'}.{split}.parquet"
    if cached.exists():
        return read_parquet(cached)
    run = score_split(cfg, directory, split, student_only=False)
    write_parquet(run, cached)
    return run


def fuse_ranker(cfg, votes: pd.DataFrame, run: pd.DataFrame, split: str) -> pd.DataFrame:
    """A second round: a trained ranker's scores (``run``: query_id, passage_id, score) averaged with its teacher's
    as the shipped ranker averages them (:func:`weakrank.ranker.average_views`), the teacher a fusion model over the
    LFs of ``votes`` fitted without gold on ``split``'s pairs."""
    ranker = run[["query_id", "passage_id", "score"]].rename(columns={"score": "ranker"})
    rows = votes[votes["split"] == split].merge(ranker, on=["query_id", "passage_id"], validate="one_to_one")
    if len(rows) != len(run):
        raise RuntimeError(f"{len(run) - len(rows)} pairs of the ranker's run have no LF scores in split {split!r}")
    scores, groups = score_matrix(rows), rows["query_id"].to_numpy()
    teacher = cfg.label_model("fusion").fit(scores, groups, lf_names(rows))
    fused = average_views(teacher.fused(scores, groups), rows["ranker"].to_numpy(dtype=np.float64), groups)
    return rows[["query_id", "passage_id"]].assign(score=fused)


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


def evaluate_dataset(name: str, seeds: int, quiet: bool, supervised: bool, bi_encoder: bool, trained: bool = True
                     ) -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    """The dataset's rows of the quality table, and each system's per-query MAP (mean over seeds); without
    ``trained``, only the systems that need no training (BM25, the LFs, their fusions, the label models)."""
    cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
    paths = RunPaths(cfg.run_dir)
    if not paths.votes.exists():
        pipeline.ingest(cfg)
        pipeline.label(cfg, progress=not quiet)
    pipeline.aggregate(cfg)
    votes = read_parquet(paths.votes)
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    split = EVAL_SPLIT[name]
    runs: dict[str, list[pd.DataFrame]] = {"bm25": [column_run(votes, SCORE + "bm25", split)]}
    if first_stage(cfg.dataset.loader, cfg.dataset.path, split, **cfg.dataset.options):  # the candidates' own order
        runs["first stage"] = [first_stage_run(paths, split)]
    in_split = votes[votes["split"] == split]
    ranks = informative_rows(score_matrix(in_split), in_split["query_id"].to_numpy()).any(axis=0)
    runs.update({f"lf:{lf}": [column_run(votes, SCORE + lf, split)]  # not an LF that abstains on every list
                 for lf, ranked in zip(lf_names(votes), ranks) if lf != "bm25" and ranked})
    runs.update({system: [column_run(run, "score", split)] for system, run in fusion_runs(votes).items()})
    for model in LABEL_MODELS:
        if usable(model, len(lf_names(votes))):
            scored = votes.assign(p=fit_predict(votes, cfg.label_model(model)))  # as the stages fit it
            runs[f"labels:{model}"] = [column_run(scored, "p", split)]
    minutes: dict[str, float] = {}
    kinds = [("student", False, seeds)] + ([("supervised", True, 1)] if supervised else [])
    for system, gold, n in kinds if trained else ():
        runs[system], minutes[system] = [], 0.0
        for seed in range(n):
            run, took = trained_run(cfg, split, seed, gold, quiet)
            runs[system].append(run)
            minutes[system] += took / n
    if trained:
        runs["weak+lfs"] = [fuse_ranker(cfg, votes, run, split) for run in runs["student"]]
        runs["shipped"] = [shipped_run(cfg, split, seed) for seed in range(seeds)]
    if bi_encoder and trained:  # the bi-encoder starts from the embedding LF's own model
        run, minutes["weak:bi-encoder"] = trained_run(cfg, split, 0, False, quiet, **BI_ENCODER)
        runs["weak:bi-encoder"], runs["weak:bi-encoder+lfs"] = [run], [fuse_ranker(cfg, votes, run, split)]
    per_query = {s: [evaluate_run(r, qrels, require=REQUIRE[name], rn=()) for r in rs] for s, rs in runs.items()}
    rows = []
    for system, tables in per_query.items():
        means = pd.DataFrame([t[list(METRICS)].mean() for t in tables])
        row = {"dataset": name, "system": system, "seeds": len(tables)}
        for metric, col in METRICS.items():
            row[col] = means[metric].mean()
            row[f"{col}_std"] = means[metric].std(ddof=0) if len(tables) > 1 else 0.0
        row["minutes"] = round(minutes.get(system, 0.0), 1)
        row["queries"] = len(tables[0])
        rows.append(row)
    per_query_map = {s: sum(t["MAP"] for t in ts) / len(ts) for s, ts in per_query.items()}
    table = pd.DataFrame(rows)
    table["p_vs_bm25"] = [ttest_rel(*per_query_map[s].align(per_query_map["bm25"], join="inner")).pvalue
                          if s != "bm25" else np.nan for s in table["system"]]
    return table, per_query_map


def significance(name: str, per_query_map: dict[str, pd.Series], labels: str) -> str:
    """Paired t-tests of the student's and the shipped ranker's per-query MAP against BM25, their labels and the
    best single LF (by mean MAP)."""
    lfs = [s for s in per_query_map if s.startswith("lf:") or s == "bm25"]
    best_lf = max(lfs, key=lambda s: per_query_map[s].mean())
    out = []
    for system in ("student", "shipped"):
        for other in dict.fromkeys(("bm25", labels, best_lf)):
            if other in per_query_map:
                a, b = per_query_map[system].align(per_query_map[other], join="inner")
                t = ttest_rel(a, b)
                delta = a.mean() - b.mean()
                out.append(f"{name}: {system} − {other} = {delta:+.3f} MAP (p = {t.pvalue:.3g}, {len(a)} queries)")
    return "\n".join(out)


def markdown(table: pd.DataFrame) -> str:
    """The README table: per system and dataset test MAP (± std over seeds); †/‡ significantly better/worse than
    BM25 (paired t-test on per-query MAP, p < 0.05); the supervised ceiling last."""
    order = [d for d in EVAL_SPLIT if d in set(table["dataset"])]
    table = table.sort_values("dataset", key=lambda d: d.map(order.index), kind="stable")  # rows as the columns
    systems = list(table["system"].unique())
    systems = [s for s in systems if s not in ("first stage", "supervised")] + ["supervised"] * ("supervised" in systems)
    systems[1:1] = ["first stage"] * ("first stage" in table["system"].values)  # what the user has, beside BM25
    out = pd.DataFrame(index=pd.Index(systems, name="system"))
    for name, rows in sorted(table.groupby("dataset", sort=False), key=lambda item: order.index(item[0])):
        rows = rows.set_index("system")
        cell = rows["map"].map("{:.3f}".format)
        cell += rows["map_std"].where(rows["seeds"] > 1).map(lambda v: f" ± {v:.3f}" if v == v else "")
        p = rows.get("p_vs_bm25", pd.Series(np.nan, index=rows.index))
        better = rows["map"] > rows.loc["bm25", "map"]
        out[name] = cell + [("†" if up else "‡") if pv < 0.05 else "" for pv, up in zip(p, better)]
    return out.fillna("–").to_markdown(disable_numparse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(EVAL_SPLIT), choices=list(EVAL_SPLIT))
    parser.add_argument("--seeds", type=int, help="weak-ranker seeds (default: 3 on WikiQA, TrecQA, SciFact; 1 elsewhere)")
    parser.add_argument("--markdown", action="store_true", help="only print quality.csv as the README's table")
    parser.add_argument("--no-supervised", action="store_true", help="skip the gold-label ranker")
    parser.add_argument("--bi-encoder", action="store_true", help="also the weak bi-encoder (1 seed)")
    parser.add_argument("--untrained", action="store_true",
                        help="only the rows that need no training (BM25, LFs, fusions, label models); the trained "
                             "rows of quality.csv are kept as they are")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "quality.csv"
    old = pd.read_csv(csv) if csv.exists() else pd.DataFrame()
    if args.markdown:
        print(markdown(old))
        return
    for name in args.datasets:
        seeds = args.seeds or SEEDS[name]
        table, per_query_map = evaluate_dataset(name, seeds, args.quiet, not args.no_supervised, args.bi_encoder,
                                                not args.untrained)
        cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
        print(table.drop(columns=["dataset"]).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        if not args.untrained:
            print(significance(name, per_query_map, f"labels:{cfg.aggregate.model}"))
        old = pd.read_csv(csv) if csv.exists() else pd.DataFrame()  # re-read: another run may have written
        if len(old):  # rows of trained systems not run this time (--untrained, --no-supervised, no --bi-encoder)
            kept = old[(old["dataset"] == name) & ~old["system"].isin(table["system"])
                       & (args.untrained | old["system"].isin(["supervised"]) | old["system"].str.startswith("weak:"))]
            old = pd.concat([old[old["dataset"] != name], table, kept], ignore_index=True)
        else:
            old = table
        columns = ["dataset", "system", "seeds", "map", "mrr", "p1", "ndcg10", "minutes", "map_std", "p_vs_bm25",
                   "queries"]
        write_text(old[columns].to_csv(index=False, float_format="%.4f"), csv)
    wide = old.pivot_table(index="system", columns="dataset", values="map", sort=False)
    bar_table(wide, ROOT / "benchmarks" / "quality.png", "Test MAP per system and collection")
    print(f"wrote {csv}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
