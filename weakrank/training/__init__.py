"""Ranker training on pseudo-labels: BERT-PR, samplers, losses/targets, the trainer, reranking."""

from weakrank.callbacks import TrainerCallback
from weakrank.training.bi_encoder import BiEncoder
from weakrank.training.config import TrainConfig
from weakrank.training.model import BertPR
from weakrank.training.run import model_dir, rerank, train, train_config, write_run

__all__ = [
    "BertPR", "BiEncoder", "TrainConfig", "TrainerCallback", "model_dir", "rerank", "train", "train_config", "write_run"
]
