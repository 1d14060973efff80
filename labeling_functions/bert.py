"""BERT cosine: transformers encoder, [CLS] (or mean-pooled) last hidden layer, cosine of query and passage."""

from __future__ import annotations

import numpy as np
import torch

from weakrank.dataset import Dataset
from weakrank.lf import PairBatch, RankingLF, lf_factory, ranking_lf
from weakrank.models import DEFAULT_ENCODER, POOLINGS, pool_tokens, resolve_model
from weakrank.similarity import EmbeddingCache, pair_cosine


@lf_factory
def make_bert_cosine(
    name: str = "bert_cosine",
    model: str = DEFAULT_ENCODER,
    pooling: str = "cls",
    batch_size: int = 64,
    max_length: int = 256,
    **rule: float,
) -> RankingLF:
    """A BERT cosine LF; ``pooling`` is ``"cls"`` (the [CLS] vector) or ``"mean"`` (masked mean of the last layer).

    The default is [CLS]: with the packaged MiniLM, mean pooling would duplicate ``embedding_cosine``.
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")

    def load(dataset: Dataset):
        from transformers import AutoModel, AutoTokenizer

        path = resolve_model(model)
        device = "cuda" if torch.cuda.is_available() else "cpu"
        tokenizer, encoder = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).to(device).eval()
        return EmbeddingCache(lambda texts: embed(texts, tokenizer, encoder))

    @torch.inference_mode()
    def embed(texts: list[str], tokenizer, encoder) -> np.ndarray:
        order = np.argsort([len(t) for t in texts])  # similar lengths per batch: less padding
        out = np.empty((len(texts), encoder.config.hidden_size), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            enc = tokenizer(
                [texts[i] for i in idx], padding=True, truncation=True, max_length=max_length, return_tensors="pt"
            ).to(encoder.device)
            pooled = pool_tokens(encoder(**enc).last_hidden_state, enc["attention_mask"], pooling)
            out[idx] = pooled.float().cpu().numpy()
        return out

    @ranking_lf(name, batched=True, fit=load, per_process=True, **rule)
    def score(pairs: PairBatch, encode: EmbeddingCache) -> np.ndarray:
        return pair_cosine(pairs.query, pairs.passage, encode)

    return score


bert_cosine = make_bert_cosine()
