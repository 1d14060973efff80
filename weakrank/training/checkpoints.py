"""Checkpoints of a :class:`~weakrank.training.trainer.Trainer`: ``checkpoint.pt`` (model, optimiser, scheduler,
scaler, RNG states, progress with what its callbacks need to go on) written atomically, read back checked, and a
resume refused under changed settings."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import torch

from weakrank.errors import ConfigError, DataError
from weakrank.files import atomic_path
from weakrank.training.callbacks import TrainerCallback
from weakrank.training.config import TARGET_ALIASES, TrainConfig
from weakrank.training.distributed import DistEnv
from weakrank.training.rankers import Ranker

CHECKPOINT = "checkpoint.pt"
# settings a resumed run may change: they decide when to evaluate and save, not what is learnt
RESUME_MAY_CHANGE = frozenset({"eval_every", "checkpoint_every", "keep_checkpoint", "patience", "fuse_lfs"})


@dataclass
class Progress:
    """Where training stands; saved in checkpoints."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    best: float = -1.0
    bad_evals: int = 0
    history: list[dict] = field(default_factory=list)


def read_checkpoint(path: Path, device: torch.device) -> dict:
    """A checkpoint's state; a truncated, foreign or crafted file is a :class:`DataError` naming it.
    ``weights_only``: a checkpoint holds tensors and plain values only, so loading one never runs code."""
    try:
        state = torch.load(path, weights_only=True, map_location=device)
    except Exception as err:  # torch raises RuntimeError, UnpicklingError, EOFError, … on a bad file
        raise DataError(f"not a readable weakrank checkpoint: {type(err).__name__}: {str(err).splitlines()[0]}",
                        file=path) from None
    if not isinstance(state, dict) or not {"model", "optimizer", "progress", "config", "rng"} <= set(state):
        raise DataError("not a weakrank checkpoint (model, optimizer, progress, config or rng missing)", file=path)
    return state


def numpy_state() -> dict:
    """NumPy's global RNG state as a tensor and plain values (loadable with ``weights_only=True``)."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    return {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos), "has_gauss": int(has_gauss),
            "gauss": float(gauss)}


def set_numpy_state(state: dict) -> None:
    """Restore what :func:`numpy_state` saved."""
    keys = state["keys"].cpu().numpy().astype(np.uint32)
    np.random.set_state((state["kind"], keys, state["pos"], state["has_gauss"], state["gauss"]))


class Checkpoints:
    """The trainer's checkpoint methods (its loop state: model, optimiser, scheduler, scaler, progress)."""

    args: TrainConfig
    out_dir: Path
    device: torch.device
    dist: DistEnv
    model: Ranker
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    scaler: torch.amp.GradScaler
    progress: Progress
    callbacks: list[TrainerCallback]
    average: dict[str, torch.Tensor] | None
    best_weights: dict[str, torch.Tensor] | None
    best_per_list: np.ndarray | None

    def save_checkpoint(self) -> Path:
        """Model, optimiser, scheduler, scaler, RNG states and progress (with each callback's
        :meth:`~weakrank.training.callbacks.TrainerCallback.state_dict`), in one file, atomically (rank 0 only)."""
        path = self.out_dir / CHECKPOINT
        if not self.dist.is_main:
            return path
        state = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "progress": {**asdict(self.progress), **{k: v for c in self.callbacks for k, v in c.state_dict().items()}},
            "average": self.average,
            "best": None if self.best_weights is None else {
                "weights": self.best_weights, "per_list": torch.from_numpy(np.asarray(self.best_per_list))},
            "config": asdict(self.args),
            "rng": {"torch": torch.get_rng_state(), "numpy": numpy_state(), "python": random.getstate()},
        }
        with atomic_path(path) as tmp:
            torch.save(state, tmp)
        return path

    def load_checkpoint(self) -> None:
        """Continue from ``checkpoint.pt``: same step, optimiser state and data order."""
        state = read_checkpoint(self.out_dir / CHECKPOINT, self.device)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        self.progress = Progress(**{f.name: state["progress"][f.name] for f in fields(Progress)})
        for callback in self.callbacks:
            callback.load_state_dict(state["progress"])
        self.average = state.get("average")
        best = state.get("best")  # the best evaluation's, where the share is chosen at the end
        self.best_weights = best and best["weights"]
        self.best_per_list = best and best["per_list"].cpu().numpy()
        torch.set_rng_state(state["rng"]["torch"])
        set_numpy_state(state["rng"]["numpy"])
        random.setstate(state["rng"]["python"])

    def resume(self) -> None:
        """Load ``checkpoint.pt``; refuse a missing one, or one written under other training settings."""
        path = self.out_dir / CHECKPOINT
        if not path.exists():
            raise DataError("--resume: no checkpoint to resume from (train without --resume to start afresh)", file=path)
        saved = read_checkpoint(path, torch.device("cpu"))["config"]
        if saved.get("target") in TARGET_ALIASES:  # written under a deprecated target name
            saved["target"] = TARGET_ALIASES[saved["target"]]
        changed = sorted(k for k, v in asdict(self.args).items()
                         if k not in RESUME_MAY_CHANGE and k in saved and saved[k] != v)
        if changed:
            raise ConfigError(f"--resume with changed training settings {changed} (the checkpoint was trained with "
                              f"{ {k: saved[k] for k in changed} }); train afresh into another output to change them")
        self.load_checkpoint()
