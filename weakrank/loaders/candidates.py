"""First-stage candidates for a collection that comes without them: the BM25 top-k of each query (the same
:class:`~weakrank.bm25.BM25Index` as the BM25 LF), used by the BEIR loader and by the TREC loader's splits
without a run file."""

from __future__ import annotations

import numpy as np
import pandas as pd

from weakrank.bm25 import BM25Index
from weakrank.progress import tqdm


def bm25_candidates(queries: pd.DataFrame, passages: pd.DataFrame, k: int, batch: int = 256) -> pd.DataFrame:
    """query_id, passage_id rows of the BM25 top-``k`` passages of each query (``query_id``, ``text``) over
    ``passages`` (``passage_id``, ``text``), best first."""
    index = BM25Index(passages["text"].tolist())
    ids = passages["passage_id"].to_numpy()
    frames = [pd.DataFrame({"query_id": pd.Series(dtype=str), "passage_id": pd.Series(dtype=str)})]
    texts, qids = queries["text"].tolist(), queries["query_id"].to_numpy()
    for start in tqdm(range(0, len(texts), batch), desc="BM25 candidates", unit="batch", leave=False):
        rows, _ = index.top_k(texts[start : start + batch], k)
        frames.append(
            pd.DataFrame({"query_id": np.repeat(qids[start : start + batch], rows.shape[1]), "passage_id": ids[rows.ravel()]})
        )
    return pd.concat(frames, ignore_index=True)
