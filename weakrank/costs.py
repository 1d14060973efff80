"""What encoding costs on this machine's kind of CPU: seconds per MiniLM token (:data:`SECONDS`), an encoder's cost
in MiniLM tokens (:class:`Encoder`) and the seconds of texts of given token counts, windows included
(:func:`encode_seconds`): the unit both the plan (:mod:`weakrank.estimates`) and a stage's pace
(:mod:`weakrank.pace`) count in."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Seconds on 2 idle x86-64 cores (Intel Xeon, torch fp32), calibrated on the WikiQA main job (`weakrank run
# pipelines/wikiqa.toml`, 29,258 pairs, nothing else running): label 197 s on 2026-11-28 and 117 s on 2026-11-27
# (bm25, tfidf, answer_type and one MiniLM pass for embedding_cosine and bert_cosine over about 0.8 M tokens; the
# estimate, 170 s, lies between), train 282 s (250 steps of 4 lists × 8 at 64 tokens, and 4 evaluations of the 286
# dev lists; estimated 291 s), rerank 48 s (estimated 41 s).
# "token": a MiniLM forward pass's (encoding, evaluation, reranking); "train token": a training step's; "pair": one
# lexical LF on one pair; "load": a model loaded (and hashed); "import": torch and sentence-transformers, by the first
# encoder; "train setup": the model loaded, the lists built, best/ and final/ written (the own-made fixture's 4 steps
# took 2 s in all on idle cores, 7 s beside a busy process, 2026-11-29; 12 s before, set from a run on busy cores);
# "rerank pair": the shipped ranker's lexical LFs on one pair at rerank (their fit on the corpus is the label stage's;
# 0.55-1.2e-4 on the five idle-core reranks of a teacher alone, 2026-11-29, the middle of the extremes).
# benchmarks/bench_estimates.py compares them with the runs timed here.
SECONDS = {"token": 1.75e-4, "train token": 4.1e-4, "pair": 1.5e-4, "rerank pair": 8e-5, "load": 6.0, "import": 5.0,
           "train setup": 2.0}
MINILM = (6, 384)  # layers and width of the packaged encoder, the unit of the per-token costs
INT8_SPEEDUP = 1.4  # int8 encodes 1.25-1.54× faster than fp32 (benchmarks/int8_speed.csv)


@dataclass(frozen=True)
class Encoder:
    """One forward pass that encoder LFs share: its model's ``layers`` and ``width``, the tokens it reads
    (``length``, special tokens included), its ``precision`` and whether it reads later ``windows``."""

    model: str
    layers: int
    width: int
    length: int
    precision: str = "fp32"
    windows: bool = True

    @property
    def cost(self) -> float:
        """Its per-token cost in MiniLM fp32 tokens (attention's share aside: :func:`sequence_seconds`)."""
        speed = INT8_SPEEDUP if self.precision == "int8" else 1.0
        return self.layers * self.width**2 / (MINILM[0] * MINILM[1] ** 2) / speed


def sequence_seconds(tokens: np.ndarray, width: int = MINILM[1]) -> np.ndarray:
    """Seconds of MiniLM-unit tokens for sequences of ``tokens`` tokens (2 special tokens added): attention adds
    length / (6 × width) to a token's cost."""
    n = np.asarray(tokens, dtype=np.float64) + 2
    return SECONDS["token"] * n * (1 + n / (6 * width))


def encode_seconds(tokens: np.ndarray, encoder: Encoder) -> float:
    """Seconds ``encoder`` takes over texts of ``tokens`` tokens: each text's first window and, with ``windows``,
    its later ones, a half window apart, the last reaching its end."""
    room = encoder.length - 2
    step = max(room // 2, 1)
    tokens = np.asarray(tokens, dtype=np.float64)
    seconds = sequence_seconds(np.minimum(tokens, room), encoder.width)
    if encoder.windows and len(tokens):
        over = np.maximum(tokens - room, 0) / step
        full, later = np.floor(over), np.ceil(over)  # later windows: the full ones, and a shorter last
        last = sequence_seconds(np.maximum(tokens - later * step, 0), encoder.width)
        seconds = seconds + full * sequence_seconds(np.array([room]), encoder.width)[0] + (later > full) * last
    return float(seconds.sum()) * encoder.cost
