"""Saving a :class:`~weakrank.training.trainer.Trainer`'s model: the weights saved (their running mean under SWA, mixed
with the start encoder's under WiSE-FT), the model card and its dev figures, each directory swapped in whole."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch

from weakrank.files import atomic_dir
from weakrank.ranker.cross_encoder import write_model_card
from weakrank.training.callbacks import TrainerCallback
from weakrank.training.checkpoints import Progress
from weakrank.training.config import TrainConfig
from weakrank.training.distributed import DistEnv
from weakrank.training.evaluators import AgreementEvaluator, Evaluator, GoldMapEvaluator
from weakrank.training.rankers import Ranker

TRAIN_CONFIG = "train_config.json"  # the settings of the run that wrote final/


@contextmanager
def loaded(module: torch.nn.Module, weights: dict[str, torch.Tensor] | None) -> Iterator[None]:
    """Inside the block, the entries of ``module``'s state dict named in ``weights`` take those values;
    afterwards they are as before. No change when ``weights`` is None."""
    if weights is None:
        yield
        return
    current = {k: v.detach().clone() for k, v in module.state_dict().items()}
    module.load_state_dict({**current, **weights})
    try:
        yield
    finally:
        module.load_state_dict(current)


@contextmanager
def interpolated(module: torch.nn.Module, start: dict[str, torch.Tensor] | None, share: float) -> Iterator[None]:
    """Inside the block, ``module``'s floating-point weights are ``share`` × their value + (1 − ``share``) ×
    ``start`` (WiSE-FT); afterwards they are as before. No change when ``start`` is None."""
    if start is None:
        yield
        return
    mixed = {k: share * v.detach() + (1 - share) * start[k].to(v.device, v.dtype)
             for k, v in module.state_dict().items() if v.is_floating_point()}
    with loaded(module, mixed):
        yield


class ModelSaving:
    """The trainer's methods that save its model and keep the weights saved."""

    args: TrainConfig
    card: dict
    dist: DistEnv
    model: Ranker
    progress: Progress
    evaluator: Evaluator | None
    start_weights: dict[str, torch.Tensor] | None
    share: float  # of the fine-tuned weights in what is saved (WiSE-FT), the rest the start encoder's
    average: dict[str, torch.Tensor] | None
    average_after: int
    callbacks: list[TrainerCallback]

    def save_model(self, directory: Path) -> None:
        """Write the model and its card into ``directory``, swapped in whole (rank 0 only)."""
        if not self.dist.is_main:
            return
        args = self.args
        info = {**self.card, "architecture": args.architecture, "encoder": args.encoder, "supervised": args.supervised,
                "mode": args.mode, "loss": args.loss, "target": args.target, "steps": self.progress.step,
                "batch size": args.batch_size, "max length": args.max_length, "learning rate": args.lr, "seed": args.seed}
        last = self.progress.history[-1] if self.progress.history else None
        if self.average is not None:
            info["weights"] = f"mean over steps {self.average_after + 1}–{self.progress.step} (SWA)"
        if self.start_weights is not None and self.share < 1:
            info["interpolated with the start encoder"] = f"{self.share:g} fine-tuned (WiSE-FT)"
        for callback in self.callbacks:
            info.update(callback.card(self))
        with (atomic_dir(directory) as tmp, loaded(self.model, self.average),
              interpolated(self.model.encoder, self.start_weights, self.share)):
            self.model.save(tmp)
            write_model_card(tmp, info, *self.dev_figures(last))

    def dev_figures(self, metrics: dict[str, float] | None) -> tuple[dict[str, float] | None, str]:
        """The model card's dev figures of an evaluation's ``metrics`` and what they are measured against, as the
        evaluator describes them (without one: gold when supervised, else the agreement with the teacher alone)."""
        if metrics is None:
            return None, ""
        figures = {k: v for k, v in metrics.items() if k != "step"}
        if self.evaluator is not None:
            return self.evaluator.describe(figures)
        return (GoldMapEvaluator if self.args.supervised else AgreementEvaluator).describe(figures)

    @torch.no_grad()
    def update_average(self) -> None:
        """Fold the current weights into the running mean of the weights since step ``average_after``."""
        weights = {k: v.detach() for k, v in self.model.state_dict().items() if v.is_floating_point()}
        if self.average is None:  # the first averaged step (a resumed run brings its mean in the checkpoint)
            self.average = {k: v.clone() for k, v in weights.items()}
            return
        n = self.progress.step - self.average_after
        for k, v in weights.items():
            self.average[k] += (v - self.average[k]) / n
