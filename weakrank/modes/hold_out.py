"""Judged mode's hold-out, a trainer callback: the judged training queries sit out the first ``[train]
judged_after`` of the steps, so that the student saved before they join (``HELD_OUT``) can be graded on them (the
student's weight in the shipped ranker is chosen on them: :meth:`weakrank.modes.judged.JudgedMode.student_weight`)."""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path
from typing import Any

from weakrank.training.callbacks import TrainerCallback, TrainerView

HELD_OUT = "held_out"  # the student saved before the judged queries joined training
JOINED = "judged_in"  # whether they have, in a checkpoint's progress


class HoldOut(TrainerCallback):
    """Keeps ``queries`` out of training until ``after`` (a share) of its steps, then saves the student as it stands
    (``<out>/held_out``) and lets them in, a new epoch beginning; evaluations before they join neither keep the
    best model nor stop training. A fresh run removes an earlier run's held-out student; a resumed one goes on as the
    whole run would have (whether they joined is saved with the checkpoint)."""

    def __init__(self, queries: Collection[str], after: float) -> None:
        self.queries, self.after = frozenset(queries), after
        self.step = 0  # the step they join at (set when training begins); 0: they train from the start
        self.joined = False
        self.student: Path | None = None  # the student saved before they joined, once it is

    def on_train_begin(self, trainer: TrainerView, resume: bool) -> None:
        held = self.queries & trainer.data.lists.keys()
        self.step = round(self.after * trainer.total_steps) if held and self.after > 0 else 0
        if not resume and trainer.dist.is_main:
            shutil.rmtree(trainer.out_dir / HELD_OUT, ignore_errors=True)  # an earlier run's
        if self.joined:
            self.student = trainer.out_dir / HELD_OUT

    def leaves_out(self, trainer: TrainerView) -> Collection[str]:
        return self.queries if self.step and not self.joined else ()

    def on_batch_begin(self, trainer: TrainerView, empty: bool) -> bool:
        """At the step they join (at once where the epoch holds nothing else), the student saved and a new epoch."""
        if not self.step or self.joined or (trainer.progress.step < self.step and not empty):
            return False
        trainer.save_model(trainer.out_dir / HELD_OUT)
        self.joined, self.student = True, trainer.out_dir / HELD_OUT
        return True

    def chooses(self, trainer: TrainerView) -> bool:
        return not self.step or self.joined

    def card(self, trainer: TrainerView) -> dict[str, Any]:
        return {"judged queries trained from step": self.step} if self.step else {}

    def state_dict(self) -> dict[str, Any]:
        return {JOINED: self.joined}

    def load_state_dict(self, progress: dict[str, Any]) -> None:
        self.joined = bool(progress.get(JOINED, False))
