"""Calibration against gold (the label-relaxation paper, seed 004): ranking ECE (Eq. 4) of a ranker's
scores, classic ECE of probabilities, reliability diagrams, and the train-vs-validation gap over training
as a memorisation signal."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure
from sklearn.calibration import calibration_curve
from torchmetrics.functional.classification import binary_calibration_error

from weakrank.plots import save_figure


def ece(prob: np.ndarray, gold: np.ndarray, bins: int = 10) -> float:
    """Classic expected calibration error of probabilities ``prob`` (equal-width bins, L1), by torchmetrics:
    only meaningful where ``prob`` is a trained P(relevant) (label models, pointwise rankers)."""
    return float(
        binary_calibration_error(
            torch.as_tensor(np.asarray(prob, dtype=np.float32)), torch.as_tensor(np.asarray(gold, dtype=np.int64)),
            n_bins=bins, norm="l1",
        )
    )


def softmax_within(scores: np.ndarray, query_ids: np.ndarray) -> np.ndarray:
    """Softmax of ``scores`` within each query's candidate list (invariant to a shift of a list's scores)."""
    frame = pd.DataFrame({"q": np.asarray(query_ids), "s": np.asarray(scores, dtype=float)})
    shifted = np.exp(frame["s"] - frame.groupby("q")["s"].transform("max"))
    return (shifted / shifted.groupby(frame["q"]).transform("sum")).to_numpy()


def ranking_ece(scores: np.ndarray, gold: np.ndarray, query_ids: np.ndarray, bins: int = 10) -> float:
    """The label-relaxation paper's (seed 004) ranking ECE (Eq. 4): the classic ECE of the softmax of
    ``scores`` within each query's list against 0/1 ``gold``; needs no trained absolute score level
    (pairwise rankers)."""
    return ece(softmax_within(scores, query_ids), gold, bins)


def reliability_diagram(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], path: str | Path, bins: int = 10,
                        title: str = "Reliability diagram", xlabel: str = "predicted P(relevant)") -> Path:
    """Observed relevance rate against the mean predicted probability per bin, one line per system, with ECE."""
    fig = Figure(figsize=(5.5, 5))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfectly calibrated")
    for name, (prob, gold) in curves.items():
        observed, predicted = calibration_curve(gold, prob, n_bins=bins, strategy="uniform")
        ax.plot(predicted, observed, marker="o", label=f"{name} (ECE {ece(prob, gold, bins):.3f})")
    ax.set(xlabel=xlabel, ylabel="observed share relevant", xlim=(0, 1), ylim=(0, 1), title=title)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def memorisation_gap(history: list[dict], metric: str = "recall@1") -> pd.DataFrame:
    """Train and validation ``metric`` per evaluation step of a training run, and their gap."""
    table = pd.DataFrame(history)
    train, dev = f"train_{metric}", f"dev_{metric}"
    if not {train, dev} <= set(table.columns):
        raise ValueError(f"training history lacks {train}/{dev}: train with track_train_queries > 0")
    table = table[["step", train, dev]].dropna()
    return table.assign(gap=table[train] - table[dev])


def plot_gap(gap: pd.DataFrame, path: str | Path, metric: str = "recall@1") -> Path:
    """Train and validation curves over steps, the shaded area being the gap."""
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    ax.plot(gap["step"], gap[f"train_{metric}"], marker="o", label=f"train {metric}")
    ax.plot(gap["step"], gap[f"dev_{metric}"], marker="o", label=f"validation {metric}")
    ax.fill_between(gap["step"], gap[f"dev_{metric}"], gap[f"train_{metric}"], alpha=0.2, label="gap (memorisation)")
    ax.set(xlabel="training step", ylabel=metric, title="Train vs validation during training")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)
