"""Data-parallel training: ``torchrun`` environment → process group, triplet sharding, DDP wrapper.

``torchrun --nproc_per_node=N -m weakrank.cli train cfg.toml`` starts N processes; each builds the
same global batch (the same anchors and sampled negatives: the RNG is seeded per step), keeps its
``rank::world`` share of the triplets (like ``DistributedSampler``, over triplets) and splits it into
``grad_accum`` micro-batches. Each micro-batch loss is weighted by its share of the global batch, and
DDP averages gradients over processes, so one optimiser step equals one step on the whole batch:
``batch_size`` is the effective batch whatever the number of processes and ``grad_accum``.
Only rank 0 writes checkpoints, models and progress bars. Without torchrun (``WORLD_SIZE`` unset or 1)
nothing changes: one process, no process group.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, fields

import numpy as np
import torch
import torch.distributed as dist

from weakrank.training.data import Batch, ListBatch
from weakrank.training.rankers import Ranker


@dataclass(frozen=True)
class DistEnv:
    """This process's place among the training processes."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        """True on the process that writes files and shows progress (rank 0)."""
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1


def setup(backend: str | None = None) -> DistEnv:
    """Join the process group torchrun describes (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``/``PORT``).

    NCCL on GPUs, gloo on CPU (or ``backend``); a no-op returning rank 0 of 1 outside torchrun.
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistEnv()
    env = DistEnv(int(os.environ["RANK"]), world, int(os.environ.get("LOCAL_RANK", "0")))
    if torch.cuda.is_available():
        torch.cuda.set_device(env.local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend or ("nccl" if torch.cuda.is_available() else "gloo"))
    return env


def teardown() -> None:
    """Leave the process group (if one was joined)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def batch_slice(batch: Batch | ListBatch, index: Sequence[int]) -> Batch | ListBatch:
    """The triplets (or lists) of ``batch`` at ``index``."""
    idx = np.asarray(index, dtype=np.int64)
    values = {}
    for f in fields(batch):
        value = getattr(batch, f.name)
        values[f.name] = [value[i] for i in idx] if isinstance(value, list) else value[idx]
    return type(batch)(**values)


def micro_batches(batch: Batch | ListBatch, env: DistEnv, grad_accum: int) -> list[tuple[Batch | ListBatch, float]]:
    """This rank's ``grad_accum`` micro-batches of the global ``batch``, each with its loss weight.

    Weights are (triplets in the micro-batch / triplets in the batch) × world size (DDP averages over
    processes), so the weighted losses summed over micro-batches and processes give the batch mean. A
    rank left without triplets gets a zero-weighted copy of one, so every process runs the same
    collective calls.
    """
    total = len(batch.queries)
    if not env.enabled and grad_accum == 1:
        return [(batch, 1.0)]
    mine = np.arange(env.rank, total, env.world_size)
    out = []
    for part in np.array_split(mine, grad_accum):
        if len(part):
            out.append((batch_slice(batch, part), len(part) * env.world_size / total))
        else:
            out.append((batch_slice(batch, [0]), 0.0))
    return out


class DDPRanker:
    """A ranker behind ``DistributedDataParallel``: ``score`` runs through the DDP forward."""

    def __init__(self, model: Ranker, env: DistEnv) -> None:
        device_ids = [env.local_rank] if model.device.type == "cuda" else None
        # the encoder's pooler is not used by the [CLS]-MLP head: its parameters get no gradient
        self.ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids, find_unused_parameters=True)
        self.module = model

    @property
    def device(self) -> torch.device:
        return self.module.device

    def __call__(self, **inputs: torch.Tensor) -> torch.Tensor:
        """The model's forward on tokenised ``inputs``, through DDP."""
        return self.ddp(**inputs)

    def score(self, queries: Sequence[str], passages: Sequence[str]) -> torch.Tensor:
        """Scores of aligned pairs, with gradients synchronised across processes on backward."""
        return self.ddp(**self.module.tokenize(queries, passages))

    @contextmanager
    def no_sync(self, skip: bool) -> Iterator[None]:
        """Accumulate gradients locally (no all-reduce) when ``skip``; the last micro-batch syncs."""
        with self.ddp.no_sync() if skip else nullcontext():
            yield


def mean_over_ranks(value: float, env: DistEnv) -> float:
    """The sum of ``value`` over processes divided by the world size (the value itself on one process)."""
    if not env.enabled:
        return value
    tensor = torch.tensor([value], dtype=torch.float64)
    if dist.get_backend() == "nccl":
        tensor = tensor.cuda()
    dist.all_reduce(tensor)
    return float(tensor.item()) / env.world_size
