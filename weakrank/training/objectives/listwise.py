"""Listwise distillation of the label model's ranking of each query's group of candidates (``mode = "listwise"``,
``loss = "kl"``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from weakrank.training.batches import ListBatch
from weakrank.training.objectives.base import Objective, TrainSettings, check, refuse

if TYPE_CHECKING:
    import torch

    from weakrank.training.objectives.base import Ranker


@dataclass
class ListwiseOptions:
    """The ``[train]`` options of listwise distillation."""

    group_size: int = field(default=8, metadata={
        "group": "objective", "help": "listwise: candidates per query in a group (the teacher's top one + random others)"})
    temperature: float = field(default=2.0, metadata={
        "group": "objective", "help": "listwise: temperature of the teacher's softmax over standardised scores"})
    anchor: float = field(default=0.0, metadata={
        "group": "objective", "help": "listwise bi-encoder: weight of a KL term to the list distribution of the "
                                      "model training started from (its zero-shot ranking), >= 0; 0: off"})
    scale_free: bool = field(default=True, metadata={
        "group": "objective", "help": "listwise: standardise the student's scores over each group too, so only the "
                                      "teacher's order and relative gaps are distilled, not its spread"})


def check_kl_settings(temperature: float, anchor: float, who: str) -> None:
    check(temperature > 0, who, f"temperature = {temperature!r} must be > 0")
    check(anchor >= 0, who, f"anchor = {anchor!r} must be >= 0")


@dataclass(frozen=True)
class ListwiseKL(Objective):
    """Mean over queries of KL(softmax(teacher / ``temperature``) ‖ softmax(student)) over each query's group (the
    student's scores standardised over the group and divided by ``temperature`` first with ``scale_free``);
    ``anchor`` > 0 adds ``anchor`` · KL to the group's distribution under the model as training began (a frozen
    copy taken by :meth:`begin`), which keeps a student that starts from a pretrained ranker (the bi-encoder:
    the embedding LF's own model) near its zero-shot ranking."""

    listwise = True
    loss = "kl"
    options = ListwiseOptions
    temperature: float = 1.0
    anchor: float = 0.0
    scale_free: bool = True
    _start: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_kl_settings(self.temperature, self.anchor, "ListwiseKL")

    @classmethod
    def selects(cls, cfg: TrainSettings) -> bool:
        return cfg.mode == "listwise"

    @classmethod
    def from_config(cls, cfg: TrainSettings) -> ListwiseKL:
        return cls(cfg.temperature, cfg.anchor, cfg.scale_free)

    @classmethod
    def check_config(cls, cfg: TrainSettings) -> None:
        refuse((cfg.mode == "listwise") == (cfg.loss == "kl"),
               f"[train] mode = {cfg.mode!r} with loss = {cfg.loss!r}: mode = 'listwise' goes with loss = 'kl' "
               "(distillation of the label model's scores), the other modes with 'hinge' or 'ce'")
        refuse(cfg.mode != "listwise" or cfg.target == "plain",
               "[train] listwise distillation takes target = 'plain' (its targets are the teacher's scores)")
        check(cfg.group_size >= 2, "[train]", f"group_size = {cfg.group_size!r} must be >= 2")
        check_kl_settings(cfg.temperature, cfg.anchor, "[train]")
        refuse(not cfg.anchor or (cfg.architecture == "bi-encoder" and cfg.mode == "listwise"),
               "[train] anchor > 0 needs architecture = 'bi-encoder' and mode = 'listwise': a cross-encoder starts "
               "from an untrained head, whose ranking is no anchor")

    def begin(self, model: Ranker) -> None:
        """With an anchor, keep a frozen copy of ``model`` as it starts."""
        if self.anchor:
            self._start["model"] = copy.deepcopy(model).eval().requires_grad_(False)

    def start_scores(self, queries: list[str], passages: list[str]) -> torch.Tensor | None:
        """The starting model's scores of the pairs (None without an anchor)."""
        import torch

        if not self.anchor:
            return None
        if "model" not in self._start:
            raise RuntimeError("ListwiseKL with an anchor: call begin(model) before the first step")
        with torch.no_grad():
            return self._start["model"].score(queries, passages).float()

    def __call__(self, model: Ranker, batch: ListBatch, step: int, total: int) -> torch.Tensor:
        import torch

        from weakrank.training.losses import listwise_kl

        sizes = [len(p) for p in batch.passages]
        queries = [q for q, n in zip(batch.queries, sizes) for _ in range(n)]
        passages = [p for group in batch.passages for p in group]
        start = self.start_scores(queries, passages)
        scores = model.score(queries, passages).float()
        starts = torch.split(start, sizes) if start is not None else [None] * len(sizes)
        losses = [
            listwise_kl(s, torch.as_tensor(t, device=scores.device), self.temperature, s0, self.anchor, self.scale_free)
            for s, t, s0 in zip(torch.split(scores, sizes), batch.teacher, starts)
        ]
        return torch.stack(losses).mean()
