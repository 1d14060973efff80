"""A trainer built from a :class:`~weakrank.training.config.TrainConfig` and the training lists it reads. What reads
a pipeline's run directory (the train and rerank stages) is :mod:`weakrank.stages.train`; a trained ranker loaded
and run over pairs is :mod:`weakrank.ranker.rerank`."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.training.callbacks import TrainerCallback
from weakrank.training.config import TrainConfig
from weakrank.training.data import TrainingData
from weakrank.training.evaluators import Evaluator
from weakrank.training.lengths import resolve_max_length
from weakrank.training.objectives import objective_from_config
from weakrank.training.plugins import sampler_callback
from weakrank.training.rankers import new_ranker
from weakrank.training.samplers import make_sampler
from weakrank.training.trainer import Trainer, prepare_run


def training_data(labels: pd.DataFrame, dataset: Dataset, tc: TrainConfig, split: str,
                  boosted: Collection[str] = (), boost_share: float = 0.0) -> TrainingData:
    """The lists of ``split`` that a run as ``tc`` says sees (``list_fraction`` thins the train split only, and
    the lists of its ``boosted`` queries are repeated to ``boost_share`` of an epoch, the train split's only)."""
    return TrainingData(labels, dataset.queries, dataset.passages, split, supervised=tc.supervised,
                        ns_lf=tc.ns_lf if tc.needs_ns_score else None, min_confidence=tc.min_confidence,
                        list_fraction=tc.list_fraction if split == tc.train_split else 1.0, boosted=boosted,
                        boost_share=boost_share if split == tc.train_split else 0.0)


def trainer_from_config(
    tc: TrainConfig, data: TrainingData, evaluator: Evaluator | None, out_dir: str | Path, passages: pd.DataFrame,
    callbacks: list[TrainerCallback] | None = None, card: dict | None = None,
) -> Trainer:
    """A :class:`Trainer` of ``data`` as ``tc`` says, measured by ``evaluator`` (:mod:`weakrank.training.evaluators`): after :func:`prepare_run` (seeds, process group), a fresh
    model, its objective, the negative sampler over the collection ``passages`` (``passage_id``, ``text``) and
    the callback that drives the sampler when it needs one (after ``callbacks``: AC-IR's, for a policy sampler,
    a trainer plug-in's: :func:`~weakrank.training.plugins.sampler_callback`)."""
    tc = resolve_max_length(tc, data)
    prepare_run(tc)
    model = new_ranker(tc)
    sampler = make_sampler(tc, passages["passage_id"].tolist())
    callbacks = list(callbacks or [])
    driver = sampler_callback(tc.sampler)  # AC-IR's, for a policy sampler
    if driver is not None:
        callbacks.append(driver(tc, model, sampler, passages["text"].tolist()))
    return Trainer(model, objective_from_config(tc), sampler, tc, callbacks, data=data, evaluator=evaluator,
                   out_dir=out_dir, card=card)
