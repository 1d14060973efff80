"""Listwise distillation of the label model's ranking of each query's group of candidates."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from weakrank.training.data import ListBatch
from weakrank.training.losses import listwise_kl
from weakrank.training.objectives.base import Objective, check
from weakrank.training.rankers import Ranker


@dataclass(frozen=True)
class ListwiseKL(Objective):
    """Mean over queries of KL(softmax(teacher / ``temperature``) ‖ softmax(student)) over each query's group."""

    listwise = True
    temperature: float = 1.0

    def __post_init__(self) -> None:
        check(self.temperature > 0, "ListwiseKL", f"temperature = {self.temperature!r} must be > 0")

    def __call__(self, model: Ranker, batch: ListBatch, step: int, total: int) -> torch.Tensor:
        sizes = [len(p) for p in batch.passages]
        queries = [q for q, n in zip(batch.queries, sizes) for _ in range(n)]
        scores = model.score(queries, [p for group in batch.passages for p in group]).float()
        losses = [
            listwise_kl(s, torch.as_tensor(t, device=scores.device), self.temperature)
            for s, t in zip(torch.split(scores, sizes), batch.teacher)
        ]
        return torch.stack(losses).mean()
