"""Ten judgments that count: queries chosen by ``weakrank select`` against random draws of the same number.

A person is simulated by the collection's gold of its train split (SemEval: train, SciFact: its unjudged-in-the-
pipeline train queries, whose BEIR qrels list relevant abstracts: an unlisted candidate is judged not relevant):
for N judged queries, the person reads the passages ``select`` asks about (at most ``--per-query`` a query) and
their judgments go to ``[aggregate] judgments``. Per collection and N:

- ``select``: the N queries ``weakrank select`` chooses (no gold read);
- ``random``: ``--draws`` random sets of N queries of the same pool, each with the passages ``select`` would ask
  about for it (the same reading budget);
- ``label-free``: no judgment (N = 0).

For each, the test MAP of the labels (the fusion label model, its combination chosen by the judged queries: the
teacher) and, for ``select`` at the sizes of ``--students`` and for the label-free run, of the shipped ranker (a
student retrained on those labels, averaged with its teacher, as ``load_ranker`` loads it, its weight
``student_weight`` chosen on the judged queries it had not yet trained on; 1 seed). Random draws
are measured by their teacher alone: 200 trainings per size do not fit this machine. The best LF, CombSUM and RRF
are the lines to beat. Writes ``benchmarks/judgments.csv`` and ``benchmarks/judgments.png``; ``--markdown``
prints the README's table from the CSV.

Run: ``python benchmarks/bench_judgments.py`` (collections whose votes.parquet exists: ``weakrank run
pipelines/<name>.toml --stages ingest,label,aggregate`` first)
"""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Iterator

import numpy as np
import pandas as pd
from bench_quality import EVAL_SPLIT, REQUIRE, ROOT, shipped_run, trained_name, trained_run

from weakrank.baselines import fusion_runs
from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet, write_parquet, write_text
from weakrank.label_models import with_judgments
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import SCORE, lf_names, score_matrix
from weakrank.lists import informative_rows, standardize_within
from weakrank.paths import RunPaths
from weakrank.ranker.teacher_state import FUSION_FILE
from weakrank.selection import asked, informative_order, rankings
from weakrank.stages.training import model_dir

POOL = "train"


def person(votes: pd.DataFrame, pairs: dict[str, list[str]], name: str) -> np.ndarray:
    """The simulated person's judgments of ``pairs`` (query id → passages asked), aligned with ``votes``; NaN
    elsewhere."""
    keys = pd.MultiIndex.from_arrays([votes["query_id"], votes["passage_id"]])
    wanted = pd.MultiIndex.from_tuples([(q, p) for q, ps in pairs.items() for p in ps])
    gold = pd.to_numeric(votes["gold"], errors="coerce").to_numpy(float)
    if REQUIRE[name] == "relevant":  # BEIR: qrels list relevant abstracts only
        gold = np.nan_to_num(gold, nan=0.0)
    return np.where(keys.isin(wanted), gold, np.nan)


def judged_sets(votes: pd.DataFrame, texts: dict[str, str], options: dict, name: str, sizes: list[int], draws: int,
                per_query: int) -> Iterator[tuple[int, str, int, dict[str, list[str]], np.ndarray]]:
    """For each size N, ``select``'s N queries of the pool and ``draws`` random sets of N (the same draws in every
    run), each as ``(n, method, draw, pairs, gold)``: the passages asked about per query and the simulated person's
    judgments of them (:func:`person`)."""
    ranked, answerable = rankings(votes[votes["split"] == POOL], options)
    order = informative_order(ranked, answerable, texts)
    rng = np.random.default_rng(0)
    for n in sizes:
        sets = [("select", 0, order[:n])] + [("random", d, list(rng.choice(list(ranked), size=n, replace=False)))
                                             for d in range(draws)]
        for method, draw, chosen in sets:
            pairs = {qid: asked(ranked[qid], per_query) for qid in chosen}
            yield n, method, draw, pairs, person(votes, pairs, name)


