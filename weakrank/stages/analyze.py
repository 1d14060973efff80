"""The analyze stage: the LFs summarised, the fusion label model's views, and with gold each LF's and label model's
quality, written under ``analysis/``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from weakrank.baselines import fusion_runs
from weakrank.config import PipelineConfig
from weakrank.errors import DataError, did_you_mean
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet, write_text
from weakrank.label_models import MODELS, fit_predict, usable
from weakrank.label_models.labels_file import read_labels_info
from weakrank.labeling import check_votes_table, lf_names
from weakrank.paths import RunPaths
from weakrank.stages.stage import stage
from weakrank.validation import check_analyze
from weakrank.votes_file import read_votes

if TYPE_CHECKING:
    from weakrank.label_models.fusion import ScoreFusionModel


@stage("analyze", check_analyze, analyze_splits="splits")
def analyze(cfg: PipelineConfig, splits: list[str] | None = None,
            fusion: ScoreFusionModel | None = None) -> dict[str, pd.DataFrame]:
    """LF summary, the fusion label model's ``views`` (:func:`~weakrank.analysis.fusion_views`; no gold read: its
    ``attrs["advice"]`` says when judging a few queries would tell them apart, unless the labels already came
    from judged queries; ``attrs["overlooked"]``, when an LF weighted near zero disagrees with the fused ranking:
    :func:`~weakrank.fusion_checks.overlooked`) and, with gold, the quality table (each LF, every label model, the configured
    aggregate), also per query (``quality_per_query``: for paired tests between scorers). Tables carry their
    ``attrs["legend"]``. ``fusion``: the fusion label model fitted on these votes without judgments (``aggregate``'s
    ``attrs["fusion"]``, handed in by :func:`weakrank.pipeline.run`), else fitted here, once; the LFs' declarations
    are read from the votes. (Long: it writes each of the analysis folder's files in turn, beside the table it
    came from.)"""
    from weakrank.analysis import (  # sklearn: imported when it runs, so `run` checks the config without it
        LF_WEIGHTS_LEGEND,
        QUALITY_LEGEND,
        VIEWS_LEGEND,
        fusion_views,
        lf_scorers,
        lf_summary,
        lf_weights,
        quality_table,
        query_quality,
    )
    from weakrank.fusion_checks import overlooked, undecided_views
    from weakrank.plots import quality_bars

    paths = RunPaths(cfg.run_dir)
    votes, info = read_votes(paths.votes)
    check_votes_table(votes, paths.votes)
    if fusion is None:
        fusion = cfg.label_model("fusion", cfg.lf_priors(info)).fit_table(votes)
    splits = splits or cfg.analyze.splits
    scored = votes.copy()
    scorers = lf_scorers(votes)
    for name in MODELS:
        if usable(name, len(lf_names(votes))):
            scored[f"p_{name}"] = (fusion.predict_table(votes) if name == "fusion"
                                   else fit_predict(votes, cfg.label_model(name)))
            scorers[name] = f"p_{name}"
    for name, run in fusion_runs(votes).items():
        scored[f"p_{name}"] = run["score"].to_numpy()
        scorers[name] = f"p_{name}"
    info = read_labels_info(paths.labels) if paths.labels.exists() else None
    if info is not None:
        scored["p_labels"] = read_parquet(paths.labels, columns=["p_relevant"])["p_relevant"].to_numpy()
        scorers[f"labels.parquet ({info.model})"] = "p_labels"
    if splits:
        unknown = sorted(set(splits) - set(votes["split"]))
        if unknown:
            raise DataError(f"no split {unknown[0]!r}{did_you_mean(unknown[0], set(votes['split']))} in the votes; "
                            f"splits are {sorted(set(votes['split']))}", file=paths.votes, field="split")
        scored = scored[scored["split"].isin(splits)]
    summary = lf_summary(scored)
    out = paths.analysis
    write_text(summary.to_csv(), out / "lf_summary.csv")
    views = fusion_views(scored, fusion)
    advice = None if info is not None and info.taught else undecided_views(views)  # judging would tell no more
    views.attrs.update(legend=VIEWS_LEGEND, advice=advice, overlooked=overlooked(scored, fusion))
    write_text(views.to_csv(), out / "views.csv")
    write_text(f"# The label model's views — {cfg.name} ({views.attrs['lists']} lists)\n\n{to_markdown(views)}\n\n"
               f"{VIEWS_LEGEND}\n" + (f"\n{views.attrs['advice']}.\n" if views.attrs["advice"] else ""), out / "views.md")
    tables = {"lf_summary": summary, "views": views}
    weights = lf_weights(fusion.fitted(), lf_names(votes))
    if len(weights):
        weights.attrs["legend"] = LF_WEIGHTS_LEGEND
        write_text(weights.to_csv(), out / "lf_weights.csv")
        write_text(f"# What the label model made of each LF — {cfg.name}\n\n{to_markdown(weights)}\n\n"
                   f"{LF_WEIGHTS_LEGEND}\n", out / "lf_weights.md")
        tables["lf_weights"] = weights
    if scored["gold"].notna().any():
        per_query = query_quality(scored, scorers)
        quality = quality_table(per_query)
        quality.attrs["legend"] = QUALITY_LEGEND
        tables.update(quality=quality, quality_per_query=per_query)
        where = ", ".join(splits) if splits else "all splits"
        write_text(quality.to_csv(), out / "quality.csv")
        write_text(per_query.to_csv(index=False), out / "quality_per_query.csv")
        write_text(
            f"# LF quality — {cfg.name} ({where}, {quality.attrs['queries']} queries)\n\n"
            + to_markdown(quality)
            + f"\n\n{QUALITY_LEGEND}\n",
            out / "quality.md",
        )
        quality_bars(quality, out / "quality.png", f"LF and label-model quality — {cfg.name} ({where})")
    return tables
