"""The comparison table of the papers weakrank implements: rows = systems, columns = metrics, mean ± std over seeds,
significance against the BM25 baseline (paired t-test over queries, Bonferroni-corrected)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.run_checks import checked_run
from weakrank.evaluation.significance import average_over_seeds, mean_std, paired_tests


def to_markdown(table: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """``table`` as Markdown with its index: floats as ``floatfmt``, whole-number columns (counts) as integers."""
    whole = [pd.api.types.is_integer_dtype(table[c]) for c in table.columns]
    return table.to_markdown(floatfmt=("", *(".0f" if w else floatfmt for w in whole)))


def results_table(results: dict[str, list[pd.DataFrame]], baseline: str = "bm25", alpha: float = 0.05) -> pd.DataFrame:
    """Numeric table: ``<metric>`` means, ``<metric> std`` over seeds, ``<metric> sig`` (+/−/blank vs baseline) and
    ``<metric> p`` (the paired t-test's p-value against the baseline after Bonferroni; NaN on the baseline's row).
    ``attrs``: ``baseline``, ``alpha``."""
    per_query = {row: average_over_seeds(tables) for row, tables in results.items()}
    tests = paired_tests(per_query, baseline, alpha) if baseline in per_query else pd.DataFrame()
    metrics = list(next(iter(results.values()))[0].columns)
    rows = []
    for row, tables in results.items():
        mean, std = mean_std(tables)
        entry = {"system": row, "seeds": len(tables), "queries": len(per_query[row])}
        for m in metrics:
            entry[m], entry[f"{m} std"] = mean[m], std[m]
            sig = tests[(tests["system"] == row) & (tests["metric"] == m)] if len(tests) else tests
            entry[f"{m} sig"] = "" if sig.empty or not sig["significant"].iloc[0] else ("+" if sig["delta"].iloc[0] > 0 else "−")
            entry[f"{m} p"] = float("nan") if sig.empty else float(sig["p_bonferroni"].iloc[0])
        rows.append(entry)
    table = pd.DataFrame(rows).set_index("system")
    table.attrs.update(baseline=baseline, alpha=alpha)
    return table


def significance_legend(baseline: str = "BM25", alpha: float = 0.05) -> str:
    """What :func:`format_table`'s marks mean (one threshold, ``alpha``, for both)."""
    return (f"† significantly better than the baseline ({baseline}), ‡ significantly worse: paired t-test over "
            f"queries, p < {alpha:g} after Bonferroni")


def p_text(p: float) -> str:
    """A p-value as printed: "0.031", "< 0.001"; blank for none (the baseline's own row)."""
    return "" if pd.isna(p) else "< 0.001" if p < 0.001 else f"{p:.3f}"


def table_legend(table: pd.DataFrame, p_for: str | None = None) -> str:
    """The legend of :func:`format_table`'s view of a :func:`results_table`: its marks, and the column of
    ``p_for``'s p-values where shown."""
    baseline, alpha = table.attrs.get("baseline", "bm25"), table.attrs.get("alpha", 0.05)
    legend = significance_legend(baseline, alpha) + f" ({max(len(table) - 1, 1)} comparisons)"
    if p_for:
        legend += f"; p {p_for}: that test's p-value for {p_for} (after Bonferroni; ≥ {alpha:g}: no mark)"
    return legend


REQUIRED = {"both": "with a relevant and a non-relevant candidate", "relevant": "with a relevant candidate",
            "all": "in the qrels"}


def queries_note(table: pd.DataFrame, require: str = "both") -> str:
    """How many queries the rows of ``table`` (its ``queries`` column) were evaluated on, e.g.
    "n = 237 queries (with a relevant and a non-relevant candidate)"; a range where rows differ."""
    counts = table["queries"].dropna().astype(int)
    n = f"{counts.min()}" if counts.min() == counts.max() else f"{counts.min()}–{counts.max()}"
    return f"n = {n} queries ({REQUIRED.get(require, require)})"


def format_table(table: pd.DataFrame, p_for: str | None = None) -> pd.DataFrame:
    """Printable cells: the number of ``queries`` evaluated (where ``table`` has it), then "0.712 ± 0.010"
    (± only with several seeds); † significantly better than the baseline, ‡ significantly worse, paired
    t-test p < alpha after Bonferroni (see :func:`table_legend`); with ``p_for`` (a metric), a last column
    ``p <metric>`` of its p-values."""
    metrics = [c for c in table.columns if f"{c} std" in table.columns]
    out = pd.DataFrame(index=table.index)
    if "queries" in table.columns:
        out["queries"] = table["queries"]
    for m in metrics:
        cells = []
        for _, r in table.iterrows():
            text = f"{r[m]:.3f}" + (f" ± {r[f'{m} std']:.3f}" if r["seeds"] > 1 else "")
            cells.append(text + {"+": "†", "−": "‡"}.get(r[f"{m} sig"], ""))
        out[m] = cells
    if p_for:
        out[f"p {p_for}"] = table[f"{p_for} p"].map(p_text)
    return out


def runs_table(runs: Sequence[str | Path], qrels: pd.DataFrame, require: str = "both",
               negatives: pd.DataFrame | None = None, names: Sequence[str] | None = None) -> pd.DataFrame:
    """Metrics of TREC run files (rows named by ``names``, default the files' stems; each file checked first),
    t-tests against the first; R_n@k with ``negatives`` (query_id, passage_id, score) when given."""
    names = list(names) if names is not None else [Path(run).stem for run in runs]
    results = {name: [evaluate_run(checked_run(run, qrels), qrels, require=require, negatives=negatives)]
               for name, run in zip(names, runs)}
    return results_table(results, baseline=names[0])
