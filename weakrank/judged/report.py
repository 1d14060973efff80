"""What judged mode says to a person: an evaluation by sample as a table, its legend and one line
(:func:`~weakrank.judged.evaluation.sample_table` makes it), and the commands that judge a few queries of a run or
measure its systems by a sample of the evaluated split."""

from __future__ import annotations

import pandas as pd

from weakrank.paths import program


def format_sample_table(table: pd.DataFrame) -> pd.DataFrame:
    """Printable cells of an evaluation by sample (:func:`weakrank.judged.evaluation.sample_table`): each system's
    estimated MAP with its interval, and its difference from the baseline with its interval."""
    baseline = table.attrs.get("baseline", "bm25")
    diff = f"vs {baseline}"
    return pd.DataFrame({
        "MAP (estimated)": [f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in zip(table["MAP"], table["low"], table["high"])],
        diff: ["" if row == baseline else f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]"
               for row, d, lo, hi in zip(table.index, table[diff], table["diff low"], table["diff high"])],
    }, index=table.index)


def sample_legend(table: pd.DataFrame) -> str:
    """What :func:`format_sample_table`'s cells are: the judged queries they come from and the intervals."""
    baseline, level = table.attrs.get("baseline", "bm25"), table.attrs.get("level", 0.95)
    return (f"MAP estimated from {table.attrs['judged']} judged queries of a random sample "
            f"({table.attrs['queries']} with a relevant passage found), weighted by their inclusion probabilities; "
            f"[low, high]: {level:.0%} confidence interval; vs {baseline}: the paired difference from {baseline} "
            "(an interval above 0: better than it)")


JUDGE_QUERIES = 10  # what `weakrank select --queries` is told to pick


def judge_advice(commands: str, more: bool = False) -> str:
    """What a run's closing line says where an LF or fusion is ahead of the trained ranker: judge a few (``more``)
    queries with ``commands`` (:func:`judge_commands`)."""
    return (f"judge {JUDGE_QUERIES}{' more' if more else ''} queries, and each LF's prior moves by what they show of "
            f"it: {commands}")


def judge_commands(config: str, judging: str, flags: str = "", train_flags: str = "", more: bool = False) -> str:
    """The commands that judge :data:`JUDGE_QUERIES` queries of a run and run it again with their judgments:
    ``flags`` (e.g. ``--run-dir``) go to each command, ``train_flags`` (``--max-steps``) to ``run`` only; with
    ``more`` (the run read judgments of the judging file ``judging`` already) ``select --more`` adds queries to that
    file, asking nothing judged again."""
    again = f"{config} {flags}".strip()
    select = f"--more --queries {JUDGE_QUERIES}" if more else f"--queries {JUDGE_QUERIES}"
    rerun = f"{again} {train_flags}".strip()
    me = program()
    return (f"`{me} select {again} {select}`, `{me} judge {judging}`, then "
            f"`{me} run {rerun} --judgments {judging}`")


EVALUATION_QUERIES = 20  # what `weakrank select --evaluation` draws by default


def measure_commands(config: str, judging: str, flags: str = "") -> str:
    """The commands that measure a run's systems without qrels: draw a sample of :data:`EVALUATION_QUERIES`
    queries of the evaluated split into the judging file ``judging``, judge it, and estimate each system's MAP from
    it (``flags`` to each)."""
    again = f"{config} {flags}".strip()
    me = program()
    return (f"`{me} select {again} --evaluation`, `{me} judge {judging}`, then "
            f"`{me} evaluate {again} --judgments {judging}`")


def sample_line(table: pd.DataFrame) -> str:
    """An evaluation by sample's result in one line: the trained ranker's estimated MAP and its difference from the
    baseline, each with its interval, and whether that difference is clearly above or below 0; of a pooled sample,
    its closing line (``attrs["closing"]``: :func:`weakrank.judged.evaluation.pooled_evaluation`)."""
    if "closing" in table.attrs:
        return table.attrs["closing"]
    roles, baseline = table.attrs.get("roles", {}), table.attrs["baseline"]
    trained = next((row for row, role in roles.items() if role == "trained" and row in table.index), None)
    if trained is None:
        return f"estimated on {table.attrs['judged']} judged queries: no trained ranker's run to measure"
    row = table.loc[trained]
    verdict = ("better than" if row["diff low"] > 0 else "worse than" if row["diff high"] < 0
               else "not told apart from")
    return (f"estimated on {table.attrs['judged']} judged queries: {trained} MAP {row['MAP']:.3f} "
            f"[{row['low']:.3f}, {row['high']:.3f}], {verdict} {baseline} ({row[f'vs {baseline}']:+.3f} "
            f"[{row['diff low']:+.3f}, {row['diff high']:+.3f}])")
