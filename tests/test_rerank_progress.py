"""Reranking says where it is: scored a few hundred pairs of whole queries at a time, with progress lines under
``--quiet`` (a quiet run of a long rerank was silent for minutes)."""

import numpy as np
import pandas as pd

from weakrank.progress import configure
from weakrank.ranker.rerank import CHUNK, score_pairs


class ListwiseRanker:
    """Scores each passage by its rank within its query's list as given: wrong if a list were ever split."""

    def __init__(self) -> None:
        self.calls: list[pd.DataFrame] = []

    def score_frame(self, pairs: pd.DataFrame, batch_size: int = 64) -> np.ndarray:
        self.calls.append(pairs)
        return -pairs.groupby("query_id", sort=False).cumcount().to_numpy(float) + pairs["query"].str.len().to_numpy()


def own_pairs(queries: int, per_query: int) -> pd.DataFrame:
    """``queries`` lists of ``per_query`` pairs, the rows of the lists interleaved as a candidates table may have
    them."""
    rows = [{"query_id": f"q{q}", "passage_id": f"q{q}p{i}", "query": "w" * (q % 7), "passage": f"passage {i}"}
            for i in range(per_query) for q in range(queries)]
    return pd.DataFrame(rows, columns=["query_id", "passage_id", "query", "passage"]).sort_values("query_id", kind="stable").reset_index(drop=True)


def test_reranking_scores_whole_queries_a_chunk_at_a_time_and_says_so_when_quiet(capsys):
    pairs = own_pairs(100, 12)
    whole = ListwiseRanker().score_frame(pairs)
    ranker = ListwiseRanker()
    with configure(quiet=True):
        scored = score_pairs(ranker, pairs)
    assert scored[["query_id", "passage_id"]].equals(pairs[["query_id", "passage_id"]])
    assert np.array_equal(scored["score"].to_numpy(), whole)  # as if scored at once
    assert len(ranker.calls) == -(-len(pairs) // CHUNK) and all(len(call) <= CHUNK + 12 for call in ranker.calls)
    seen = [set(call["query_id"]) for call in ranker.calls]
    assert all(a.isdisjoint(b) for i, a in enumerate(seen) for b in seen[i + 1:])  # no list split between chunks
    err = capsys.readouterr().err
    assert "reranking: query 100/100 (100%)" in err and "elapsed, about" in err


def test_nothing_to_rerank_is_no_error():
    assert score_pairs(ListwiseRanker(), own_pairs(0, 3)).empty
