"""Built-in labeling functions, each a decorated function to read as an example.

``BUILTIN`` maps a config name to a factory ``(**options) -> RankingLF``; the module-level LFs
(``bm25``, ``tfidf``, ``embedding_cosine``, ``bert_cosine``, ``answer_type``) are those factories called with defaults.
"""

from __future__ import annotations

from collections.abc import Callable

from labeling_functions.answer_type import answer_type
from labeling_functions.bert import bert_cosine, make_bert_cosine
from labeling_functions.bm25 import bm25, make_bm25
from labeling_functions.embedding import embedding_cosine, make_embedding_cosine
from labeling_functions.overlap import word_overlap
from labeling_functions.tfidf import make_tfidf, tfidf
from weakrank.lf import RankingLF

BUILTIN: dict[str, Callable[..., RankingLF]] = {
    "bm25": make_bm25,
    "tfidf": make_tfidf,
    "embedding_cosine": make_embedding_cosine,
    "bert_cosine": make_bert_cosine,
    "word_overlap": lambda: word_overlap,
    "answer_type": lambda: answer_type,
}

__all__ = ["BUILTIN", "bm25", "tfidf", "embedding_cosine", "bert_cosine", "word_overlap", "answer_type"]
