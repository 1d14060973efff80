"""The select stage: a sample of queries and their candidates drawn for a person to judge, into a judging file
(:mod:`weakrank.judged.design`, :mod:`weakrank.judged.judging_file`): of a training split, to move the LFs' quality
priors and teach the ranker (:func:`select`), or of the evaluated split, to measure the systems where it has no
qrels (:func:`select_evaluation`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import nullcontext
from pathlib import Path

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.errors import ConfigError, DataError, did_you_mean
from weakrank.files import output_file
from weakrank.io import LINE, read_parquet
from weakrank.judged import EVALUATION_DESIGNS
from weakrank.judged.judging_file import (
    EVALUATION_JUDGING,
    EVALUATION_USE,
    JUDGING,
    judged,
    judging_path,
    read_judging_file,
    write_judging_file,
)
from weakrank.judged.report import EVALUATION_QUERIES
from weakrank.labeling import check_votes_table
from weakrank.paths import RunPaths
from weakrank.stages.stage import stage
from weakrank.validation import check_scored


def check_select(cfg: PipelineConfig, plan: Collection[str], select_split: str | None = None,
                 queries: int | None = None, per_query: int | None = None) -> None:
    """``select``'s check: a sample's size (``queries`` and ``per_query``) and the split it is drawn from
    (``select_split``: never the evaluated one)."""
    if select_split is not None and select_split == cfg.evaluate.split:
        raise ConfigError(f"split {select_split!r} is the one [evaluate] scores: judging its queries would choose what "
                          "is then measured; select from another split (default train)")
    if queries is not None and per_query is not None and (queries < 1 or per_query < 2):
        raise ConfigError(f"--queries must be >= 1 and --per-query >= 2, got {queries} and {per_query}")


def check_evaluation_sample(cfg: PipelineConfig, plan: Collection[str], eval_split: str | None = None,
                            queries: int | None = None, per_query: int | None = None) -> None:
    """``select --evaluation``'s check: the sample's size (:func:`check_select`) and the split it will score
    (:func:`check_scored`)."""
    check_select(cfg, plan, queries=queries, per_query=per_query)
    check_scored(cfg, plan, eval_split)


@stage("select", check_select, select_split="split", queries="queries", per_query="per_query")
def select(cfg: PipelineConfig, queries: int = 10, split: str = "train", per_query: int = 6, seed: int = 0,
           output: str | Path | None = None, more: bool = False, force: bool = False) -> tuple[Path, pd.DataFrame]:
    """Draw a sample of ``queries`` queries of ``split`` (never ``[evaluate] split``) and up to ``per_query`` of
    their candidates for a person to judge (:mod:`weakrank.judged.design`: a stratified random sample, each pair's
    inclusion probability written beside it; no gold is read) and write them as a judging file (default
    ``<config stem>.judgments/judging.tsv`` beside the config: :func:`~weakrank.judged.judging_file.judging_path`; one that holds judgments already is kept, not overwritten). With ``more`` the file's
    sample grows by ``queries`` queries (the same design and seed, read from the file): its rows and judgments are
    kept, the new queries' rows added after them, the file read and checked first as every reader checks it (its
    seal: a design or text edited by hand is refused). The file is sealed (:mod:`weakrank.judged.judging_file`).
    Returns the file and the pairs added now.
    The split and the sample's size are checked first (:func:`check_select`). It is written
    through :func:`~weakrank.files.output_file`: one weakrank did not write, or one changed since (a
    person's skips or notes), is replaced only with ``force``. (Long: a fresh draw and ``more`` share every check and
    the one write; the file is read once for both.)"""
    from weakrank.judged.checks import check_texts
    from weakrank.judged.design import select_pairs
    from weakrank.judged.judgments import read_judged_file

    paths = RunPaths(cfg.run_dir)
    out = Path(output) if output else judging_path(cfg.source, cfg.run_dir, JUDGING)
    if more and out.exists():  # checked as every reader checks it: its seal, its texts
        kept = read_judged_file(out)
        check_texts(kept, paths.dataset, out)
        kept = kept.drop(columns=LINE)
    else:
        kept = read_judging_file(out) if out.exists() else None
    if kept is not None and not more and judged(kept).any():
        raise DataError("holds judgments already: judge it to the end, add queries to it with --more, or name "
                        "another --output", file=out)
    if more and kept is None:
        raise DataError("no judging file to add queries to: run select without --more first", file=out)
    if more and not {"query_inclusion", "sample_seed"} <= set(kept.columns):
        raise DataError("has no sample design (columns query_inclusion, sample_seed): it was not written by this "
                        "select; start a new file with --output", file=out)
    if more and "use" in kept.columns and (kept["use"] == EVALUATION_USE).any():
        raise DataError("is an evaluation sample (select --evaluation): --more grows a training sample; draw a larger "
                        "evaluation sample with select --evaluation --queries N --output ANOTHER", file=out,
                        field="use")
    if more and len(kept):
        seed = int(kept["sample_seed"].iloc[0])  # as select wrote it: the seal says so
    votes = read_parquet(paths.votes)
    check_votes_table(votes, paths.votes)
    if split not in set(votes["split"]):
        raise DataError(f"no split {split!r}{did_you_mean(split, set(votes['split']))} in the votes; splits are "
                        f"{sorted(set(votes['split']))}", file=paths.votes, field="split")
    dataset = Dataset.load(paths.dataset)
    texts = dataset.queries.set_index("query_id")["text"].to_dict()
    earlier = list(dict.fromkeys(kept["query_id"])) if more else []
    pairs = select_pairs(votes, texts, split, queries, per_query, seed, cfg.fusion_options(), earlier)
    missing = sorted(set(earlier) - set(pairs["query_id"]))
    if missing:
        raise DataError(f"its query {missing[0]!r} is not in this pool's sample with seed {seed} (LFs, split or "
                        "collection changed since it was written?): start a new file with --output", file=out)
    rows = judging_rows(pairs, dataset, seed)
    if more:  # the earlier queries' rows and judgments as they are; their inclusion now that the sample is larger
        inclusion = rows.groupby("query_id")["query_inclusion"].first()
        kept = kept.assign(query_inclusion=kept["query_id"].map(inclusion))
        rows = pd.concat([kept, rows[~rows["query_id"].isin(set(earlier))]], ignore_index=True)
    with nullcontext() if more else output_file(out, {}, force):  # --more keeps the rows a person has
        write_judging_file(rows, out, seal=True)
    added = pairs[~pairs["query_id"].isin(set(earlier))]
    return out, added


def judging_rows(pairs: pd.DataFrame, dataset: Dataset, seed: int) -> pd.DataFrame:
    """The rows of a judging file for a sample's ``pairs`` (``query_id, passage_id``, the inclusion probabilities
    and stratum of :mod:`weakrank.judged.design`): with their texts and the sample's ``seed``."""
    texts = dataset.queries.set_index("query_id")["text"]
    passages = dataset.passages.set_index("passage_id")["text"]
    rows = pairs.assign(query=pairs["query_id"].map(texts), passage=pairs["passage_id"].map(passages),
                        sample_seed=seed)
    return rows[["query_id", "passage_id", "query", "passage", "query_inclusion", "passage_inclusion", "stratum",
                 "sample_seed"]]