def judged_set_options(parser: argparse.ArgumentParser) -> None:
    """The command-line options that say which collections and judged sets are measured."""
    parser.add_argument("--datasets", nargs="+", default=list(EVAL_SPLIT), choices=list(EVAL_SPLIT))
    parser.add_argument("--sizes", nargs="+", type=int, default=[5, 10, 20])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--per-query", type=int, default=6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    judged_set_options(parser)
    parser.add_argument("--students", nargs="*", type=int, default=[10], help="sizes whose select set trains a student")
    parser.add_argument("--judged-share", type=float, default=None,
                        help="[train] judged_share of the students trained on select's sets (default: the config's)")
    parser.add_argument("--judged-after", type=float, default=None,
                        help="[train] judged_after of the students trained on select's sets (default: the config's)")
    parser.add_argument("--keep-label-free", action="store_true",
                        help="the label-free shipped ranker's MAP from judgments.csv instead of training it again")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="only print judgments.csv as the README's table")
    parser.add_argument("--plot", action="store_true", help="only draw judgments.png from judgments.csv")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "judgments.csv"
    if args.markdown:
        print(markdown(pd.read_csv(csv)))
        return
    if args.plot:
        plot(pd.read_csv(csv), ROOT / "benchmarks" / "judgments.png")
        return
    for name in args.datasets:
        cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
        paths = RunPaths(cfg.run_dir)
        if not paths.votes.exists():
            print(f"{name}: no votes.parquet (weakrank run pipelines/{name}.toml --stages ingest,label,aggregate)")
            continue
        rows = measure(name, cfg, args)
        table = pd.DataFrame(rows)
        print(table.groupby(["n", "method"])[["labels_map", "shipped_map"]].agg(["mean", "median", "min", "count"])
              .to_string(float_format=lambda v: f"{v:.4f}"), flush=True)
        old = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=table.columns)
        table = pd.concat([old[old["dataset"] != name], table], ignore_index=True)  # each collection as it ends
        write_text(table.to_csv(index=False, float_format="%.4f"), csv)
        plot(table, ROOT / "benchmarks" / "judgments.png")


def measure(name: str, cfg, args) -> list[dict]:
    """The rows of one collection (module doc)."""
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    texts = read_parquet(paths.dataset / "queries.parquet").set_index("query_id")["text"].to_dict()
    split = EVAL_SPLIT[name]
    evaluated = votes[votes["split"] == split]

    def test_map(scores: np.ndarray) -> float:
        run = evaluated[["query_id", "passage_id"]].assign(score=scores)
        return float(evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"].mean())

    reference = {f"lf:{lf}": test_map(evaluated[SCORE + lf].to_numpy(float)) for lf in lf_names(votes)}
    reference.update({name_: test_map(run.loc[evaluated.index, "score"].to_numpy(float))
                      for name_, run in fusion_runs(votes).items()})
    best_lf = max((k for k in reference if k.startswith("lf:")), key=reference.get)
    options = cfg.aggregate.options_for("fusion")
    scores, groups, names = score_matrix(votes), votes["query_id"].to_numpy(), lf_names(votes)
    base = ScoreFusionModel(**options).fit(scores, groups, names=names)
    z, informative = standardize_within(scores, groups), informative_rows(scores, groups)
    test_scores, test_groups = scores[evaluated.index], groups[evaluated.index]
    memo: dict[str, float] = {}

    def teacher(gold: np.ndarray | None) -> tuple[ScoreFusionModel, float]:
        model = copy.deepcopy(base)
        if gold is not None:
            model.choose_combination(z, informative, groups, gold, names)
        if model.choice_ not in memo:
            memo[model.choice_] = test_map(model.fused(test_scores, test_groups))
        return model, memo[model.choice_]

    common = {"dataset": name, "best_lf": best_lf, "best_lf_map": reference[best_lf],
              "combsum_map": reference.get("fusion:combsum"), "rrf_map": reference.get("fusion:rrf")}
    _, label_free = teacher(None)
    shipped = (previous_label_free(name) if args.keep_label_free else
               shipped_map(cfg, split, qrels, name, None, args.quiet)[0] if args.students else None)
    out = [{**common, "n": 0, "method": "label-free", "draw": 0, "passages": 0, "with_relevant": 0,
            "choice": "label-free", "labels_map": label_free, "shipped_map": shipped, "student_weight": 0.5}]
    for n, method, draw, pairs, gold in judged_sets(votes, texts, options, name, args.sizes, args.draws,
                                                    args.per_query):
        model, labels_map = teacher(gold)
        shipped, weight = None, None
        if method == "select" and n in args.students:
            labels = with_judgments(model.labels_table(votes), gold)
            path = paths.root / "bench" / f"labels_select{n}.parquet"
            write_parquet(labels, path, metadata={"model": "fusion", "lfs": names, "params": model.state(),
                                                  "gold_queries": sorted(pairs)})
            shipped, weight = shipped_map(cfg, split, qrels, name, path, args.quiet, judged_share=args.judged_share,
                                          judged_after=args.judged_after)
        if method == "select":
            print(f"{name} N={n}: select chose {model.choice_!r}", flush=True)
        relevant = votes.loc[gold > 0, "query_id"].nunique()
        out.append({**common, "n": n, "method": method, "draw": draw, "passages": sum(map(len, pairs.values())),
                    "with_relevant": relevant, "choice": model.choice_, "labels_map": labels_map,
                    "shipped_map": shipped, "student_weight": weight})
    return out


def previous_label_free(name: str) -> float:
    """The label-free shipped ranker's test MAP of ``name`` in judgments.csv (NaN where none is recorded)."""
    csv = ROOT / "benchmarks" / "judgments.csv"
    rows = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=["dataset", "method", "shipped_map"])
    found = rows[(rows["dataset"] == name) & (rows["method"] == "label-free")]["shipped_map"]
    return float(found.iloc[0]) if len(found) else float("nan")


