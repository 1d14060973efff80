"""A person judging a sample, simulated on a collection's own gold: what ``bench_judged_rule.py`` fits the rule's
constants on (train splits only) and ``bench_judgments.py`` reports test MAP of (the verdict).

A collection is loaded once (:func:`load`): its votes, the fusion label model fitted without gold, every candidate
combination's score of every pair, each pool query's lists as the candidates rank them, and each query's
full-judgment AP under each candidate (the train split's gold as the person; BEIR qrels list relevant documents
only: an unlisted candidate is judged not relevant). A judged sample (:func:`sample`) is drawn as ``weakrank select``
draws it (:mod:`weakrank.judged.design`) or uniformly (``random``: any query of the pool, the same passages a query),
and the rule chooses from its estimate (:func:`estimate_of`) exactly as ``aggregate`` does.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT

from weakrank.combinations import LABEL_FREE
from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.sampled_map import Estimate, estimate
from weakrank.io import read_parquet, write_text
from weakrank.judged.aligned import Judged, judged_totals
from weakrank.judged.design import OVERSAMPLE, SAMPLED_PASSAGES, Pool, candidate_scores, draw, passages, pool, rankings
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.paths import RunPaths

POOL = "train"


@dataclass
class Collection:
    """What a simulation reads of one collection (module doc)."""

    name: str
    cfg: object
    votes: pd.DataFrame
    names: list[str]  # the candidates, label-free first
    scored: pd.DataFrame  # each candidate's score of every row of votes
    found: Pool  # the train pool as select sees it
    rows: dict[str, np.ndarray]  # train query id → its rows of votes
    gold: np.ndarray  # the person's judgment of every row (train: 1/0, NaN where there is none)
    full_ap: pd.DataFrame  # full-judgment AP of each train query with a relevant candidate (rows) per candidate

    def pool_map(self, queries) -> pd.Series:
        """Each candidate's full-judgment MAP over ``queries`` (those with a relevant candidate count)."""
        return self.full_ap.reindex([q for q in queries if q in self.full_ap.index]).mean()


def list_ap(scores: np.ndarray, gold: np.ndarray) -> float:
    """AP of one fully judged list (ties count against the relevant)."""
    y = gold[np.lexsort((gold, -scores))]
    return float((np.cumsum(y) / np.arange(1, len(y) + 1))[y == 1].mean())


def load(name: str) -> Collection:
    """One collection (module doc); its votes must exist (``weakrank run pipelines/<name>.toml --stages
    ingest,label``)."""
    cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    texts = read_parquet(paths.dataset / "queries.parquet").set_index("query_id")["text"].to_dict()
    options = cfg.fusion_options()  # as aggregate and select fit the fusion model: the LFs' declared priors
    model = ScoreFusionModel(**options).fit_table(votes)
    _, scored = candidate_scores(votes, model)
    train = votes[votes["split"] == POOL]
    found = pool(*rankings(train, options, fusions=False), texts)  # the pool as select designs it
    gold = pd.to_numeric(votes["gold"], errors="coerce").to_numpy(float)
    if REQUIRE[name] == "relevant":  # BEIR: qrels list relevant documents only
        gold = np.where((votes["split"] == POOL).to_numpy(), np.nan_to_num(gold, nan=0.0), gold)
    rows = {q: train.index.to_numpy()[index] for q, index in train.groupby("query_id", sort=False).indices.items()}
    aps = {}
    for q, index in rows.items():
        g = gold[index]
        if np.isfinite(g).all() and g.sum() > 0:
            aps[q] = {c: list_ap(scored[c].to_numpy()[index], g) for c in scored.columns}
    full_ap = pd.DataFrame.from_dict(aps, orient="index", columns=list(scored.columns))
    return Collection(name, cfg, votes, list(scored.columns), scored, found, rows, gold, full_ap)


