"""The aggregate stage: the label model fitted on the votes (in judged mode, the judged pairs update the quality priors
of the fusion model's LFs: :mod:`weakrank.judged.prior_update`), its labels written to ``labels.parquet``."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.errors import ConfigError, located
from weakrank.judged.judgments import Judgments
from weakrank.judged.teach import judged_labels
from weakrank.label_models import MODELS, fit_labels
from weakrank.label_models.labels_file import LabelsInfo, write_labels
from weakrank.labeling import check_votes_lfs, check_votes_table, lf_names
from weakrank.paths import RunPaths
from weakrank.sections import check_label_model
from weakrank.stages.stage import stage
from weakrank.validation import check_gold_split, check_lf_count
from weakrank.votes_file import read_votes


def check_judgments_file(cfg: PipelineConfig, path: str | Path, where: str, eval_split: str | None = None) -> Judgments:
    """The judgments ``aggregate`` will read (``where``: the flag or key that names them), read once and checked as
    far as the run directory allows before anything runs (:func:`~weakrank.judged.checks.judgments_to_teach`: no
    evaluation sample, the ingested dataset's texts, no query of the evaluated split, ``eval_split``, else
    ``[evaluate] split``), and returned."""
    from weakrank.judged.checks import judgments_to_teach

    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{located(cfg.source, where)} {path}: file not found")
    return judgments_to_teach(path, RunPaths(cfg.run_dir).dataset, eval_split or cfg.evaluate.split)


def check_aggregate(cfg: PipelineConfig, plan: Collection[str], label_model: str | None = None,
                    judgments: str | Path | None = None, eval_split: str | None = None) -> Judgments | None:
    """``aggregate``'s check: the label model (``label_model``, else ``[aggregate] model``) and its LF count, the
    gold split, and the judgments it reads (``judgments``, else ``[aggregate] judgments``; read once here and
    returned: :func:`check_judgments_file`), None where it reads none."""
    if label_model is not None:
        check_label_model(label_model, located(cfg.source, "--label-model:"))
    check_lf_count(cfg, label_model)
    check_gold_split(cfg, eval_split)
    given = judgments or (cfg.aggregate.judgments if label_model in (None, cfg.aggregate.model) else None)
    if given and MODELS[label_model or cfg.aggregate.model].takes_priors:  # another model: aggregate says it reads none
        return check_judgments_file(cfg, given, "--judgments" if judgments else "[aggregate] judgments", eval_split)
    return None


@stage("aggregate", check_aggregate, label_model="model", judgments="judgments", eval_split="eval_split")
def aggregate(cfg: PipelineConfig, model: str | None = None, judgments: str | Path | None = None,
              eval_split: str | None = None, parsed: Judgments | None = None) -> pd.DataFrame:
    """Fit the label model on all votes and write ``labels.parquet``. No gold is read, but in judged mode that of the
    judged queries: those of ``judgments`` (default ``[aggregate] judgments``: a judging file or TREC qrels), or
    the first ``[aggregate] gold_queries`` of ``gold_split``: what they teach is judged mode's
    (:func:`~weakrank.judged.teach.judged_labels`: the LFs' priors updated, the judged pairs' labels their judgments,
    checked against the dataset's texts and the votes, none of ``eval_split``, default ``[evaluate] split``), and the
    file's metadata keeps their ids and splits (training picks its checkpoint by their judged estimate when they are
    in dev). Judgments are read once, by the stage's check (:func:`check_aggregate`, which hands
    them in as ``parsed``); ``attrs["judgments"]`` counts what was used, ``attrs["overlooked"]`` says when an LF
    weighted near zero disagrees with the fused ranking (:func:`~weakrank.fusion_checks.overlooked`),
    ``attrs["state"]`` is the label model's fitted state as written (nothing reads the file back) and
    ``attrs["fusion"]`` the fusion label model fitted on the votes without judgments (the label model itself where it
    is that model; what ``analyze`` reads in the same run). The LFs' declarations are read from the votes (no LF is
    built: :meth:`~weakrank.config.PipelineConfig.lf_priors`)."""
    paths = RunPaths(cfg.run_dir)
    votes, info = read_votes(paths.votes)
    check_votes_table(votes, paths.votes)
    priors = cfg.lf_priors(info)
    check_votes_lfs(votes, list(priors), paths.votes)
    name = model or cfg.aggregate.model
    label_model = cfg.label_model(name, priors)
    judgments = judgments or (cfg.aggregate.judgments if name == cfg.aggregate.model else None)
    if judgments and not label_model.takes_priors:
        raise ConfigError(f"judgments move the fusion label model's LF priors; label model {name!r} "
                          "reads none")
    taught = judged_labels(votes, label_model, parsed if judgments else None, paths.dataset,
                           eval_split or cfg.evaluate.split, cfg.aggregate.gold_split,
                           cfg.aggregate.gold_queries if name == cfg.aggregate.model else 0, paths.votes)
    if taught is not None:
        labels, state, queries, splits, note = taught.labels, taught.state, taught.queries, taught.splits, taught.note
    else:
        labels, state, queries, splits, note = fit_labels(votes, label_model), label_model.state(), [], [], None
    write_labels(labels, paths.labels, LabelsInfo(name, lf_names(votes), state, queries,
                                                  Path(judgments).name if judgments else None, splits))
    from weakrank.fusion_checks import overlooked  # sklearn: imported when it runs

    if taught is not None:  # the fusion model fitted without judgments: the judged fit's first, not fitted again
        fusion = taught.unjudged
    else:
        fusion = label_model if name == "fusion" else cfg.label_model("fusion", priors).fit_table(votes)
    labels.attrs.update(judgments=note, overlooked=overlooked(votes, fusion), state=state,
                        lfs=lf_names(votes), fusion=fusion)
    return labels
