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
from torchmetrics.functional.classification import binary_calibration_error

from weakrank.lists import softmax_within
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


def ranking_ece(scores: np.ndarray, gold: np.ndarray, query_ids: np.ndarray, bins: int = 10) -> float:
    """The label-relaxation paper's (seed 004) ranking ECE (Eq. 4): the classic ECE of the softmax of
    ``scores`` within each query's list against 0/1 ``gold``; needs no trained absolute score level
    (pairwise rankers)."""
    return ece(softmax_within(scores, query_ids), gold, bins)


def reliability_bins(prob: np.ndarray, gold: np.ndarray, bins: int = 10) -> pd.DataFrame:
    """Per non-empty equal-width bin of ``prob`` (sklearn's ``calibration_curve`` binning): its index, mean
    predicted probability, observed share relevant, and the number of pairs."""
    prob, gold = np.asarray(prob, dtype=float), np.asarray(gold, dtype=float)
    ids = np.searchsorted(np.linspace(0.0, 1.0, bins + 1)[1:-1], prob)
    count = np.bincount(ids, minlength=bins)
    filled = count > 0
    predicted = np.bincount(ids, weights=prob, minlength=bins)[filled] / count[filled]
    observed = np.bincount(ids, weights=gold, minlength=bins)[filled] / count[filled]
    return pd.DataFrame({"bin": np.flatnonzero(filled), "predicted": predicted, "observed": observed,
                         "count": count[filled]})


def reliability_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], bins: int = 10,
                       title: str = "Reliability diagram", xlabel: str = "predicted P(relevant)",
                       queries: int | None = None) -> Figure:
    """One panel per system: observed relevance rate against the mean predicted probability per bin, the
    diagonal, the pairs per bin (grey bars on a logarithmic twin axis, labelled), and the system's ECE in its title.
    ``queries``: the number of queries the pairs come from, stated in the figure's title."""
    n = max(1, len(curves))
    cols = min(3, n)
    rows = -(-n // cols)
    fig = Figure(figsize=(4.2 * cols, 3.9 * rows + 0.5))
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[len(curves):] if curves else ():
        fig.delaxes(ax)
    width = 1 / bins
    for ax, (name, (prob, gold)) in zip(axes, curves.items()):
        table = reliability_bins(prob, gold, bins)
        counts = ax.twinx()
        centres = (table["bin"].to_numpy() + 0.5) * width
        counted = counts.bar(centres, table["count"], width=0.9 * width, color="grey", alpha=0.25)
        counts.bar_label(counted, fontsize=6, color="dimgrey")
        counts.set_yscale("log")  # one bin often holds most pairs
        counts.set_ylim(0.8, 4 * max(1, table["count"].max()) if len(table) else 10)
        counts.set_ylabel("pairs per bin (log)", fontsize=8, color="dimgrey")
        counts.tick_params(labelsize=7, colors="dimgrey")
        ax.set_zorder(counts.get_zorder() + 1)  # the curve above the count bars
        ax.patch.set_visible(False)
        ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="perfectly calibrated")
        ax.plot(table["predicted"], table["observed"], marker="o", label=name)
        ax.set(xlabel=xlabel, ylabel="observed share relevant", xlim=(0, 1), ylim=(0, 1))
        ax.set_title(f"{name}\nECE {ece(prob, gold, bins):.3f}, {len(prob)} pairs", fontsize=9)
        ax.grid(alpha=0.3)
    if not curves:
        axes[0].plot([0, 1], [0, 1], ls="--", color="grey", lw=1)
        axes[0].set(xlabel=xlabel, ylabel="observed share relevant", xlim=(0, 1), ylim=(0, 1), title="no system")
    fig.suptitle(title + (f" — {queries} queries" if queries is not None else ""), fontsize=11)
    return fig


def reliability_diagram(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], path: str | Path, bins: int = 10,
                        title: str = "Reliability diagram", xlabel: str = "predicted P(relevant)",
                        queries: int | None = None) -> Path:
    """:func:`reliability_figure` saved as PNG."""
    return save_figure(reliability_figure(curves, bins, title, xlabel, queries), path)


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
