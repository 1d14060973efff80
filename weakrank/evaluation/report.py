"""The side-by-side report: tables and figures of an experiment, as Markdown and HTML."""

from __future__ import annotations

import datetime as dt
import html
import os
import platform
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from scipy.special import expit  # noqa: E402

from weakrank.config import PipelineConfig  # noqa: E402
from weakrank.evaluation.calibration import ece, reliability_diagram  # noqa: E402
from weakrank.evaluation.grid import grid_cells  # noqa: E402
from weakrank.evaluation.systems import column_run, label_model_scores  # noqa: E402
from weakrank.evaluation.tables import format_table, results_table  # noqa: E402
from weakrank.io import read_metadata, read_parquet, write_text  # noqa: E402
from weakrank.pipeline import RunPaths  # noqa: E402
from weakrank.plots import bar_table, line_plot, save_figure  # noqa: E402
from weakrank.training.data import minmax_within  # noqa: E402


def cached_cells(root: Path) -> pd.DataFrame:
    """One row per cached grid cell: key, row, params, seed."""
    rows = []
    for file in sorted((root / "cells").glob("*.parquet")):
        meta = read_metadata(file)
        rows.append({"key": file.stem, "row": meta["row"], "seed": meta["seed"], **meta.get("params", {})})
    return pd.DataFrame(rows)


def sampler_score_figure(votes: pd.DataFrame, split: str, path: Path) -> Path:
    """Seed 000 Fig. 1: min-max-normalised BM25 (negative-sampler) scores within each list, by gold label."""
    rows = votes[(votes["split"] == split) & votes["gold"].notna()]
    norm = minmax_within(rows["score_bm25"], rows["query_id"])
    fig, ax = plt.subplots(figsize=(6, 3.6))
    bins = np.linspace(0, 1, 21)
    for gold, name in ((0, "non-relevant"), (1, "relevant")):
        ax.hist(norm[rows["gold"].to_numpy() == gold], bins=bins, density=True, alpha=0.55, label=name)
    ax.set(xlabel="BM25 score, min-max normalised within the query's list", ylabel="density",
           title="Negative-sampler scores by gold label")
    ax.legend()
    return save_figure(fig, path)


def sensitivity_figure(cells: pd.DataFrame, results: dict[str, list[pd.DataFrame]], metric: str, path: Path) -> Path | None:
    """Seed 000 Fig. 2: ``metric`` against ε (smoothing) or α (relaxation), mean ± std over seeds."""
    if cells.empty or not {"epsilon", "alpha"} & set(cells.columns):
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
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
        plt.close(fig)
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


def machine() -> str:
    """A one-line description of where the report was made."""
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    return f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPU cores, {device}"


def build_report(cfg: PipelineConfig, results: dict[str, list[pd.DataFrame]], metric: str = "MAP") -> Path:
    """Write ``<run_dir>/report/report.md`` and ``report.html`` with the table and every figure."""
    exp = cfg.sections.get("experiment", {})
    split = exp.get("split", "test")
    paths = RunPaths(cfg.run_dir)
    out = paths.root / "report" / cfg.name
    votes = read_parquet(paths.votes)
    table = results_table(results)
    shown = format_table(table)
    figures: list[tuple[str, Path]] = []
    figures.append(("Negative-sampler score distribution (seed 000, Fig. 1)", sampler_score_figure(votes, split, out / "ns_scores.png")))
    cells = cached_cells(paths.root / "experiment")
    cells = cells[cells["key"].isin({c.key for c in grid_cells(cfg, votes)})] if len(cells) else cells
    actions = action_figure(cells, paths.root / "experiment" / "actions", out / "policy_actions.png")
    if actions:
        figures.append(("Negative sampler chosen over training, all seeds (seed 001)", actions))
    sens = sensitivity_figure(cells, results, metric, out / "sensitivity.png")
    if sens:
        figures.append((f"{metric} sensitivity to ε / α (seed 000, Fig. 2)", sens))
    gold = votes.set_index(["query_id", "passage_id"])["gold"]
    curves = {}
    for model in exp.get("label_models", ["majority", "generative"]):
        run = column_run(votes.assign(p=label_model_scores(votes, model)), "p", split)
        curves[model] = (run["score"].to_numpy(), gold.loc[list(zip(run["query_id"], run["passage_id"]))].to_numpy(int))
    for _, cell in cells[cells["row"].str.startswith("BERT-PR")].drop_duplicates("row").iterrows() if len(cells) else []:
        run = read_parquet(paths.root / "experiment" / "runs" / f"{cell['key']}.parquet")
        curves[cell["row"]] = (expit(run["score"].to_numpy()), gold.loc[list(zip(run["query_id"], run["passage_id"]))].to_numpy(int))
    figures.append(("Reliability of P(relevant) (seed 004)", reliability_diagram(curves, out / "reliability.png")))
    calibration = pd.DataFrame({"ECE (10 bins)": {name: ece(p, y) for name, (p, y) in curves.items()}})
    quality = paths.analysis / "quality.csv"
    if quality.exists():
        figures.append(("LF and label-model quality (P@1, R@1, AUC)",
                        bar_table(pd.read_csv(quality, index_col=0), out / "lf_quality.png", "LF quality")))
    stamp = f"{dt.date.today().isoformat()}, {machine()}"
    title = f"weakrank report — {cfg.name} ({split} split)"
    note = ("Mean over queries (± std over seeds where several); † / ‡: significantly better / worse than BM25 "
            "(paired t-test over queries, Bonferroni-corrected, p < 0.05).")
    md = [f"# {title}", "", f"_{stamp}_", "", note, "", shown.to_markdown(), "", "## Calibration", "",
          calibration.to_markdown(floatfmt=".3f"), ""]
    md += [f"## {caption}\n\n![{caption}]({path.name})\n" for caption, path in figures]
    write_text("\n".join(md), out / "report.md")
    body = [f"<h1>{html.escape(title)}</h1>", f"<p><em>{html.escape(stamp)}</em></p>", f"<p>{html.escape(note)}</p>",
            shown.to_html(classes="results"), "<h2>Calibration</h2>", calibration.to_html(float_format="%.3f")]
    body += [f"<h2>{html.escape(c)}</h2><img src='{p.name}' alt='{html.escape(c)}'>" for c, p in figures]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse;font-size:13px}"
             "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}img{max-width:100%}")
    write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
               f"<style>{style}</style></head><body>{''.join(body)}</body></html>", out / "report.html")
    write_text(table.to_csv(), out / "results.csv")
    return out / "report.md"
