"""A fresh ranker of either architecture, built from a training config (a saved one loads with
:func:`weakrank.ranker.load_ranker`)."""

from __future__ import annotations

import torch

from weakrank.errors import ConfigError
from weakrank.ranker.bi_encoder import BiEncoder
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.training.config import TrainConfig

Ranker = CrossEncoderRanker | BiEncoder


def new_ranker(cfg: TrainConfig) -> Ranker:
    """A fresh ranker of ``cfg.architecture`` on ``cfg.encoder``, its word embeddings frozen with
    ``freeze_embeddings`` (seed first: the cross-encoder's head starts from torch's RNG). ``max_length = "auto"``
    must have been resolved (:func:`weakrank.training.lengths.resolve_max_length`)."""
    if not isinstance(cfg.max_length, int):
        raise ValueError(f"max_length {cfg.max_length!r} is not resolved to a number of tokens")
    if cfg.architecture == "bi-encoder":
        model = BiEncoder.from_encoder(cfg.encoder, max_length=cfg.max_length, scale=cfg.scale)
    else:
        model = CrossEncoderRanker.from_encoder(cfg.encoder, max_length=cfg.max_length, pooling=cfg.pooling)
    if cfg.freeze_embeddings:
        model.encoder.get_input_embeddings().weight.requires_grad_(False)
    if cfg.freeze_layers:
        freeze_lower(model.encoder, cfg.freeze_layers)
    return model


def freeze_lower(encoder: torch.nn.Module, layers: int) -> None:
    """Fix the embeddings and the first ``layers`` transformer layers of a Hugging Face encoder (BERT-like:
    ``embeddings`` and ``encoder.layer``); the backward pass then stops above them."""
    blocks = getattr(getattr(encoder, "encoder", None), "layer", None)
    embeddings = getattr(encoder, "embeddings", None)
    if blocks is None or embeddings is None:
        raise ConfigError(f"[train] freeze_layers needs a BERT-like encoder (embeddings, encoder.layer); "
                          f"{type(encoder).__name__} has none")
    if layers > len(blocks):
        raise ConfigError(f"[train] freeze_layers = {layers}, but the encoder has {len(blocks)} layers")
    for module in (embeddings, *blocks[:layers]):
        module.requires_grad_(False)