def test_maps(coll: Collection, split: str) -> pd.Series:
    """Each candidate's MAP on ``split`` against its qrels, as the benchmarks' tables report it."""
    paths = RunPaths(coll.cfg.run_dir)
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    where = (coll.votes["split"] == split).to_numpy()
    keys = coll.votes.loc[where, ["query_id", "passage_id"]]
    return pd.Series({c: float(evaluate_run(keys.assign(score=coll.scored[c].to_numpy()[where]), qrels,
                                            require=REQUIRE[coll.name], rn=())["MAP"].mean())
                      for c in coll.names})


@dataclass(frozen=True)
class Sample:
    """A judged sample: the queries and, per query, the passages asked (row of votes → inclusion probability),
    and each query's weight 1 / π_q."""

    queries: list[str]
    asked: dict[str, dict[int, float]]
    weights: pd.Series


def sample(coll: Collection, n: int, seed: int, method: str = "select", among=None, per_query: int = 6,
           oversample: float = OVERSAMPLE, sampled: int = SAMPLED_PASSAGES) -> Sample:
    """``n`` queries of the pool (only ``among``, when given: e.g. one half of it) drawn as select draws them
    (``select``) or uniformly from every pool query with two candidates or more (``random``), each with the passages
    select would ask about."""
    found = coll.found
    if among is not None:
        keep = set(among)
        frame = [q for q in found.frame if q in keep]
        found = Pool(found.ranked, found.answerable, frame, {q: found.stratum[q] for q in frame})
    if method == "select":
        drawn = draw(found, n, seed, oversample)
        queries, inclusion = drawn.queries, drawn.inclusion
    else:
        everyone = [q for q in found.ranked if among is None or q in keep]
        rng = np.random.default_rng(seed)
        queries = [everyone[i] for i in rng.choice(len(everyone), size=min(n, len(everyone)), replace=False)]
        inclusion = dict.fromkeys(queries, len(queries) / len(everyone))
    asked = {}
    for q in queries:
        index = coll.rows[q]
        ids = coll.votes["passage_id"].to_numpy()[index]
        position = {pid: int(i) for pid, i in zip(ids, index)}
        asked[q] = {position[pid]: p for pid, p in passages(found.ranked[q], per_query, q, seed, sampled).items()}
    return Sample(queries, asked, pd.Series({q: 1.0 / inclusion[q] for q in queries}))


def judged_rows(coll: Collection, judged: Sample) -> Judged:
    """The person's judgments of a sample, aligned with the votes (as ``aggregate`` aligns a judging file)."""
    gold, inclusion = np.full(len(coll.votes), np.nan), np.full(len(coll.votes), np.nan)
    for asked in judged.asked.values():
        for row, p in asked.items():
            gold[row], inclusion[row] = coll.gold[row], p
    return Judged(gold, np.where(np.isfinite(gold), inclusion, np.nan), judged.weights)


def estimate_of(coll: Collection, judged: Sample) -> Estimate:
    """Each candidate's estimated MAP and lead over the label-free weighting from the person's judgments of
    ``judged``, as ``aggregate``'s selector estimates them."""
    rows = judged_rows(coll, judged)
    return estimate(judged_totals(coll.votes, coll.scored, rows), rows.weights, LABEL_FREE)


def sample_arguments(description: str) -> argparse.ArgumentParser:
    """The parser of a benchmark that draws judged samples of each collection's evaluated split: ``--datasets``,
    ``--queries`` (a sample's size), ``--draws`` (samples a collection) and ``--per-query`` (passages a query)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(EVAL_SPLIT), choices=list(EVAL_SPLIT))
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--per-query", type=int, default=6)
    return parser


def write_per_dataset(csv: Path, datasets: list[str], rows_of: Callable[[str], pd.DataFrame]) -> None:
    """``rows_of(name)`` for each dataset in turn, replacing that dataset's rows of ``csv`` (the others stay),
    written after each so that a long run keeps what it finished."""
    old = pd.read_csv(csv) if csv.exists() else None
    for name in datasets:
        rows = rows_of(name)
        old = rows if old is None else pd.concat([old[old["dataset"] != name], rows], ignore_index=True)
        write_text(old.to_csv(index=False, float_format="%.4f"), csv)
        print(f"{name}: done", flush=True)
