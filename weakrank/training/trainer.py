"""The training loop: AdamW, linear warm-up/decay, clipping, AMP on GPU, checkpoints, resume,
early stopping on every dev query: agreement with the teacher's ranking (gold MAP in supervised mode).

In the shape of sentence-transformers' ``CrossEncoderTrainer(model, args, loss, callbacks)``: the
:class:`Trainer` is given its model, objective (:mod:`weakrank.training.objectives`), negative sampler,
settings and callbacks; :func:`weakrank.training.build.trainer_from_config` builds them from a ``TrainConfig``. (Over 300 lines: one class
whose parts — checkpoints, resume, early stopping, AMP, DDP — all read and write the loop's state.)
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from ir_measures import AP, R
from transformers import get_linear_schedule_with_warmup

from weakrank.errors import ConfigError, DataError
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import atomic_dir, atomic_path, write_text
from weakrank.progress import tqdm
from weakrank.ranker.cross_encoder import write_model_card
from weakrank.training import distributed
from weakrank.training.callbacks import TrainerCallback
from weakrank.training.config import TARGET_ALIASES, TrainConfig
from weakrank.training.data import Batch, ListBatch, TrainingData
from weakrank.training.objectives import Objective
from weakrank.training.rankers import Ranker
from weakrank.training.samplers import NegativeSampler

CHECKPOINT = "checkpoint.pt"
HELD_OUT = "held_out"  # the student saved before the judged queries joined training (few-shot mode)
TRAIN_CONFIG = "train_config.json"  # the settings of the run that wrote final/
# settings a resumed run may change: they decide when to evaluate and save, not what is learnt
RESUME_MAY_CHANGE = frozenset({"eval_every", "checkpoint_every", "keep_checkpoint", "patience", "fuse_lfs"})


@dataclass
class Progress:
    """Where training stands; saved in checkpoints."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    best: float = -1.0
    bad_evals: int = 0
    history: list[dict] = field(default_factory=list)
    judged_in: bool = False  # the judged queries have joined training (few-shot mode, after ``judged_after``)


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


def teacher_ndcg(scores: np.ndarray, teacher: np.ndarray, temperature: float = 1.0) -> float:
    """nDCG of the order of ``scores`` with the teacher's softmax(standardised score / ``temperature``) as graded
    gains: how closely a list is ranked as its teacher ranks it, on every list the teacher ranks (ties in
    ``scores`` keep the list's order)."""
    gains = np.exp((teacher - teacher.max()) / temperature)
    gains /= gains.sum()
    discount = 1.0 / np.log2(np.arange(2, len(gains) + 2))
    ideal = np.sort(gains)[::-1] @ discount
    return float(gains[np.argsort(-scores, kind="stable")] @ discount / ideal)


def ranking_metrics(model: Ranker, data: TrainingData, query_ids: list[str], batch_size: int = 64,
                    temperature: float = 1.0) -> dict[str, float]:
    """The model's ranking of each query's list against its labels: MAP and recall@1 (ir-measures; tied scores in
    random order) on the lists with a relevant and a non-relevant pair, ``agreement`` (:func:`teacher_ndcg`) on
    every list the teacher ranks; ``map_queries`` and ``agreement_queries`` count the lists each used."""
    lists, agreement = [], []
    for qid in query_ids:
        ql = data.lists[qid]
        if len(ql.passage_ids) < 2:
            continue
        pairs = [(data.query_text[qid], data.passage_text[p]) for p in ql.passage_ids]
        scores = model.predict(pairs, batch_size=batch_size)
        if ql.teacher.std() > 0:
            agreement.append(teacher_ndcg(scores, ql.teacher, temperature))
        relevant = (ql.labels == 1).astype(int)
        if relevant.min() != relevant.max():
            lists.append(pd.DataFrame({"query_id": qid, "passage_id": ql.passage_ids, "score": scores,
                                       "relevance": relevant}))
    out = {name: float("nan") for name in LIST_MEASURES}
    if lists:
        table = pd.concat(lists, ignore_index=True)
        per_query = evaluate_run(table[["query_id", "passage_id", "score"]],
                                 table[["query_id", "passage_id", "relevance"]], rn=(), measures=LIST_MEASURES)
        out = {name: float(value) for name, value in per_query.mean().items()}
    return {**out, "map_queries": len(lists), "agreement": float(np.mean(agreement)) if agreement else float("nan"),
            "agreement_queries": len(agreement)}


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


