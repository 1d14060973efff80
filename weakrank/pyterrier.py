"""A trained weakrank ranker as a PyTerrier transformer: ``bm25 >> reranker("data/x/model/best")``.

PyTerrier is optional (``pip install 'weakrank[pyterrier]'``); it is imported when a reranker is made, and only
its pure-Python part is used (no Java: bring the first stage from any retriever, PyTerrier's BM25 included).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.ranker import RanksPassages, load_ranker


def _pyterrier() -> Any:
    try:
        import pyterrier
    except ImportError as exc:
        raise ImportError("weakrank.pyterrier needs PyTerrier: pip install 'weakrank[pyterrier]' "
                          "(or pip install python-terrier)") from exc
    return pyterrier


@cache
def _reranker_class() -> type:
    pt = _pyterrier()

    class WeakrankReranker(pt.Transformer):
        """Scores a result frame's ``(query, text)`` pairs with a weakrank ranker (the shipped ranker of a model
        directory that carries its teacher, else its cross-encoder or bi-encoder; each ``qid``'s rows are one
        list) and ranks each query's documents by that score: ``qid, query, docno, text`` in, the same rows with
        ``score`` (the first stage's score is replaced) and ``rank`` (PyTerrier's, from 0) out.
        """

        def __init__(self, model: str | Path | RanksPassages, text_field: str = "text", batch_size: int = 64,
                     device: str | None = None, trust_code: bool = False):
            self.ranker = load_ranker(model, device, trust_code=trust_code) if isinstance(model, str | Path) else model
            self.model = str(model) if isinstance(model, str | Path) else type(model).__name__
            self.text_field = text_field
            self.batch_size = batch_size

        def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
            pt.validate.result_frame(inp, extra_columns=["query", self.text_field], context=self)
            out = inp.copy()
            pairs = pd.DataFrame({"query_id": out["qid"].astype(str).to_numpy(),
                                  "passage_id": out["docno"].astype(str).to_numpy(),
                                  "query": out["query"].astype(str).to_numpy(),
                                  "passage": out[self.text_field].astype(str).to_numpy()})
            if not len(pairs):
                out["score"] = []
            elif hasattr(self.ranker, "score_frame"):  # weakrank's rankers: lists by qid
                out["score"] = self.ranker.score_frame(pairs, batch_size=self.batch_size).astype(float)
            else:  # any object with predict(pairs, batch_size)
                out["score"] = self.ranker.predict(list(zip(pairs["query"], pairs["passage"])),
                                                   batch_size=self.batch_size).astype(float)
            return pt.model.add_ranks(out)

        def __repr__(self) -> str:
            return f"WeakrankReranker({self.model!r})"

    WeakrankReranker.__module__ = __name__
    return WeakrankReranker


def reranker(model: str | Path | RanksPassages, text_field: str = "text", batch_size: int = 64,
             device: str | None = None, trust_code: bool = False) -> Any:
    """A ``pt.Transformer`` reranking with ``model`` (a weakrank model directory, e.g. ``<run_dir>/model/best``,
    or a loaded ranker); ``text_field`` names the passage column (``pt.text.get_text`` adds one to a bare run);
    ``trust_code``: as :func:`~weakrank.ranker.load_ranker`'s."""
    return _reranker_class()(model, text_field=text_field, batch_size=batch_size, device=device,
                             trust_code=trust_code)


def __getattr__(name: str) -> Any:
    if name == "WeakrankReranker":  # the class exists only once PyTerrier is imported
        return _reranker_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
