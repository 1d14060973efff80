"""What each judged decision keeps, one frozen record per decision, each saved with its ``kind``: the update of the
LFs' quality priors (:class:`PriorUpdateRecord`, a fusion state's ``record``, saved under :data:`STATE_KEY`), the
student's weight in the shipped ranker (:class:`StudentWeightRecord`, one of a shipped model's teacher-state notes,
under ``mix``: :func:`noted`) and the choice of a combination of the LFs (:class:`ChoiceRecord`, a
:class:`~weakrank.judged.rule.Choice`'s record: what a fusion state keeps where judged queries chose how it combines
the LFs, as ``aggregate --judgments`` did before they moved the priors; read back from such a state, and written by
``benchmarks/bench_judgments.py``, which compares the two).

Each record's ``to_dict`` is its writer; :func:`read_record` is the one reader of them all, which checks a file
someone may have changed (each problem a :class:`~weakrank.errors.DataError` naming the file and the field) and reads
a record saved before records kept their kind as the readers then told them apart (:func:`saved_kind`)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from weakrank.checked import COUNT, LIST, NUMBER, NUMBERS, OBJECT, TEXT, TEXTS, Kind, read_field, read_object
from weakrank.errors import DataError


@dataclass(frozen=True)
class _Fields:
    """The fields of one saved record (``where``: the fields it is under in ``file``), each read by its kind
    (:mod:`weakrank.checked`)."""

    saved: Mapping[str, Any]
    file: str | Path | None
    where: str

    def __call__(self, name: str, kind: Kind) -> Any:
        return read_field(self.saved, name, kind, self.file, self.where)


def _map_line(label: str, estimates: Mapping[str, float]) -> str:
    """``label`` then each estimated MAP of ``estimates``, the best first."""
    return f"  {label}: " + ", ".join(f"{name} {value:.3f}" for name, value in
                                      sorted(estimates.items(), key=lambda item: -item[1]))


@dataclass(frozen=True)
class ChoiceRecord:
    """How judged queries chose to combine the LFs: the combination used (``choice``) and the one estimated best
    (``best``), its estimated ``lead`` in MAP and in standard errors (``errors``) over ``queries`` judged queries,
    each candidate's estimated MAP (``estimates``), the ``reason`` for a person and the ``rule``'s constants."""

    kind: ClassVar[str] = "combination"
    choice: str
    best: str
    lead: float
    errors: float
    queries: int
    estimates: dict[str, float]
    reason: str
    rule: dict[str, float]

    def queries_to_tell(self) -> int | None:
        """Where more judgments could change the choice (``best`` leads but was not taken): about how many judged
        queries with a relevant passage would make its lead, as estimated now, as clear as the rule asks (``margin``
        standard errors, the error shrinking as one over the root of the queries); else None."""
        if self.choice == self.best or self.errors <= 0:
            return None
        return math.ceil(self.queries * (self.rule.get("margin", 0.0) / self.errors) ** 2)

    def lines(self) -> list[str]:
        """What the terminal says of the choice: why, and each candidate's estimated MAP."""
        return [f"judged: {self.reason}; the LFs are combined as {self.choice!r}",
                _map_line("estimated MAP over the pool", self.estimates)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, as :func:`read_record` reads them."""
        return {"kind": self.kind, "choice": self.choice, "best": self.best, "lead": self.lead, "errors": self.errors,
                "queries": self.queries, "estimates": self.estimates, "reason": self.reason, "rule": self.rule}

    @classmethod
    def _read(cls, field: _Fields, old: bool) -> ChoiceRecord:
        """The record of checked ``field`` (an ``old`` one, saved without its kind, has the same fields)."""
        return cls(field("choice", TEXT), field("best", TEXT), float(field("lead", NUMBER)),
                   float(field("errors", NUMBER)), field("queries", COUNT), dict(field("estimates", NUMBERS)),
                   field("reason", TEXT), dict(field("rule", NUMBERS)))


@dataclass(frozen=True)
class LFEvidence:
    """What the judged sample said of one LF: its ``prior`` (declared, or its loading without judgments where it
    declared none), its mean residual ``gap`` over the ``queries`` it ranks, the ``posterior`` mean and its
    ``concentration`` (P_k τ²: 1 is the prior's alone)."""

    lf: str
    prior: float
    gap: float
    queries: int
    posterior: float
    concentration: float

    @classmethod
    def _read(cls, saved: object, file: str | Path | None, where: str) -> LFEvidence:
        """One of :class:`PriorUpdateRecord`'s ``lfs``, checked."""
        field = _Fields(read_object(saved, "what the judged sample said of one LF", file, where), file, where)
        return cls(field("lf", TEXT), float(field("prior", NUMBER)), float(field("gap", NUMBER)),
                   field("queries", COUNT), float(field("posterior", NUMBER)),
                   float(field("concentration", NUMBER)))


@dataclass(frozen=True)
class PriorUpdateRecord:
    """How judged pairs updated the LFs' quality priors (:mod:`weakrank.judged.prior_update`): per LF its prior, what
    the judged sample said of it and the posterior (``lfs``; empty in a record saved before it kept them), the
    judged estimate of MAP without the update and, where it moved the priors, with it (``estimates``), the judged
    ``queries`` that counted, the ``reason`` for a person and the ``rule``'s constants."""

    kind: ClassVar[str] = "prior update"
    lfs: tuple[LFEvidence, ...]
    estimates: dict[str, float]
    queries: int
    reason: str
    rule: dict[str, float]

    def lines(self) -> list[str]:
        """What the terminal says of the update: why, and the estimated MAP without and with it."""
        return [f"judged: {self.reason}", _map_line("estimated MAP over the pool", self.estimates)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, as :func:`read_record` reads them."""
        return {"kind": self.kind, "lfs": [asdict(e) for e in self.lfs], "estimates": self.estimates,
                "queries": self.queries, "reason": self.reason, "rule": self.rule}

    @classmethod
    def _read(cls, field: _Fields, old: bool) -> PriorUpdateRecord:
        """The record of checked ``field`` (an ``old`` one, saved as a choice, kept no LF's evidence)."""
        lfs = () if old else tuple(LFEvidence._read(e, field.file, f"{field.where}lfs[{k}].")
                                   for k, e in enumerate(field("lfs", LIST)))
        return cls(lfs, dict(field("estimates", NUMBERS)), field("queries", COUNT), field("reason", TEXT),
                   dict(field("rule", NUMBERS)))


@dataclass(frozen=True)
class StudentWeightRecord:
    """How judged queries the student had not trained on chose its weight in the shipped ranker: each weight's
    estimated MAP over the judged sample's pool (``estimates``, by the weight's name), the weight chosen
    (``choice``, its name), the judged ``queries``' ids, the ``reason`` for a person and the ``rule``'s
    constants."""

    kind: ClassVar[str] = "student weight"
    saved_as: ClassVar[str] = "mix"  # its key in a shipped model's weakrank_fusion.json
    choice: str
    estimates: dict[str, float]
    queries: list[str]
    reason: str
    rule: dict[str, float]

    def card(self) -> str:
        """What a model card says of the student's weight."""
        return f"The student's weight, chosen on judged queries it had not trained on: {self.reason}."

    def lines(self) -> list[str]:
        """What the terminal says of the student's weight: why, and each weight's estimated MAP."""
        return [f"shipped ranker: {self.reason}", _map_line("estimated MAP over the judged sample's pool",
                                                            self.estimates)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, as :func:`read_record` reads them."""
        return {"kind": self.kind, "choice": self.choice, "estimates": self.estimates, "queries": self.queries,
                "reason": self.reason, "rule": self.rule}

    @classmethod
    def _read(cls, field: _Fields, old: bool) -> StudentWeightRecord:
        """The record of checked ``field`` (an ``old`` one, saved as a choice, kept the estimates as ``judged_map``)."""
        estimates = field("judged_map" if old else "estimates", NUMBERS)
        return cls(field("choice", TEXT), dict(estimates), list(field("queries", TEXTS)), field("reason", TEXT),
                   dict(field("rule", NUMBERS)))


Record = ChoiceRecord | PriorUpdateRecord | StudentWeightRecord
RECORDS: dict[str, type[Record]] = {r.kind: r for r in (ChoiceRecord, PriorUpdateRecord, StudentWeightRecord)}
StateRecord = ChoiceRecord | PriorUpdateRecord  # what moved a fusion state: its record
STATE_KINDS = (ChoiceRecord.kind, PriorUpdateRecord.kind)
STATE_KEY = "judged"  # a saved fusion state's key of its record


def noted(notes: Mapping[str, Any], record: type[StudentWeightRecord], file: str | Path | None = None
          ) -> StudentWeightRecord | None:
    """The ``record`` a file's ``notes`` keep under its key (``record.saved_as``: a shipped model's
    :attr:`~weakrank.ranker.teacher_state.TeacherState.notes`), read back and checked; None where they keep none."""
    key = record.saved_as
    saved = read_field(notes, key, OBJECT, file, default=None)
    return None if saved is None else read_record(saved, file, f"{key}.", (record.kind,))


def saved_kind(saved: Mapping[str, Any]) -> str:
    """The kind of a saved record: its ``kind``, or for one saved before records kept it, the kind its readers told
    from its fields: a ``rule`` with ``prior_sd`` was a prior update, a ``judged_map`` a student's weight, the rest
    a combination."""
    if "kind" in saved:
        return saved["kind"]
    rule = saved.get("rule")
    if isinstance(rule, dict) and "prior_sd" in rule:
        return PriorUpdateRecord.kind
    return StudentWeightRecord.kind if "judged_map" in saved else ChoiceRecord.kind


def read_record(saved: object, file: str | Path | None = None, where: str = "",
                kinds: Collection[str] = tuple(RECORDS)) -> Record:
    """The record a ``to_dict`` saved, read back from a file someone may have changed (``where``: the fields it is
    under; ``kinds``: those that may be there): a missing field, one of the wrong type or a kind not in ``kinds`` is
    a :class:`DataError` naming ``file`` and the field."""
    saved = read_object(saved, "a judged decision's record", file, where)
    kind = saved_kind(saved)
    if not isinstance(kind, str) or kind not in kinds:
        raise DataError(f"{kind!r} is not a record kept here ({', '.join(map(repr, kinds))})", file=file,
                        field=where + "kind")
    return RECORDS[kind]._read(_Fields(saved, file, where), "kind" not in saved)
