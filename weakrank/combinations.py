"""Ways to combine the LFs' scores of a query's list into one ranking — what a fitted fusion state scores with
(:mod:`weakrank.fusion_state`), and the candidates judged mode chooses among (:func:`weakrank.judged.design.candidates`):

- ``label-free``: the fusion model's factor weighting, fitted without gold;
- ``CombSUM``: every LF's standardised score summed;
- ``RRF``: reciprocal-rank fusion (k = 60) of the LFs' rankings;
- ``<lf> alone``: one LF's ranking.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from weakrank.errors import DataError
from weakrank.lists import reciprocal_ranks

LABEL_FREE = "label-free"


@dataclass(frozen=True)
class Combination:
    """A way to combine the LFs: ``linear`` (``weights`` · standardised scores) or ``rrf`` (``weights`` ·
    reciprocal ranks)."""

    kind: str
    weights: np.ndarray


def combined(z: np.ndarray, groups: np.ndarray, informative: np.ndarray, combination: Combination) -> np.ndarray:
    """Each row's score under ``combination`` (``z``: the LFs' scores standardised within each group)."""
    if combination.kind == "rrf":
        return reciprocal_ranks(z, groups, informative) @ combination.weights
    return z @ combination.weights


@dataclass(frozen=True)
class ChoiceRecord:
    """What judged queries chose, as it is saved (a fusion state's ``judged``; a shipped model's ``mix``, where the
    choice is the student's weight): the combination used (``choice``) and the one estimated best (``best``), its
    estimated ``lead`` in MAP and in standard errors (``errors``) over ``queries`` judged queries, each candidate's
    estimated MAP (``estimates``), the ``reason`` for a person and the ``rule``'s constants; a mix also keeps each
    weight's MAP on the judged sample (``judged_map``) and the judged queries' ids (``judged_queries``, saved as its
    ``queries``)."""

    choice: str
    best: str
    lead: float
    errors: float
    queries: int
    estimates: dict[str, float]
    reason: str
    rule: dict[str, float]
    judged_map: dict[str, float] | None = None
    judged_queries: list[str] | None = None

    def queries_to_tell(self) -> int | None:
        """Where more judgments could change the choice (``best`` leads but was not taken): about how many judged
        queries with a relevant passage would make its lead, as estimated now, as clear as the rule asks (``margin``
        standard errors, the error shrinking as one over the root of the queries); else None."""
        if self.choice == self.best or self.errors <= 0:
            return None
        return math.ceil(self.queries * (self.rule.get("margin", 0.0) / self.errors) ** 2)

    def mix_card(self) -> str:
        """What a model card says of the student's weight this record chose (a shipped model's ``mix``)."""
        return f"The student's weight, chosen on judged queries it had not trained on: {self.reason}."

    def mix_lines(self) -> list[str]:
        """What the terminal says of the student's weight this record chose: why, and each weight's estimated MAP."""
        return [f"shipped ranker: {self.reason}", "  estimated MAP over the judged sample's pool: " + ", ".join(
            f"{name} {value:.3f}" for name, value in sorted((self.judged_map or {}).items(), key=lambda item: -item[1]))]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, as :meth:`from_dict` reads them."""
        saved: dict[str, Any] = {"choice": self.choice, "best": self.best, "lead": self.lead, "errors": self.errors,
                                 "queries": self.queries, "estimates": self.estimates, "reason": self.reason,
                                 "rule": self.rule}
        if self.judged_queries is not None:
            saved["queries"] = self.judged_queries
        if self.judged_map is not None:
            saved["judged_map"] = self.judged_map
        return saved

    @classmethod
    def from_dict(cls, saved: Mapping[str, Any], file: str | Path | None = None, where: str = "") -> ChoiceRecord:
        """The record of :meth:`to_dict` read back from a file someone may have changed: a missing field or one of
        the wrong type is a :class:`DataError` naming ``file`` and the field (``where``: the fields it is under)."""
        def check(name: str, test: Any, optional: bool = False) -> Any:
            value = saved.get(name)
            if value is None and optional:
                return None
            if not test(value):
                raise DataError(f"{value!r} is not what a judged choice keeps there", file=file, field=where + name)
            return value

        def text(v: Any) -> bool:
            return isinstance(v, str)

        def number(v: Any) -> bool:
            return isinstance(v, int | float) and not isinstance(v, bool)

        def numbers(v: Any) -> bool:
            return isinstance(v, dict) and all(text(k) and number(x) for k, x in v.items())

        queries = check("queries", lambda v: (isinstance(v, int) and not isinstance(v, bool))
                        or (isinstance(v, list) and all(map(text, v))))
        return cls(check("choice", text), check("best", text), float(check("lead", number)),
                   float(check("errors", number)), len(queries) if isinstance(queries, list) else queries,
                   dict(check("estimates", numbers)), check("reason", text), dict(check("rule", numbers)),
                   check("judged_map", numbers, optional=True), queries if isinstance(queries, list) else None)
