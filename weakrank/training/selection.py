"""The evaluations of a :class:`~weakrank.training.trainer.Trainer` and what they choose: each evaluation's metrics
(its evaluator's and the memorisation signal), the best model kept by the evaluator's primary metric, early
stopping, and the share of the fine-tuned weights saved (:mod:`.start_check`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from weakrank.io import write_text
from weakrank.training.callbacks import TrainerCallback
from weakrank.training.checkpoints import Progress
from weakrank.training.config import TrainConfig
from weakrank.training.data import TrainingData
from weakrank.training.distributed import DistEnv
from weakrank.training.evaluators import AgreementEvaluator, Evaluator, ListEvaluator
from weakrank.training.measures import ranking_metrics
from weakrank.training.objectives import Objective
from weakrank.training.rankers import Ranker
from weakrank.training.saving import loaded
from weakrank.training.start_check import StartCheck, checks_start, choose_share


class Selection:
    """The trainer's methods that evaluate the model and keep the best one."""

    args: TrainConfig
    callbacks: list[TrainerCallback]
    data: TrainingData
    dist: DistEnv
    evaluator: Evaluator | None
    model: Ranker
    objective: Objective
    out_dir: Path
    progress: Progress
    selection: str  # the evaluator's primary metric
    total_steps: int
    train_queries: list[str]
    start_weights: dict[str, torch.Tensor] | None
    share: float
    best_weights: dict[str, torch.Tensor] | None
    best_per_list: np.ndarray | None
    start_check_: StartCheck | None
    save_model: Callable[[Path], None]  # ModelSaving's

    @property
    def dev_data(self) -> TrainingData | None:
        """The dev lists the evaluator ranks, where it ranks lists of training data."""
        return self.evaluator.data if isinstance(self.evaluator, ListEvaluator) else None

    def evaluate(self) -> dict[str, float]:
        """The evaluator's metrics, and :func:`ranking_metrics` of ``track_train_queries`` training queries against
        their labels (the memorisation signal)."""
        out: dict[str, float] = {"step": self.progress.step}
        if self.evaluator is not None:
            out.update(self.evaluator(self.model, self.args.temperature))
        if self.train_queries:
            out.update({f"train_{k}": v for k, v in ranking_metrics(self.model, self.data, self.train_queries,
                                                                    temperature=self.args.temperature).items()})
        return out

    def dev_metrics(self, queries: int | None = None) -> dict[str, float]:
        """:func:`ranking_metrics` on the first ``queries`` dev lists (all when None); needs a list evaluator."""
        return self.evaluator.list_metrics(self.model, queries, self.args.temperature)

    def _after_eval(self, metrics: dict[str, float]) -> bool:
        """Record an evaluation, keep the best model by :attr:`selection`; True when early stopping triggers."""
        self.progress.history.append(metrics)
        for callback in self.callbacks:
            callback.on_evaluate(self, metrics)
        if self.dist.is_main:
            write_text(pd.DataFrame(self.progress.history).to_csv(index=False), self.out_dir / "history.csv")
        value = metrics.get(self.selection, float("nan"))
        # the first (smoothing) stage of T-LS/T-WSLS, and the steps a callback does not let choose: their
        # checkpoints are never the best model, nor do they stop training
        if (np.isnan(value) or self.objective.smoothing_stage(int(metrics["step"]), self.total_steps)
                or not all(callback.chooses(self) for callback in self.callbacks)):
            return False
        if value > self.progress.best:
            self.progress.best, self.progress.bad_evals = value, 0
            if self.choosing_share:  # best/ is written once, by check_start, at the share it chooses
                self.best_weights = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
                self.best_per_list = self.evaluator.per_list_
            else:
                self.save_model(self.out_dir / "best")
            return False
        self.progress.bad_evals += 1
        return self.progress.bad_evals >= self.args.patience

    @property
    def choosing_share(self) -> bool:
        """Whether the saved share of the fine-tuned weights is chosen on held-out lists (``interpolate = "auto"``
        with a start encoder and the teacher's dev lists)."""
        return checks_start(self.args) and isinstance(self.evaluator, AgreementEvaluator)

    def check_start(self) -> None:
        """Choose the share of the fine-tuned weights (the best evaluation's, else the last step's) that agrees best
        with the teacher on the dev lists, the start itself among them (:func:`choose_share`), and save that mix as
        ``best/`` with its record (:data:`~weakrank.training.start_check.START_CHECK`)."""
        evaluator = self.evaluator
        measured = {1.0: self.best_per_list} if self.best_per_list is not None else None
        with loaded(self.model, self.best_weights):
            self.start_check_ = choose_share(
                self.model.encoder, self.start_weights, lambda: evaluator.per_list(self.model, self.args.temperature),
                evaluator.primary_metric, measured=measured)
            self.share = self.start_check_.share
            self.save_model(self.out_dir / "best")
        if self.dist.is_main:
            self.start_check_.save(self.out_dir)
