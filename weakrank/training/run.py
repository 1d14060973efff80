"""A trainer built from a :class:`~weakrank.training.config.TrainConfig` and the training lists, and a trained
ranker scoring pairs (a TREC run of any queries included). What reads a pipeline's run directory (the train and
rerank stages) is :mod:`weakrank.stages.training`."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.io import check_output, mark_written, write_run
from weakrank.loaders.trec import load_trec
from weakrank.ranker import FusedRanker, RanksPassages, load_ranker
from weakrank.ranker.teacher_state import FUSION_FILE
from weakrank.training.callbacks import TrainerCallback, sampler_callback
from weakrank.training.config import TrainConfig
from weakrank.training.data import TrainingData
from weakrank.training.lengths import resolve_max_length
from weakrank.training.objectives import objective_from_config
from weakrank.training.rankers import new_ranker
from weakrank.training.samplers import make_sampler
from weakrank.training.trainer import Trainer, prepare_run


def training_data(labels: pd.DataFrame, dataset: Dataset, tc: TrainConfig, split: str) -> TrainingData:
    """The lists of ``split`` that a run as ``tc`` says sees (``list_fraction`` thins the train split only)."""
    return TrainingData(labels, dataset.queries, dataset.passages, split, supervised=tc.supervised,
                        ns_lf=tc.ns_lf if tc.needs_ns_score else None, min_confidence=tc.min_confidence,
                        list_fraction=tc.list_fraction if split == tc.train_split else 1.0)


def trainer_from_config(
    tc: TrainConfig, data: TrainingData, dev_data: TrainingData | None, out_dir: str | Path, passages: pd.DataFrame,
    callbacks: list[TrainerCallback] | None = None, card: dict | None = None,
) -> Trainer:
    """A :class:`Trainer` of ``data`` as ``tc`` says: after :func:`prepare_run` (seeds, process group), a fresh
    model, its objective, the negative sampler over the collection ``passages`` (``passage_id``, ``text``) and
    the callback that drives the sampler when it needs one (after ``callbacks``: AC-IR's, for a policy sampler,
    :func:`~weakrank.training.callbacks.sampler_callback`)."""
    tc = resolve_max_length(tc, data)
    prepare_run(tc)
    model = new_ranker(tc)
    sampler = make_sampler(tc, passages["passage_id"].tolist())
    callbacks = list(callbacks or [])
    driver = sampler_callback(tc.sampler)  # AC-IR's, for a policy sampler
    if driver is not None:
        callbacks.append(driver(tc, model, sampler, passages["text"].tolist()))
    return Trainer(model, objective_from_config(tc), sampler, tc, callbacks, data=data, dev_data=dev_data,
                   out_dir=out_dir, card=card)


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


def rerank_trec(model: str | Path, run: str | Path, queries: str | Path, collection: str | Path, out: str | Path,
                batch_size: int = 64, backend: str = "torch", trust_code: bool = False, force: bool = False) -> Path:
    """Rerank a TREC ``run`` of any queries (``queries``: qid TAB text; ``collection``: pid TAB text) with a
    model directory (the shipped ranker when it carries its teacher) into the TREC run ``out``; nothing is
    labelled first. ``out`` is never an input, nor (unless ``force``) a file weakrank did not write
    (:func:`~weakrank.io.check_output`)."""
    check_output(out, {"--run": run, "--queries": queries, "--collection": collection}, force)
    dataset = load_trec(Path.cwd(), collection=str(collection), queries=str(queries), run=str(run), qrels=None)
    tag = Path(model).parent.name if Path(model).name in ("best", "final") else Path(model).name
    ranker = loaded_ranker(model, backend=backend, trust_code=trust_code)
    return mark_written(write_run(score_pairs(ranker, dataset.pairs(), batch_size), out, tag))
