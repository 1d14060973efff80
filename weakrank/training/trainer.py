"""The training loop: AdamW, linear warm-up/decay, clipping, AMP on GPU, checkpoints, resume,
early stopping on dev queries scored against pseudo-labels (gold only in supervised mode)."""

from __future__ import annotations

import json
import random
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from ir_measures import AP, R
from transformers import get_linear_schedule_with_warmup

from weakrank.callbacks import TrainerCallback
from weakrank.errors import ConfigError, DataError
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import atomic_dir, atomic_path, write_text
from weakrank.progress import tqdm
from weakrank.training import distributed
from weakrank.training.config import TARGET_ALIASES, TrainConfig
from weakrank.training.data import Batch, ListBatch, TrainingData
from weakrank.training.model import write_model_card
from weakrank.training.objective import batch_loss
from weakrank.training.rankers import Ranker, new_ranker
from weakrank.training.samplers import (
    BM25Sampler,
    MixedSampler,
    NegativeSampler,
    RandomSampler,
    SwitchSampler,
    UniformSampler,
)

CHECKPOINT = "checkpoint.pt"
# settings a resumed run may change: they decide when to evaluate and save, not what is learnt
RESUME_MAY_CHANGE = frozenset({"eval_every", "checkpoint_every", "patience", "fuse_lfs"})


@dataclass
class Progress:
    """Where training stands; saved in checkpoints."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    best: float = -1.0
    bad_evals: int = 0
    history: list[dict] = field(default_factory=list)


def make_sampler(cfg: TrainConfig, collection: list[str]) -> NegativeSampler:
    """The configured negative sampler (``policy``/``random_policy``: a switch a policy callback drives)."""
    bm25, random_ = BM25Sampler(cfg.bm25_top_k), RandomSampler(collection)
    if cfg.sampler == "bm25":
        return bm25
    if cfg.sampler == "random":
        return random_
    if cfg.sampler == "uniform":
        return UniformSampler()
    if cfg.sampler == "mixed":
        return MixedSampler([bm25, random_], cfg.mixed_probabilities)
    return SwitchSampler({"bm25": bm25, "random": random_}, active="bm25")


def pick_device_and_precision(cfg: TrainConfig) -> tuple[torch.device, torch.dtype | None]:
    """CUDA with bf16 (fp16 where bf16 is unsupported) autocast when present, else CPU in fp32."""
    if not torch.cuda.is_available():
        return torch.device("cpu"), None
    if cfg.precision == "fp32":
        return torch.device("cuda"), None
    if cfg.precision == "fp16" or (cfg.precision == "auto" and not torch.cuda.is_bf16_supported()):
        return torch.device("cuda"), torch.float16
    return torch.device("cuda"), torch.bfloat16


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def read_checkpoint(path: Path, device: torch.device) -> dict:
    """A checkpoint's state; a truncated, foreign or crafted file is a :class:`DataError` naming it.
    ``weights_only``: a checkpoint holds tensors and plain values only, so loading one never runs code."""
    try:
        state = torch.load(path, weights_only=True, map_location=device)
    except Exception as err:  # torch raises RuntimeError, UnpicklingError, EOFError, … on a bad file
        raise DataError(f"not a readable weakrank checkpoint: {type(err).__name__}: {str(err).splitlines()[0]}",
                        file=path) from None
    if not isinstance(state, dict) or not {"model", "optimizer", "progress", "config", "rng"} <= set(state):
        raise DataError("not a weakrank checkpoint (model, optimizer, progress, config or rng missing)", file=path)
    return state


def numpy_state() -> dict:
    """NumPy's global RNG state as a tensor and plain values (loadable with ``weights_only=True``)."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    return {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos), "has_gauss": int(has_gauss),
            "gauss": float(gauss)}


def set_numpy_state(state: dict) -> None:
    """Restore what :func:`numpy_state` saved."""
    keys = state["keys"].cpu().numpy().astype(np.uint32)
    np.random.set_state((state["kind"], keys, state["pos"], state["has_gauss"], state["gauss"]))


LIST_MEASURES = {"map": AP, "recall@1": R @ 1}


