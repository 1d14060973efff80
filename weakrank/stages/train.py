"""The train stage: a ranker trained as ``[train]`` says on the run directory's labels (:mod:`weakrank.training`
knows nothing of run directories or pipeline configs: what connects them is here: the labels a run trains on, the
trainer built over the run directory, the teacher fitted on it and the student's weight beside it, the model
directory a run wrote). The reproduction's grids call these too.

Importing this module loads no torch: what trains is imported when it runs."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.errors import DataError
from weakrank.fusion_state import STUDENT_WEIGHT, FusionState
from weakrank.io import read_parquet
from weakrank.label_models import labels_file
from weakrank.label_models.labels_file import LabelsInfo, read_labels, read_labels_info
from weakrank.labeling import lf_names
from weakrank.paths import RunPaths
from weakrank.run_models import model_dir
from weakrank.stages.stage import stage
from weakrank.validation import check_train

if TYPE_CHECKING:
    from weakrank.modes import TrainingMode
    from weakrank.ranker.teacher import Teacher
    from weakrank.training.callbacks import TrainerCallback
    from weakrank.training.config import TrainConfig
    from weakrank.training.trainer import Progress, Trainer


@stage("train", check_train, reads_train=True, torchrun=True)
def train(cfg: PipelineConfig, tc: TrainConfig, *, resume: bool = False, progress: bool = True,
          callbacks: list[TrainerCallback] | None = None) -> Path:
    """Train the ranker ``[train]`` (``tc``, or ``[train]`` plus the keyword arguments as overrides) describes on
    ``labels.parquet`` (gold with ``supervised``) and return its model directory (the best checkpoint, else the
    final model); with ``fuse_lfs`` it carries its teacher. ``[train]`` and its train split are checked first. A
    torchrun process group is left however training ends."""
    from weakrank.training.distributed import teardown

    try:
        train_ranker(cfg, tc, resume=resume, progress=progress, callbacks=callbacks)
    finally:
        teardown()
    return model_dir(cfg, tc.output)


def teacher_alone(cfg: PipelineConfig, tc: TrainConfig) -> bool:
    """Whether the shipped ranker ``[train]`` trained is its teacher alone (``fuse_lfs``, the student's weight 0: a
    student kept at its start, or one that earned no share): rerank then runs no student, and the teacher's encoder
    LFs read the encodings the label stage kept."""
    from weakrank.ranker.directory import saved_teacher

    state = saved_teacher(model_dir(cfg, tc.output)) if tc.fuse_lfs else None
    return state is not None and state.student_weight == 0


def label_source(paths: RunPaths, tc: TrainConfig) -> Path:
    """The file a run trains on: ``[train] labels``, the votes (gold, ``--supervised``) or labels.parquet."""
    if tc.labels:
        return Path(tc.labels)
    if tc.supervised:  # gold lives in every table; votes also carry BM25 scores for the sampler
        return paths.votes if paths.votes.exists() else paths.candidates
    return paths.labels


@dataclass(frozen=True)
class TrainLabels:
    """The labels a run trains on, read once per training: the file (``source``: :func:`label_source`), its table
    and its record (empty for gold)."""

    source: Path
    table: pd.DataFrame
    info: LabelsInfo


def train_labels(paths: RunPaths, tc: TrainConfig) -> TrainLabels:
    """The :class:`TrainLabels` of a run trained as ``tc`` says."""
    source = label_source(paths, tc)
    if tc.supervised:
        return TrainLabels(source, read_parquet(source), LabelsInfo())
    return TrainLabels(source, *read_labels(source))


def build_trainer(cfg: PipelineConfig, tc: TrainConfig, callbacks: list[TrainerCallback] | None = None,
                  labels: TrainLabels | None = None, dataset: Dataset | None = None,
                  mode: TrainingMode | None = None) -> Trainer:
    """A :class:`~weakrank.training.trainer.Trainer` over the run directory's ``dataset`` (default: loaded here) and
    ``labels`` (default :func:`train_labels`; see :func:`~weakrank.training.build.trainer_from_config`) in the
    labels' ``mode`` (default :func:`~weakrank.modes.training_mode`: its callbacks join ``callbacks``), its evaluator
    the mode's (judged mode's judged estimate), else the dev split's
    (:func:`~weakrank.training.evaluators.dev_evaluator`), else, for a student checked against its start, agreement
    on train lists held out of training (:func:`~weakrank.training.start_check.check_queries`)."""
    from weakrank.modes import training_mode
    from weakrank.training.build import trainer_from_config, training_data
    from weakrank.training.evaluators import AgreementEvaluator, Evaluator, dev_evaluator
    from weakrank.training.label_checks import check_label_table
    from weakrank.training.start_check import check_queries, checks_start

    paths = RunPaths(cfg.run_dir)
    dataset = dataset if dataset is not None else Dataset.load(paths.dataset)
    labels = labels or train_labels(paths, tc)
    table = labels.table
    check_label_table(table, labels.source, dataset, tc.supervised, tc.train_split)
    mode = mode or training_mode(table, labels.info, dataset, tc)
    evaluator: Evaluator | None = mode.evaluator()
    if evaluator is None and tc.dev_split and tc.dev_split in set(table["split"]):
        evaluator = dev_evaluator(training_data(table, dataset, tc, tc.dev_split, mode.boosted), tc)
    elif evaluator is None and tc.dev_split:  # dev_split = "" says so on purpose: no warning
        warnings.warn(f"no {tc.dev_split!r} split in the labels: training without early stopping", stacklevel=2)
    if evaluator is None and checks_start(tc):  # no dev lists: some train lists check the student against its start
        held = check_queries(sorted(set(table.loc[table["split"] == tc.train_split, "query_id"])), tc.seed)
        if held:
            evaluator = AgreementEvaluator(training_data(table[table["query_id"].isin(held)], dataset, tc,
                                                         tc.train_split, mode.boosted, mode.boost_share))
            table = table[~table["query_id"].isin(held)]
    data = training_data(table, dataset, tc, tc.train_split, mode.boosted, mode.boost_share)
    card = {"labels": "gold (supervised)" if tc.supervised else tc.labels or f"{cfg.aggregate.model} label model",
            "LFs": lf_names(table), "train queries": len(data.lists), "collection": cfg.name, **mode.card()}
    return trainer_from_config(tc, data, evaluator, paths.models(tc.output), dataset.passages,
                               [*(callbacks or []), *mode.callbacks()], card=card)


def train_ranker(cfg: PipelineConfig, tc: TrainConfig, *, resume: bool = False, progress: bool = True,
                 callbacks: list[TrainerCallback] | None = None) -> Progress:
    """Train a ranker (``[train] architecture``) as ``tc`` (:func:`~weakrank.stages.stage.train_config`) says, in
    the labels' mode (:func:`~weakrank.modes.training_mode`); models go to ``<run_dir>/<output>/``. With
    ``fuse_lfs`` (weak labels), each saved model also carries its teacher (:func:`run_teacher`, written by
    :meth:`~weakrank.ranker.teacher.Teacher.save`) and the student's weight beside it, earned on held-out lists
    (:func:`~weakrank.training.start_check.earned_weight`) unless the mode chooses another after training
    (judged mode: :meth:`~weakrank.modes.judged.JudgedMode.student_weight`): loaded, it is the shipped ranker
    (:mod:`weakrank.ranker`). The run directory is not locked (:func:`train` is the stage that locks it)."""
    from weakrank.modes import training_mode
    from weakrank.ranker.directory import mark_taught
    from weakrank.training.start_check import earned_weight

    paths = RunPaths(cfg.run_dir)
    labels, dataset = train_labels(paths, tc), Dataset.load(paths.dataset)  # the one read of each
    mode = training_mode(labels.table, labels.info, dataset, tc)
    trainer = build_trainer(cfg, tc, callbacks, labels, dataset, mode)
    result = trainer.fit(resume=resume, show_progress=progress)  # an AC-IR policy is saved by its callback
    if not trainer.dist.is_main:
        return result
    saved = [trainer.out_dir / name for name in ("best", "final") if (trainer.out_dir / name).is_dir()]
    taught = taught_splits(labels, tc)
    teacher = run_teacher(cfg, labels.info, dataset) if tc.fuse_lfs and not tc.supervised else None
    if teacher is None:
        for directory in saved:
            mark_taught(directory, taught)
        return result
    earned = earned_weight(trainer.start_check_, STUDENT_WEIGHT)  # on held-out lists, without judgments
    weight = mode.student_weight(model_dir(cfg, tc.output), teacher, earned)
    notes, card = mode.shipped_notes()
    for directory in saved:  # the teacher, the student's weight and what the mode notes of it: one write each
        teacher.save(directory, student_weight=weight, notes=notes, card=card, taught_splits=taught)
    return result


def taught_splits(labels: TrainLabels, tc: TrainConfig) -> set[str]:
    """The splits whose judgments a run trained as ``tc`` says on ``labels`` learns from or chooses its checkpoint
    by: with ``supervised``, the gold of the train and dev splits; else the splits whose judgments made its labels
    (:func:`~weakrank.label_models.labels_file.taught_splits`)."""
    if tc.supervised:
        return {split for split in (tc.train_split, tc.dev_split) if split}
    return labels_file.taught_splits(labels.table, labels.info)


def run_teacher(cfg: PipelineConfig, info: LabelsInfo | None = None, dataset: Dataset | None = None) -> Teacher | None:
    """The teacher of a model trained on ``cfg``'s run directory: each LF of ``[label] lfs`` (fitted on the run's
    ``dataset``, loaded here unless given, when it keeps collection statistics) and the fusion label model as
    ``aggregate`` fitted it (its state in the labels' record ``info``, by default labels.parquet's; refitted without
    gold on every pair of ``votes.parquet`` when the labels come from another label model or carry no state: only
    then are the votes read). None, with a warning, when an LF cannot score without the collection (a ``fit``
    without ``export``): the model is the student alone."""
    import pyarrow.parquet as pq

    from weakrank.label_models.fusion import ScoreFusionModel
    from weakrank.ranker.teacher import Teacher
    from weakrank.registry import resolve_lfs

    paths = RunPaths(cfg.run_dir)
    labelled = lf_names(pd.DataFrame(columns=pq.read_schema(paths.votes).names))
    lfs = resolve_lfs(cfg.label.lfs, cfg.label.lf_options)
    if [lf.name for lf in lfs] != labelled:
        raise DataError(f"labelled by the LFs {labelled}, but [label] lfs names {[lf.name for lf in lfs]}: "
                        "re-run `weakrank label`", file=paths.votes)
    stuck = [lf.name for lf in lfs if not lf.portable]
    if stuck:
        warnings.warn(f"LFs {stuck} are fitted on the collection and export no state: the model holds the student "
                      "alone (give ranking_lf export= and restore=)", stacklevel=2)
        return None
    if info is None:
        info = read_labels_info(paths.labels) if paths.labels.exists() else LabelsInfo()
    if isinstance(info.params, FusionState) and info.lfs == labelled:
        state = info.params  # as aggregate fitted it, the judged choice included
    else:
        state = ScoreFusionModel(**cfg.fusion_options()).fit_table(read_parquet(paths.votes)).fitted()
    if dataset is None and any(lf.export_fn for lf in lfs):
        dataset = Dataset.load(paths.dataset)
    fitted = [lf.fit(dataset) if lf.export_fn is not None else lf for lf in lfs]
    return Teacher(fitted, state, cfg.label.lfs, [cfg.label.lf_options.get(spec, {}) for spec in cfg.label.lfs])
