"""The simplest LF to copy: a plain function of one (query, passage) pair."""

from __future__ import annotations

from weakrank.lf import ranking_lf
from weakrank.text import tokenize

PRIOR = 0.2  # its quality prior (a loading on relevance), measured: benchmarks/teacher_priors.csv


@ranking_lf(family="lexical", prior=PRIOR)
def word_overlap(query: str, passage: str) -> float:
    """Jaccard overlap of the query's and the passage's word sets."""
    q, p = set(tokenize(query)), set(tokenize(passage))
    return len(q & p) / len(q | p) if q or p else 0.0