@stage("select", check_evaluation_sample, eval_split="split", queries="queries", per_query="per_query")
def select_evaluation(cfg: PipelineConfig, queries: int = EVALUATION_QUERIES, per_query: int = 6, seed: int = 0,
                      split: str | None = None, output: str | Path | None = None, force: bool = False,
                      design: str = EVALUATION_DESIGNS[0], against: Sequence[str] = (),
                      more: bool = False) -> tuple[Path, pd.DataFrame]:
    """Draw a simple random sample of ``queries`` queries of the evaluated split (``split``, default ``[evaluate]
    split``) and up to ``per_query`` of their candidates, for a person to judge so that :func:`~weakrank.stages.evaluate.evaluate` can
    estimate each system's MAP without qrels (:func:`weakrank.judged.evaluation.evaluation_pairs`: inclusion
    probabilities beside each pair), into a judging file (default ``<config stem>.judgments/evaluation-judging.tsv``, through
    :func:`~weakrank.files.output_file`; one that holds judgments is kept). These judgments never train: ``aggregate``
    refuses judgments of the evaluated split; a last column, ``use``, says :data:`~weakrank.judged.judging_file.EVALUATION_USE`. Returns the file
    and its pairs. ``design``: ``pooled`` (default) judges the union of the top k of the systems compared, the first
    stage (as ``evaluate`` names it; else weakrank's BM25) and ``against`` (default the trained ranker's run;
    :mod:`weakrank.judged.pooling`: its exact top-k measures, no MAP); ``today`` the top of the
    candidates' lists and passages drawn from their rest (:mod:`weakrank.judged.evaluation`). With ``more`` a pooled
    sample grows by ``queries`` (its systems and seed read from the file; its rows and judgments kept, the next
    queries of the same random order added after them): what the confidence sequence that ``judge`` shows allows,
    and the t interval does not. Returns the pairs added. (Long: two designs and ``more`` over one read of an
    earlier file, one check of it and one write, which each branch needs in the same order.)"""
    from weakrank.judged.evaluation import evaluation_pairs

    paths = RunPaths(cfg.run_dir)
    split = split or cfg.evaluate.split
    out = Path(output) if output else judging_path(cfg.source, cfg.run_dir, EVALUATION_JUDGING)
    kept = grown_sample(out, paths) if more else None
    baseline = None
    if kept is not None:
        from weakrank.judged.pooling import systems_of

        seed, design = int(kept["sample_seed"].iloc[0]), EVALUATION_DESIGNS[0]
        baseline, *against = systems_of(kept)  # as it was drawn: an earlier weakrank's against weakrank's BM25
    elif out.exists() and judged(read_judging_file(out)).any():
        raise DataError("holds judgments already: judge it to the end and evaluate with it (weakrank evaluate CONFIG "
                        "--judgments FILE), or name another --output", file=out)
    votes = read_parquet(paths.votes)
    check_votes_table(votes, paths.votes)
    if split not in set(votes["split"]):
        raise DataError(f"no split {split!r}{did_you_mean(split, set(votes['split']))} in the votes; splits are "
                        f"{sorted(set(votes['split']))}", file=paths.votes, field="split")
    if design not in EVALUATION_DESIGNS:
        raise ConfigError(f"no evaluation design {design!r}; the designs are {', '.join(EVALUATION_DESIGNS)}")
    earlier = list(dict.fromkeys(kept["query_id"])) if kept is not None else []
    if design == EVALUATION_DESIGNS[0]:
        pairs = pooled_evaluation_pairs(cfg, paths, split, len(earlier) + queries, per_query, seed, against,
                                        baseline)
    else:
        pairs = evaluation_pairs(votes, split, queries, per_query, seed, cfg.fusion_options())
    rows = judging_rows(pairs, Dataset.load(paths.dataset), seed)
    rows = pd.concat([rows, pairs.drop(columns=[c for c in pairs.columns if c in rows.columns])], axis=1)
    rows = rows.assign(use=EVALUATION_USE)
    if kept is None:
        with output_file(out, {}, force):
            write_judging_file(rows, out, seal=True)
        return out, pairs
    drawn = list(dict.fromkeys(pairs["query_id"]))
    if drawn[:len(earlier)] != earlier or str(pairs["pool_depth"].iloc[0]) != kept["pool_depth"].iloc[0]:
        raise DataError(f"its queries are not the first of this run's pooled sample with seed {seed} and --per-query "
                        f"{per_query} (the systems' runs changed since?): start a new file with --output", file=out)
    fresh = pairs.groupby("query_id", sort=False).first()
    for column in (c for c in kept.columns if c.startswith("ranking_")):
        changed = kept[column] != kept["query_id"].map(fresh[column])
        if changed.any():
            raise DataError(f"was drawn from another ranking of {column.removeprefix('ranking_')!r} than its run "
                            f"holds now (query {kept['query_id'][changed].iloc[0]!r}: retrained, or reranked?): "
                            "grown, it would mix two rankings; draw a new sample with --output NEW.tsv and another "
                            "--seed", file=out, field=column)
    if len(drawn) == len(earlier):
        raise DataError(f"holds every query of split {split!r} where the systems' tops differ already", file=out)
    inclusion = rows.groupby("query_id")["query_inclusion"].first()
    kept = kept.assign(query_inclusion=kept["query_id"].map(inclusion))
    grown = pd.concat([kept, rows[~rows["query_id"].isin(set(earlier))]], ignore_index=True)
    write_judging_file(grown, out, seal=True)  # its seal checked when read (grown_sample), the grown design sealed
    return out, pairs[~pairs["query_id"].isin(set(earlier))]


