"""The time ahead as ``weakrank run`` says it: the plan (:func:`print_plan`, each stage's rough time from the work,
:mod:`weakrank.estimates`), and a stage's time left once its first batches are timed on this machine, as a progress
bar's rate would be (:func:`print_pace`): the label stage's encoder batches (:func:`timed`, from
:class:`~weakrank.similarity.SharedEncoder`) and the train stage's steps (:func:`stepped`, from training's bar),
within :func:`pacing`; rerank's once training is done (:func:`rerank_ahead`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from weakrank.costs import MINILM, Encoder, encode_seconds

MIN_TIMED = 10.0  # seconds of a stage's first batches timed before its time left is said
Say = Callable[[str, float, float], Any]  # (stage, seconds left, measured ÷ estimated)


@dataclass
class Pace:
    """A stage's ``estimate`` (seconds) corrected once by its first batches: their measured seconds over what the
    estimate gave them (``per_unit`` seconds a unit of work), once at least :data:`MIN_TIMED` are timed. The
    correction scales the ``paced`` seconds of the estimate (the units' work; None: all of it): the rest (training's
    set-up and evaluations) is not the units' work, and a step's fixed cost, which a small batch's estimate leaves
    out, would multiply it many times over."""

    stage: str
    estimate: float
    say: Say
    per_unit: float = 1.0
    paced: float | None = None
    started: float = field(default_factory=time.perf_counter)
    units: float = 0.0
    seconds: float = 0.0
    mark: tuple[float, float] | None = None  # training's bar after its first step: (steps, seconds)
    done: bool = False

    def add(self, units: float, seconds: float) -> None:
        """``units`` of work timed at ``seconds``; once enough is timed, the stage's time left is said, once."""
        self.units, self.seconds = self.units + units, self.seconds + seconds
        if self.done or self.seconds < MIN_TIMED or self.units <= 0:
            return
        self.done = True
        factor = self.seconds / (self.units * self.per_unit)
        paced = self.estimate if self.paced is None else min(self.paced, self.estimate)
        ahead = factor * paced + (self.estimate - paced)
        self.say(self.stage, max(ahead - (time.perf_counter() - self.started), 0.0), factor)


_PACES: dict[str, Pace] = {}


@contextmanager
def pacing(stage: str, estimate: float, say: Say, per_unit: float = 1.0, paced: float | None = None
           ) -> Iterator[None]:
    """Within the block, ``stage`` (label: its encoders' batches, :func:`timed`; train: its steps,
    :func:`stepped`, ``paced`` their part of ``estimate``) says once, through ``say``, its time left from its first
    batches."""
    _PACES[stage] = Pace(stage, estimate, say, per_unit, paced)
    try:
        yield
    finally:
        _PACES.pop(stage, None)


def timed(tokens: Sequence[int], model: Any, seconds: float, precision: str = "fp32") -> None:
    """A batch of texts of ``tokens`` tokens (special tokens included) a sentence-transformers ``model`` encoded in
    ``seconds``, for the label stage's pace."""
    pace = _PACES.get("label")
    if pace is None or pace.done:
        return
    try:  # a sentence-transformers model's first module holds the encoder; another model counts as MiniLM
        config = model[0].auto_model.config
    except (AttributeError, IndexError, KeyError, TypeError):
        config = None
    layers, width = getattr(config, "num_hidden_layers", MINILM[0]), getattr(config, "hidden_size", MINILM[1])
    encoder = Encoder("", layers, width, int(getattr(model, "max_seq_length", 512) or 512), precision, False)
    pace.add(encode_seconds(np.maximum(np.asarray(tokens, dtype=np.float64) - 2, 0), encoder), seconds)


def stepped(steps: float, seconds: float) -> None:
    """Training's bar at ``steps`` steps after ``seconds``, for the train stage's pace: the steps after the first
    count (its warm-up left out), as a bar's rate would."""
    pace = _PACES.get("train")
    if pace is None or pace.done:
        return
    if pace.mark is not None:
        pace.add(steps - pace.mark[0], seconds - pace.mark[1])
    pace.mark = (steps, seconds)


def rerank_ahead(planned: float, teacher_alone: bool, factors: dict[str, float]) -> float:
    """Rerank's seconds once training is done, from the plan's figure for what training kept (``planned``): at the pace
    training's first steps measured on this machine (``factors``: each paced stage's measured over estimated; label's
    where train was not paced; 1 where neither was), or, where the shipped ranker is its teacher alone
    (``teacher_alone``: the student weighs 0, kept at its start or earning no share), as it is: no student runs, the
    encoder LFs read the encodings the label stage kept, and the lexical LFs' one-core work does not go at the encoders'
    pace (busy cores measured 0.2-0.7 s against 1.1-3.0 s said at training's pace, 2026-11-29)."""
    return planned if teacher_alone else planned * factors.get("train", factors.get("label", 1.0))


def duration(seconds: float) -> str:
    """A rough duration in words: "40 s", "3 min", "1 h 20 min"."""
    if seconds < 1:
        return "<1 s"
    if seconds < 90:
        return f"{max(10 * round(seconds / 10), 10):.0f} s" if seconds >= 10 else f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def print_plan(stages: list[str], seconds: dict[str, float], teacher_rerank: float | None = None) -> None:
    """``run``'s plan: the stages ahead and, once the data's size is known, a rough time for each and in all, from
    the work (:func:`~weakrank.estimates.estimate`) as 2 idle cores take it, saying when these cores are busy;
    rerank's also where the student earns no weight (``teacher_rerank``: the teacher alone, which training tells)."""
    if not seconds:
        print(f"stages ahead: {', '.join(stages)} (a rough time once the dataset is ingested)", flush=True)
        return

    def said(stage: str) -> str:
        alone = f" (~{duration(teacher_rerank)} if the student earns no weight)" \
            if stage == "rerank" and teacher_rerank is not None else ""
        return f"{stage} ~{duration(seconds[stage])}{alone}"

    each = ", ".join(said(stage) for stage in stages if stage in seconds)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    busy = f" (these are busy, load {load:.1f}: expect longer)" if load >= 1 else ""
    print(f"stages ahead: {each}; roughly {duration(sum(seconds.values()))} in all from the work (texts' tokens, "
          f"steps), assuming 2 idle CPU cores{busy}; label and train say their time left once their first batches "
          "are timed, rerank once training is done", flush=True)


def print_pace(stage: str, left: float, factor: float) -> None:
    """A stage's time left once its first batches are timed (:mod:`weakrank.pace`), above its progress bar."""
    from tqdm import tqdm  # its write() keeps any bar, weakrank's included, below the line

    if stage == "rerank":
        tqdm.write(f"    rerank: ~{duration(left)} left from what training kept and its pace ({factor:.2g}x the plan's "
                   "figure for it)")
        return
    tqdm.write(f"    {stage}: ~{duration(left)} left from the first batches ({factor:.1f}x the estimate for 2 idle "
               "cores)")
