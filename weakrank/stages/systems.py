"""What the evaluate and select stages compare on a split: what a user already has (the first stage, each LF, the
fusions, the labels) and the trained ranker's run, each as a run (query_id, passage_id, score)."""

from __future__ import annotations

import pandas as pd

from weakrank.baselines import column_run, fusion_runs
from weakrank.errors import DataError
from weakrank.evaluation.summary import BM25_ROW
from weakrank.io import read_parquet, read_run_file
from weakrank.label_models.labels_file import read_labels_info
from weakrank.labeling import SCORE, lf_names
from weakrank.paths import RunPaths


def first_stage_run(paths: RunPaths, split: str) -> pd.DataFrame:
    """The candidates' own order on ``split`` as a run (query_id, passage_id, score: minus the rank), as ingest
    kept it in ``dataset/candidates.parquet`` (the run file's order, or BM25's)."""
    cands = read_parquet(paths.candidates, columns=["query_id", "passage_id", "split", "rank"])
    rows = cands[cands["split"] == split]
    return pd.DataFrame({"query_id": rows["query_id"], "passage_id": rows["passage_id"],
                         "score": -rows["rank"].astype(float)})


def evaluated_systems(paths: RunPaths, split: str, trained: str, first: str | None = None
                      ) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """What a user already has on ``split`` (the first stage, named ``first`` (:func:`weakrank.loaders.first_stage`),
    first where it ranks the candidates; weakrank's BM25, every other LF, the RRF and CombSUM fusions, the labels)
    and the trained ranker's run ``runs/<trained>.trec`` where it exists (its rows of ``split``, read by
    :func:`~weakrank.io.read_run_file`): name → run (query_id, passage_id, score), and name → role
    (:mod:`weakrank.evaluation.summary`)."""
    votes = read_parquet(paths.votes)
    if SCORE + "bm25" not in votes.columns:
        raise DataError("no bm25 scores: the evaluate stage compares with the bm25 LF", file=paths.votes)
    runs, roles = ({first: first_stage_run(paths, split)}, {first: "first stage"}) if first else ({}, {})
    names = ["bm25"] + [n for n in lf_names(votes) if n != "bm25"]
    for name in names:
        runs[BM25_ROW if name == "bm25" else name] = column_run(votes, SCORE + name, split)
        roles[BM25_ROW if name == "bm25" else name] = "lf"
    for name, run in fusion_runs(votes).items():
        runs[name.replace(":", "-")] = column_run(run, "score", split)
        roles[name.replace(":", "-")] = "fusion"
    if paths.labels.exists():
        model = read_labels_info(paths.labels).model or "labels"
        runs[f"labels-{model}"] = column_run(read_parquet(paths.labels), "p_relevant", split)
        roles[f"labels-{model}"] = "labels"
    if (paths.runs / f"{trained}.trec").exists():
        queries = set(votes.loc[votes["split"] == split, "query_id"])
        runs[trained] = read_run_file(paths.runs / f"{trained}.trec", queries, split)
        roles[trained] = "trained"
    return runs, roles
