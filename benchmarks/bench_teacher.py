"""The teacher without judgments: today's label-free fusion against the fusion model with LF families and priors
(:mod:`weakrank.label_models.family_factor`), priors fitted leave-one-collection-out.

Per collection (``pipelines/<name>.toml``; its votes must exist: ``weakrank run pipelines/<name>.toml --stages
ingest,label``), the LFs are the config's, and ``+word_overlap`` adds the built-in word-overlap LF (scored here from
the dataset's texts) to test that a redundant lexical LF changes little. The priors (one loading per built-in LF, and
the pull's strength) are fitted on the *train* splits of the other six collections: the values that maximise the mean
train MAP of the teacher they make, with and without word_overlap (search over a grid, one or two LFs moved at a
time; gold of train splits only). Each collection's figure is then its evaluation split's MAP (:func:`weakrank.evaluation.metrics.evaluate_run`)
under priors it did not fit. The shipped priors are fitted on all seven (``teacher_priors.csv``); the built-in LFs
declare them (a test holds them equal).

Writes ``benchmarks/teacher.csv`` (``dataset, teacher, map, best_lf, best_lf_map, combsum, rrf``; teacher ``label-free`` or
``priors``, ``… +word_overlap`` where that LF was added) and ``benchmarks/teacher_priors.csv`` (``held_out, lf, family,
prior, strength``: ``all`` for the shipped fit). Run: ``python benchmarks/bench_teacher.py`` (about 10 minutes on 2
cores once the votes exist; each collection's arrays are cached under ``benchmarks/results/teacher/``).

``--unseen CONFIG ...`` scores collections that no constant was fitted on instead (those that
``benchmarks/collections/smart.py`` and ``leaderboard.py`` build, each labelled by its own pipeline config):
label-free against the priors the built-in LFs declare, into ``benchmarks/teacher_unseen.csv`` (same columns;
``--markdown teacher_unseen.csv`` prints it).
"""

from __future__ import annotations

import argparse
import itertools
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT

from labeling_functions import BUILTIN
from labeling_functions.overlap import word_overlap
from weakrank.baselines import fuse_scores
from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet
from weakrank.label_models.family_factor import fit_family_factor
from weakrank.label_models.fusion import PRIOR_STRENGTH, ScoreFusionModel, pairwise_correlation, prior_support
from weakrank.labeling import SCORE, lf_names, score_matrix
from weakrank.lists import informative_rows, standardize_within
from weakrank.paths import RunPaths

