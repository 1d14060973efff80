"""What an LF declares of itself, checked: its ``family`` (LFs of one family share their errors) and its ``prior``
on its quality (:func:`weakrank.lf.ranking_lf`; a config may override both, :mod:`weakrank.registry`)."""

from __future__ import annotations

from weakrank.errors import LFError


def check_declaration(name: str, family: str | None, prior: float | None, where: str | None = None) -> None:
    """Refuse a ``family`` that is not a non-empty string or a ``prior`` outside (0, 1), naming the LF and, where
    given, the file and line that declared it (``where``: :func:`~weakrank.lf.ranking_lf`'s caller)."""
    if family is not None and (not isinstance(family, str) or not family.strip()):
        raise LFError(name, f"family must be a non-empty string, got {family!r}", where)
    if prior is not None and (isinstance(prior, bool) or not isinstance(prior, int | float) or not 0 < prior < 1):
        raise LFError(name, f"prior must be a number in (0, 1) (a loading on relevance), got {prior!r}", where)
