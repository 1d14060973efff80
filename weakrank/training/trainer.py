"""The training loop: AdamW, linear warm-up/decay, clipping, AMP on GPU, checkpoints, resume,
early stopping by its evaluator's primary metric (:mod:`weakrank.training.evaluators`: agreement with the teacher's
ranking, gold MAP in supervised mode, or whichever evaluator the caller hands it).

In the shape of sentence-transformers' ``CrossEncoderTrainer(model, args, loss, evaluator, callbacks)``: the
:class:`Trainer` is given its model, objective (:mod:`weakrank.training.objectives`), negative sampler,
settings, evaluator and callbacks; :func:`weakrank.training.build.trainer_from_config` builds them from a ``TrainConfig``. Its
checkpoints and resume: :mod:`weakrank.training.checkpoints`; the models it saves: :mod:`weakrank.training.saving`;
its evaluations and the best model they keep: :mod:`weakrank.training.selection`; what it measures:
:mod:`weakrank.training.measures`. What steers it from outside (AC-IR's policy, a hold-out of queries) is a callback
(:mod:`weakrank.training.callbacks`).
"""

from __future__ import annotations

import json
import random
import time
from contextlib import nullcontext
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from transformers import get_linear_schedule_with_warmup

from weakrank.errors import DataError
from weakrank.io import write_text
from weakrank.progress import tqdm
from weakrank.training import distributed
from weakrank.training.callbacks import TrainerCallback
from weakrank.training.checkpoints import CHECKPOINT, Checkpoints, Progress
from weakrank.training.config import AUTO, TrainConfig
from weakrank.training.data import Batch, ListBatch, TrainingData
from weakrank.training.evaluators import Evaluator
from weakrank.training.objectives import Objective
from weakrank.training.rankers import Ranker
from weakrank.training.samplers import NegativeSampler
from weakrank.training.saving import TRAIN_CONFIG, ModelSaving
from weakrank.training.selection import Selection
from weakrank.training.start_check import StartCheck, checks_start


def pick_device_and_precision(cfg: TrainConfig) -> tuple[torch.device, torch.dtype | None]:
    """CUDA with bf16 (fp16 where bf16 is unsupported) autocast when present, else CPU in fp32."""
    if not torch.cuda.is_available():
        return torch.device("cpu"), None
    if cfg.precision == "fp32":
        return torch.device("cuda"), None
    if cfg.precision == "fp16" or (cfg.precision == "auto" and not torch.cuda.is_bf16_supported()):
        return torch.device("cuda"), torch.float16
    return torch.device("cuda"), torch.bfloat16


def prepare_run(args: TrainConfig) -> None:
    """Call before building a run's model: seeds Python's, NumPy's and torch's RNGs (the same fresh head on every
    process) and joins the process group torchrun describes, if any."""
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    distributed.setup()


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