@contextmanager
def loaded(module: torch.nn.Module, weights: dict[str, torch.Tensor] | None) -> Iterator[None]:
    """Inside the block, the entries of ``module``'s state dict named in ``weights`` take those values;
    afterwards they are as before. No change when ``weights`` is None."""
    if weights is None:
        yield
        return
    current = {k: v.detach().clone() for k, v in module.state_dict().items()}
    module.load_state_dict({**current, **weights})
    try:
        yield
    finally:
        module.load_state_dict(current)


@contextmanager
def interpolated(module: torch.nn.Module, start: dict[str, torch.Tensor] | None, share: float) -> Iterator[None]:
    """Inside the block, ``module``'s floating-point weights are ``share`` × their value + (1 − ``share``) ×
    ``start`` (WiSE-FT); afterwards they are as before. No change when ``start`` is None."""
    if start is None:
        yield
        return
    mixed = {k: share * v.detach() + (1 - share) * start[k].to(v.device, v.dtype)
             for k, v in module.state_dict().items() if v.is_floating_point()}
    with loaded(module, mixed):
        yield


class Trainer:
    """Fine-tunes ``model`` (:class:`CrossEncoderRanker` or :class:`BiEncoder`) on ``data`` by ``objective``,
    negatives drawn by ``sampler``, as ``args`` says; ``callbacks`` are called at each step, evaluation and the end.
    Evaluates on ``dev_data`` (none: no early stopping) and writes checkpoints, models (with ``card`` in their model
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
        dev_data: TrainingData | None = None,
        out_dir: str | Path,
        card: dict | None = None,
    ) -> None:
        self.objective, self.sampler, self.args = objective, sampler, args
        self.callbacks = list(callbacks or [])
        self.card = dict(card or {})  # what the model card says besides the config: labels, LFs
        self.data, self.dev_data, self.out_dir = data, dev_data, Path(out_dir)
        self.dev_queries = list(dev_data.lists)[: args.dev_queries or None] if dev_data is not None else []
        # the checkpoint is chosen on every dev list: gold MAP (gold dev labels), else agreement with the teacher
        self.selection = "dev_map" if args.supervised or (dev_data is not None and dev_data.supervised) else "dev_agreement"
        self.train_queries = list(data.lists)[: args.track_train_queries]
        self.dist = distributed.setup()
        self.device, self.amp_dtype = pick_device_and_precision(args)
        if self.device.type == "cuda":
            self.device = torch.device("cuda", self.dist.local_rank)
        self.model = model.to(self.device)
        # WiSE-FT (Wortsman et al., 2022): what is saved mixes the fine-tuned encoder with the one it started from
        self.start_weights = ({k: v.detach().cpu().clone() for k, v in self.model.encoder.state_dict().items()}
                              if args.interpolate < 1 else None)
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
        # few-shot mode: the judged queries are held out of the first steps, so that the student saved before they
        # join (HELD_OUT) can be graded on them (the shipped ranker's mix, weakrank.training.shipped)
        self.switch_step = (round(args.judged_after * self.total_steps)
                            if data.judged and not args.supervised and args.judged_after > 0 else 0)
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, int(args.warmup * self.total_steps), self.total_steps)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.amp_dtype == torch.float16)
        self.progress = Progress()
        # stochastic weight averaging (Izmailov et al., 2018): the running mean of the weights after each step
        # of the last ``average_weights`` share of the steps; what is saved
        self.average_after = (int(self.total_steps * (1 - args.average_weights)) if args.average_weights > 0
                              else self.total_steps)
        self.average: dict[str, torch.Tensor] | None = None

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
            "average": self.average,
            "config": asdict(self.args),
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
        self.average = state.get("average")
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
        changed = sorted(k for k, v in asdict(self.args).items()
                         if k not in RESUME_MAY_CHANGE and k in saved and saved[k] != v)
        if changed:
            raise ConfigError(f"--resume with changed training settings {changed} (the checkpoint was trained with "
                              f"{ {k: saved[k] for k in changed} }); train afresh into another output to change them")
        self.load_checkpoint()

    def save_model(self, directory: Path) -> None:
        """Write the model and its card into ``directory``, swapped in whole (rank 0 only)."""
        if not self.dist.is_main:
            return
        args = self.args
        info = {**self.card, "architecture": args.architecture, "encoder": args.encoder, "supervised": args.supervised,
                "mode": args.mode, "loss": args.loss, "target": args.target, "steps": self.progress.step,
                "batch size": args.batch_size, "max length": args.max_length, "learning rate": args.lr, "seed": args.seed}
        last = self.progress.history[-1] if self.progress.history else None
        if self.average is not None:
            info["weights"] = f"mean over steps {self.average_after + 1}–{self.progress.step} (SWA)"
        if args.interpolate < 1:
            info["interpolated with the start encoder"] = f"{args.interpolate:g} fine-tuned (WiSE-FT)"
        if self.switch_step:
            info["judged queries trained from step"] = self.switch_step
        with (atomic_dir(directory) as tmp, loaded(self.model, self.average),
              interpolated(self.model.encoder, self.start_weights, args.interpolate)):
            self.model.save(tmp)
            write_model_card(tmp, info, *self.dev_figures(last))

    def dev_figures(self, metrics: dict[str, float] | None) -> tuple[dict[str, float] | None, str]:
        """The model card's dev figures of an evaluation's ``metrics`` and what they are measured against: gold
        labels (supervised), the judged queries' judgments (few-shot), else the pseudo-labels, where only the
        agreement with the teacher is shown (no MAP that reads as one against gold)."""
        if metrics is None:
            return None, ""
        figures = {k: v for k, v in metrics.items() if k != "step"}
        if self.args.supervised:
            return figures, "Measured against the gold labels of the dev queries."
        if self.dev_data is not None and self.dev_data.supervised:
            return figures, "Measured against the judgments of the judged queries (few-shot mode), not full qrels."
        kept = {k: v for k, v in figures.items() if k.startswith(("dev_agreement", "train_agreement"))}
        return kept, ("Measured against the pseudo-labels (no gold was read): agreement is the nDCG of the model's "
                      "order of each dev list against its teacher's, the label model (1: the same order). It says "
                      "how well the student learned its labels, not how relevant its ranking is.")

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

    @torch.no_grad()
    def update_average(self) -> None:
        """Fold the current weights into the running mean of the weights since step ``average_after``."""
        weights = {k: v.detach() for k, v in self.model.state_dict().items() if v.is_floating_point()}
        if self.average is None:  # the first averaged step (a resumed run brings its mean in the checkpoint)
            self.average = {k: v.clone() for k, v in weights.items()}
            return
        n = self.progress.step - self.average_after
        for k, v in weights.items():
            self.average[k] += (v - self.average[k]) / n

    @property
    def judged_in(self) -> bool:
        """Whether this epoch's batches may hold the judged queries (always, unless some are held out at first)."""
        return not self.switch_step or self.progress.judged_in

    def hold_out(self) -> None:
        """Save the student as it is before the judged queries join training (``HELD_OUT``); a new epoch, with them,
        begins."""
        self.save_model(self.out_dir / HELD_OUT)
        self.progress.judged_in = True
        self.progress.epoch, self.progress.batch_in_epoch = self.progress.epoch + 1, 0

    def evaluate(self) -> dict[str, float]:
        """:func:`ranking_metrics` of the dev lists against their labels (pseudo-labels in weak mode, gold in
        supervised mode), and the same on ``track_train_queries`` training queries (the memorisation signal)."""
        out: dict[str, float] = {"step": self.progress.step}
        if self.dev_data is not None:
            out.update({f"dev_{k}": v for k, v in self.dev_metrics().items()})
        if self.train_queries:
            out.update({f"train_{k}": v for k, v in ranking_metrics(self.model, self.data, self.train_queries,
                                                                    temperature=self.args.temperature).items()})
        return out

    def dev_metrics(self, queries: int | None = None) -> dict[str, float]:
        """:func:`ranking_metrics` on the first ``queries`` dev queries (all ``dev_queries`` when None); needs dev data."""
        return ranking_metrics(self.model, self.dev_data, self.dev_queries[:queries], temperature=self.args.temperature)

    def _after_eval(self, metrics: dict[str, float]) -> bool:
        """Record an evaluation, keep the best model by :attr:`selection`; True when early stopping triggers."""
        self.progress.history.append(metrics)
        for callback in self.callbacks:
            callback.on_evaluate(self, metrics)
        if self.dist.is_main:
            write_text(pd.DataFrame(self.progress.history).to_csv(index=False), self.out_dir / "history.csv")
        value = metrics.get(self.selection, float("nan"))
        # the first (smoothing) stage of T-LS/T-WSLS, and the steps before the judged queries join: their
        # checkpoints are never the best model, nor do they stop training
        if (np.isnan(value) or self.objective.smoothing_stage(int(metrics["step"]), self.total_steps)
                or not self.judged_in):
            return False
        if value > self.progress.best:
            self.progress.best, self.progress.bad_evals = value, 0
            self.save_model(self.out_dir / "best")
            return False
        self.progress.bad_evals += 1
        return self.progress.bad_evals >= self.args.patience

    def fit(self, resume: bool = False, show_progress: bool = True) -> Progress:
        """Train to ``max_steps``/``epochs`` or early stop; the final model goes to ``<out>/final``. ``checkpoint.pt``
        (what ``resume`` continues from) stays while training is unfinished, and once it has finished only with
        ``keep_checkpoint``. ``train_config.json`` describes the run that wrote ``final/``: written once it is, and a
        fresh run removes an earlier run's first (a killed run leaves none to describe what it did not finish)."""
        args = self.args
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if resume:
            self.resume()
        elif self.dist.is_main:
            (self.out_dir / TRAIN_CONFIG).unlink(missing_ok=True)
            shutil.rmtree(self.out_dir / HELD_OUT, ignore_errors=True)  # an earlier run's
        show_progress = show_progress and self.dist.is_main
        bar = tqdm(total=self.total_steps, initial=self.progress.step, desc="training", unit="step",
                   disable=not show_progress, steps=self.dist.is_main)
        stop, pairs, started = False, 0, time.perf_counter()
        while not stop and self.progress.step < self.total_steps:  # max_steps: as many epochs as it takes
            order = self.data.epoch_order(args.seed, self.progress.epoch, self.listwise, self.judged_in)
            batches = [order[i : i + args.batch_size] for i in range(0, len(order), args.batch_size)]
            if not batches and not self.judged_in:  # every training query is judged: they join at once
                self.hold_out()
                continue
            for b in range(self.progress.batch_in_epoch, len(batches)):
                if not self.judged_in and self.progress.step >= self.switch_step:
                    self.hold_out()
                    break
                rng = np.random.default_rng([args.seed, self.progress.epoch, b])
                if self.listwise:
                    batch = self.data.list_batch(batches[b], args.group_size, rng)
                else:
                    batch = self.data.batch(batches[b], self.sampler, args.negatives, rng)
                if not batch.queries:
                    continue
                loss, head_norm = self.step(batch)
                self.progress.batch_in_epoch = b + 1
                pairs += sum(len(p) for p in batch.passages) if self.listwise else 2 * len(batch.queries)
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.4f}", pairs_s=f"{pairs / (time.perf_counter() - started):.1f}")
                for callback in self.callbacks:
                    callback.on_step(self, batch, loss, head_norm)
                if args.eval_every and self.progress.step % args.eval_every == 0:
                    stop = self._after_eval(self.evaluate())
                if args.checkpoint_every and self.progress.step % args.checkpoint_every == 0:
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
        if self.dist.is_main:
            write_text(json.dumps(asdict(args), indent=1), self.out_dir / TRAIN_CONFIG)
        if self.args.keep_checkpoint:
            self.save_checkpoint()
        elif self.dist.is_main:
            (self.out_dir / CHECKPOINT).unlink(missing_ok=True)
        return self.progress
