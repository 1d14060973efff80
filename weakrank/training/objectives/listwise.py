"""Listwise distillation of the label model's ranking of each query's group of candidates."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import torch

from weakrank.training.data import ListBatch
from weakrank.training.losses import listwise_kl
from weakrank.training.objectives.base import Objective, check
from weakrank.training.rankers import Ranker


@dataclass(frozen=True)
class ListwiseKL(Objective):
    """Mean over queries of KL(softmax(teacher / ``temperature``) ‖ softmax(student)) over each query's group;
    ``anchor`` > 0 adds ``anchor`` · KL to the group's distribution under the model as training began (a frozen
    copy taken by :meth:`begin`), which keeps a student that starts from a pretrained ranker (the bi-encoder:
    the embedding LF's own model) near its zero-shot ranking."""

    listwise = True
    temperature: float = 1.0
    anchor: float = 0.0
    _start: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        check(self.temperature > 0, "ListwiseKL", f"temperature = {self.temperature!r} must be > 0")
        check(self.anchor >= 0, "ListwiseKL", f"anchor = {self.anchor!r} must be >= 0")

    def begin(self, model: Ranker) -> None:
        """With an anchor, keep a frozen copy of ``model`` as it starts."""
        if self.anchor:
            self._start["model"] = copy.deepcopy(model).eval().requires_grad_(False)

    def start_scores(self, queries: list[str], passages: list[str]) -> torch.Tensor | None:
        """The starting model's scores of the pairs (None without an anchor)."""
        if not self.anchor:
            return None
        if "model" not in self._start:
            raise RuntimeError("ListwiseKL with an anchor: call begin(model) before the first step")
        with torch.no_grad():
            return self._start["model"].score(queries, passages).float()

    def __call__(self, model: Ranker, batch: ListBatch, step: int, total: int) -> torch.Tensor:
        sizes = [len(p) for p in batch.passages]
        queries = [q for q, n in zip(batch.queries, sizes) for _ in range(n)]
        passages = [p for group in batch.passages for p in group]
        start = self.start_scores(queries, passages)
        scores = model.score(queries, passages).float()
        starts = torch.split(start, sizes) if start is not None else [None] * len(sizes)
        losses = [
            listwise_kl(s, torch.as_tensor(t, device=scores.device), self.temperature, s0, self.anchor)
            for s, t, s0 in zip(torch.split(scores, sizes), batch.teacher, starts)
        ]
        return torch.stack(losses).mean()
