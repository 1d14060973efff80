"""What a user already has, as runs over one split: each LF's own ranking (BM25 among them) and the unsupervised
fusions of the LFs' rankings, by ranx: the baselines a weak ranker must beat.

``fusion:rrf``: reciprocal-rank fusion (Cormack et al., 2009; k = 60) of every LF's ranking (of the LFs that
rank a query's list: one whose scores are all tied there abstains).
``fusion:combsum``: CombSUM (ranx ``sum``) of the LFs' scores, each z-normalised within the query (``zmuv``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from weakrank.labeling import SCORE, lf_names, score_matrix
from weakrank.lists import informative_rows

METHODS = {"fusion:rrf": ("rrf", "min-max"), "fusion:combsum": ("sum", "zmuv")}


def column_run(table: pd.DataFrame, column: str, split: str) -> pd.DataFrame:
    """A run ranking ``split``'s candidates by ``table[column]`` (an LF score, P(relevant), …)."""
    rows = table[table["split"] == split]
    return pd.DataFrame({"query_id": rows["query_id"], "passage_id": rows["passage_id"], "score": rows[column].astype(float)})


def bm25_negatives(votes: pd.DataFrame) -> pd.DataFrame | None:
    """The BM25 scores that pick R_n@k's negatives (the WSLS paper, seed 000), None without the bm25 LF."""
    if SCORE + "bm25" not in votes.columns:
        return None
    return votes[["query_id", "passage_id"]].assign(score=votes[SCORE + "bm25"])


def fuse_scores(votes: pd.DataFrame, names: list[str], method: str, norm: str) -> pd.Series:
    """The fused score of every row of ``votes`` (aligned with its index) over the LFs ``names``. An LF whose
    scores are all tied on a query's list abstains there: the query is fused over the LFs that rank it (ranx
    would rank a tied list in arbitrary order, noise in RRF)."""
    from ranx import Run, fuse

    informative = informative_rows(score_matrix(votes, names), votes["query_id"].to_numpy())
    speaks = informative @ (1 << np.arange(len(names)))  # which LFs rank the row's list, as bits
    fused = pd.Series(0.0, index=votes.index, name=method)  # no LF ranks the list: all tied
    for pattern, rows in votes.groupby(speaks, sort=False):
        speaking = [name for k, name in enumerate(names) if pattern >> k & 1]
        if len(speaking) == 1:  # one ranking: it is the fusion's order
            fused[rows.index] = rows[SCORE + speaking[0]].astype(float)
        elif speaking:
            with warnings.catch_warnings():  # numba compiling ranx: its notes on casts inside ranx say nothing to us
                warnings.filterwarnings("ignore", module="numba")
                runs = [Run.from_df(pd.DataFrame({"q_id": rows["query_id"].astype(str).astype(object),
                                                  "doc_id": rows["passage_id"].astype(str).astype(object),
                                                  "score": rows[SCORE + name].astype(float)}), name=name)
                        for name in speaking]
                fused_run = fuse(runs, norm=norm, method=method)
            scores = fused_run.to_dataframe().set_index(["q_id", "doc_id"])["score"]
            keys = pd.MultiIndex.from_arrays([rows["query_id"].astype(str), rows["passage_id"].astype(str)])
            fused[rows.index] = scores.reindex(keys).fillna(float("-inf")).to_numpy()
    return fused


def fusion_runs(votes: pd.DataFrame, systems: Sequence[str] = tuple(METHODS)) -> dict[str, pd.DataFrame]:
    """The fusions ``systems`` (default ``fusion:rrf`` and ``fusion:combsum``) of every LF of a votes table:
    ``query_id, passage_id, split, score``; none with fewer than two LFs."""
    names = lf_names(votes)
    if len(names) < 2:
        return {}
    keys = votes[["query_id", "passage_id", "split"]]
    return {system: keys.assign(score=fuse_scores(votes, names, *METHODS[system])) for system in systems}
