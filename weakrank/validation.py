"""What the stages read of a config, checked before they write anything, so that a wrong name stops a stage (from
Python as from the command line) before it takes the run-dir lock: beyond what
:func:`~weakrank.config.load_config` checks (the dataset loader and its options, the LFs and their options), the
dataset's files when ingest will read them (:func:`check_inputs`, once per command), and the pieces of each stage's
own check, which its declaration names (:func:`~weakrank.stages.stage.stage`) and which lives beside the stage and
returns what it parsed: the label model's LF count, every split a stage reads, each with the closest known name, and
that no gold of the evaluated split moves the LFs' priors or chose the checkpoint. A check is given the command's
``plan`` (the stages it runs: what an earlier one will write is not checked as if written); ``pipeline.run`` checks
each of its stages once, before the first, and hands each what its check parsed."""

from __future__ import annotations

import inspect
from collections.abc import Collection, Iterable

from weakrank.config import PipelineConfig
from weakrank.errors import ConfigError, did_you_mean, located
from weakrank.inputs import check_dataset_files
from weakrank.paths import RunPaths


def check_lf_count(cfg: PipelineConfig, label_model: str | None = None) -> None:
    """The label model (``label_model``, else ``[aggregate] model``) can run on as many LFs as ``[label] lfs`` names."""
    from weakrank.label_models import MODELS

    name = label_model or cfg.aggregate.model
    needs = MODELS[name].min_lfs
    if len(cfg.label.lfs) < needs:
        where = "--label-model" if label_model else "[aggregate] model"
        raise ConfigError(f"{located(cfg.source, where)} {name!r} needs at least {needs} LFs; [label] lfs has "
                          f"{len(cfg.label.lfs)}")


def check_gold_split(cfg: PipelineConfig, eval_split: str | None = None) -> None:
    """``[aggregate] gold_queries`` come from a split other than the one evaluated (``eval_split``, else
    ``[evaluate] split``): its gold would move the LFs' priors it then scores."""
    evaluated = eval_split or cfg.evaluate.split
    if cfg.aggregate.gold_queries and cfg.aggregate.gold_split == evaluated:
        where = "--eval-split" if eval_split else "[evaluate] split"
        raise ConfigError(f"{located(cfg.source, '[aggregate] gold_split')} {evaluated!r} is the split this run "
                          f"evaluates ({where}): its gold would move the LFs' priors and then be scored; "
                          "take gold_queries of another split")


def dataset_splits(cfg: PipelineConfig, ingested: bool = True) -> set[str]:
    """The splits the stages can read: those of the ingested dataset when ``ingested`` and it exists, else those
    the loader makes as configured (its ``splits``/``split`` option or their default, and BEIR's ``unlabelled``)."""
    queries = RunPaths(cfg.run_dir).dataset / "queries.parquet"
    if ingested and queries.exists():
        import pyarrow.parquet as pq

        return set(pq.read_table(queries, columns=["split"]).column("split").to_pylist())
    from weakrank.loaders import LOADERS

    options = cfg.dataset.options
    defaults = {p.name: p.default for p in inspect.signature(LOADERS[cfg.dataset.loader]).parameters.values()}
    splits = options.get("splits", defaults.get("splits"))
    if splits is None:
        splits = [options.get("split", defaults.get("split"))]
    named = set(splits) | ({options["unlabelled"]} if options.get("unlabelled") else set())
    return {str(s) for s in named if s}


