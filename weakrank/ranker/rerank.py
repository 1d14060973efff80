"""A model directory loaded and run over pairs: :func:`loaded_ranker` (the shipped ranker, or its student alone,
with a warning when the teacher is asked of a directory that holds none) and :func:`score_pairs`. The rerank
stage (:func:`weakrank.stages.training.score_split`) and ``weakrank rerank --run`` score with these."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from weakrank.ranker.fused import FusedRanker
from weakrank.ranker.load import load_ranker
from weakrank.ranker.ranking import RanksPassages
from weakrank.ranker.teacher_state import FUSION_FILE


def loaded_ranker(model: str | Path, student_only: bool = False, backend: str = "torch",
                  trust_code: bool = False) -> RanksPassages:
    """:func:`load_ranker`, warning when the shipped ranker is asked of a directory that holds the student alone."""
    ranker = load_ranker(model, student_only=student_only, backend=backend, trust_code=trust_code)
    if not student_only and not isinstance(ranker, FusedRanker) and not (Path(model) / FUSION_FILE).exists():
        warnings.warn(f"{model} holds no teacher (trained without fuse_lfs, or before models carried it): "
                      "scoring with the student alone", stacklevel=2)
    return ranker


def score_pairs(ranker: RanksPassages, pairs: pd.DataFrame, batch_size: int = 64) -> pd.DataFrame:
    """``query_id, passage_id, score`` of the rows of ``pairs`` (``query_id, passage_id, query, passage``)."""
    return pairs[["query_id", "passage_id"]].assign(score=ranker.score_frame(pairs, batch_size=batch_size))