def ranking_metrics(model: Ranker, data: TrainingData, query_ids: list[str], batch_size: int = 64) -> dict[str, float]:
    """MAP and recall@1 of the model's ranking of each query's list against its labels (queries with both), by
    :func:`~weakrank.evaluation.metrics.evaluate_run` (ir-measures; tied scores in random order)."""
    lists = []
    for qid in query_ids:
        ql = data.lists[qid]
        relevant = (ql.labels == 1).astype(int)
        if relevant.min() == relevant.max():
            continue
        pairs = [(data.query_text[qid], data.passage_text[p]) for p in ql.passage_ids]
        scores = model.predict(pairs, batch_size=batch_size)
        lists.append(pd.DataFrame({"query_id": qid, "passage_id": ql.passage_ids, "score": scores, "relevance": relevant}))
    if not lists:
        return {name: float("nan") for name in LIST_MEASURES}
    table = pd.concat(lists, ignore_index=True)
    per_query = evaluate_run(table[["query_id", "passage_id", "score"]], table[["query_id", "passage_id", "relevance"]],
                             rn=(), measures=LIST_MEASURES)
    return {name: float(value) for name, value in per_query.mean().items()}


def parameter_groups(model: Ranker, cfg: TrainConfig) -> list[dict]:
    """AdamW groups: no weight decay on biases and norms; the fresh MLP head (cross-encoder) at ``head_lr`` when set."""
    no_decay = ("bias", "LayerNorm.weight", "norm.weight")
    groups = []
    for part, lr in ((model.encoder, cfg.lr), (model.head, cfg.head_lr or cfg.lr)):
        named = [(n, p) for n, p in part.named_parameters() if p.requires_grad]
        groups += [
            {"params": [p for n, p in named if not n.endswith(no_decay)], "weight_decay": cfg.weight_decay, "lr": lr},
            {"params": [p for n, p in named if n.endswith(no_decay)], "weight_decay": 0.0, "lr": lr},
        ]
    return [g for g in groups if g["params"]]


