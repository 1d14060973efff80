"""Train a ranker from a pipeline's run directory, and rerank candidates with it into a TREC run."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.errors import DataError
from weakrank.io import check_output, mark_written, read_metadata, read_parquet, write_run
from weakrank.labeling import lf_names
from weakrank.loaders.trec import load_trec
from weakrank.paths import RunPaths
from weakrank.ranker import FusedRanker, RanksPassages, load_ranker
from weakrank.ranker.teacher_state import FUSION_FILE
from weakrank.training.callbacks import TrainerCallback
from weakrank.training.config import TrainConfig, train_config
from weakrank.training.data import TrainingData
from weakrank.training.label_checks import check_label_table
from weakrank.training.lengths import resolve_max_length
from weakrank.training.objectives import objective_from_config
from weakrank.training.policy import ActorCriticAgent, TermWeightedEncoder
from weakrank.training.policy.callback import PolicyCallback
from weakrank.training.rankers import Ranker, new_ranker
from weakrank.training.samplers import NegativeSampler, make_sampler
from weakrank.training.shipped import run_teacher, ship
from weakrank.training.trainer import Progress, Trainer, prepare_run


def label_source(paths: RunPaths, tc: TrainConfig) -> Path:
    """The file a run trains on: ``[train] labels``, the votes (gold, ``--supervised``) or labels.parquet."""
    if tc.labels:
        return Path(tc.labels)
    if tc.supervised:  # gold lives in every table; votes also carry BM25 scores for the sampler
        return paths.votes if paths.votes.exists() else paths.candidates
    return paths.labels


def label_table(paths: RunPaths, tc: TrainConfig) -> pd.DataFrame:
    """The table of :func:`label_source`."""
    return read_parquet(label_source(paths, tc))


def training_data(labels: pd.DataFrame, dataset: Dataset, tc: TrainConfig, split: str) -> TrainingData:
    """The lists of ``split`` that a run as ``tc`` says sees (``list_fraction`` thins the train split only)."""
    return TrainingData(labels, dataset.queries, dataset.passages, split, supervised=tc.supervised,
                        ns_lf=tc.ns_lf if tc.needs_ns_score else None, min_confidence=tc.min_confidence,
                        list_fraction=tc.list_fraction if split == tc.train_split else 1.0)


def few_shot_queries(paths: RunPaths, tc: TrainConfig) -> list[str]:
    """The judged queries of few-shot mode (``[aggregate] gold_queries``) recorded in the labels a weak run
    trains on."""
    source = label_source(paths, tc)
    if tc.supervised or not source.exists():
        return []
    return list(read_metadata(source).get("gold_queries") or [])


def build_trainer(cfg: PipelineConfig, tc: TrainConfig, callbacks: list[TrainerCallback] | None = None) -> Trainer:
    """A :class:`Trainer` over the run directory's dataset and labels (see :func:`trainer_from_config`)."""
    paths = RunPaths(cfg.run_dir)
    dataset = Dataset.load(paths.dataset)
    labels = label_table(paths, tc)
    check_label_table(labels, label_source(paths, tc), dataset, tc.supervised, tc.train_split)
    data = training_data(labels, dataset, tc, tc.train_split)
    dev_data = None
    gold = few_shot_queries(paths, tc)
    judged = labels[labels["query_id"].isin(gold)]
    if "judged" in judged.columns:  # judgments of a judging file: their judged pairs, when they are dev queries
        judged = judged[(judged["split"] == tc.dev_split) & judged["judged"].notna()]
        judged = judged.assign(gold=judged["judged"])
    if len(judged):  # few-shot mode: the judged queries the label model read pick the checkpoint by their MAP
        dev_data = training_data(judged, dataset, replace(tc, supervised=True), judged["split"].iloc[0])
    elif tc.dev_split and tc.dev_split in set(labels["split"]):
        dev_data = training_data(labels, dataset, tc, tc.dev_split)
    elif tc.dev_split:  # dev_split = "" says so on purpose: no warning
        warnings.warn(f"no {tc.dev_split!r} split in the labels: training without early stopping", stacklevel=2)
    card = {"labels": "gold (supervised)" if tc.supervised else tc.labels or f"{cfg.aggregate.model} label model",
            "LFs": lf_names(labels), "train queries": len(data.lists), "collection": cfg.name}
    if gold:
        card["judged queries (few-shot)"] = gold
    return trainer_from_config(tc, data, dev_data, paths.models(tc.output), dataset.passages, callbacks, card=card)


