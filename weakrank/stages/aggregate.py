"""The aggregate stage: the label model fitted on the votes (in judged mode, the judged pairs update the quality priors
of the fusion model's LFs: :mod:`weakrank.judged.prior_update`), its labels written to ``labels.parquet``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.errors import ConfigError, DataError
from weakrank.io import read_parquet
from weakrank.judged.checks import check_judgments
from weakrank.judged.judgments import Judgments, align, check_texts, gold_judgments, with_judgments
from weakrank.judged.selector import PriorSelector
from weakrank.label_models import fit_labels
from weakrank.label_models.labels_file import LabelsInfo, write_labels
from weakrank.labeling import check_votes_table, lf_names
from weakrank.paths import RunPaths
from weakrank.stages.stage import stage
from weakrank.validation import check_aggregate


@stage("aggregate", check_aggregate, label_model="model", judgments="judgments", eval_split="eval_split")
def aggregate(cfg: PipelineConfig, model: str | None = None, judgments: str | Path | None = None,
              eval_split: str | None = None, parsed: Judgments | None = None) -> pd.DataFrame:
    """Fit the label model on all votes and write ``labels.parquet``. No gold is read, but in judged mode that of the
    judged queries: those of ``judgments`` (default ``[aggregate] judgments``: a judging file or TREC qrels), or
    the first ``[aggregate] gold_queries`` of ``gold_split``. Their judged pairs update the fusion model's LF
    quality priors (:class:`~weakrank.judged.selector.PriorSelector`), their judged pairs' labels become their
    judgments (``judged``), and the file's metadata keeps their ids (training picks its checkpoint by their
    judged estimate when they are in dev). Judgments are read once, by the stage's check
    (:func:`~weakrank.validation.check_aggregate`, which hands them in as ``parsed``), and checked against the
    dataset's texts and the votes (:func:`~weakrank.judged.checks.check_judgments`: no evaluation sample, none of
    ``eval_split``, default ``[evaluate] split``); the labels record the splits their judged queries are of
    (``judged_splits``); ``attrs["judgments"]`` counts what was used, ``attrs["overlooked"]`` says when an LF
    weighted near zero disagrees with the fused ranking (:func:`~weakrank.judged.advice.overlooked`)."""
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    check_votes_table(votes, paths.votes)
    name = model or cfg.aggregate.model
    label_model = cfg.label_model(name)
    judgments = judgments or (cfg.aggregate.judgments if name == cfg.aggregate.model else None)
    if judgments and not label_model.judgeable:
        raise ConfigError(f"judgments choose how the fusion label model combines the LFs; label model {name!r} "
                          "reads none")
    found = parsed if judgments else None
    if found is not None:
        check_texts(found, paths.dataset)
    note = check_judgments(found, votes, eval_split or cfg.evaluate.split) if found is not None else None
    if found is not None:
        judged = align(votes, found)
        selector = PriorSelector(label_model).fit(votes, judged)
        labels, state = with_judgments(selector.model_.labels_table(votes), judged), selector.state_
        queries = list(dict.fromkeys(votes.loc[judged.gold > 0, "query_id"]))
        splits = sorted(set(votes.loc[np.isfinite(judged.gold), "split"].astype(str)))
    elif cfg.aggregate.gold_queries and name == cfg.aggregate.model:
        gold = gold_judgments(votes, cfg.aggregate.gold_split, cfg.aggregate.gold_queries)
        queries = gold.queries
        if len(queries) < cfg.aggregate.gold_queries:
            raise DataError(f"[aggregate] gold_queries = {cfg.aggregate.gold_queries}, but split "
                            f"{cfg.aggregate.gold_split!r} has {len(queries)} queries judged with a relevant and a "
                            "non-relevant candidate", file=paths.votes, field="gold")
        selector = PriorSelector(label_model).fit(votes, align(votes, gold))
        labels, state = selector.model_.labels_table(votes), selector.state_
        splits = [cfg.aggregate.gold_split]
    else:
        queries, splits, labels = [], [], fit_labels(votes, label_model)
        state = label_model.state()
    write_labels(labels, paths.labels, LabelsInfo(name, lf_names(votes), state, queries,
                                                  Path(judgments).name if judgments else None, splits))
    from weakrank.judged.advice import judged_estimates, overlooked  # sklearn: imported when it runs

    fusion = cfg.label_model("fusion").fit_table(votes)
    labels.attrs.update(judgments=note, overlooked=overlooked(votes, fusion, judged_estimates(paths.labels)))
    return labels
