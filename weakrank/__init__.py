"""weakrank: train neural rankers without ground-truth labels, by data programming.

Data flows one way: dataset → candidates → votes → labels → model → metrics. The names below are imported
on first use, so that ``weakrank --help`` loads neither pandas nor torch. Imported with stderr not a terminal (a
log), it turns the libraries' progress bars off (:func:`weakrank.progress.plain_logs`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from weakrank.progress import plain_logs

if TYPE_CHECKING:
    from weakrank.dataset import Dataset
    from weakrank.lf import lf_factory, ranking_lf
    from weakrank.lf_scorer import PairBatch, RankingLF, VoteRule

__version__ = "0.1.0"
__all__ = ["Dataset", "PairBatch", "RankingLF", "VoteRule", "lf_factory", "ranking_lf", "__version__"]
_HOMES = {"Dataset": "weakrank.dataset", **dict.fromkeys(["PairBatch", "RankingLF", "VoteRule"], "weakrank.lf_scorer"),
          **dict.fromkeys(["lf_factory", "ranking_lf"], "weakrank.lf")}

plain_logs()


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'weakrank' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