def grown_sample(out: Path, paths: RunPaths) -> pd.DataFrame:
    """The judging file ``out`` that ``select --evaluation --more`` grows, read and checked as every judged file is
    (its seal, the dataset's texts): a pooled evaluation sample whose seed is the one select wrote (else a
    :class:`DataError` saying why)."""
    from weakrank.io import LINE
    from weakrank.judged.checks import check_texts
    from weakrank.judged.drawn import check_whole
    from weakrank.judged.judgments import read_judged_file
    from weakrank.judged.pooling import RANKING, is_pooled

    if not out.exists():
        raise DataError("no judging file to add queries to: run select --evaluation without --more first", file=out)
    kept = read_judged_file(out)
    check_texts(kept, paths.dataset, out)
    if not is_pooled(kept) or not {"sample_seed", "planned"} <= set(kept.columns):
        raise DataError("is not a pooled evaluation sample (columns pool_depth, rank_<system>, planned, sample_seed): "
                        "only that design grows; start a new file with --output", file=out)
    if not {"draw", "query_rows"} <= set(kept.columns) or not any(c.startswith(RANKING) for c in kept.columns):
        raise DataError("a pooled sample drawn by an earlier weakrank, which did not record the rankings it was drawn "
                        "from: it cannot grow; start a new file with --output", file=out, line=1)
    check_whole(kept, out)
    kept = kept.drop(columns=LINE)
    if not kept["sample_seed"].str.fullmatch("[0-9]+").all() or kept["sample_seed"].nunique() > 1:
        raise DataError("sample_seed differs between rows or is not a whole number: it was changed by hand; leave it "
                        "as select wrote it, or start a new file with --output", file=out, field="sample_seed")
    return kept


