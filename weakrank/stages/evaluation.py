"""The evaluate stage's side of the run directory: the systems it compares (each LF, the fusions, the labels, the
trained ranker's run), the earlier evaluation a judged rerun keeps (``runs/evaluation-before.*``), the one-panel
figure, and the evaluation by sample, which measures them without qrels from a judged sample of the evaluated split
(``runs/evaluation-sample.{csv,md}``; :mod:`weakrank.judged.evaluation`)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from weakrank.baselines import column_run, fusion_runs
from weakrank.errors import DataError
from weakrank.evaluation.summary import sample_line
from weakrank.evaluation.tables import format_sample_table, sample_legend, significance_legend
from weakrank.io import read_parquet, read_run, write_text
from weakrank.label_models.labels_file import read_labels_info
from weakrank.labeling import SCORE, lf_names
from weakrank.paths import RunPaths

BEFORE = "evaluation-before"  # runs/<BEFORE>.{csv,md,png}: the evaluation of the run before the judgments


def systems(paths: RunPaths, split: str, trained: str) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """What a user already has on ``split`` (BM25 first, every other LF, the RRF and CombSUM fusions, the labels)
    and the trained ranker's run ``runs/<trained>.trec`` where it exists: name → run (query_id, passage_id, score),
    and name → role (:mod:`weakrank.evaluation.summary`)."""
    votes = read_parquet(paths.votes)
    if SCORE + "bm25" not in votes.columns:
        raise DataError("no bm25 scores: the evaluate stage compares with the bm25 LF", file=paths.votes)
    names = ["bm25"] + [n for n in lf_names(votes) if n != "bm25"]
    runs = {name: column_run(votes, SCORE + name, split) for name in names}
    roles = dict.fromkeys(names, "lf")
    for name, run in fusion_runs(votes).items():
        runs[name.replace(":", "-")] = column_run(run, "score", split)
        roles[name.replace(":", "-")] = "fusion"
    if paths.labels.exists():
        model = read_labels_info(paths.labels).model or "labels"
        runs[f"labels-{model}"] = column_run(read_parquet(paths.labels), "p_relevant", split)
        roles[f"labels-{model}"] = "labels"
    if (paths.runs / f"{trained}.trec").exists():
        runs[trained] = read_run(paths.runs / f"{trained}.trec")
        roles[trained] = "trained"
    return runs, roles


def judged_run(paths: RunPaths) -> bool:
    """Whether the labels of this run came from judged queries (``--judgments``, ``[aggregate] judgments``)."""
    return paths.labels.exists() and bool(read_labels_info(paths.labels).judgments)


def keep_before(paths: RunPaths) -> dict[str, float]:
    """Before a judged run's evaluation is written: the earlier one (``runs/evaluation.*``) kept as
    ``runs/evaluation-before.*`` unless one is kept already (the first run before any judgment stays); returns its
    MAP by row (empty when there is none)."""
    runs = paths.runs
    if not (runs / f"{BEFORE}.csv").exists() and (runs / "evaluation.csv").exists():
        for suffix in (".csv", ".png"):
            if (runs / f"evaluation{suffix}").exists():
                os.replace(runs / f"evaluation{suffix}", runs / f"{BEFORE}{suffix}")
        if (runs / "evaluation.md").exists():
            text = (runs / "evaluation.md").read_text(encoding="utf-8")
            write_text(text.replace("(evaluation.png)", f"({BEFORE}.png)"), runs / f"{BEFORE}.md")
    if not (runs / f"{BEFORE}.csv").exists():
        return {}
    return pd.read_csv(runs / f"{BEFORE}.csv", index_col=0)["MAP"].to_dict()


def evaluation_figure(table: pd.DataFrame, path: Path, title: str) -> Path:
    """``runs/evaluation.png``: one panel of MAP, the trained ranker, the baseline and the best other LF where the
    table's roles say which they are (else every row), each marked † / ‡ where significantly better / worse."""
    from weakrank.plots import marked_bars  # matplotlib: imported when it draws

    roles, baseline = table.attrs.get("roles", {}), table.attrs["baseline"]
    rows = list(table.index)
    if roles:
        lfs = [row for row, role in roles.items() if role == "lf" and row != baseline]
        trained = [row for row, role in roles.items() if role == "trained"]
        rows = [*trained, baseline, *([max(lfs, key=lambda row: table.loc[row, "MAP"])] if lfs else [])]
    marks = {row: {"+": "†", "−": "‡"}.get(table.loc[row, "MAP sig"], "") for row in rows}
    note = significance_legend(baseline, table.attrs.get("alpha", 0.05))
    return marked_bars(table.loc[rows, "MAP"], marks, path, title, "MAP", note)


def sample_evaluation(name: str, paths: RunPaths, runs: dict[str, pd.DataFrame], roles: dict[str, str],
                      judgments: str | Path, split: str) -> pd.DataFrame:
    """Each system's MAP on ``split`` estimated from the judged sample ``judgments`` (a judging file of ``select
    --evaluation``) with its interval and its paired difference from BM25, written to
    ``runs/evaluation-sample.{csv,md}``; a judged query outside ``split``, or nothing judged, is a located error."""
    from weakrank.judged.evaluation import sample_table
    from weakrank.judged.judgments import read_judgments

    path = Path(judgments)
    found = read_judgments(path)  # a judging file a spreadsheet saved as CSV: refused, in one line
    if found.table.empty:
        raise DataError(f"nothing judged yet: judge it first, weakrank judge {path}", file=path)
    queries = set(runs["bm25"]["query_id"])
    outside = [query for query in found.queries if query not in queries]
    if outside:
        raise DataError(f"judges query {outside[0]!r}, which is not of the evaluated split {split!r}: measure with a "
                        "sample of that split (weakrank select CONFIG --evaluation)", file=path, field="query_id")
    table = sample_table(runs, found, "bm25")
    table.attrs.update(roles=roles, judgments=str(path), split=split)
    write_text(table.to_csv(), paths.runs / "evaluation-sample.csv")
    text = [f"# Evaluation by sample — {name}", "", f"Split {split!r}, judgments {path.name}.", "",
            format_sample_table(table).to_markdown(), "", f"{sample_legend(table)}.", "", sample_line(table), ""]
    write_text("\n".join(text), paths.runs / "evaluation-sample.md")
    return table
