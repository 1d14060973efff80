"""The one tokenizer shared by the lexical LFs and BM25 candidate generation."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+``)."""
    return _TOKEN.findall(text.lower())
