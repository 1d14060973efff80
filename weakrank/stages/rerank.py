"""The rerank stage: a split's candidates scored with a trained model (the shipped ranker, or the student alone)
into a TREC run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.io import write_run
from weakrank.paths import RunPaths
from weakrank.run_models import check_model_apart, model_dir
from weakrank.similarity import kept_encodings
from weakrank.stages.stage import stage
from weakrank.validation import check_scored

if TYPE_CHECKING:
    from weakrank.training.config import TrainConfig


@stage("rerank", check_scored, reads_train=True, eval_split="split")
def rerank(cfg: PipelineConfig, tc: TrainConfig, model: str | Path | None = None, split: str | None = None,
           name: str | None = None, backend: str = "torch", precision: str = "fp32", trust_code: bool = False) -> Path:
    """Score ``split``'s candidates (default: ``[evaluate] split``) with ``model`` (default: the one ``[train]``,
    ``tc``, trained) into ``runs/<name>.trec``; ``backend`` and ``precision``: where its student runs (PyTorch or
    ONNX Runtime) and at what precision (fp32 or int8); ``trust_code``: run the LF files another ``model`` carries (:func:`~weakrank.ranker.load_ranker`).
    ``[train] fuse_lfs`` says whether the shipped ranker (the student with its teacher, :mod:`~weakrank.ranker.fused`)
    or the student alone scores. The model this run directory trained runs its LF files (copies of those its
    config names). A model taught by judgments of ``split`` is refused (:func:`~weakrank.run_models.check_model_apart`)."""
    trust_code = trust_code or model is None
    model = model or model_dir(cfg, tc.output)
    check_model_apart(model, split or cfg.evaluate.split)
    tag = name or Path(model).parent.name
    scored = score_split(cfg, model, split or cfg.evaluate.split, student_only=not tc.fuse_lfs, backend=backend,
                         precision=precision, trust_code=trust_code)
    return write_run(scored, RunPaths(cfg.run_dir).runs / f"{tag}.trec", tag)


def score_split(cfg: PipelineConfig, model: str | Path, split: str = "test", query_ids: set[str] | None = None,
                batch_size: int = 64, student_only: bool = True, backend: str = "torch", precision: str = "fp32",
                trust_code: bool = False) -> pd.DataFrame:
    """``query_id, passage_id, score`` of ``split``'s candidates (of ``query_ids`` only, when given) under a model
    (the student alone unless ``student_only`` is False). The teacher's encoder LFs read the encodings the label
    stage kept (:func:`~weakrank.similarity.kept_encodings`): a text it encoded is not encoded again."""
    from weakrank.ranker.rerank import loaded_ranker, score_pairs

    paths = RunPaths(cfg.run_dir)
    pairs = Dataset.load(paths.dataset).subset(splits=[split]).pairs()
    if query_ids is not None:
        pairs = pairs[pairs["query_id"].isin(query_ids)]
    with kept_encodings(paths.encodings):
        return score_pairs(loaded_ranker(model, student_only, backend, trust_code, precision), pairs, batch_size)
