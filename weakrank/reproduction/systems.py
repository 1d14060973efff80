"""Systems to compare, each turned into a run (query_id, passage_id, score) over one split."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from weakrank.baselines import column_run, fusion_runs
from weakrank.label_models import fit_predict, make_label_model
from weakrank.labeling import SCORE, lf_names


def label_model_scores(votes: pd.DataFrame, model: str, **options) -> pd.Series:
    """P(relevant) of every pair from a label model fitted on all votes (no gold)."""
    return pd.Series(fit_predict(votes, make_label_model(model, **options)), index=votes.index)


def unsupervised_runs(
    votes: pd.DataFrame, split: str, label_models: Mapping[str, Mapping[str, Any]]
) -> dict[str, pd.DataFrame]:
    """Runs of each single LF (its raw score; ``bm25`` is the BM25 baseline), of the unsupervised fusions
    of the LFs (``fusion:rrf``, ``fusion:combsum``) and of each label model (name → its options)."""
    runs = {name: column_run(votes, SCORE + name, split) for name in lf_names(votes)}
    runs.update({name: column_run(run, "score", split) for name, run in fusion_runs(votes).items()})
    for model, options in label_models.items():
        scored = votes.assign(p=label_model_scores(votes, model, **options))
        runs[model] = column_run(scored, "p", split)
    return runs