COLLECTIONS = ["wikiqa", "trecqa", "semeval", "scifact", "wikiqa_bm25", "cranfield", "stackfaq"]
EXTRA = "word_overlap"
GRID = (0.2, 0.35, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
STRENGTHS = (0.05, 0.2, 1.0, 5.0, 20.0)
CACHE = ROOT / "benchmarks" / "results" / "teacher"
FAMILY = {name: BUILTIN[name]().family for name in BUILTIN}


@dataclass
class Prepared:
    """What the fit reads of one collection: the LFs' raw scores of every pair (``scores``, columns ``names``,
    word_overlap last), each row's query and split, and its gold (NaN where unjudged)."""

    name: str
    names: list[str]
    scores: np.ndarray
    groups: np.ndarray
    passages: np.ndarray
    split: np.ndarray
    gold: np.ndarray
    qrels: pd.DataFrame  # the collection's qrels, as evaluate reads them (a relevant passage outside the candidates counts)
    eval_split: str  # the split its figures are of, and how a list must be judged to count (evaluate's ``require``)
    require: str

    def columns(self, extra: bool) -> list[int]:
        return [i for i, n in enumerate(self.names) if extra or n != EXTRA]


def prepare(name: str, config: Path | None = None) -> Prepared:
    """One collection's arrays (cached): a shared collection's (``pipelines/<name>.toml``), or those of the pipeline
    ``config`` of a collection no constant was fitted on (evaluated on its config's ``[evaluate]`` split)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / f"{name}.pkl"
    if cached.exists():
        return pickle.loads(cached.read_bytes())
    cfg = load_config(config or ROOT / "pipelines" / f"{name}.toml")
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    queries = read_parquet(paths.dataset / "queries.parquet").set_index("query_id")["text"]
    passages = read_parquet(paths.dataset / "passages.parquet").set_index("passage_id")["text"]
    overlap = [word_overlap.fn(q, p) for q, p in zip(queries.reindex(votes["query_id"]).to_numpy(),
                                                       passages.reindex(votes["passage_id"]).to_numpy())]
    names = lf_names(votes)
    found = Prepared(name, names + [EXTRA], np.column_stack([score_matrix(votes), overlap]),
                     votes["query_id"].to_numpy(), votes["passage_id"].to_numpy(), votes["split"].to_numpy(),
                     pd.to_numeric(votes["gold"], errors="coerce").to_numpy(float),
                     read_parquet(paths.dataset / "qrels.parquet"),
                     EVAL_SPLIT.get(name, cfg.evaluate.split), REQUIRE.get(name, cfg.evaluate.require))
    cached.write_bytes(pickle.dumps(found))
    return found


class FastTrainMap:
    """Train-split MAP of many teachers of one collection, fast: the views and their correlations computed once
    (as :class:`ScoreFusionModel` makes them), each teacher a weighting of them."""

    def __init__(self, d: Prepared, extra: bool) -> None:
        cols = d.columns(extra)
        self.names = [d.names[c] for c in cols]
        scores = d.scores[:, cols]
        z, inf = standardize_within(scores, d.groups), informative_rows(scores, d.groups)
        state = ScoreFusionModel().fit(scores, d.groups).state_
        self.clusters = [list(c) for c in state.clusters]
        views = np.column_stack([z[:, c].mean(axis=1) for c in self.clusters])
        where = np.column_stack([inf[:, c].any(axis=1) for c in self.clusters])
        self.corr, self.rows = pairwise_correlation(views, where), where.sum(axis=0)
        self.support = prior_support(where)
        views = views / np.asarray(state.scales)
        gold = d.gold if d.require != "relevant" else np.where(d.split == "train", np.nan_to_num(d.gold), d.gold)
        rows = (d.split == "train") & np.isfinite(gold)
        self.views, self.gold, groups = views[rows], gold[rows], d.groups[rows]
        codes, self.groups = np.unique(groups, return_inverse=True)
        positives = np.bincount(self.groups, weights=self.gold, minlength=len(codes))
        sizes = np.bincount(self.groups, minlength=len(codes))
        both = (positives > 0) & ((positives < sizes) if d.require == "both" else True)
        self.keep, self.positives = both, positives

    def teacher_map(self, priors: dict[str, float], strength: float) -> float:
        """Train MAP of the family model under ``priors`` (LF name → prior loading) and ``strength``."""
        families = [FAMILY.get(self.names[c[0]]) for c in self.clusters]
        prior = [float(np.mean([priors[self.names[i]] for i in c])) for c in self.clusters]
        weights = fit_family_factor(self.corr, families, prior, strength, rows=self.rows, support=self.support).weights
        return self.map_of(self.views @ weights)

    def map_of(self, score: np.ndarray) -> float:
        order = np.lexsort((self.gold, -score, self.groups))
        g, y = self.groups[order], self.gold[order]
        start = np.r_[0, np.flatnonzero(np.diff(g)) + 1]
        rank = np.arange(len(g)) - np.repeat(start, np.diff(np.r_[start, len(g)])) + 1
        hits = np.cumsum(y) - np.repeat(np.r_[0, np.cumsum(y)[start[1:] - 1]], np.diff(np.r_[start, len(g)]))
        ap = np.bincount(g, weights=np.where(y > 0, hits / rank, 0.0), minlength=len(self.keep))
        return float((ap[self.keep] / self.positives[self.keep]).mean())


def fit_priors(collections: list[Prepared]) -> tuple[dict[str, float], float]:
    """The priors and strength maximising the mean train MAP over ``collections`` (with and without word_overlap),
    by coordinate search from 0.5 everywhere over :data:`GRID` and :data:`STRENGTHS`; where no single move gains, every
    pair of LFs is moved together (LFs of one family trade weight: measured, one move at a time stopped where moving
    bm25 and word_overlap together gained)."""
    fast = [FastTrainMap(d, extra) for d in collections for extra in (False, True)]
    lfs = sorted({n for f in fast for n in f.names})

    def score(priors: dict[str, float], strength: float) -> float:
        return float(np.mean([f.teacher_map(priors, strength) for f in fast]))

    singles = [{lf: v} for lf in lfs for v in GRID] + [{"strength": v} for v in STRENGTHS]
    pairs = [{a: va, b: vb} for a, b in itertools.combinations(lfs, 2) for va in GRID for vb in GRID]
    priors, strength = dict.fromkeys(lfs, 0.5), 1.0
    best = score(priors, strength)
    for _ in range(10):
        changed = False
        for moves in (singles, pairs):
            for move in moves:  # each move from the current best
                trial = ({**priors, **{k: v for k, v in move.items() if k != "strength"}},
                         move.get("strength", strength))
                found = score(*trial)
                if found > best + 1e-5:
                    best, (priors, strength), changed = found, trial, True
            if changed:
                break
        if not changed:
            break
    return priors, strength


def evaluated(d: Prepared, score: np.ndarray) -> float:
    """MAP of ``score`` on the collection's evaluation split, as the project measures it."""
    rows = d.split == d.eval_split
    run = pd.DataFrame({"query_id": d.groups[rows], "passage_id": d.passages[rows], "score": score[rows]})
    return float(evaluate_run(run, d.qrels, require=d.require, rn=())["MAP"].mean())


def fitted_teacher(names: list[str], scores: np.ndarray, groups: np.ndarray, priors: dict[str, float] | None,
                   strength: float) -> ScoreFusionModel:
    """The fusion model over ``scores`` (columns ``names``) as ``aggregate`` fits it, without gold: each built-in LF
    with its family and its prior of ``priors`` (None: label-free), any other LF declaring nothing."""
    declared = None if priors is None else {n: {"family": FAMILY.get(n), "prior": priors.get(n)} for n in names}
    return ScoreFusionModel(priors=declared, prior_strength=strength).fit(scores, groups, names)


def teacher_score(d: Prepared, extra: bool, priors: dict[str, float] | None, strength: float) -> np.ndarray:
    """The teacher's fused score of every pair: fitted on every pair without gold, as ``aggregate`` fits it."""
    cols = d.columns(extra)
    model = fitted_teacher([d.names[c] for c in cols], d.scores[:, cols], d.groups, priors, strength)
    return model.fused(d.scores[:, cols], d.groups)


def fusion_maps(d: Prepared) -> dict[str, float]:
    """The MAP of CombSUM and RRF of the collection's LFs (word_overlap left out), as ``weakrank.baselines`` fuses."""
    cols = d.columns(False)
    votes = pd.DataFrame({"query_id": d.groups, **{SCORE + d.names[c]: d.scores[:, c] for c in cols}})
    names = [d.names[c] for c in cols]
    return {method: evaluated(d, fuse_scores(votes, names, method).to_numpy()) for method in ("combsum", "rrf")}


def scored(d: Prepared, priors: dict[str, float], strength: float) -> list[dict]:
    """``teacher.csv``'s rows of one collection: its teacher label-free and with ``priors`` at ``strength``, with and
    without word_overlap, beside its best single LF, CombSUM and RRF."""
    lf_map = {n: evaluated(d, d.scores[:, i]) for i, n in enumerate(d.names) if n != EXTRA}
    best = max(lf_map, key=lf_map.get)
    fused = {k: round(v, 4) for k, v in fusion_maps(d).items()}
    rows = []
    for extra in (False, True):
        for teacher, p in (("label-free", None), ("priors", priors)):
            found = evaluated(d, teacher_score(d, extra, p, strength))
            rows.append({"dataset": d.name, "teacher": teacher + (f" +{EXTRA}" if extra else ""),
                         "map": round(found, 4), "best_lf": best, "best_lf_map": round(lf_map[best], 4), **fused})
            print(rows[-1], flush=True)
    return rows


def markdown(table: pd.DataFrame) -> str:
    """The docs' table (docs/benchmarks.md) from ``teacher.csv``: per collection, the teacher's MAP label-free and
    with priors it did not fit (with and without word_overlap), the best single LF, and the change."""
    wide = table.pivot_table(index="dataset", columns="teacher", values="map").reindex(table["dataset"].unique())
    best = table.drop_duplicates("dataset").set_index("dataset")
    out = pd.DataFrame({
        "label-free": wide["label-free"].map("{:.3f}".format),
        "priors (left out)": wide["priors"].map("{:.3f}".format),
        "change": (wide["priors"] - wide["label-free"]).map("{:+.3f}".format),
        "best LF": [f"{best.loc[d, 'best_lf']} {best.loc[d, 'best_lf_map']:.3f}" for d in wide.index],
        "priors − best LF": (wide["priors"] - best.loc[wide.index, "best_lf_map"]).map("{:+.3f}".format),
        "CombSUM": best.loc[wide.index, "combsum"].map("{:.3f}".format),
        "RRF": best.loc[wide.index, "rrf"].map("{:.3f}".format),
        "priors − max(best LF, CombSUM, RRF)": (wide["priors"] - best.loc[wide.index, ["best_lf_map", "combsum", "rrf"]]
                                                .max(axis=1)).map("{:+.3f}".format),
        "label-free +word_overlap": wide["label-free +word_overlap"].map("{:.3f}".format),
        "priors +word_overlap": wide["priors +word_overlap"].map("{:.3f}".format),
    })
    gain = (wide["priors"] - wide["label-free"]).mean()
    return out.rename_axis("collection").to_markdown(disable_numparse=True) + f"\n\nMean change: {gain:+.3f} MAP."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=COLLECTIONS)
    parser.add_argument("--markdown", nargs="?", const="teacher.csv", choices=["teacher.csv", "teacher_unseen.csv"],
                        help="only print teacher.csv (or teacher_unseen.csv) as the docs' table")
    parser.add_argument("--unseen", nargs="+", type=Path, metavar="CONFIG",
                        help="only score the pipeline configs of collections no constant was fitted on, label-free "
                             "and with the built-in LFs' declared priors, into teacher_unseen.csv")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(pd.read_csv(ROOT / "benchmarks" / args.markdown)))
        return
    if args.unseen:
        declared = {name: BUILTIN[name]().prior for name in BUILTIN}
        rows = [row for config in args.unseen for row in scored(prepare(config.stem, config), declared, PRIOR_STRENGTH)]
        pd.DataFrame(rows).to_csv(ROOT / "benchmarks" / "teacher_unseen.csv", index=False)
        return
    data = {name: prepare(name) for name in COLLECTIONS}
    rows, fitted = [], []
    for held_out in ["all", *args.datasets]:
        priors, strength = fit_priors([d for name, d in data.items() if name != held_out])
        fitted += [{"held_out": held_out, "lf": lf, "family": FAMILY.get(lf), "prior": p, "strength": strength}
                   for lf, p in priors.items()]
        print(f"priors without {held_out}: {priors} strength {strength}", flush=True)
        if held_out == "all":
            continue
        rows += scored(data[held_out], priors, strength)
    pd.DataFrame(rows).to_csv(ROOT / "benchmarks" / "teacher.csv", index=False)
    pd.DataFrame(fitted).to_csv(ROOT / "benchmarks" / "teacher_priors.csv", index=False)


if __name__ == "__main__":
    main()
