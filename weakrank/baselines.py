"""What a user already has, as runs over one split: each LF's own ranking (BM25 among them) and the unsupervised
fusions of the LFs' rankings: the baselines a weak ranker must beat.

``fusion:rrf``: reciprocal-rank fusion (Cormack et al., 2009; k = 60) of every LF's ranking (of the LFs that
rank a query's list: one whose scores are all tied there abstains).
``fusion:combsum``: CombSUM of the LFs' scores, each z-normalised within the query (ranx's ``sum`` of ``zmuv``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from weakrank.labeling import SCORE, lf_names, score_matrix
from weakrank.lists import informative_rows, reciprocal_ranks, standardize_within

METHODS = {"fusion:rrf": "rrf", "fusion:combsum": "combsum"}


def column_run(table: pd.DataFrame, column: str, split: str) -> pd.DataFrame:
    """A run ranking ``split``'s candidates by ``table[column]`` (an LF score, P(relevant), …)."""
    rows = table[table["split"] == split]
    return pd.DataFrame({"query_id": rows["query_id"], "passage_id": rows["passage_id"], "score": rows[column].astype(float)})


def bm25_negatives(votes: pd.DataFrame) -> pd.DataFrame | None:
    """The BM25 scores that pick R_n@k's negatives (Penha & Hauff, WSLS), None without the bm25 LF."""
    if SCORE + "bm25" not in votes.columns:
        return None
    return votes[["query_id", "passage_id"]].assign(score=votes[SCORE + "bm25"])


def fuse_scores(votes: pd.DataFrame, names: list[str], method: str) -> pd.Series:
    """The fused score of every row of ``votes`` (aligned with its index) over the LFs ``names``: ``rrf`` (the sum
    of 1 / (k + rank), tied rows sharing their mean rank) or ``combsum`` (the sum of the scores standardised within
    the list, ranx's ``zmuv``). An LF whose scores are all tied on a query's list abstains there: the query is fused
    over the LFs that rank it (0 where none does). ranx's ``fuse`` is the reference (a test holds them equal on
    lists without ties); this is the same arithmetic without compiling ranx's numba kernels in every process."""
    scores, groups = score_matrix(votes, names), votes["query_id"].to_numpy()
    informative = informative_rows(scores, groups)
    z = standardize_within(scores, groups)  # 0 on a list the LF does not rank
    fused = reciprocal_ranks(z, groups, informative) if method == "rrf" else z
    return pd.Series(fused.sum(axis=1), index=votes.index, name=method)


def fusion_runs(votes: pd.DataFrame, systems: Sequence[str] = tuple(METHODS)) -> dict[str, pd.DataFrame]:
    """The fusions ``systems`` (default ``fusion:rrf`` and ``fusion:combsum``) of every LF of a votes table:
    ``query_id, passage_id, split, score``; none with fewer than two LFs."""
    names = lf_names(votes)
    if len(names) < 2:
        return {}
    keys = votes[["query_id", "passage_id", "split"]]
    return {system: keys.assign(score=fuse_scores(votes, names, METHODS[system])) for system in systems}