def qrels_splits(cfg: PipelineConfig, ingested: bool = True) -> set[str]:
    """The splits with qrels, which ``evaluate`` can score: those of the ingested dataset with an assessed candidate
    when ``ingested`` and it exists, else those the config gives qrels (the TREC loader's splits with a ``qrels``
    file, the BEIR loader's ``splits``; every split of the other loaders)."""
    candidates = RunPaths(cfg.run_dir).candidates
    if ingested and candidates.exists():
        import pyarrow.parquet as pq

        table = pq.read_table(candidates, columns=["split", "gold"]).to_pandas()
        return set(table.loc[table["gold"].notna(), "split"].astype(str))
    options = cfg.dataset.options
    if cfg.dataset.loader == "trec" and isinstance(options.get("splits"), dict):
        return {str(name) for name, files in options["splits"].items() if isinstance(files, dict) and files.get("qrels")}
    if cfg.dataset.loader == "trec":
        qrels = options.get("qrels", "qrels.txt")
        return dataset_splits(cfg, ingested=False) if qrels and (cfg.dataset.path / qrels).exists() else set()
    return dataset_splits(cfg, ingested=False) - ({options["unlabelled"]} if options.get("unlabelled") else set())


def check_labels_apart(cfg: PipelineConfig, eval_split: str | None = None) -> None:
    """The run directory's labels (where they exist) were not made from judgments of the split that ``rerank`` or
    ``evaluate`` (alone or after ``train`` in ``run``) would score (``eval_split``, else ``[evaluate] split``): those
    judgments moved the LFs' priors and chose the checkpoint (:func:`~weakrank.apart.check_apart`)."""
    from weakrank.apart import check_apart
    from weakrank.label_models.labels_file import TAUGHT_KEY, TAUGHT_WHAT, labels_taught_splits

    labels = RunPaths(cfg.run_dir).labels
    if labels.exists():
        split = eval_split or cfg.evaluate.split
        check_apart(split, labels_taught_splits(labels), file=labels, field=TAUGHT_KEY, what=TAUGHT_WHAT)


def check_splits(cfg: PipelineConfig, uses: Iterable[tuple[str, str]], known: set[str]) -> None:
    """Each ``(where, split)`` of ``uses`` names a split of ``known``."""
    for where, split in uses:
        if split not in known:
            raise ConfigError(f"{located(cfg.source, where)} unknown split {split!r}{did_you_mean(split, known)}; "
                              f"the dataset's splits are {sorted(known)}")


def check_inputs(cfg: PipelineConfig, plan: Collection[str]) -> None:
    """The dataset's files, when ``plan`` ingests or nothing is ingested yet: once per command, before any stage's
    own check."""
    if "ingest" in plan or not RunPaths(cfg.run_dir).dataset.exists():
        check_dataset_files(cfg.dataset.loader, cfg.dataset.path, cfg.dataset.options, cfg.source)


def known_splits(cfg: PipelineConfig, plan: Collection[str], uses: Iterable[tuple[str, str]]) -> None:
    """:func:`check_splits` of ``uses`` against the dataset's splits (as the loader will make them when ``plan``
    ingests)."""
    uses = list(uses)
    if uses:
        check_splits(cfg, uses, dataset_splits(cfg, ingested="ingest" not in plan))


def check_analyze(cfg: PipelineConfig, plan: Collection[str], analyze_splits: list[str] | None = None) -> None:
    """``analyze``'s check: the splits it reads (``analyze_splits``, else ``[analyze] splits``)."""
    where = "--split" if analyze_splits else "[analyze] splits"
    known_splits(cfg, plan, [(where, s) for s in analyze_splits or cfg.analyze.splits or []])


def check_scored(cfg: PipelineConfig, plan: Collection[str], eval_split: str | None = None) -> None:
    """The check of a stage that scores a split (``eval_split``, else ``[evaluate] split``: ``rerank``,
    ``evaluate``): the split is known and, unless ``plan`` aggregates anew, the labels were not made from its
    judgments (:func:`check_labels_apart`)."""
    if "aggregate" not in plan:
        check_labels_apart(cfg, eval_split)
    known_splits(cfg, plan, [("--eval-split" if eval_split else "[evaluate] split", eval_split or cfg.evaluate.split)])


def check_train(cfg: PipelineConfig, plan: Collection[str], train_split: str | None = None) -> None:
    """``train``'s check: its train split (``[train] train_split``) is known."""
    if train_split:
        known_splits(cfg, plan, [("[train] train_split", train_split)])
