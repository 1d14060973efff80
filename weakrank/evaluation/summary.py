"""What an evaluation table of a pipeline run says, in words: what each row is (:func:`rows_legend`) and how the
trained ranker did against BM25 and the best LF or fusion (:func:`closing_line`).

A table's rows have roles (``table.attrs["roles"]``, row → role): ``lf`` (each LF's own ranking, the baseline
BM25 among them), ``fusion`` (the unsupervised fusions of the LFs), ``labels`` (the pseudo-labels the ranker
learned from) and ``trained`` (the trained ranker); ``attrs["architecture"]`` and ``attrs["shipped"]`` say what
the trained row is: the shipped ranker (student and teacher) or the student alone.
"""

from __future__ import annotations

import pandas as pd

from weakrank.evaluation.tables import p_text

JUDGE_QUERIES = 10  # what `weakrank select --queries` is told to pick

ROLES = {
    "lf": "each LF's own ranking",
    "fusion": "the LFs' rankings fused without labels (rrf: reciprocal rank; combsum: summed per-query z-scores)",
    "labels": "the pseudo-labels the ranker learned from (the label model's P(relevant))",
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
        if rows:
            lines.append(f"{', '.join(rows)}: {text}")
    return "\n".join(lines)


def closing_line(table: pd.DataFrame, metric: str = "MAP", judge: str = "") -> str:
    """The run's result in one line, from a table with roles (see the module): the trained ranker's ``metric``
    against the baseline's (relative change, the paired t-test's p-value after Bonferroni, the queries), then
    against the best LF or fusion; where one of those is ahead, ``judge`` (the commands that judge a few
    queries) follows."""
    roles = table.attrs["roles"]
    baseline, alpha = table.attrs.get("baseline", "bm25"), table.attrs.get("alpha", 0.05)
    trained = next(row for row, role in roles.items() if role == "trained")
    value, base, p = (table.loc[trained, metric], table.loc[baseline, metric], table.loc[trained, f"{metric} p"])
    what = "the shipped ranker" if table.attrs.get("shipped") else "the trained ranker"
    test = f"p {p_text(p)}" if p < 0.001 else f"p = {p_text(p)}" + ("" if p < alpha else ", not significant")
    line = (f"{what} ({trained}): {metric} {value:.3f} vs {baseline} {base:.3f} ({(value - base) / base:+.0%}, {test}; "
            f"{int(table.loc[trained, 'queries'])} queries)")
    others = [row for row, role in roles.items() if role in ("lf", "fusion")]
    best = max(others, key=lambda row: table.loc[row, metric])
    if table.loc[best, metric] > value:
        line += f"; {best} alone: {table.loc[best, metric]:.3f}, ahead of it"
        return line + (f" — judge {JUDGE_QUERIES} queries to pass it: {judge}" if judge else "")
    return line + f"; above every LF and fusion (the best, {best}: {table.loc[best, metric]:.3f})"


def judge_commands(config: str, run_dir: str, flags: str = "") -> str:
    """The commands that judge :data:`JUDGE_QUERIES` queries of a run and run it again with their judgments
    (``flags``: those the run was given, e.g. ``--run-dir``)."""
    again, judging = f"{config} {flags}".strip(), f"{run_dir}/judging.tsv"
    return (f"`weakrank select {again} --queries {JUDGE_QUERIES}`, `weakrank judge {judging}`, then "
            f"`weakrank run {again} --judgments {judging}`")
