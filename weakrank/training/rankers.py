"""A fresh ranker of either architecture, built from a training config (a saved one loads with
:func:`weakrank.ranker.load_ranker`)."""

from __future__ import annotations

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
    return model
