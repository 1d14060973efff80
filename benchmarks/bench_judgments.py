"""The verdict on judged mode: the test MAP that N judged queries give, select's sample against random draws.

A person is simulated by the collection's gold of its train split (BEIR collections: an unlisted candidate is judged
not relevant; :mod:`judged_sim`). For each collection and N (5, 10, 20):

- ``select``: ``--seeds`` samples as ``weakrank select --seed S`` draws them (:mod:`weakrank.judged.design`);
- ``random``: ``--draws`` uniform draws of N queries of the same pool, each with the passages select would ask;
- ``label-free``: no judgment.

Both are judged with the same reading budget and chosen from by the same estimate and rule (their constants fitted
on train splits by ``bench_judged_rule.py``); each row's ``labels_map`` is the test MAP (SemEval: dev) of the
teacher the choice gives (the fusion label model combining the LFs as chosen), read once here. For select's first
seed at the sizes of ``--students``, and for the label-free run, ``shipped_map`` is the test MAP of the shipped
ranker (a student retrained on those labels and averaged with its teacher, its weight chosen on the judged queries
it had not trained on; seed 0). ``oracle`` is the candidate with the best test MAP, the most a choice could give.
Writes ``benchmarks/judgments.csv`` and ``judgments.png``; ``--markdown`` prints the guide's table from the CSV (docs/guide.md, "What ten judgments change").

Run: ``python benchmarks/bench_judgments.py`` (collections whose votes.parquet exists: ``weakrank run
pipelines/<name>.toml --stages ingest,label`` first)
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT, shipped_run, trained_run
from judged_sim import Collection, estimate_of, judged_rows, load, sample, test_maps

from weakrank.combinations import LABEL_FREE
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.sampled_map import estimate
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet, write_text
from weakrank.judged.aligned import judged_totals
from weakrank.judged.design import candidate_scores
from weakrank.judged.rule import Choice, Rule, choose
from weakrank.judged.teach import with_judgments
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.label_models.labels_file import LabelsInfo, write_labels
from weakrank.labeling import lf_names
from weakrank.paths import RunPaths

FITTED_NOTHING = {"cranfield", "stackfaq"}  # collections no constant was fitted on (not even their train splits)
LOSS = 0.005


class CombinationSelector:
    """The decision judged queries made until 2026-11-27, kept here to compare with: ``fit(votes, judged)`` fits a
    copy of ``base`` (a :class:`ScoreFusionModel`, left as it is) without gold, then the judged sample chooses how
    it combines the LFs among eight combinations (:func:`~weakrank.judged.design.candidates`): ``choice_``,
    ``state_`` (a new fusion state that scores with it and records it) and ``model_``."""

    def __init__(self, base: ScoreFusionModel, rule: Rule = Rule()) -> None:
        self.base, self.rule = base, rule
        self.choice_: Choice | None = None
        self.state_ = None
        self.model_: ScoreFusionModel | None = None

    def fit(self, votes: pd.DataFrame, judged) -> CombinationSelector:
        """Fit and choose (class doc)."""
        fitted = type(self.base)(**self.base.get_params()).fit_table(votes)
        found, scored = candidate_scores(votes, fitted)
        self.choice_ = choose(estimate(judged_totals(votes, scored, judged), judged.weights, LABEL_FREE), self.rule)
        name = self.choice_.name
        self.state_ = fitted.fitted().using(name, None if name == LABEL_FREE else found[name], self.choice_.record())
        self.model_ = ScoreFusionModel.from_state(self.state_)
        return self


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(EVAL_SPLIT), choices=list(EVAL_SPLIT))
    parser.add_argument("--sizes", nargs="+", type=int, default=[5, 10, 20])
    parser.add_argument("--seeds", type=int, default=20, help="select's samples per size (--seed 0 … S − 1)")
    parser.add_argument("--draws", type=int, default=200, help="random draws per size")
    parser.add_argument("--per-query", type=int, default=6)
    parser.add_argument("--students", nargs="*", type=int, default=[10], help="sizes whose select sample (seed 0) "
                        "trains a student")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="only print judgments.csv as the guide's table")
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
        cfg_votes = ROOT / "data" / name / "votes.parquet"
        if not cfg_votes.exists():
            print(f"{name}: no votes.parquet (weakrank run pipelines/{name}.toml --stages ingest,label)")
            continue
        table = pd.DataFrame(measure(name, args))
        print(table.groupby(["n", "method"])[["labels_map", "shipped_map"]].agg(["mean", "median", "count"])
              .to_string(float_format=lambda v: f"{v:.4f}"), flush=True)
        old = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=table.columns)
        table = pd.concat([old[old["dataset"] != name], table], ignore_index=True)  # each collection as it ends
        write_text(table.to_csv(index=False, float_format="%.4f"), csv)
        plot(table, ROOT / "benchmarks" / "judgments.png")


def measure(name: str, args) -> list[dict]:
    """The rows of one collection (module doc)."""
    coll = load(name)
    split = EVAL_SPLIT[name]
    test = test_maps(coll, split)
    candidates = [c for c in test.index if c != LABEL_FREE]
    best_lf = max((c for c in candidates if c.endswith(" alone")), key=test.get)
    oracle = test.idxmax()
    common = {"dataset": name, "best_lf": best_lf, "best_lf_map": test[best_lf], "combsum_map": test.get("CombSUM"),
              "rrf_map": test.get("RRF"), "oracle": oracle, "oracle_map": test[oracle]}
    shipped = shipped_map(coll, None, args.quiet) if args.students else None
    out = [{**common, "n": 0, "method": "label-free", "draw": 0, "passages": 0, "with_relevant": 0,
            "choice": LABEL_FREE, "labels_map": test[LABEL_FREE], "shipped_map": shipped}]
    for n in args.sizes:
        runs = [("select", s) for s in range(args.seeds)] + [("random", d) for d in range(args.draws)]
        for method, draw in runs:
            judged = sample(coll, n, draw, method, per_query=args.per_query)
            found = estimate_of(coll, judged)
            choice = choose(found).name
            shipped = None
            if method == "select" and draw == 0 and n in args.students:
                shipped = shipped_map(coll, judged, args.quiet)
                print(f"{name} N={n}: select (seed 0) chose {choice!r}, shipped {shipped:.4f}", flush=True)
            out.append({**common, "n": n, "method": method, "draw": draw,
                        "passages": sum(map(len, judged.asked.values())), "with_relevant": found.queries,
                        "choice": choice, "labels_map": test[choice], "shipped_map": shipped})
    return out


def shipped_map(coll: Collection, judged, quiet: bool = True) -> float:
    """Test MAP of the shipped ranker trained on the labels of ``judged`` (None: the label-free labels), seed 0
    (cached by bench_quality)."""
    cfg, split = coll.cfg, EVAL_SPLIT[coll.name]
    paths = RunPaths(cfg.run_dir)
    options = cfg.aggregate.options_for("fusion")
    if judged is None:
        model = ScoreFusionModel(**options).fit_table(coll.votes)
        labels, name, queries, state = model.labels_table(coll.votes), "label_free", [], model.state()
    else:
        rows = judged_rows(coll, judged)
        selector = CombinationSelector(ScoreFusionModel(**options)).fit(coll.votes, rows)
        labels, name = with_judgments(selector.model_.labels_table(coll.votes), rows), f"select{len(judged.queries)}"
        state = selector.state_
        queries = sorted(set(coll.votes.loc[rows.gold > 0, "query_id"]))
    path = paths.root / "bench" / f"labels_{name}.parquet"
    write_labels(labels, path, LabelsInfo("fusion", list(lf_names(coll.votes)), state, queries))
    trained_run(cfg, split, 0, False, quiet, labels=str(path))
    run = shipped_run(cfg, split, 0, labels=str(path))
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    return float(evaluate_run(run, qrels, require=REQUIRE[coll.name], rn=())["MAP"].mean())


def verdict(rows: pd.DataFrame, n: int = 10) -> dict:
    """What ``n`` judged queries give on one collection: select's mean over seeds against the random draws' 75th
    percentile, the share of the label-free → oracle gap it recovers, its share of seeds that lose."""
    free = rows[rows["method"] == "label-free"].iloc[0]
    chosen = rows[(rows["method"] == "select") & (rows["n"] == n)]["labels_map"]
    random = rows[(rows["method"] == "random") & (rows["n"] == n)]["labels_map"]
    gap = free["oracle_map"] - free["labels_map"]
    return {"select": chosen.mean(), "random_75": random.quantile(0.75), "random_median": random.median(),
            "recovered": (chosen.mean() - free["labels_map"]) / gap if gap >= 0.02 else np.nan,
            "losses": float((chosen < free["labels_map"] - LOSS).mean()), "gap": gap}


def markdown(table: pd.DataFrame, n: int = 10) -> str:
    """One row per collection: the teacher's test MAP without judgments, with select's N (mean over seeds) at
    every size and with random draws of ``n``; the shipped ranker without judgments and with select's ``n``; the
    oracle and the lines to beat."""
    out = []
    order = [name for name in EVAL_SPLIT if name in set(table["dataset"])]
    for name in order:
        rows = table[table["dataset"] == name]
        free = rows[rows["method"] == "label-free"].iloc[0]
        chosen = rows[rows["method"] == "select"].groupby("n")["labels_map"].mean()
        shipped = rows[(rows["method"] == "select") & (rows["n"] == n)]["shipped_map"].dropna()
        found = verdict(rows, n)
        out.append({
            "collection": name + (" *" if name in FITTED_NOTHING else ""),
            "teacher, no judgment": free["labels_map"],
            "teacher, select " + " / ".join(map(str, chosen.index)): " / ".join(f"{v:.3f}" for v in chosen),
            f"random {n}: median [75 %]": f"{found['random_median']:.3f} [{found['random_75']:.3f}]",
            f"gap recovered, losing seeds ({n})": ("–" if found["recovered"] != found["recovered"] else
                                                   f"{found['recovered']:.0%}") + f", {found['losses']:.0%}",
            "shipped, no judgment": _cell(free["shipped_map"]),
            f"shipped, select {n}": _cell(shipped.iloc[0] if len(shipped) else np.nan),
            "oracle": f"{free['oracle'].removesuffix(' alone')} {free['oracle_map']:.3f}",
            "best LF": f"{free['best_lf'].removesuffix(' alone')} {free['best_lf_map']:.3f}",
            "CombSUM": free["combsum_map"], "RRF": free["rrf_map"]})
    return to_markdown(pd.DataFrame(out).set_index("collection"), ".3f")


def _cell(value: float) -> str:
    return "–" if pd.isna(value) else f"{value:.3f}"


def plot(table: pd.DataFrame, path) -> None:
    """Test MAP against N per collection: the random draws' median and 25–75 % band, select's mean over seeds with
    its 10–90 % range, select's shipped ranker, and the oracle and best LF as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = table.astype({"labels_map": float, "shipped_map": float})
    names = [name for name in EVAL_SPLIT if name in set(table["dataset"])]
    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names):
        rows = table[table["dataset"] == name]
        free = rows[rows["method"] == "label-free"].iloc[0]
        random = rows[rows["method"] == "random"].groupby("n")["labels_map"]
        ax.fill_between(random.median().index, random.quantile(0.25), random.quantile(0.75), alpha=0.25,
                        label="random N: 25–75 %")
        ax.plot(random.median().index, random.median(), "--", label="random N: median")
        chosen = rows[rows["method"] == "select"].groupby("n")["labels_map"]
        ax.errorbar(chosen.mean().index, chosen.mean(), yerr=[(chosen.mean() - chosen.quantile(0.1)).clip(lower=0),
                                                            (chosen.quantile(0.9) - chosen.mean()).clip(lower=0)],
                    fmt="o-", capsize=3, label="select: mean, 10–90 %")
        trained = rows[(rows["method"] == "select")].dropna(subset=["shipped_map"])
        ax.plot(trained["n"], trained["shipped_map"], "s", markersize=8, label="select seed 0: shipped")
        ax.axhline(free["labels_map"], color="grey", lw=1, label="no judgment")
        ax.axhline(free["oracle_map"], color="k", lw=1, ls=":", label="oracle candidate")
        ax.set_title(name + (" (fitted nothing)" if name in FITTED_NOTHING else ""))
        ax.set_xlabel("judged queries N")
    axes[0][0].set_ylabel("test MAP (teacher)")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