def trainer_from_config(
    tc: TrainConfig, data: TrainingData, dev_data: TrainingData | None, out_dir: str | Path, passages: pd.DataFrame,
    callbacks: list[TrainerCallback] | None = None, card: dict | None = None,
) -> Trainer:
    """A :class:`Trainer` of ``data`` as ``tc`` says: after :func:`prepare_run` (seeds, process group), a fresh
    model, its objective, the negative sampler over the collection ``passages`` (``passage_id``, ``text``) and,
    with a policy sampler, the AC-IR callback that drives it (after ``callbacks``)."""
    tc = resolve_max_length(tc, data)
    prepare_run(tc)
    model = new_ranker(tc)
    sampler = make_sampler(tc, passages["passage_id"].tolist())
    callbacks = list(callbacks or [])
    if tc.sampler in ("policy", "random_policy"):
        callbacks.append(policy_callback(tc, model, sampler, passages["text"].tolist()))
    return Trainer(model, objective_from_config(tc), sampler, tc, callbacks, data=data, dev_data=dev_data,
                   out_dir=out_dir, card=card)


def policy_callback(tc: TrainConfig, model: Ranker, sampler: NegativeSampler, texts: list[str]) -> PolicyCallback:
    """AC-IR over the samplers of ``sampler`` (a switch), its state read with ``model``'s word embeddings weighted
    over the collection's ``texts`` (a saved policy at ``policy_path`` is reused and updated)."""
    encoder = TermWeightedEncoder(model.tokenizer, model.encoder.get_input_embeddings().weight, texts)
    actions = list(sampler.samplers)
    if tc.policy_path and Path(tc.policy_path).exists():
        agent = ActorCriticAgent.load(tc.policy_path, seed=tc.seed)
    else:
        agent = ActorCriticAgent(actions, encoder.state_dim, seed=tc.seed)
    return PolicyCallback(agent, encoder, sampler, tc.policy_every, tc.policy_reward, tc.policy_val_queries,
                          uniform=tc.sampler == "random_policy", seed=tc.seed, ceiling=tc.policy_ceiling)


def train(
    cfg: PipelineConfig, *, resume: bool = False, progress: bool = True, callbacks: list[TrainerCallback] | None = None,
    **overrides: Any
) -> Progress:
    """Train a ranker (``[train] architecture``) as ``[train]`` (plus ``overrides``) says; models go to
    ``<run_dir>/<output>/``. With ``fuse_lfs`` (weak labels), each saved model also carries its teacher
    (:func:`~weakrank.training.shipped.ship`): loaded, it is the shipped ranker (:mod:`weakrank.ranker`)."""
    tc = train_config(cfg, **overrides)
    trainer = build_trainer(cfg, tc, callbacks)
    result = trainer.fit(resume=resume, show_progress=progress)
    for callback in trainer.callbacks:
        if isinstance(callback, PolicyCallback) and tc.policy_path and tc.sampler == "policy":
            callback.save(tc.policy_path)
    if tc.fuse_lfs and not tc.supervised and trainer.dist.is_main:
        teacher = run_teacher(cfg, labels=label_source(RunPaths(cfg.run_dir), tc))
        if teacher is not None:
            ship(teacher, *(trainer.out_dir / name for name in ("best", "final") if (trainer.out_dir / name).is_dir()))
    return result


def model_dir(cfg: PipelineConfig, output: str = "model") -> Path:
    """The best checkpoint of a training run if early stopping kept one, else its final model."""
    root = RunPaths(cfg.run_dir).models(output)
    for name in ("best", "final"):
        if (root / name).exists():
            return root / name
    raise DataError(f"no trained model under {root} (run `weakrank train` first)", file=root)


def rerank(cfg: PipelineConfig, model: str | Path | None = None, split: str = "test", name: str | None = None,
           batch_size: int = 64, backend: str = "torch", trust_code: bool = False, **overrides: Any) -> Path:
    """Score every candidate of ``split`` with a trained model (default: the one ``[train]`` plus ``overrides``
    trained); write ``<run_dir>/runs/<name>.trec``. With ``[train] fuse_lfs``, the shipped ranker (the student
    with its teacher, :mod:`~weakrank.ranker.fused`), else the student alone; ``backend``: how its student runs
    (:func:`~weakrank.ranker.load_ranker`). The model this run directory trained runs its
    LF files (copies of those its config names); another ``model`` runs them only with ``trust_code``."""
    tc = train_config(cfg, **overrides)
    trust_code = trust_code or model is None
    model = model or model_dir(cfg, tc.output)
    tag = name or Path(model).parent.name
    scored = score_split(cfg, model, split, batch_size=batch_size, student_only=not tc.fuse_lfs, backend=backend,
                         trust_code=trust_code)
    return write_run(scored, RunPaths(cfg.run_dir).runs / f"{tag}.trec", tag)


def score_split(cfg: PipelineConfig, model: str | Path, split: str = "test", query_ids: set[str] | None = None,
                batch_size: int = 64, student_only: bool = True, backend: str = "torch",
                trust_code: bool = False) -> pd.DataFrame:
    """``query_id, passage_id, score`` of ``split``'s candidates (of ``query_ids`` only, when given) under a model
    (the student alone unless ``student_only`` is False)."""
    pairs = Dataset.load(RunPaths(cfg.run_dir).dataset).subset(splits=[split]).pairs()
    if query_ids is not None:
        pairs = pairs[pairs["query_id"].isin(query_ids)]
    return score_pairs(loaded_ranker(model, student_only, backend, trust_code), pairs, batch_size)


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
