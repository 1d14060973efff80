"""Matplotlib figures of the tables a person compares, drawn on :class:`~matplotlib.figure.Figure` objects:
no pyplot, so the caller's backend is never touched."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from weakrank.io import atomic_path


def save_figure(fig: Figure, path: str | Path) -> Path:
    """Lay out and write ``fig`` as PNG atomically."""
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    return Path(path)


def bar_table(table: pd.DataFrame, path: str | Path, title: str) -> Path:
    """Grouped bars: one group per metric (column), one bar per row of ``table``; saved as PNG."""
    fig = Figure(figsize=(max(6, 1.2 * len(table.columns) * len(table) / 2), 4))
    ax = fig.subplots()
    table.T.plot.bar(ax=ax, rot=0, width=0.8)
    ax.set_title(title)
    ax.set_ylim(0, 1)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, path)


def line_plot(table: pd.DataFrame, path: str | Path, title: str, xlabel: str, ylabel: str) -> Path:
    """One line per column of ``table`` against its index; saved as PNG."""
    fig = Figure(figsize=(6, 3.8))
    ax = fig.subplots()
    table.plot(ax=ax)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)