def pooled_evaluation_pairs(cfg: PipelineConfig, paths: RunPaths, split: str, queries: int, per_query: int,
                            seed: int, against: Sequence[str], baseline: str | None = None) -> pd.DataFrame:
    """The pooled design's sample of ``split`` (:func:`weakrank.judged.pooling.pooled_pairs`): the systems named in
    ``against`` (what ``evaluate`` lists: the LFs, the fusions, the labels, the trained ranker), by default the
    trained ranker's run, against ``baseline``, by default the first stage as ``evaluate`` names it (the candidates'
    own order where the dataset ranks them: :func:`~weakrank.loaders.first_stage`; else weakrank's BM25)."""
    from weakrank.judged.evaluation import pooled_runs
    from weakrank.judged.pooling import pooled_pairs, row_name
    from weakrank.loaders import first_stage
    from weakrank.stages.stage import train_config
    from weakrank.stages.systems import evaluated_systems

    trained = Path(train_config(cfg).output).name
    first = first_stage(cfg.dataset.loader, cfg.dataset.path, split, **cfg.dataset.options)
    systems = pooled_runs(evaluated_systems(paths, split, trained, first)[0])  # judging-file columns
    baseline = baseline or next(iter(systems))
    compared = list(against) or [trained]
    for name in [baseline, *compared]:
        if name not in systems:
            hint = (f"no run of the trained ranker ({paths.runs / f'{trained}.trec'}): train and rerank first, or "
                    "name the systems to compare with --against" if name == trained else
                    f"no system {name!r}{did_you_mean(name, set(systems))}; the systems are {sorted(systems)}")
            raise DataError(hint, file=paths.runs if name == trained else paths.votes)
    pairs = pooled_pairs(systems, compared, queries, per_query, seed, baseline)
    if pairs.empty:
        raise DataError(f"{', '.join(compared)} and {row_name(baseline)} rank every query's top passages alike on "
                        f"split {split!r}: no judgment can tell them apart", file=paths.votes)
    return pairs
