"""The side-by-side report: tables and figures of an experiment, as Markdown and HTML."""

from __future__ import annotations

import datetime as dt
import html
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure
from scipy.special import expit

from weakrank.baselines import column_run
from weakrank.config import PipelineConfig
from weakrank.evaluation.calibration import (
    ece,
    memorisation_gap,
    plot_gap,
    ranking_ece,
    reliability_diagram,
)
from weakrank.evaluation.tables import format_table, queries_note, results_table, significance_legend, to_markdown
from weakrank.io import read_metadata, read_parquet, write_text
from weakrank.lists import minmax_within, softmax_within
from weakrank.lock import locked
from weakrank.paths import RunPaths
from weakrank.plots import line_plot, quality_bars, save_figure
from weakrank.reproduction.grid import Cell, grid_cells
from weakrank.reproduction.systems import label_model_scores


def cached_cells(root: Path) -> pd.DataFrame:
    """One row per cached grid cell: key, row, params, seed."""
    rows = []
    for file in sorted((root / "cells").glob("*.parquet")):
        meta = read_metadata(file)
        rows.append({"key": file.stem, "row": meta["row"], "seed": meta["seed"], **meta.get("params", {})})
    return pd.DataFrame(rows)


def sampler_score_figure(votes: pd.DataFrame, split: str, path: Path) -> Path:
    """Penha & Hauff (WSLS), Fig. 1: min-max-normalised BM25 (negative-sampler) scores within each
    list, by gold label."""
    rows = votes[(votes["split"] == split) & votes["gold"].notna()]
    norm = minmax_within(rows["score_bm25"].to_numpy(), rows["query_id"].to_numpy())
    fig = Figure(figsize=(6, 3.6))
    ax = fig.subplots()
    bins = np.linspace(0, 1, 21)
    for gold, name in ((0, "non-relevant"), (1, "relevant")):
        ax.hist(norm[rows["gold"].to_numpy() == gold], bins=bins, density=True, alpha=0.55, label=name)
    ax.set(xlabel="BM25 score, min-max normalised within the query's list", ylabel="density",
           title="Negative-sampler scores by gold label")
    ax.legend()
    return save_figure(fig, path)


