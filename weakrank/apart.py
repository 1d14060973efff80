"""What measures never teaches: no split is scored by what its own relevance labels made (a person's judgments, or
the gold that stood in for them), the one rule applied by every stage that could close the loop (``aggregate`` and
``run`` on the judgments they would train with; ``train``, ``rerank`` and ``evaluate`` on the labels, the model
and the run files they read). Each file that records what taught it says how in its own words (``what``: the
labels file's and the model manifest's ``TAUGHT_WHAT``)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from weakrank.errors import DataError


def check_apart(evaluated: str, taught: Collection[str], *, file: str | Path, field: str, what: str,
                line: int | None = None) -> None:
    """A :class:`DataError` at ``file`` (``line``, ``field``) where ``taught`` (the splits whose relevance labels
    teach, ``what`` says how) holds ``evaluated``, the split that would be scored."""
    if evaluated in taught:
        raise DataError(f"{what} the evaluated split {evaluated!r}: they would choose what they then score; "
                        "evaluate another split, or draw them from another split", file=file, line=line, field=field)
