"""Label models: aggregate an n × m vote matrix (+1/−1/0) into P(relevant) per pair.

Every model follows the scikit-learn shape: ``fit(V) -> self``, ``predict_proba(V) -> (n,)``.
"""

from __future__ import annotations

from typing import Any

from weakrank.errors import ConfigError
from weakrank.label_models.base import LabelModelBase, check_votes, labels_from_proba, with_labels
from weakrank.label_models.generative import GenerativeModel
from weakrank.label_models.majority import MajorityVote
from weakrank.label_models.snorkel import SnorkelLabelModel

MODELS: dict[str, type[LabelModelBase]] = {
    "majority": MajorityVote,
    "snorkel": SnorkelLabelModel,
    "generative": GenerativeModel,
}


def make_label_model(name: str, **options: Any) -> LabelModelBase:
    """The label model called ``name`` (majority, snorkel, generative) with ``options``."""
    if name not in MODELS:
        raise ConfigError(f"unknown label model {name!r}; choose one of {sorted(MODELS)}")
    return MODELS[name](**options)


__all__ = [
    "MODELS",
    "GenerativeModel",
    "LabelModelBase",
    "MajorityVote",
    "SnorkelLabelModel",
    "check_votes",
    "labels_from_proba",
    "with_labels",
    "make_label_model",
]
