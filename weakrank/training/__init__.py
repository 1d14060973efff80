"""Ranker training on pseudo-labels: the cross-encoder and bi-encoder students, samplers, objectives
(losses/targets), the trainer, reranking (the stages that train and rerank from a run directory:
:mod:`weakrank.pipeline`).

The names below are imported on first use: ``weakrank.training.config`` (what the CLI's flags read) loads
without torch."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from weakrank.io import write_run
    from weakrank.ranker.bi_encoder import BiEncoder
    from weakrank.ranker.cross_encoder import CrossEncoderRanker
    from weakrank.training.build import trainer_from_config
    from weakrank.training.callbacks import TrainerCallback
    from weakrank.training.config import TrainConfig
    from weakrank.training.trainer import Trainer, prepare_run

__all__ = [
    "BiEncoder", "CrossEncoderRanker", "TrainConfig", "Trainer", "TrainerCallback", "prepare_run",
    "trainer_from_config", "write_run",
]
_HOMES = {
    "TrainerCallback": "weakrank.training.callbacks", "BiEncoder": "weakrank.ranker.bi_encoder",
    "TrainConfig": "weakrank.training.config",
    "CrossEncoderRanker": "weakrank.ranker.cross_encoder",
    "trainer_from_config": "weakrank.training.build", "write_run": "weakrank.io",
    "Trainer": "weakrank.training.trainer", "prepare_run": "weakrank.training.trainer",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'weakrank.training' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
