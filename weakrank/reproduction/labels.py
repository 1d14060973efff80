"""The papers' label sources: what a grid's trained cells learn from besides a label model's labels.

``[experiment] train_label_models`` (stored as given by :class:`weakrank.sections.ExperimentConfig`) names, for each
trained row, a label model or one of these sources: ``"gold"``, the gold labels (corrupted at each noise ratio:
Sharma et al.'s noise study), or ``"votes:<lf>"``, that LF's own votes (+1 / −1) with nothing fused (Xu et al.'s
BERT-PR on BM25 votes). Here they are checked and turned into labels (labels.parquet's shape).
"""

from __future__ import annotations

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.errors import ConfigError, did_you_mean
from weakrank.label_models import fit_labels
from weakrank.label_models.base import with_labels
from weakrank.labeling import lf_names
from weakrank.noise import corrupt_labels, sentence_encoder
from weakrank.paths import RunPaths
from weakrank.sections import check_label_model

# train_label_models entries that are not label models
GOLD = "gold"  # the gold labels (corrupted at each noise ratio), Sharma et al.'s noise study
ONE_LF_VOTES = "votes:"  # "votes:<lf>": the labels are that LF's own votes (+1 / −1), nothing fused


def check_label_sources(cfg: PipelineConfig, votes: pd.DataFrame) -> None:
    """Each of the grid's ``train_label_models`` is a label model, :data:`GOLD` or ``votes:<lf>`` of an LF of the
    votes table, else a :class:`ConfigError` naming the file, the grid and the name (with the closest known one)."""
    where = f"{cfg.source}: experiment grid {cfg.name!r}: train_label_models"
    names = lf_names(votes)
    for model in cfg.experiment.trained_label_models:
        lf = model.removeprefix(ONE_LF_VOTES)
        if model.startswith(ONE_LF_VOTES) and lf not in names:
            raise ConfigError(f"{where} {model!r}: no LF {lf!r} in the votes{did_you_mean(lf, names)}; the LFs: {names}")
        if model != GOLD and not model.startswith(ONE_LF_VOTES):
            check_label_model(model, f"{where}:")


def source_labels(cfg: PipelineConfig, votes: pd.DataFrame, source: str, noise: float, seed: int) -> pd.DataFrame:
    """The labels a trained cell learns from: label source (or label model) ``source`` on ``votes``, a share
    ``noise`` of them corrupted (:func:`~weakrank.noise.corrupt_labels`, drawn with ``seed``)."""
    if source == GOLD:
        labels = gold_labels(votes)
    elif source.startswith(ONE_LF_VOTES):
        labels = one_lf_labels(votes, source.removeprefix(ONE_LF_VOTES))
    else:
        labels = fit_labels(votes, cfg.label_model(source))
    if noise:
        passages = Dataset.load(RunPaths(cfg.run_dir).dataset).passages
        labels, _ = corrupt_labels(labels, passages, noise, sentence_encoder(), seed=seed)
    return labels


def gold_labels(votes: pd.DataFrame) -> pd.DataFrame:
    """The pairs of ``votes`` with gold, labelled by it, with confidence 1 (labels.parquet's shape)."""
    assessed = votes.dropna(subset=["gold"])
    gold = (assessed["gold"] > 0).astype(int)
    return assessed.assign(label=gold, confidence=1.0, p_relevant=gold.astype(float), score=gold.astype(float))


def one_lf_labels(votes: pd.DataFrame, lf: str) -> pd.DataFrame:
    """Labels from one LF's votes alone (Xu et al.'s BERT-PR on BM25 votes): +1 relevant, −1 not, both with
    confidence 1; an abstain is neither, as the other LFs' votes are dropped (a negative needs a vote)."""
    column = f"vote_{lf}"
    own = votes.drop(columns=[c for c in votes.columns if c.startswith("vote_") and c != column])
    return with_labels(own, (own[column].to_numpy(dtype=float) + 1) / 2)
