"""The fitted state of the fusion label model, one frozen record: what :class:`~weakrank.label_models.fusion.
ScoreFusionModel` fits, what a choice among combinations returns a new one of (:meth:`FusionState.using`), what
``labels.parquet`` keeps as its ``params`` and a shipped teacher as ``weakrank_fusion.json``'s ``teacher``.

:meth:`FusionState.to_dict` is its one writer and :meth:`FusionState.from_dict` its one reader, which checks a file
someone may have changed: each problem a :class:`~weakrank.errors.DataError` naming the file and the field."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from weakrank.checked import FLAG, LIST, NULL, NUMBER, OBJECT, TEXT, read_field, read_object
from weakrank.combinations import LABEL_FREE, Combination, combined
from weakrank.errors import DataError
from weakrank.lists import informative_rows, standardize_within
from weakrank.records import STATE_KEY, STATE_KINDS, StateRecord, read_record

COMBINES = ("linear", "rrf")
OPTIONS = ("duplicate_threshold", "min_noise", "temperature")  # the fusion model's options a state keeps
RETIRED_OPTIONS = ("few_shot_margin",)  # read in an older state and dropped
STUDENT_WEIGHT = 0.35  # the student's share of the shipped ranker without judgments: fitted on dev splits
# (benchmarks/bench_student_weight.py, student_weight.csv; a test holds them equal)


@dataclass(frozen=True)
class LFWeight:
    """What the fit made of one LF: its declared ``family`` and ``prior`` (None: not declared), the loading
    ``agreement`` alone gave it (today's label-free model), the ``loading`` used, its share of the fused score's
    ``weight`` and whether its prior decided the loading (``prior_decided``: moved ≥ 0.1 from agreement's)."""

    lf: str
    family: str | None
    prior: float | None
    agreement: float
    loading: float
    weight: float
    prior_decided: bool

    @classmethod
    def from_dict(cls, saved: object, file: str | Path | None, where: str) -> LFWeight:
        """One record of :meth:`FusionState.to_dict`'s ``lfs``, checked (a located :class:`DataError`)."""
        saved = read_object(saved, "what the fit made of one LF", file, where)
        kinds = {"lf": TEXT, "family": TEXT | NULL, "prior": NUMBER | NULL, "agreement": NUMBER, "loading": NUMBER,
                 "weight": NUMBER, "prior_decided": FLAG}
        return cls(**{key: read_field(saved, key, kind, file, where) for key, kind in kinds.items()})


@dataclass(frozen=True)
class FusionState:
    """The fusion model's fitted state: the LFs merged into each view (``clusters``: LF columns), each view's
    ``loadings`` on the latent factor, its ``weights`` and ``scales`` (each view's mean standardised score is divided
    by its scale), how the views are combined (``combine``: ``linear`` or ``rrf``), the combination scored with
    (``choice``: ``label-free`` unless judged queries chose another), what moved it (``record``, saved as
    ``judged``: the record of the LFs' priors judgments updated or of the combination they chose; None without),
    the model's ``options`` and what the fit made of each LF (``lfs``: empty where no LF declared a family or prior,
    or the state predates them)."""

    clusters: tuple[tuple[int, ...], ...]
    loadings: tuple[float, ...]
    weights: tuple[float, ...]
    scales: tuple[float, ...]
    combine: str = "linear"
    choice: str = LABEL_FREE
    record: StateRecord | None = None
    options: Mapping[str, float] = field(default_factory=dict)
    lfs: tuple[LFWeight, ...] = ()

    @classmethod
    def of(cls, clusters: Sequence[Sequence[int]], loadings: Sequence[float], weights: Sequence[float],
           scales: Sequence[float], **rest: Any) -> FusionState:
        """A state from lists or arrays (stored as tuples of Python numbers)."""
        return cls(tuple(tuple(int(i) for i in c) for c in clusters), *(tuple(np.asarray(v, dtype=np.float64).tolist())
                                                                         for v in (loadings, weights, scales)), **rest)

    def using(self, name: str, combination: Combination | None, record: StateRecord) -> FusionState:
        """A new state that scores with ``combination`` (called ``name``; one LF a cluster) instead of the label-free
        weighting, as judged queries chose (``record``: the choice's); ``None`` keeps the weighting and records the
        choice. This state is left as it is."""
        if combination is None:
            return replace(self, record=record)
        n_lfs = max(max(c) for c in self.clusters) + 1
        loadings = np.zeros(max(n_lfs, len(combination.weights)))
        for cluster, loading in zip(self.clusters, self.loadings):
            loadings[list(cluster)] = loading
        k = len(combination.weights)
        return replace(FusionState.of([[i] for i in range(k)], loadings[:k], combination.weights, np.ones(k)),
                       combine=combination.kind, choice=name, record=record, options=self.options, lfs=self.lfs)

    def lf_weights(self, n_lfs: int) -> np.ndarray:
        """The weighting as one weight per LF (of ``n_lfs``) on its standardised score (a cluster's weight shared by
        its LFs; 0 for an LF that ranks no list)."""
        weights = np.zeros(n_lfs)
        for cluster, w, scale in zip(self.clusters, self.weights, self.scales):
            weights[list(cluster)] = w / scale / len(cluster)
        return weights

    def fused(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """The fused score of each row of the LFs' raw ``scores`` (rows × LFs; ``groups``: each row's list): each
        cluster's mean standardised score over its scale, weighted, or with ``combine = "rrf"`` the reciprocal ranks
        so weighted. The one scoring of the fusion label model and of a shipped teacher."""
        scores = np.asarray(scores, dtype=np.float64)
        weights, z = np.asarray(self.weights), standardize_within(scores, groups)
        if self.combine == "rrf":
            return combined(z, groups, informative_rows(scores, groups), Combination("rrf", weights / weights.sum()))
        views = np.column_stack([z[:, list(c)].mean(axis=1) for c in self.clusters])
        return views / np.asarray(self.scales) @ weights / weights.sum()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, as :meth:`from_dict` reads them."""
        return {"clusters": [list(c) for c in self.clusters], "loadings": list(self.loadings),
                "weights": list(self.weights), "scales": list(self.scales), "combine": self.combine,
                "choice": self.choice, STATE_KEY: self.record.to_dict() if self.record else {},
                "options": dict(self.options), **({"lfs": [asdict(w) for w in self.lfs]} if self.lfs else {})}

    @classmethod
    def from_dict(cls, saved: object, file: str | Path | None = None, where: str = "",
                  n_lfs: int | None = None) -> FusionState:
        """The state of :meth:`to_dict` read back from a file someone may have changed (``where``: the fields it is
        under; ``n_lfs``: the LFs its clusters index, where known): clusters of distinct LF indices in range, one
        finite loading, non-negative weight (some positive) and positive scale a cluster, known options of positive
        finite values. Each problem is a :class:`DataError` naming ``file`` and the field."""
        def fail(message: str, name: str) -> DataError:
            return DataError(message, file=file, field=where + name)

        saved = read_object(saved, "the fusion model's fitted state", file, where)
        clusters = read_field(saved, "clusters", LIST, file, where)
        if not clusters:
            raise fail("no cluster of LFs", "clusters")
        seen: list[int] = []
        top = n_lfs - 1 if n_lfs is not None else "any"
        for k, cluster in enumerate(clusters):
            if not isinstance(cluster, list) or not cluster:
                raise fail("expected a non-empty list of LF indices", f"clusters[{k}]")
            for i in cluster:
                if isinstance(i, bool) or not isinstance(i, int) or i < 0 or n_lfs is not None and i >= n_lfs or (
                        i in seen):
                    raise fail(f"LF index {i!r} is not one of 0..{top} (once each)", f"clusters[{k}]")
                seen.append(i)
        numbers = {}
        for key in ("loadings", "weights", "scales"):
            values = read_field(saved, key, LIST, file, where)
            if len(values) != len(clusters):
                raise fail(f"{len(values)} values for {len(clusters)} clusters", key)
            for k, value in enumerate(values):
                if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                    raise fail(f"{value!r} is not a finite number", f"{key}[{k}]")
            numbers[key] = values
        if any(w < 0 for w in numbers["weights"]) or not any(w > 0 for w in numbers["weights"]):
            raise fail("weights must be >= 0, one at least > 0", "weights")
        if any(s <= 0 for s in numbers["scales"]):
            raise fail("scales must be > 0", "scales")
        combine = saved.get("combine", "linear")
        if combine not in COMBINES:
            raise fail(f"{combine!r} is not 'linear' or 'rrf'", "combine")
        choice = read_field(saved, "choice", TEXT, file, where, default=LABEL_FREE)
        options = read_field(saved, "options", OBJECT, file, where)
        for key, value in options.items():
            if key not in OPTIONS + RETIRED_OPTIONS:
                raise fail(f"unknown option {key!r}", "options")
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or (
                    value < 0 or value == 0 and key not in RETIRED_OPTIONS):
                raise fail(f"{value!r} is not a positive finite number", f"options.{key}")
        record = read_field(saved, STATE_KEY, OBJECT | NULL, file, where, default=None)
        lfs = read_field(saved, "lfs", LIST, file, where, default=[])
        return cls.of(clusters, numbers["loadings"], numbers["weights"], numbers["scales"], combine=combine,
                      choice=choice, options={k: v for k, v in options.items() if k in OPTIONS},
                      record=read_record(record, file, f"{where}{STATE_KEY}.", STATE_KINDS) if record else None,
                      lfs=tuple(LFWeight.from_dict(w, file, f"{where}lfs[{k}].") for k, w in enumerate(lfs)))
