"""Measuring without qrels: each system's MAP on the evaluated split estimated from a small judged sample, with a
confidence interval on the logit scale of its range, and its paired difference from a baseline (the first stage); of a
pooled sample (:mod:`.pooling`), its exact top-k measures instead (:mod:`.topk`). The designs: docs/judged-design.md."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, logit
from scipy.stats import t

from weakrank.errors import DataError
from weakrank.evaluation.sampled_map import estimate, query_totals
from weakrank.evaluation.summary import BM25_ROW
from weakrank.io import LINE, write_text
from weakrank.judged.checks import check_texts
from weakrank.judged.design import Pool, draw, pairs_of, rankings
from weakrank.judged.drawn import check_drawn_from, check_whole
from weakrank.judged.judgments import Judgments, read_judgments
from weakrank.judged.pooling import BASELINE, is_pooled
from weakrank.judged.report import format_sample_table, sample_legend, sample_line
from weakrank.judged.topk import pooled_lines, pooled_table, settled

LEVEL = 0.95  # the intervals' coverage


def evaluation_pairs(votes: pd.DataFrame, split: str, queries: int, per_query: int = 6, seed: int = 0,
                     options: dict | None = None) -> pd.DataFrame:
    """A simple random sample of ``queries`` queries of ``split`` and their passages to judge (docs/judged-design.md),
    in the columns of :func:`weakrank.judged.design.select_pairs`."""
    return sample_pairs(*rankings(votes[votes["split"] == split], options), queries, per_query, seed)


def sample_pairs(ranked: dict[str, list[list[str]]], answerable: pd.Series, queries: int, per_query: int = 6,
                 seed: int = 0) -> pd.DataFrame:
    """:func:`evaluation_pairs` from the split's lists as the candidates rank them
    (:func:`weakrank.judged.design.rankings`)."""
    frame = list(ranked)
    found = Pool(ranked, answerable, frame, dict.fromkeys(frame, 0))
    return pairs_of(found, draw(found, queries, seed, oversample=1.0), per_query, seed)


def bounded_interval(value: pd.Series, error: pd.Series, half: float, low: float, high: float, queries: int
                     ) -> tuple[pd.Series, pd.Series, pd.Series]:
    """``value`` clipped into ``[low, high]`` (a weighted estimate can pass an end: the truth cannot), and ``half``
    standard errors ``error`` either side of it on the logit scale of the range (docs/judged-design.md), mapped back;
    the logit is taken half a query in from the ends (``queries`` judged: the empirical logit's correction), and the
    interval holds the value. No width where the error is 0."""
    width, inside = high - low, 0.5 / (queries + 1)
    value = value.clip(low, high)
    share = ((value - low) / width).clip(inside, 1 - inside)
    spread = half * error / (width * share * (1 - share))  # the delta method: d logit(x) = dx / (x (1 − x))
    centre, exact = logit(share), error == 0  # exact: the baseline's own difference, a list every system ties
    ends = [(low + width * expit(centre + sign * spread)).mask(exact, value) for sign in (-1, 1)]
    return value, ends[0].where(ends[0] < value, value), ends[1].where(ends[1] > value, value)


def sample_table(runs: Mapping[str, pd.DataFrame], judgments: Judgments, baseline: str) -> pd.DataFrame:
    """Each system's (``runs``: name → query_id, passage_id, score) estimated MAP with its interval, and its
    difference from ``baseline`` with its interval, over the judged queries of ``judgments``; ``attrs["queries"]``:
    the judged queries with a relevant passage found."""
    table = judgments.table.sort_values(["query_id", "passage_id"], kind="stable")  # no figure depends on row order
    asked = set(table["query_id"])
    key = ["query_id", "passage_id"]
    lists = pd.concat([*(run.loc[run["query_id"].isin(asked), key] for run in runs.values()), table[key]])
    lists = lists.drop_duplicates().sort_values("query_id", kind="stable")  # each query's runs' passages, then judged
    lists = lists.merge(table[[*key, "relevance", "passage_inclusion"]], on=key, how="left")
    scores = pd.DataFrame({name: lists.merge(run[[*key, "score"]], on=key, how="left")["score"].fillna(-np.inf)
                           for name, run in runs.items()})
    totals = query_totals(scores, lists["query_id"].to_numpy(), lists["relevance"].gt(0).astype(float).where(
        lists["relevance"].notna()).to_numpy(), lists["passage_inclusion"].to_numpy(float))
    weights = 1.0 / table.groupby("query_id", sort=False)["query_inclusion"].first()
    result = estimate(totals, weights, baseline)
    half = t.ppf(0.5 + LEVEL / 2, max(result.queries - 1, 1))
    value, low, high = bounded_interval(result.map, result.map_error, half, 0.0, 1.0, result.queries)
    lead, diff_low, diff_high = bounded_interval(result.lead, result.error, half, -1.0, 1.0, result.queries)
    out = pd.DataFrame({"MAP": value, "low": low, "high": high, f"vs {baseline}": lead,
                        "diff low": diff_low, "diff high": diff_high})
    out.attrs.update(queries=result.queries, judged=len(asked), level=LEVEL, baseline=baseline)
    return out


def read_sample(path: Path, dataset: Path, queries: set[str], split: str, rows: pd.DataFrame | None = None
                ) -> Judgments:
    """The judged sample ``path`` of ``split`` (whose queries are ``queries``), read (unless its ``rows`` are given:
    :func:`~weakrank.judged.judgments.read_judged_file`'s) and checked as every judged file is
    (:func:`~weakrank.judged.judgments.read_judgments`: its seal; :func:`~weakrank.judged.checks.check_texts`: the
    texts of the ``dataset`` directory), before anything is written; a judged query outside ``split``, or nothing
    judged, is a located error."""
    found = read_judgments(path, rows)
    check_texts(found.rows, dataset, path)
    outside = found.table[~found.table["query_id"].isin(queries)]
    if len(outside):
        raise DataError(f"judges query {outside['query_id'].iloc[0]!r}, which is not of the evaluated split {split!r}: "
                        "measure with a sample of that split (weakrank select CONFIG --evaluation)", file=path,
                        line=int(outside[LINE].iloc[0]), field="query_id")
    return found


def pooled_runs(systems: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """``evaluate``'s systems (name → run, the first stage first where there is one) under the names a pooled
    judging file gives them (weakrank's BM25 is :data:`~weakrank.judged.pooling.BASELINE`), each of the first one's
    queries only: what a pooled sample is drawn from, and checked against."""
    runs = {BASELINE if name == BM25_ROW else name: run for name, run in systems.items()}
    queries = set(next(iter(runs.values()))["query_id"])
    return {name: run[run["query_id"].isin(queries)] for name, run in runs.items()}


def check_pooled(found: Judgments, systems: Mapping[str, pd.DataFrame], sources: Mapping[str, Path],
                 redraw: str) -> None:
    """A pooled sample ``found`` (:func:`read_sample`'s) is whole and was drawn from the rankings ``systems``
    (``evaluate``'s, name → run; ``sources``: name → the file its run comes from) hold now
    (:mod:`.drawn`; ``redraw``: the commands that draw a new sample); nothing is checked of another design."""
    if found.rows is None or not is_pooled(found.rows):
        return
    names = {BASELINE if name == BM25_ROW else name: path for name, path in sources.items()}
    check_drawn_from(found.rows, pooled_runs(systems), names, found.source, redraw)
    check_whole(found.rows, found.source)


def sample_evaluation(name: str, out: Path, runs: dict[str, pd.DataFrame], roles: dict[str, str],
                      found: Judgments, split: str) -> pd.DataFrame:
    """Each system's MAP on ``split`` estimated from the judged sample ``found`` (:func:`read_sample`: a judging file
    of ``select --evaluation``) with its interval and its paired difference from the first of ``runs`` (the first
    stage, else weakrank's BM25), written to ``<out>/evaluation-sample.{csv,md}`` (``out``: the run directory's
    runs). A sample of the pooled design gives its exact top-k measures instead, and no MAP
    (:func:`pooled_evaluation`)."""
    path = found.source
    if found.rows is not None and is_pooled(found.rows):
        return pooled_evaluation(name, out, runs, roles, found, split)
    table = sample_table(runs, found, next(iter(runs)))
    table.attrs.update(roles=roles, judgments=str(path), split=split)
    write_text(table.to_csv(), out / "evaluation-sample.csv")
    text = [f"# Evaluation by sample — {name}", "", f"Split {split!r}, judgments {path.name}.", "",
            format_sample_table(table).to_markdown(), "", f"{sample_legend(table)}.", "", sample_line(table), ""]
    write_text("\n".join(text), out / "evaluation-sample.md")
    return table


def pooled_evaluation(name: str, out: Path, runs: dict[str, pd.DataFrame], roles: dict[str, str],
                      found: Judgments, split: str) -> pd.DataFrame:
    """Each pooled system's exact top-k measures on ``split`` (:mod:`.topk`: against the sample's baseline, the
    first stage), and those of the user's runs among ``runs`` (role ``run``) where the sample judged their top k,
    from the judged pooled sample ``found``, written to ``<out>/evaluation-topk.csv`` and, in lines with the
    closing one (``attrs["topk"]``, ``attrs["closing"]``), ``<out>/evaluation-sample.md``; an earlier
    ``evaluation-sample.csv`` (MAP estimates) is removed: no MAP is estimated from such a sample."""
    given = {system: run for system, run in runs.items() if roles.get(system) == "run"}
    topk = pooled_table(found.rows, given)
    trained = next((system for system, role in roles.items() if role == "trained"), None)
    lines = settled(found.rows)  # the trained ranker's where the sample pooled it, else the first system compared's
    topk.attrs.update(roles=roles, judgments=str(found.source), split=split, topk=pooled_lines(topk),
                      closing=f"judged sample: {lines[trained] if trained in lines else next(iter(lines.values()))}")
    write_text(topk.to_csv(), out / "evaluation-topk.csv")
    (out / "evaluation-sample.csv").unlink(missing_ok=True)
    text = [f"# Evaluation by sample — {name}", "", f"Split {split!r}, judgments {found.source.name}.", "", "```",
            *topk.attrs["topk"], "```", "", topk.attrs["closing"], ""]
    write_text("\n".join(text), out / "evaluation-sample.md")
    return topk
