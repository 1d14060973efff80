"""What an evaluation table of a pipeline run says, in words: what each row is (:func:`rows_legend`) and how the
trained ranker did against the first stage and the best LF or fusion (:func:`closing_line`).

A table's rows have roles (``table.attrs["roles"]``, row → role): ``first stage`` (the candidates' own order: the
baseline where there is one), ``lf`` (each LF's own ranking, weakrank's BM25 among them), ``fusion`` (the
unsupervised fusions of the LFs), ``labels`` (the pseudo-labels the ranker learned from), ``run`` (a run file the
user gave) and ``trained`` (the trained ranker); ``attrs["architecture"]`` and ``attrs["shipped"]`` say what the
trained row is: the shipped ranker (student and teacher) or the student alone.
"""

from __future__ import annotations

import pandas as pd

from weakrank.evaluation.tables import p_text

BM25_ROW = "bm25 (weakrank)"  # weakrank's BM25 LF recomputed over the candidates: not the user's first stage

ROLES = {
    "first stage": "the candidates' own order, as the first stage ranked them (your run file, or the BM25 top k that "
                   "weakrank built the candidates with): the baseline",
    "lf": "each LF's own ranking",
    "fusion": "the LFs' rankings fused without labels (rrf: reciprocal rank; combsum: summed per-query z-scores)",
    "labels": "the pseudo-labels the ranker learned from (the label model's P(relevant))",
    "run": "a TREC run file you gave",
}


def describe_trained(table: pd.DataFrame) -> str:
    """What the trained row of ``table`` is: the shipped ranker (student and teacher) or the student alone."""
    architecture = table.attrs.get("architecture", "ranker")
    if table.attrs.get("shipped"):
        return (f"the shipped ranker: the trained {architecture} (the student) averaged per query with its teacher, "
                "the fusion label model over the LFs (both standardised over the query's candidates)")
    return f"the trained {architecture} alone ([train] fuse_lfs = false, or trained on gold labels)"


def rows_legend(table: pd.DataFrame) -> str:
    """One line per role of ``table``'s rows: the rows, then what they are."""
    lines = []
    for role, text in {**ROLES, "trained": describe_trained(table)}.items():
        rows = [row for row, r in table.attrs["roles"].items() if r == role]
        if BM25_ROW in rows:
            text += f" ({BM25_ROW}: BM25 recomputed by weakrank over the candidates, not your first stage)"
        if rows:
            lines.append(f"{', '.join(rows)}: {text}")
    return "\n".join(lines)


def closing_line(table: pd.DataFrame, metric: str = "MAP", advice: str = "") -> str:
    """The run's result in one line, from a table with roles (see the module): the trained ranker's ``metric``
    against the baseline's (relative change, the paired t-test's p-value after Bonferroni, the queries), then
    against the best LF or fusion, each with its value before what changed the run (``attrs["changed"]``) where
    ``attrs["before"]`` (row → value of the run before it) has it; where the best LF or fusion is ahead,
    ``advice`` (what would help, and the commands that do it) follows."""
    roles, before = table.attrs["roles"], table.attrs.get("before") or {}
    baseline, alpha = table.attrs["baseline"], table.attrs.get("alpha", 0.05)
    trained = next(row for row, role in roles.items() if role == "trained")
    value, base, p = (table.loc[trained, metric], table.loc[baseline, metric], table.loc[trained, f"{metric} p"])
    what = "the shipped ranker" if table.attrs.get("shipped") else "the trained ranker"
    test = f"p {p_text(p)}" if p < 0.001 else f"p = {p_text(p)}" + ("" if p < alpha else ", not significant")
    was = f" ({before[trained]:.3f} before {table.attrs.get('changed')})" if trained in before else ""
    line = (f"{what} ({trained}): {metric} {value:.3f}{was} vs {baseline} {base:.3f} ({(value - base) / base:+.0%}, "
            f"{test}; {int(table.loc[trained, 'queries'])} queries)")
    others = [row for row, role in roles.items() if role in ("lf", "fusion") and row != baseline]
    best = max(others, key=lambda row: table.loc[row, metric])
    if table.loc[best, metric] > value:
        line += f"; {best} alone: {table.loc[best, metric]:.3f}, ahead of it"
        return line + (f" — {advice}" if advice else "")
    return line + f"; above every LF and fusion (the best, {best}: {table.loc[best, metric]:.3f})"