class Trainer(Checkpoints, ModelSaving, Selection):
    """Fine-tunes ``model`` (:class:`CrossEncoderRanker` or :class:`BiEncoder`) on ``data`` by ``objective``,
    negatives drawn by ``sampler``, as ``args`` says; ``callbacks`` are called at each step, evaluation and the end.
    Evaluates with ``evaluator`` (none: no early stopping; the checkpoint with its best ``primary_metric`` is kept)
    and writes checkpoints, models (with ``card`` in their model
    card) and history under ``out_dir``. Build the model after :func:`prepare_run`."""

    def __init__(
        self,
        model: Ranker,
        objective: Objective,
        sampler: NegativeSampler,
        args: TrainConfig,
        callbacks: list[TrainerCallback] | None = None,
        *,
        data: TrainingData,
        evaluator: Evaluator | None = None,
        out_dir: str | Path,
        card: dict | None = None,
    ) -> None:
        self.objective, self.sampler, self.args = objective, sampler, args
        self.callbacks = list(callbacks or [])
        self.card = dict(card or {})  # what the model card says besides the config: labels, LFs
        self.data, self.evaluator, self.out_dir = data, evaluator, Path(out_dir)
        self.selection = evaluator.primary_metric if evaluator is not None else ""
        self.train_queries = list(data.lists)[: args.track_train_queries]
        self.dist = distributed.setup()
        self.device, self.amp_dtype = pick_device_and_precision(args)
        if self.device.type == "cuda":
            self.device = torch.device("cuda", self.dist.local_rank)
        self.model = model.to(self.device)
        # WiSE-FT (Wortsman et al., 2022): what is saved mixes the fine-tuned encoder with the one it started from,
        # by a share chosen on held-out lists with interpolate = "auto" (:mod:`.start_check`); a cross-encoder's
        # fresh head is no start
        self.share = 1.0 if args.interpolate == AUTO else args.interpolate
        mixes = checks_start(args) or (args.interpolate != AUTO and args.interpolate < 1)
        self.start_weights = ({k: v.detach().cpu().clone() for k, v in self.model.encoder.state_dict().items()}
                              if mixes else None)
        # the best evaluation's weights and the agreement of each dev list it measured, kept to choose the share
        self.best_weights: dict[str, torch.Tensor] | None = None
        self.best_per_list: np.ndarray | None = None
        self.start_check_: StartCheck | None = None
        objective.begin(self.model)  # the model as it starts (a resume loads its checkpoint later)
        self.ranker = distributed.DDPRanker(self.model, self.dist) if self.dist.enabled else None
        # fused AdamW: one kernel over all tensors (on CPU ~7x faster than the per-tensor loop)
        self.optimizer = torch.optim.AdamW(parameter_groups(self.model, args), lr=args.lr, fused=True)
        self.listwise = objective.listwise
        self.steps_per_epoch = data.steps_per_epoch(args.batch_size, self.listwise)
        if self.steps_per_epoch == 0:
            what = "list the labels rank (listwise)" if self.listwise else "pair labelled relevant"
            raise DataError(f"split {data.split!r} has no {what} to train on", field="label")
        self.total_steps = args.total_steps(self.steps_per_epoch)
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, int(args.warmup * self.total_steps), self.total_steps)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.progress = Progress()
        # stochastic weight averaging (Izmailov et al., 2018): the running mean of the weights after each step
        # of the last ``average_weights`` share of the steps; what is saved
        self.average_after = (int(self.total_steps * (1 - args.average_weights)) if args.average_weights > 0
                              else self.total_steps)
        self.average: dict[str, torch.Tensor] | None = None

    # -- training ------------------------------------------------------------------------------
    def backward(self, batch: Batch | ListBatch) -> float:
        """Gradients of the batch loss: this process's micro-batches (see :mod:`.distributed`); returns the loss."""
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        parts = distributed.micro_batches(batch, self.dist, self.args.grad_accum)
        model, step, total_steps = self.ranker or self.model, self.progress.step, self.total_steps
        total = 0.0
        for i, (part, weight) in enumerate(parts):
            autocast = torch.autocast("cuda", dtype=self.amp_dtype) if self.amp_dtype else nullcontext()
            sync = self.ranker.no_sync(i < len(parts) - 1) if self.ranker else nullcontext()
            with sync:
                with autocast:
                    loss = self.objective(model, part, step, total_steps) * weight
                self.scaler.scale(loss).backward()
            total += float(loss.detach())
        return distributed.mean_over_ranks(total, self.dist)

    def step(self, batch: Batch | ListBatch) -> tuple[float, float]:
        """One optimisation step; returns (loss, gradient norm of the head, or of the whole model without one)."""
        loss = self.backward(batch)
        self.scaler.unscale_(self.optimizer)
        head = list(self.model.head.parameters())
        head_norm = float(torch.nn.utils.clip_grad_norm_(head, float("inf"))) if head else 0.0
        total_norm = float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.grad_clip))
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.progress.step += 1
        if self.progress.step > self.average_after:
            self.update_average()
        return loss, head_norm if head else total_norm

    def left_out(self) -> set[str]:
        """The training queries the callbacks keep out of the epoch about to begin."""
        return {query for callback in self.callbacks for query in callback.leaves_out(self)}

    def epoch_ends(self, empty: bool = False) -> bool:
        """Whether a callback ends the epoch before its next batch (``empty``: it has none); a new one begins."""
        if not any([callback.on_batch_begin(self, empty) for callback in self.callbacks]):
            return False
        self.progress.epoch, self.progress.batch_in_epoch = self.progress.epoch + 1, 0
        return True

    def fit(self, resume: bool = False, show_progress: bool = True) -> Progress:
        """Train to ``max_steps``/``epochs`` or early stop; the final model goes to ``<out>/final``. ``checkpoint.pt``
        (what ``resume`` continues from) stays while training is unfinished, and once it has finished only with
        ``keep_checkpoint``. ``train_config.json`` describes the run that wrote ``final/``: written once it is, and a
        fresh run removes an earlier run's first (a killed run leaves none to describe what it did not finish)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if resume:
            self.resume()
        elif self.dist.is_main:
            (self.out_dir / TRAIN_CONFIG).unlink(missing_ok=True)
        for callback in self.callbacks:
            callback.on_train_begin(self, resume)
        bar = tqdm(total=self.total_steps, initial=self.progress.step, desc="training", unit="step",
                   disable=not (show_progress and self.dist.is_main), steps=self.dist.is_main)
        self.pace, stop = (0, time.perf_counter()), False  # pairs trained on since the start, and when it was
        while not stop and self.progress.step < self.total_steps:  # max_steps: as many epochs as it takes
            stop = self.train_epoch(bar)
        bar.close()
        self.finish()
        return self.progress

    def train_epoch(self, bar: tqdm) -> bool:
        """The batches of an epoch from where training stands (a callback may end it early); True when early stopping
        triggers."""
        args = self.args
        order = self.data.epoch_order(args.seed, self.progress.epoch, self.listwise, self.left_out())
        batches = [order[i : i + args.batch_size] for i in range(0, len(order), args.batch_size)]
        if not batches and self.epoch_ends(empty=True):
            return False
        for b in range(self.progress.batch_in_epoch, len(batches)):
            if self.epoch_ends():
                return False
            rng = np.random.default_rng([args.seed, self.progress.epoch, b])
            if self.listwise:
                batch = self.data.list_batch(batches[b], args.group_size, rng)
            else:
                batch = self.data.batch(batches[b], self.sampler, args.negatives, rng)
            if not batch.queries:
                continue
            loss, head_norm = self.step(batch)
            self.progress.batch_in_epoch = b + 1
            pairs = self.pace[0] + (sum(len(p) for p in batch.passages) if self.listwise else 2 * len(batch.queries))
            self.pace = (pairs, self.pace[1])
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.4f}", pairs_s=f"{pairs / (time.perf_counter() - self.pace[1]):.1f}")
            for callback in self.callbacks:
                callback.on_step(self, batch, loss, head_norm)
            stop = False
            with bar.paused():  # not a step: left out of the time left
                if args.eval_every and self.progress.step % args.eval_every == 0:
                    stop = self._after_eval(self.evaluate())
                if args.checkpoint_every and self.progress.step % args.checkpoint_every == 0:
                    self.save_checkpoint()
            if stop or self.progress.step >= self.total_steps:
                return stop
        self.progress.epoch, self.progress.batch_in_epoch = self.progress.epoch + 1, 0
        return False

    def finish(self) -> None:
        """After the last step: the callbacks' end, a last evaluation where the last step had none, the start check,
        the final model and its settings, the checkpoint kept or removed."""
        for callback in self.callbacks:
            callback.on_end(self)
        if (self.evaluator is not None or self.train_queries) and (
            not self.progress.history or self.progress.history[-1]["step"] != self.progress.step
        ):
            self._after_eval(self.evaluate())
        if self.choosing_share:
            self.check_start()
        self.save_model(self.out_dir / "final")
        if self.dist.is_main:
            write_text(json.dumps(asdict(self.args), indent=1), self.out_dir / TRAIN_CONFIG)
        if self.args.keep_checkpoint:
            self.save_checkpoint()
        elif self.dist.is_main:
            (self.out_dir / CHECKPOINT).unlink(missing_ok=True)