class Trainer:
    """Fine-tunes a ranker (:class:`BertPR` or :class:`BiEncoder`) on labelled lists; see :func:`weakrank.training.train`."""

    def __init__(
        self,
        cfg: TrainConfig,
        data: TrainingData,
        dev_data: TrainingData | None,
        out_dir: Path,
        collection: list[str],
        callbacks: list[TrainerCallback] | None = None,
        card: dict | None = None,
    ) -> None:
        seed_everything(cfg.seed)
        self.card = dict(card or {})  # what the model card says besides the config: labels, LFs
        self.cfg, self.data, self.dev_data, self.out_dir = cfg, data, dev_data, Path(out_dir)
        self.dev_queries = list(dev_data.lists)[: cfg.dev_queries] if dev_data is not None else []
        self.train_queries = list(data.lists)[: cfg.track_train_queries]
        self.dist = distributed.setup()
        self.device, self.amp_dtype = pick_device_and_precision(cfg)
        if self.device.type == "cuda":
            self.device = torch.device("cuda", self.dist.local_rank)
        self.model = new_ranker(cfg).to(self.device)
        if cfg.freeze_embeddings:
            self.model.encoder.get_input_embeddings().weight.requires_grad_(False)
        self.ranker = distributed.DDPRanker(self.model, self.dist) if self.dist.enabled else None
        self.sampler = make_sampler(cfg, collection)
        self.callbacks = callbacks or []
        # fused AdamW: one kernel over all tensors (on CPU ~7x faster than the per-tensor loop)
        self.optimizer = torch.optim.AdamW(parameter_groups(self.model, cfg), lr=cfg.lr, fused=True)
        self.listwise = cfg.mode == "listwise"
        per_epoch = data.steps_per_epoch(cfg.batch_size, self.listwise)
        if per_epoch == 0:
            what = "list the labels rank (listwise)" if self.listwise else "pair labelled relevant"
            raise DataError(f"split {data.split!r} has no {what} to train on", field="label")
        self.total_steps = cfg.total_steps(per_epoch)
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, int(cfg.warmup * self.total_steps), self.total_steps)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.progress = Progress()

    # -- checkpoints ---------------------------------------------------------------------------
    def save_checkpoint(self) -> Path:
        """Model, optimiser, scheduler, scaler, RNG states and progress, in one file, atomically (rank 0 only)."""
        path = self.out_dir / CHECKPOINT
        if not self.dist.is_main:
            return path
        state = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "progress": asdict(self.progress),
            "config": asdict(self.cfg),
            "rng": {"torch": torch.get_rng_state(), "numpy": numpy_state(), "python": random.getstate()},
        }
        with atomic_path(path) as tmp:
            torch.save(state, tmp)
        return path

    def load_checkpoint(self) -> None:
        """Continue from ``checkpoint.pt``: same step, optimiser state and data order."""
        state = read_checkpoint(self.out_dir / CHECKPOINT, self.device)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        self.progress = Progress(**state["progress"])
        torch.set_rng_state(state["rng"]["torch"])
        set_numpy_state(state["rng"]["numpy"])
        random.setstate(state["rng"]["python"])

    def resume(self) -> None:
        """Load ``checkpoint.pt``; refuse a missing one, or one written under other training settings."""
        path = self.out_dir / CHECKPOINT
        if not path.exists():
            raise DataError("--resume: no checkpoint to resume from (train without --resume to start afresh)", file=path)
        saved = read_checkpoint(path, torch.device("cpu"))["config"]
        if saved.get("target") in TARGET_ALIASES:  # written under a deprecated target name
            saved["target"] = TARGET_ALIASES[saved["target"]]
        changed = sorted(k for k, v in asdict(self.cfg).items()
                         if k not in RESUME_MAY_CHANGE and k in saved and saved[k] != v)
        if changed:
            raise ConfigError(f"--resume with changed training settings {changed} (the checkpoint was trained with "
                              f"{ {k: saved[k] for k in changed} }); train afresh into another output to change them")
        self.load_checkpoint()

    def save_model(self, directory: Path) -> None:
        """Write the model and its card into ``directory``, swapped in whole (rank 0 only)."""
        if not self.dist.is_main:
            return
        cfg = self.cfg
        info = {**self.card, "architecture": cfg.architecture, "encoder": cfg.encoder, "supervised": cfg.supervised,
                "mode": cfg.mode, "loss": cfg.loss, "target": cfg.target, "steps": self.progress.step,
                "batch size": cfg.batch_size, "max length": cfg.max_length, "learning rate": cfg.lr, "seed": cfg.seed}
        last = self.progress.history[-1] if self.progress.history else None
        with atomic_dir(directory) as tmp:
            self.model.save(tmp)
            write_model_card(tmp, info, {k: v for k, v in last.items() if k != "step"} if last else None)

    # -- training ------------------------------------------------------------------------------
    def backward(self, batch: Batch | ListBatch) -> float:
        """Gradients of the batch loss: this process's micro-batches (see :mod:`.distributed`); returns the loss."""
        self.model.train()
        epsilon = self.cfg.epsilon_at(self.progress.step, self.total_steps)
        self.optimizer.zero_grad(set_to_none=True)
        parts = distributed.micro_batches(batch, self.dist, self.cfg.grad_accum)
        total = 0.0
        for i, (part, weight) in enumerate(parts):
            autocast = torch.autocast("cuda", dtype=self.amp_dtype) if self.amp_dtype else nullcontext()
            sync = self.ranker.no_sync(i < len(parts) - 1) if self.ranker else nullcontext()
            with sync:
                with autocast:
                    loss = batch_loss(self.ranker or self.model, part, self.cfg, epsilon) * weight
                self.scaler.scale(loss).backward()
            total += float(loss.detach())
        return distributed.mean_over_ranks(total, self.dist)

    def step(self, batch: Batch | ListBatch) -> tuple[float, float]:
        """One optimisation step; returns (loss, gradient norm of the head, or of the whole model without one)."""
        loss = self.backward(batch)
        self.scaler.unscale_(self.optimizer)
        head = list(self.model.head.parameters())
        head_norm = float(torch.nn.utils.clip_grad_norm_(head, float("inf"))) if head else 0.0
        total_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip))
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.progress.step += 1
        return loss, head_norm if head else total_norm

    def evaluate(self) -> dict[str, float]:
        """Dev MAP and recall@1 against the dev labels (pseudo-labels in weak mode, gold in supervised
        mode), and the same on ``track_train_queries`` training queries (the memorisation signal)."""
        out: dict[str, float] = {"step": self.progress.step}
        if self.dev_data is not None:
            out.update({f"dev_{k}": v for k, v in self.dev_metrics().items()})
        if self.train_queries:
            out.update({f"train_{k}": v for k, v in ranking_metrics(self.model, self.data, self.train_queries).items()})
        return out

    def dev_metrics(self, queries: int | None = None) -> dict[str, float]:
        """MAP and recall@1 on the first ``queries`` dev queries (all ``dev_queries`` when None); needs dev data."""
        return ranking_metrics(self.model, self.dev_data, self.dev_queries[:queries])

    def smoothing_stage(self, step: int) -> bool:
        """True during the first (smoothing) stage of T-LS/T-WSLS: its checkpoints are never the best model."""
        return self.cfg.target in ("tls", "twsls") and step <= self.cfg.two_stage_fraction * self.total_steps

    def _after_eval(self, metrics: dict[str, float]) -> bool:
        """Record an evaluation, keep the best model by dev MAP; True when early stopping triggers."""
        self.progress.history.append(metrics)
        for callback in self.callbacks:
            callback.on_evaluate(self, metrics)
        if self.dist.is_main:
            write_text(pd.DataFrame(self.progress.history).to_csv(index=False), self.out_dir / "history.csv")
        value = metrics.get("dev_map", float("nan"))
        if np.isnan(value) or self.smoothing_stage(int(metrics["step"])):
            return False
        if value > self.progress.best:
            self.progress.best, self.progress.bad_evals = value, 0
            self.save_model(self.out_dir / "best")
            return False
        self.progress.bad_evals += 1
        return self.progress.bad_evals >= self.cfg.patience

    def fit(self, resume: bool = False, show_progress: bool = True) -> Progress:
        """Train to ``max_steps``/``epochs`` or early stop; the final model goes to ``<out>/final``."""
        cfg = self.cfg
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if resume:
            self.resume()
        if self.dist.is_main:
            write_text(json.dumps(asdict(cfg), indent=1), self.out_dir / "train_config.json")
        show_progress = show_progress and self.dist.is_main
        bar = tqdm(total=self.total_steps, initial=self.progress.step, desc="training", unit="step", disable=not show_progress)
        stop, pairs, started = False, 0, time.perf_counter()
        while not stop and self.progress.step < self.total_steps:  # max_steps: as many epochs as it takes
            order = self.data.epoch_order(cfg.seed, self.progress.epoch, self.listwise)
            batches = [order[i : i + cfg.batch_size] for i in range(0, len(order), cfg.batch_size)]
            for b in range(self.progress.batch_in_epoch, len(batches)):
                rng = np.random.default_rng([cfg.seed, self.progress.epoch, b])
                if self.listwise:
                    batch = self.data.list_batch(batches[b], cfg.group_size, rng)
                else:
                    batch = self.data.batch(batches[b], self.sampler, cfg.negatives, rng)
                if not batch.queries:
                    continue
                loss, head_norm = self.step(batch)
                self.progress.batch_in_epoch = b + 1
                pairs += sum(len(p) for p in batch.passages) if self.listwise else 2 * len(batch.queries)
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.4f}", pairs_s=f"{pairs / (time.perf_counter() - started):.1f}")
                for callback in self.callbacks:
                    callback.on_step(self, batch, loss, head_norm)
                if cfg.eval_every and self.progress.step % cfg.eval_every == 0:
                    stop = self._after_eval(self.evaluate())
                if cfg.checkpoint_every and self.progress.step % cfg.checkpoint_every == 0:
                    self.save_checkpoint()
                if stop or self.progress.step >= self.total_steps:
                    break
            else:
                self.progress.epoch, self.progress.batch_in_epoch = self.progress.epoch + 1, 0
        bar.close()
        for callback in self.callbacks:
            callback.on_end(self)
        if (self.dev_data is not None or self.train_queries) and (
            not self.progress.history or self.progress.history[-1]["step"] != self.progress.step
        ):
            self._after_eval(self.evaluate())
        self.save_model(self.out_dir / "final")
        self.save_checkpoint()
        return self.progress