def shipped_map(cfg, split: str, qrels: pd.DataFrame, name: str, labels, quiet: bool = True,
                **train) -> tuple[float, float]:
    """Test MAP of the shipped ranker trained on ``labels`` (None: labels.parquet; cached by bench_quality) with
    ``train`` overrides of ``[train]``, and its student's weight (chosen on the judged queries it had not trained
    on)."""
    overrides = {k: v for k, v in train.items() if v is not None}
    if labels:
        overrides["labels"] = str(labels)
    trained_run(cfg, split, 0, False, quiet, **overrides)
    run = shipped_run(cfg, split, 0, **overrides)
    saved = json.loads((model_dir(cfg, f"bench/models/{trained_name(cfg, 0, False, **overrides)}") /
                        FUSION_FILE).read_text())
    return float(evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"].mean()), saved.get("student_weight", 0.5)


def markdown(table: pd.DataFrame, n: int = 10) -> str:
    """One row per collection: the teacher's test MAP without judgments, with select's N at every size, and with
    random draws of ``n`` (median and 10–90 %); the shipped ranker without judgments and with select's ``n``; the
    lines to beat."""
    out = []
    order = [name for name in EVAL_SPLIT if name in set(table["dataset"])]  # the collections in the README's order
    for name, rows in sorted(table.groupby("dataset", sort=False), key=lambda item: order.index(item[0])):
        chosen = rows[rows["method"] == "select"].set_index("n")
        free = rows[rows["method"] == "label-free"].iloc[0]
        random = rows[(rows["method"] == "random") & (rows["n"] == n)]["labels_map"]
        out.append({
            "collection": name, f"passages read ({n} queries)": int(chosen.loc[n, "passages"]),
            "teacher, no judgment": free["labels_map"],
            "teacher, select " + " / ".join(map(str, chosen.index)): " / ".join(f"{v:.3f}" for v in chosen["labels_map"]),
            f"teacher, random {n}: median [10–90 %]": f"{random.median():.3f} [{random.quantile(0.1):.3f}–"
                                                      f"{random.quantile(0.9):.3f}]",
            "shipped, no judgment": _cell(free["shipped_map"]), f"shipped, select {n}": _cell(chosen.loc[n, "shipped_map"]),
            "best LF": f"{free['best_lf'].removeprefix('lf:')} {free['best_lf_map']:.3f}",
            "CombSUM": free["combsum_map"], "RRF": free["rrf_map"]})
    return to_markdown(pd.DataFrame(out).set_index("collection"), ".3f")


def _cell(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:.3f}"


def plot(table: pd.DataFrame, path) -> None:
    """Test MAP against N per collection: the random draws' median and 10–90 % band, select's teacher and shipped
    ranker, and the best LF as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = table.astype({"labels_map": float, "shipped_map": float})
    names = [name for name in EVAL_SPLIT if name in set(table["dataset"])]  # the README's order
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names):
        rows = table[table["dataset"] == name]
        random = rows[rows["method"] == "random"].groupby("n")["labels_map"]
        ax.fill_between(random.median().index, random.quantile(0.1), random.quantile(0.9), alpha=0.25,
                        label="random N: 10–90 %")
        ax.plot(random.median().index, random.median(), "--", label="random N: median (teacher)")
        chosen = rows[rows["method"] != "random"].sort_values("n")
        ax.plot(chosen["n"], chosen["labels_map"], "o-", label="select (teacher)")
        trained = chosen.dropna(subset=["shipped_map"])
        ax.plot(trained["n"], trained["shipped_map"], "s", markersize=8, label="select (shipped ranker)")
        ax.axhline(rows["best_lf_map"].iloc[0], color="k", lw=1, label=f"best LF ({rows['best_lf'].iloc[0][3:]})")
        ax.set_title(name)
        ax.set_xlabel("judged queries N")
    axes[0][0].set_ylabel("test MAP")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
