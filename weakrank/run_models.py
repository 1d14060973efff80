"""The models a run trained: where its shipped one is (:func:`model_dir`), and the check that one may score a split
(:func:`check_model_apart`), for the stages that read them."""

from __future__ import annotations

from pathlib import Path

from weakrank.config import PipelineConfig
from weakrank.errors import DataError
from weakrank.paths import RunPaths


def model_dir(cfg: PipelineConfig, output: str = "model") -> Path:
    """The best checkpoint of a training run if early stopping kept one, else its final model."""
    root = RunPaths(cfg.run_dir).models(output)
    for name in ("best", "final"):
        if (root / name).exists():
            return root / name
    raise DataError(f"no trained model under {root} (run `weakrank train` first)", file=root)


def check_model_apart(model: str | Path, split: str) -> None:
    """Model directory ``model`` was not taught, nor its checkpoint chosen, by relevance labels of ``split``, the
    split it would score (:func:`~weakrank.apart.check_apart`; its manifest says which:
    :func:`weakrank.stages.train.taught_splits`)."""
    from weakrank.apart import check_apart
    from weakrank.ranker.directory import model_manifest
    from weakrank.ranker.manifest import MANIFEST_FILE, TAUGHT_KEY, TAUGHT_WHAT

    check_apart(split, model_manifest(model).taught_splits, file=Path(model) / MANIFEST_FILE, field=TAUGHT_KEY,
                what=TAUGHT_WHAT)
