"""Matplotlib figures of the tables a person compares, drawn on :class:`~matplotlib.figure.Figure` objects:
no pyplot, so the caller's backend is never touched."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from weakrank.files import atomic_path


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


CHANCE_AUC = 0.5


def quality_figure(table: pd.DataFrame, title: str, queries: int | None = None,
                   groups: Mapping[str, str] | None = None) -> Figure:
    """LF and label-model quality: one panel per metric (P@1, R@1, AUC; a ``queries`` column is read as the
    number of queries, not drawn), one bar per scorer labelled with its value; AUC panels carry a dashed
    chance line at 0.5. ``groups`` (row → group, e.g. "LF", "fusion") colours the bars by group, with a legend."""
    if queries is None and "queries" in table.columns and table["queries"].notna().any():
        queries = int(table["queries"].max())
    metrics = [c for c in table.columns if c != "queries"]
    names = [str(name) for name in table.index]
    fig = Figure(figsize=(max(6.0, 0.55 * len(names) + 2), 2.4 * len(metrics) + 1.6))
    axes = fig.subplots(len(metrics), 1, sharex=True, squeeze=False)[:, 0]
    colours = {group: f"C{i}" for i, group in enumerate(dict.fromkeys(groups.values()))} if groups else {}
    for ax, metric in zip(axes, metrics):
        values = table[metric].to_numpy(dtype=float)
        colour = [colours[groups[name]] for name in names] if groups else "C0" if metric != "AUC" else "C1"
        bars = ax.bar(range(len(names)), values, width=0.7, color=colour)
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
        if metric == "AUC":
            ax.axhline(CHANCE_AUC, ls="--", color="grey", lw=1, label="chance")
            ax.text(1.0, CHANCE_AUC, " chance", transform=ax.get_yaxis_transform(), va="center", ha="left",
                    fontsize=8, color="grey")
        ax.set(ylabel=metric, ylim=(0, 1.12))
        ax.grid(axis="y", alpha=0.3)
    if groups:
        axes[0].legend(handles=[Patch(color=c, label=g) for g, c in colours.items()], fontsize=7, loc="upper left",
                       bbox_to_anchor=(1.0, 1.0))
    axes[-1].set_xticks(range(len(names)), names, rotation=40, ha="right", fontsize=8)
    counted = f"\n{queries} queries with a relevant and a non-relevant candidate (per-query means)" if queries else ""
    fig.suptitle(title + counted, fontsize=10)
    return fig


def quality_bars(table: pd.DataFrame, path: str | Path, title: str, queries: int | None = None,
                 groups: Mapping[str, str] | None = None) -> Path:
    """:func:`quality_figure` saved as PNG."""
    return save_figure(quality_figure(table, title, queries, groups), path)


def marked_bars(values: pd.Series, marks: Mapping[str, str], path: str | Path, title: str, ylabel: str,
                note: str) -> Path:
    """One panel: a bar per entry of ``values`` (name → value), labelled with its value and its mark (``marks``:
    name → e.g. † or ‡), ``note`` (what the marks mean) under it; saved as PNG."""
    names = [str(name) for name in values.index]
    fig = Figure(figsize=(max(5.0, 1.1 * len(names) + 2), 3.8))
    ax = fig.subplots()
    bars = ax.bar(range(len(names)), values.to_numpy(dtype=float), width=0.6,
                  color=[f"C{i}" for i in range(len(names))])
    ax.bar_label(bars, [f"{v:.3f}{marks.get(n, '')}" for n, v in zip(names, values)], fontsize=9, padding=2)
    ax.set_xticks(range(len(names)), names, fontsize=9)
    ax.set(ylabel=ylabel, ylim=(0, min(1.15, float(values.max()) * 1.2 + 0.05)))
    ax.set_title("\n".join(textwrap.fill(line, 70) for line in title.splitlines()), fontsize=10)
    ax.set_xlabel(textwrap.fill(note, 90), fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, path)
