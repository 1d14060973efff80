"""Ranker training on pseudo-labels: BERT-PR, samplers, objectives (losses/targets), the trainer, reranking."""

from weakrank.callbacks import TrainerCallback
from weakrank.training.bi_encoder import BiEncoder
from weakrank.training.config import TrainConfig
from weakrank.training.model import BertPR
from weakrank.training.run import model_dir, rerank, train, train_config, trainer_from_config, write_run
from weakrank.training.trainer import Trainer, prepare_run

__all__ = [
    "BertPR", "BiEncoder", "TrainConfig", "Trainer", "TrainerCallback", "model_dir", "prepare_run", "rerank", "train",
    "train_config", "trainer_from_config", "write_run",
]
