"""The two ranker architectures behind one door: build a fresh one from a config, load a saved one."""

from __future__ import annotations

from pathlib import Path

from weakrank.training.bi_encoder import CONFIG_FILE as BI_ENCODER_FILE
from weakrank.training.bi_encoder import BiEncoder
from weakrank.training.config import TrainConfig
from weakrank.training.model import CONFIG_FILE as BERT_PR_FILE
from weakrank.training.model import BertPR

Ranker = BertPR | BiEncoder


def new_ranker(cfg: TrainConfig) -> Ranker:
    """A fresh ranker of ``cfg.architecture`` on ``cfg.encoder``, its word embeddings frozen with
    ``freeze_embeddings`` (seed first: the cross-encoder's head starts from torch's RNG). ``max_length = "auto"``
    must have been resolved (:func:`weakrank.training.lengths.resolve_max_length`)."""
    if not isinstance(cfg.max_length, int):
        raise ValueError(f"max_length {cfg.max_length!r} is not resolved to a number of tokens")
    if cfg.architecture == "bi-encoder":
        model = BiEncoder.from_encoder(cfg.encoder, max_length=cfg.max_length, scale=cfg.scale)
    else:
        model = BertPR.from_encoder(cfg.encoder, max_length=cfg.max_length, pooling=cfg.pooling)
    if cfg.freeze_embeddings:
        model.encoder.get_input_embeddings().weight.requires_grad_(False)
    return model


def load_ranker(directory: str | Path, device: str | None = None) -> Ranker:
    """A ranker saved by weakrank (cross-encoder or bi-encoder, told apart by its config file)."""
    directory = Path(directory)
    if (directory / BI_ENCODER_FILE).exists():
        return BiEncoder.load(directory, device)
    if (directory / BERT_PR_FILE).exists():
        return BertPR.load(directory, device)
    raise FileNotFoundError(f"{directory} holds no weakrank ranker ({BERT_PR_FILE} or {BI_ENCODER_FILE} missing)")