def sensitivity_figure(cells: pd.DataFrame, results: dict[str, list[pd.DataFrame]], metric: str, path: Path) -> Path | None:
    """Penha & Hauff (WSLS), Fig. 2: ``metric`` against ε (smoothing) or α (relaxation), mean ± std
    over seeds."""
    if cells.empty or not {"epsilon", "alpha"} & set(cells.columns):
        return None
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    drawn = False
    for knob, symbol in (("epsilon", "ε"), ("alpha", "α")):
        if knob not in cells.columns:
            continue
        knobbed = cells.dropna(subset=[knob])
        for target, group in knobbed.groupby("target"):
            by_value = group.groupby(knob)["row"].first()
            if len(by_value) < 2:
                continue
            means = [np.mean([t[metric].mean() for t in results[r]]) for r in by_value]
            stds = [np.std([t[metric].mean() for t in results[r]], ddof=1) if len(results[r]) > 1 else 0 for r in by_value]
            ax.errorbar(by_value.index, means, yerr=stds, marker="o", capsize=3, label=f"{target.upper()} ({symbol})")
            drawn = True
    if not drawn:
        return None
    ax.set(xlabel="ε or α", ylabel=metric, title=f"{metric} sensitivity (mean ± std over seeds)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def action_figure(cells: pd.DataFrame, actions_dir: Path, path: Path) -> Path | None:
    """Share of training steps on each negative sampler, per policy row, pooled over seeds."""
    if "sampler" not in cells.columns:
        return None
    logs = {}
    for _, cell in cells[cells["sampler"].isin(["policy", "random_policy"])].iterrows():
        file = actions_dir / f"{cell['key']}.csv"
        if file.exists():
            logs.setdefault(cell["row"], []).append(pd.read_csv(file))
    if not logs:
        return None
    shares = {}
    for row, frames in logs.items():
        steps = pd.concat(frames)
        for sampler, share in pd.crosstab(steps["step"], steps["sampler"], normalize="index").items():
            shares[f"{row}: {sampler}"] = share.rolling(10, min_periods=1).mean()
    return line_plot(pd.DataFrame(shares), path, title="Negative sampler chosen by the policy (all seeds)",
                     xlabel="training step", ylabel="share of runs (10-step window)")


def gold_of_run(gold: pd.Series, run: pd.DataFrame) -> np.ndarray:
    """0/1 gold of a run's (query, passage) pairs."""
    return gold.loc[list(zip(run["query_id"], run["passage_id"]))].to_numpy(int)


CLASSIC_ECE = "classic ECE (pointwise/probabilities)"
RANKING_ECE = "ranking ECE (softmax per list)"


def calibration_section(votes: pd.DataFrame, cells: pd.DataFrame, grid: dict[str, Cell], runs: Path, split: str,
                        options: dict[str, dict], out: Path) -> tuple[pd.DataFrame, list[tuple[str, Path]]]:
    """Sharma et al.'s (label relaxation) calibration: classic ECE and reliability of probabilities
    (label models' P(relevant), σ(score) of pointwise rankers), ranking ECE (Eq. 4) and reliability of the
    softmax within each list of every trained ranker (first seed). Pairwise scores have no trained level, so
    no classic ECE. ``options``: label model name → its options."""
    gold = votes.set_index(["query_id", "passage_id"])["gold"]
    probabilities, softmaxes, ranking = {}, {}, {}
    for model in options:
        run = column_run(votes.assign(p=label_model_scores(votes, model, **options[model])), "p", split)
        probabilities[model] = (run["score"].to_numpy(), gold_of_run(gold, run))
    trained = cells[[grid[key].kind != "unsupervised" for key in cells["key"]]] if len(cells) else cells
    for _, cell in trained.drop_duplicates("row").iterrows():
        run = read_parquet(runs / f"{cell['key']}.parquet")
        scores, queries = run["score"].to_numpy(), run["query_id"].to_numpy()
        y = gold_of_run(gold, run)
        if dict(grid[cell["key"]].train).get("mode") == "pointwise":  # trained as the logit of P(relevant)
            probabilities[cell["row"]] = (expit(scores), y)
        softmaxes[cell["row"]] = (softmax_within(scores, queries), y)
        ranking[cell["row"]] = ranking_ece(scores, y, queries)
    classic = {name: ece(p, y) for name, (p, y) in probabilities.items()}
    table = pd.DataFrame({CLASSIC_ECE: classic, RANKING_ECE: ranking})
    queries = int(votes.loc[(votes["split"] == split) & votes["gold"].notna(), "query_id"].nunique())
    table.attrs["queries"] = queries
    figures = [("Reliability of P(relevant): label models and pointwise rankers, classic ECE (Sharma et al.)",
                reliability_diagram(probabilities, out / "reliability.png", queries=queries))]
    if softmaxes:
        diagram = reliability_diagram(softmaxes, out / "reliability_ranking.png",
                                      title="Reliability (softmax per list)",
                                      xlabel="softmax of the score in its list", queries=queries)
        figures.append(("Reliability of the softmax within each list: trained rankers, ranking ECE (Sharma et al., Eq. 4)",
                        diagram))
    return table, figures


def gap_figures(cells: pd.DataFrame, history: Path, out: Path, metric: str = "recall@1") -> list[tuple[str, Path]]:
    """Sharma et al.'s (label relaxation) memorisation signal: train vs validation ``metric`` over
    training (mean over seeds) of each trained row whose runs tracked training queries (``track_train_queries``)."""
    figures = []
    for row, group in cells.groupby("row", sort=False) if len(cells) else []:
        tables = [pd.read_csv(history / f"{key}.csv") for key in group["key"] if (history / f"{key}.csv").exists()]
        tracked = [t for t in tables if {f"train_{metric}", f"dev_{metric}"} <= set(t.columns)]
        if tracked:
            mean = pd.concat(tracked).groupby("step", as_index=False).mean(numeric_only=True)
            gap = memorisation_gap(mean.to_dict("records"), metric)
            path = plot_gap(gap, out / f"gap_{group['key'].iloc[0]}.png", metric)
            figures.append((f"Train vs validation {metric} during training: {row} (Sharma et al., memorisation gap)", path))
    return figures


def sampler_table(cells: pd.DataFrame, table: pd.DataFrame, metric: str) -> pd.DataFrame | None:
    """Cohen et al.'s (AC-IR) comparison: ``metric`` mean and std over seeds of each trained row by
    negative sampler (fixed samplers, AC-IR ``policy``, ``random_policy``); None when the grid has one sampler."""
    if "sampler" not in cells.columns or cells["sampler"].nunique() < 2:
        return None
    samplers = cells.dropna(subset=["sampler"]).drop_duplicates("row").set_index("row")["sampler"]
    samplers = samplers[samplers.index.isin(table.index)]
    return pd.concat([samplers, table.loc[samplers.index, ["seeds", "queries", metric, f"{metric} std"]]], axis=1)


def machine() -> str:
    """A one-line description of where the report was made."""
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    return f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPU cores, {device}"


@locked("experiment")
def build_report(cfg: PipelineConfig, results: dict[str, list[pd.DataFrame]], metric: str = "MAP") -> Path:
    """Write ``<run_dir>/report/report.md`` and ``report.html`` with the table and every figure (under the run-dir
    lock). (Long: the report's sections in the order a reader meets them, each beside the figure it writes.)"""
    split = cfg.experiment.split
    paths = RunPaths(cfg.run_dir)
    out = paths.report(cfg.name)
    votes = read_parquet(paths.votes)
    table = results_table(results)
    shown = format_table(table)
    figures: list[tuple[str, Path]] = []
    figures.append(("Negative-sampler score distribution (Penha & Hauff, Fig. 1)", sampler_score_figure(votes, split, out / "ns_scores.png")))
    grid = {c.key: c for c in grid_cells(cfg, votes)}
    cells = cached_cells(paths.experiment)
    if len(cells):  # the grid's cells, in table order
        order = {key: i for i, key in enumerate(grid)}
        cells = cells[cells["key"].isin(grid)].sort_values("key", key=lambda keys: keys.map(order))
    actions = action_figure(cells, paths.experiment / "actions", out / "policy_actions.png")
    if actions:
        figures.append(("Negative sampler chosen over training, all seeds (Cohen et al.)", actions))
    sens = sensitivity_figure(cells, results, metric, out / "sensitivity.png")
    if sens:
        figures.append((f"{metric} sensitivity to ε / α (Penha & Hauff, Fig. 2)", sens))
    calibration, reliability = calibration_section(votes, cells, grid, paths.experiment / "runs", split,
                                                   {m: cfg.aggregate.options_for(m) for m in cfg.experiment.label_models},
                                                   out)
    figures += reliability + gap_figures(cells, paths.experiment / "history", out)
    samplers = sampler_table(cells, table, metric)
    quality = paths.analysis / "quality.csv"
    if quality.exists():
        figures.append(("LF and label-model quality (P@1, R@1, AUC; dashed: AUC 0.5, chance)",
                        quality_bars(pd.read_csv(quality, index_col=0), out / "lf_quality.png", "LF quality")))
    stamp = f"{dt.date.today().isoformat()}, {machine()}"
    title = f"weakrank report — {cfg.name} ({split} split)"
    note = (f"{queries_note(table, cfg.experiment.require)} of the {split} split. Mean over queries, ± std over "
            f"seeds where several; {significance_legend()}.")
    ece_note = (f"{CLASSIC_ECE}: 10 equal-width bins over P(relevant), only for probabilities (label models, "
                f"pointwise rankers); {RANKING_ECE}: the same over the softmax of each query's candidate scores "
                f"(Sharma et al., Eq. 4); over all candidate pairs of the {calibration.attrs['queries']} assessed queries "
                f"of the {split} split.")
    sampler_note = (f"{metric} mean and std over seeds by negative sampler; AC-IR's seeds are successive episodes "
                    "of one policy (Cohen et al.).")
    calibration = calibration.map(lambda v: "" if pd.isna(v) else f"{v:.3f}")
    md = [f"# {title}", "", f"_{stamp}_", "", note, "", shown.to_markdown(), "", "## Calibration", "", ece_note, "",
          calibration.to_markdown(disable_numparse=True), ""]
    if samplers is not None:
        md += ["## Negative samplers (Cohen et al., AC-IR)", "", sampler_note, "", to_markdown(samplers), ""]
    md += [f"## {caption}\n\n![{caption}]({path.name})\n" for caption, path in figures]
    write_text("\n".join(md), out / "report.md")
    body = [f"<h1>{html.escape(title)}</h1>", f"<p><em>{html.escape(stamp)}</em></p>", f"<p>{html.escape(note)}</p>",
            shown.to_html(classes="results"), "<h2>Calibration</h2>", f"<p>{html.escape(ece_note)}</p>",
            calibration.to_html()]
    if samplers is not None:
        body += ["<h2>Negative samplers (Cohen et al., AC-IR)</h2>", f"<p>{html.escape(sampler_note)}</p>",
                 samplers.to_html(float_format="%.3f")]
    body += [f"<h2>{html.escape(c)}</h2><img src='{p.name}' alt='{html.escape(c)}'>" for c, p in figures]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse;font-size:13px}"
             "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}img{max-width:100%}")
    write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
               f"<style>{style}</style></head><body>{''.join(body)}</body></html>", out / "report.html")
    write_text(table.to_csv(), out / "results.csv")
    return out / "report.md"
