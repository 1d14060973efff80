"""A student that never ends below where it started: the share of the fine-tuned weights that is saved, mixed with
the start encoder's (WiSE-FT, Wortsman et al. 2022), chosen on lists it never trained on by its evaluator's primary
metric (label-free: its agreement with the teacher), the start itself (share 0) among the candidates; and the
record of that choice (:class:`StartCheck`), from which the student's share of the shipped ranker is earned
(:func:`earned_weight`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from weakrank.errors import DataError
from weakrank.io import write_text
from weakrank.training.config import AUTO, TrainConfig
from weakrank.training.saving import interpolated

SHARES = (0.0, 0.5, 1.0)  # shares of the fine-tuned weights tried; 0: the start encoder itself
START_CHECK = "start_check.json"  # the record, beside best/ and final/
Z = 1.645  # one-sided 95 %
CHECK_SHARE, CHECK_MAX = 0.2, 300  # without a dev split: the train lists held out for the check, at most this many
FULL_GAIN = 0.25  # a student that removed this share of its start's disagreement with its teacher earns the full share


@dataclass(frozen=True)
class StartCheck:
    """How the saved student was chosen: ``metric`` (the evaluator's primary one, a mean over held-out lists) at
    each share of ``scores`` (share of the fine-tuned weights → value), the ``share`` kept (the best; the smaller
    share on a tie) and ``lower``, a one-sided 95 % lower bound of the kept student's lead over its start (paired over
    the lists: what is left of the lead once chance is accounted for)."""

    metric: str
    scores: dict[float, float]
    share: float
    lower: float

    @property
    def start(self) -> float:
        """The metric of the start encoder (share 0): where the student started."""
        return self.scores[0.0]

    @property
    def kept(self) -> float:
        """The metric of the student kept."""
        return self.scores[self.share]

    @property
    def gain(self) -> float:
        """The share of the start's shortfall (1 − its metric) that the kept student surely made up (:attr:`lower`),
        in [0, 1]."""
        room = 1.0 - self.start
        return 0.0 if room <= 0 else min(max(self.lower / room, 0.0), 1.0)

    def to_dict(self) -> dict:
        return {"metric": self.metric, "scores": {f"{k:g}": v for k, v in self.scores.items()}, "share": self.share,
                "lower": self.lower, "gain": self.gain}

    def save(self, directory: Path) -> None:
        """Write the record as ``START_CHECK`` into ``directory``."""
        write_text(json.dumps(self.to_dict(), indent=1), directory / START_CHECK)

    @classmethod
    def load(cls, directory: Path) -> StartCheck | None:
        """The record :meth:`save` wrote into ``directory`` (None where there is none), checked: a file that is not
        one is a :class:`~weakrank.errors.DataError` naming it."""
        path = Path(directory) / START_CHECK
        if not path.exists():
            return None
        try:
            saved = json.loads(path.read_text())
            scores = {float(k): float(v) for k, v in saved["scores"].items()}
            check = cls(str(saved["metric"]), scores, float(saved["share"]), float(saved["lower"]))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise DataError(f"not a start check record ({type(err).__name__}: {err})", file=path) from None
        if 0.0 not in scores or check.share not in scores:
            raise DataError("its scores lack the start (0) or the share kept", file=path)
        return check


def lower_bound(differences: np.ndarray, z: float = Z) -> float:
    """A one-sided lower confidence bound of the mean of paired ``differences`` (mean − z · standard error)."""
    if len(differences) < 2:
        return 0.0
    return float(differences.mean() - z * differences.std(ddof=1) / np.sqrt(len(differences)))


def choose_share(encoder: torch.nn.Module, start: dict[str, torch.Tensor], measure: Callable[[], np.ndarray],
                 metric: str, shares: tuple[float, ...] = SHARES,
                 measured: dict[float, np.ndarray] | None = None) -> StartCheck:
    """The :class:`StartCheck` of ``encoder`` (its weights as trained) against its ``start`` weights: ``measure()``
    (the metric of each held-out list) at each of ``shares`` (the weights mixed by
    :func:`~weakrank.training.saving.interpolated`) not already ``measured`` (share → the metric of each list);
    ``encoder`` is left as it was."""
    per_list = dict(measured or {})
    for share in (s for s in shares if s not in per_list):
        with interpolated(encoder, start, share):
            per_list[share] = np.asarray(measure(), dtype=np.float64)
    scores = {share: float(per_list[share].mean()) if len(per_list[share]) else float("nan")
              for share in sorted(per_list)}
    best = max((v for v in scores.values() if v == v), default=None)
    kept = 0.0 if best is None else min(s for s, v in scores.items() if v >= best)  # nothing measured: the start
    return StartCheck(metric, scores, kept, lower_bound(per_list[kept] - per_list[0.0]))


def checks_start(tc: TrainConfig) -> bool:
    """Whether a run as ``tc`` says checks its student against its start: a weak bi-encoder, ``interpolate = "auto"``."""
    return tc.architecture == "bi-encoder" and tc.interpolate == AUTO and not tc.supervised


def check_queries(query_ids: list[str], seed: int) -> set[str]:
    """The train queries held out of training to check the student against its start where there is no dev split:
    :data:`CHECK_SHARE` of ``query_ids`` (at least 2 while 4 remain to train on, at most :data:`CHECK_MAX`), drawn
    by ``seed``."""
    n = min(round(CHECK_SHARE * len(query_ids)), CHECK_MAX)
    n = max(n, 2) if len(query_ids) >= 6 else 0
    rng = np.random.default_rng(seed)
    return set(rng.choice(sorted(query_ids), size=n, replace=False).tolist()) if n else set()


def earned_weight(check: StartCheck | None, full: float) -> float:
    """The student's weight in the shipped ranker, earned on held-out lists: ``full`` (the label-free share of a
    student that learned) times its :attr:`~StartCheck.gain` over :data:`FULL_GAIN`, at most ``full``; 0 for a
    student that surely made up none of its start's shortfall (it is its start, already one of the teacher's LFs).
    ``full`` itself where there is no check (a cross-encoder starts from an untrained head; or no list was held out:
    fewer than 6 train queries and no dev split)."""
    if check is None:
        return full
    return round(full * min(check.gain / FULL_GAIN, 1.0), 4)
