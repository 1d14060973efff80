"""``max_length = "auto"``: a token budget read from the training pairs rather than set per collection.

Measured (test MAP, 1 seed): SemEval's questions and comments are long (median pair 103 tokens, 79% over
64); at 64 tokens the cross-encoder reached 0.643, at 128 0.671 (fused with the LFs 0.680 → 0.690). The
answer-sentence sets fit in 64 (WikiQA's 75th percentile is 47 tokens), and 128 is the most a CPU step
affords (SciFact's abstracts, 360 tokens at the median, are cut there).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from weakrank.encoders import resolve_model
from weakrank.training.config import AUTO, TrainConfig
from weakrank.training.data import TrainingData

QUANTILE = 0.75  # the share of training inputs that fit whole
STEP = 32  # the budget is a multiple of this
CAP = 128  # the most an automatic budget gives (CPU-sized: set an int to go past it on a GPU)
SAMPLE = 2000  # pairs whose tokens are counted (a fixed sample: every seed gets the same budget)


def auto_max_length(data: TrainingData, encoder: str, architecture: str = "cross-encoder") -> int:
    """The ``QUANTILE`` of the token counts of ``data``'s inputs, rounded up to a multiple of ``STEP``, at most
    ``CAP``: "query [SEP] passage" pairs for a cross-encoder, the passages (the longer side) for a bi-encoder."""
    from transformers import AutoTokenizer

    pairs = [(data.query_text[qid], data.passage_text[pid]) for qid in data.list_ids
             for pid in data.lists[qid].passage_ids]
    if not pairs:
        return CAP
    rng = np.random.default_rng(0)
    chosen = rng.choice(len(pairs), size=min(SAMPLE, len(pairs)), replace=False)
    queries, passages = [pairs[i][0] for i in chosen], [pairs[i][1] for i in chosen]
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(encoder))
    if architecture == "bi-encoder":
        counts = [len(ids) for ids in tokenizer(passages, verbose=False)["input_ids"]]
    else:
        counts = [len(ids) for ids in tokenizer(queries, passages, verbose=False)["input_ids"]]
    needed = float(np.quantile(counts, QUANTILE))
    return int(min(CAP, max(STEP, -(-needed // STEP) * STEP)))


def resolve_max_length(tc: TrainConfig, data: TrainingData) -> TrainConfig:
    """``tc`` with ``max_length = "auto"`` replaced by :func:`auto_max_length` of ``data`` (else unchanged)."""
    if tc.max_length != AUTO:
        return tc
    return replace(tc, max_length=auto_max_length(data, tc.encoder, tc.architecture))
