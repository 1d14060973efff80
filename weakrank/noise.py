"""Semantic-aware label-noise injection (Sharma et al., label relaxation), logged so that it can be undone.

For a share ``ratio`` of the training queries, the relevant passage swaps its label with the candidate
most similar to it (cosine of passage embeddings) among the query's non-relevant candidates: the noise
looks like a plausible annotator mistake rather than a random flip. Every changed cell is logged.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from weakrank.encoders import resolve_model
from weakrank.errors import DataError
from weakrank.progress import loading_bars_off

Encoder = Callable[[list[str]], np.ndarray]
LOG_COLUMNS = ["query_id", "passage_id", "column", "old", "new", "swapped_with"]


def sentence_encoder(model: str = "minilm") -> Encoder:
    """Normalised sentence-transformers embeddings (the packaged MiniLM by default)."""
    from sentence_transformers import SentenceTransformer

    loading_bars_off()
    encoder = SentenceTransformer(resolve_model(model))
    return lambda texts: encoder.encode(texts, normalize_embeddings=True, show_progress_bar=False)


def corrupt_labels(
    labels: pd.DataFrame,
    passages: pd.DataFrame,
    ratio: float,
    encode: Encoder,
    *,
    seed: int = 0,
    split: str = "train",
    column: str = "label",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Corrupt ``round(ratio · Q)`` of the ``Q`` queries of ``split``; return (new labels, change log).

    Only queries with at least one relevant and one non-relevant pair can be corrupted; in each chosen
    query the first relevant pair (by candidate rank) swaps ``column`` (and ``confidence``, if present)
    with its most similar non-relevant candidate.
    """
    if not 0.0 <= ratio <= 1.0:
        raise DataError(f"noise ratio must be in [0, 1], got {ratio}", field="ratio")
    if column not in labels.columns:
        raise DataError(f"labels have no column {column!r}", field=column)
    in_split = labels[labels["split"] == split]
    n_queries = in_split["query_id"].nunique()
    n_corrupt = int(round(ratio * n_queries))
    counts = in_split.groupby("query_id")[column].agg(["sum", "size"])
    eligible = counts.index[(counts["sum"] > 0) & (counts["sum"] < counts["size"])].to_numpy()
    if n_corrupt > len(eligible):
        raise DataError(
            f"ratio {ratio} asks for {n_corrupt} of {n_queries} {split!r} queries, "
            f"but only {len(eligible)} have both a relevant and a non-relevant pair",
            field="ratio",
        )
    chosen = np.random.default_rng(seed).choice(np.sort(eligible), size=n_corrupt, replace=False)
    text = passages.set_index("passage_id")["text"]
    out = labels.copy()
    swap_columns = [column] + (["confidence"] if "confidence" in out.columns and column == "label" else [])
    log = []
    for qid in chosen:
        rows = out.index[out["query_id"] == qid]
        group = out.loc[rows].sort_values("rank")
        pos = group[group[column] == 1].index[0]
        negatives = group[group[column] == 0].index
        emb = encode([text[out.at[pos, "passage_id"]]] + [text[p] for p in out.loc[negatives, "passage_id"]])
        emb = emb / np.linalg.norm(emb, axis=1, keepdims=True).clip(min=1e-12)
        neg = negatives[int(np.argmax(emb[1:] @ emb[0]))]
        for col in swap_columns:
            a, b = out.at[pos, col], out.at[neg, col]
            out.at[pos, col], out.at[neg, col] = b, a
            log.append([qid, out.at[pos, "passage_id"], col, a, b, out.at[neg, "passage_id"]])
            log.append([qid, out.at[neg, "passage_id"], col, b, a, out.at[pos, "passage_id"]])
    log_df = pd.DataFrame(log, columns=LOG_COLUMNS).astype({"old": "float64", "new": "float64"})
    return out, log_df


def undo_corruption(labels: pd.DataFrame, log: pd.DataFrame) -> pd.DataFrame:
    """Restore the values a :func:`corrupt_labels` log changed."""
    out = labels.copy()
    index = pd.MultiIndex.from_frame(out[["query_id", "passage_id"]])
    for col, changes in log.groupby("column"):
        rows = index.get_indexer(pd.MultiIndex.from_frame(changes[["query_id", "passage_id"]]))
        if (rows < 0).any():
            missing = changes.iloc[int(np.argmax(rows < 0))]
            raise DataError(f"log names a pair not in the labels: {missing['query_id']}/{missing['passage_id']}")
        current = out[col].to_numpy()[rows]
        if not np.allclose(current.astype(float), changes["new"].to_numpy()):
            raise DataError(f"labels do not hold the logged new values of {col!r}: was the log made from them?")
        values = out[col].to_numpy().copy()
        values[rows] = changes["old"].to_numpy().astype(values.dtype)
        out[col] = values
    return out
