"""Unsupervised fusion of the LFs' rankings, by ranx: the baselines a weak ranker must beat.

``fusion:rrf``: reciprocal-rank fusion (Cormack et al., 2009; k = 60) of every LF's ranking.
``fusion:combsum``: CombSUM (ranx ``sum``) of the LFs' scores, each z-normalised within the query (``zmuv``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from weakrank.labeling import SCORE, lf_names

METHODS = {"fusion:rrf": ("rrf", "min-max"), "fusion:combsum": ("sum", "zmuv")}


def fuse_scores(votes: pd.DataFrame, names: list[str], method: str, norm: str) -> pd.Series:
    """The fused score of every row of ``votes`` (aligned with its index) over the LFs ``names``."""
    from ranx import Run, fuse

    runs = []
    for name in names:
        frame = pd.DataFrame({"q_id": votes["query_id"].astype(str).astype(object),
                              "doc_id": votes["passage_id"].astype(str).astype(object),
                              "score": votes[SCORE + name].astype(float)})
        runs.append(Run.from_df(frame, name=name))
    fused = fuse(runs, norm=norm, method=method).to_dataframe()
    fused = fused.set_index(["q_id", "doc_id"])["score"]
    keys = pd.MultiIndex.from_arrays([votes["query_id"].astype(str), votes["passage_id"].astype(str)])
    return pd.Series(fused.reindex(keys).to_numpy(), index=votes.index, name=method).fillna(float("-inf"))


def fusion_runs(votes: pd.DataFrame, systems: Sequence[str] = tuple(METHODS)) -> dict[str, pd.DataFrame]:
    """The fusions ``systems`` (default ``fusion:rrf`` and ``fusion:combsum``) of every LF of a votes table:
    ``query_id, passage_id, split, score``; none with fewer than two LFs."""
    names = lf_names(votes)
    if len(names) < 2:
        return {}
    keys = votes[["query_id", "passage_id", "split"]]
    return {system: keys.assign(score=fuse_scores(votes, names, *METHODS[system])) for system in systems}
