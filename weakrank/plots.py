"""Matplotlib figures of the tables a person compares (headless Agg backend)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from weakrank.io import atomic_path  # noqa: E402


def save_figure(fig: plt.Figure, path: str | Path) -> Path:
    """Lay out, write ``fig`` as PNG atomically, and close it."""
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    return Path(path)


def bar_table(table: pd.DataFrame, path: str | Path, title: str) -> Path:
    """Grouped bars: one group per metric (column), one bar per row of ``table``; saved as PNG."""
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(table.columns) * len(table) / 2), 4))
    table.T.plot.bar(ax=ax, rot=0, width=0.8)
    ax.set_title(title)
    ax.set_ylim(0, 1)
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, path)


def line_plot(table: pd.DataFrame, path: str | Path, title: str, xlabel: str, ylabel: str) -> Path:
    """One line per column of ``table`` against its index; saved as PNG."""
    fig, ax = plt.subplots(figsize=(6, 3.8))
    table.plot(ax=ax)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)
