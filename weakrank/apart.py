"""What measures never teaches: no split is scored by what its own relevance labels made (a person's judgments, or
the gold that stood in for them), the one rule applied by every stage that could close the loop (``aggregate`` and
``run`` on the judgments they would train with; ``train``, ``rerank`` and ``evaluate`` on the labels, the model
and the run files they read)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from weakrank.errors import DataError

TAUGHT_MODEL = "this model was taught, or its checkpoint chosen, by judgments of"  # what a model's manifest says
TAUGHT_LABELS = "these labels were made from judgments (they moved the LFs' priors, and chose the checkpoint) of"


def check_apart(evaluated: str, taught: Collection[str], *, file: str | Path, field: str, line: int | None = None,
                what: str = "judges queries of") -> None:
    """A :class:`DataError` at ``file`` (``line``, ``field``) where ``taught`` (the splits whose relevance labels
    teach, ``what`` says how) holds ``evaluated``, the split that would be scored."""
    if evaluated in taught:
        raise DataError(f"{what} the evaluated split {evaluated!r}: they would choose what they then score; "
                        "evaluate another split, or judge queries of another split", file=file,
                        line=line, field=field)
