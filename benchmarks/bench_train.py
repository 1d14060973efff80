"""Training throughput of BERT-PR against its ceiling and against sentence-transformers, in pairs/s.

One run times three systems on the same batches of real TrecQA triplets (each triplet is two scored
(query, passage) pairs; all systems tokenise the pairs inside the timed step):

* ``weakrank``: :meth:`weakrank.training.trainer.Trainer.step` (hinge loss, clipping, scheduler, as
  configured by default);
* ``plain``: the ceiling: the same CrossEncoderRanker encoder and head (same initialisation), tokenise, forward,
  pairwise hinge loss on the scores, backward, ``torch.optim.AdamW`` step (the Trainer's optimiser
  class with its default implementation), with no clipping and no scheduler;
* ``sentence-transformers``: a ``CrossEncoder`` (``num_labels=1``) on the same packaged MiniLM, trained
  step by step with its own ``BinaryCrossEntropyLoss`` (positive pairs 1, negative pairs 0), which does
  its own preprocessing, forward and loss; the rest of the step is what ``CrossEncoderTrainer``
  (the Hugging Face Trainer) does with default arguments: backward, clipping to norm 1, AdamW in its
  default ``adamw_torch_fused`` form (torch >= 2.8), linear schedule. The Trainer's dataloader,
  collator and logging are not timed: driving the full trainer per measured step is too heavy for a
  timing loop, so its loss and optimiser step are driven directly.

Each system also runs with the word-embedding matrix frozen (``TrainConfig.freeze_embeddings``; the
baselines set ``requires_grad_(False)`` on the input embeddings and leave them out of the optimiser).
Each system gets one warm-up step, then the timed steps are interleaved (step i of every system,
in rotating order, before step i + 1), so load from other processes falls on all systems alike.
On CUDA all systems run under the Trainer's autocast dtype (bf16 where supported; the baselines do no
fp16 loss scaling) and the device is synchronised around every timed step.

Prints a table and the ratios weakrank / plain, weakrank / sentence-transformers and weakrank against
the reference figure of the old trainer (22 pairs/s at 64 tokens); ``--csv`` also writes the rows to
``benchmarks/train_throughput.csv`` (system, frozen_embeddings, pairs_per_s, ratio_to_plain).

Run: ``python benchmarks/bench_train.py [--steps 10] [--batch-size 16] [--max-length 64] [--csv]``.
"""

from __future__ import annotations

import argparse
import csv
import logging
import os
import time
import warnings
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoTokenizer

from weakrank.encoders import resolve_model
from weakrank.loaders import load_dataset
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.training import TrainConfig
from weakrank.training.data import Batch, TrainingData
from weakrank.training.objectives import objective_from_config
from weakrank.training.rankers import new_ranker
from weakrank.training.samplers import UniformSampler
from weakrank.training.trainer import Trainer, pick_device_and_precision, prepare_run

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
CSV_PATH = Path(__file__).resolve().parent / "train_throughput.csv"
REFERENCE_PAIRS_S = 22.0  # the old trainer at max_length 64
SYSTEMS = ("weakrank", "plain", "sentence-transformers")

StepFn = Callable[[Batch], float]


def quiet() -> None:
    """No load reports, conversion notices or progress bars from transformers / sentence-transformers."""
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")


def autocast(device: torch.device, dtype: torch.dtype | None):
    return torch.autocast(device.type, dtype=dtype) if dtype is not None else nullcontext()


def weakrank_step(cfg: TrainConfig, data: TrainingData) -> tuple[StepFn, Trainer]:
    prepare_run(cfg)  # seeds as before the model is built: the same head as plain_step's
    trainer = Trainer(new_ranker(cfg), objective_from_config(cfg), UniformSampler(), cfg, data=data,
                      out_dir=Path("/tmp/weakrank-bench"))
    return (lambda batch: trainer.step(batch)[0]), trainer


def plain_step(cfg: TrainConfig, device: torch.device, dtype: torch.dtype | None) -> StepFn:
    """Tokenise, forward, hinge loss, backward, AdamW: the same encoder and head as the Trainer's."""
    torch.manual_seed(cfg.seed)  # the Trainer seeds the same way before building its model: same head
    model = CrossEncoderRanker.from_encoder(cfg.encoder, max_length=cfg.max_length).to(device)
    if cfg.freeze_embeddings:
        model.encoder.get_input_embeddings().weight.requires_grad_(False)
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr,
                                  weight_decay=cfg.weight_decay)

    def step(batch: Batch) -> float:
        k = len(batch.queries)
        optimizer.zero_grad(set_to_none=True)
        with autocast(device, dtype):
            scores = model.score(batch.queries + batch.queries, batch.positives + batch.negatives).float()
        loss = F.relu(cfg.margin - scores[:k] + scores[k:]).mean()
        loss.backward()
        optimizer.step()
        return float(loss.detach())

    return step


def st_step(cfg: TrainConfig, device: torch.device, dtype: torch.dtype | None) -> StepFn:
    """sentence-transformers' CrossEncoder with its BinaryCrossEntropyLoss, stepped as its trainer would."""
    from sentence_transformers.cross_encoder import CrossEncoder
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(cfg.seed)
    model = CrossEncoder(resolve_model(cfg.encoder), num_labels=1, max_length=cfg.max_length, device=str(device))
    if cfg.freeze_embeddings:
        model.model.get_input_embeddings().weight.requires_grad_(False)
    model.train()
    loss_fn = BinaryCrossEntropyLoss(model)
    params = [p for p in model.parameters() if p.requires_grad]
    fused = tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (2, 8)  # TrainingArguments' default optim
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0, fused=fused or None)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, cfg.max_steps)

    def step(batch: Batch) -> float:
        k = len(batch.queries)
        labels = torch.cat([torch.ones(k), torch.zeros(k)]).to(device)
        with autocast(device, dtype):
            loss = loss_fn([batch.queries + batch.queries, batch.positives + batch.negatives], labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        return float(loss.detach())

    return step


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run(cfg: TrainConfig, data: TrainingData, batches: list[Batch]) -> dict[str, dict]:
    """Warm-up step, then interleaved timed steps of the three systems; their seconds, pairs and first loss."""
    _, dtype = pick_device_and_precision(cfg)
    wr, trainer = weakrank_step(cfg, data)
    steps = {"weakrank": wr, "plain": plain_step(cfg, trainer.device, dtype),
             "sentence-transformers": st_step(cfg, trainer.device, dtype)}
    out = {name: {"seconds": 0.0, "pairs": 0} for name in steps}
    for name, step in steps.items():
        torch.manual_seed(cfg.seed)  # same dropout masks for weakrank and plain: same warm-up loss
        out[name]["warmup_loss"] = step(batches[0])
    synchronize(trainer.device)
    for i, batch in enumerate(batches[1:]):
        order = list(steps)[i % len(steps):] + list(steps)[: i % len(steps)]
        for name in order:
            start = time.perf_counter()
            steps[name](batch)
            synchronize(trainer.device)
            out[name]["seconds"] += time.perf_counter() - start
            out[name]["pairs"] += 2 * len(batch.queries)
    for row in out.values():
        row["pairs_per_s"] = row["pairs"] / row["seconds"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per system (after 1 warm-up step)")
    parser.add_argument("--batch-size", "--batch-sizes", type=int, default=16, help="triplets per step (2 pairs each)")
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="torch threads (all cores)")
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--reference", type=float, default=REFERENCE_PAIRS_S, help="the old trainer's pairs/s")
    parser.add_argument("--csv", action="store_true", help=f"write the rows to {CSV_PATH.name}")
    parser.add_argument("--out", type=Path, default=CSV_PATH, help="where --csv writes")
    args = parser.parse_args()
    quiet()
    torch.set_num_threads(args.threads)

    ds = load_dataset("trecqa", SHARED / "trecqa", splits=("train",))
    labels = ds.candidates.assign(label=ds.candidates["gold"].astype(int), confidence=1.0, score_bm25=0.0)
    data = TrainingData(labels, ds.queries, ds.passages, "train")
    bs, rng = args.batch_size, np.random.default_rng(0)
    batches = [data.batch(data.anchors[i * bs : (i + 1) * bs], UniformSampler(), 1, rng) for i in range(args.steps + 1)]
    base = {"encoder": args.encoder, "batch_size": bs, "max_length": args.max_length, "eval_every": 0,
            "checkpoint_every": 0, "max_steps": args.steps + 1}

    device, dtype = pick_device_and_precision(TrainConfig(**base))
    name = torch.cuda.get_device_name() if device.type == "cuda" else "CPU"
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(args.encoder))
    padded = np.mean([len(tokenizer(b.queries * 2, b.positives + b.negatives, padding=True, truncation="only_second",
                                     max_length=args.max_length)["input_ids"][0]) for b in batches])
    precision = str(dtype).removeprefix("torch.") if dtype else "fp32"
    print(f"device: {name} ({torch.get_num_threads()} threads), {precision}; "
          f"encoder {args.encoder}; max_length {args.max_length}; {bs} triplets = {2 * bs} pairs per step; "
          f"padded length {padded:.0f} tokens on average; 1 warm-up + {args.steps} timed steps (interleaved)")

    rows, results = [], {}
    for frozen in (False, True):
        results[frozen] = run(TrainConfig(**base, freeze_embeddings=frozen), data, batches)
        plain = results[frozen]["plain"]["pairs_per_s"]
        for system in SYSTEMS:
            r = results[frozen][system]
            rows.append({"system": system, "frozen_embeddings": frozen, "pairs_per_s": round(r["pairs_per_s"], 2),
                         "ratio_to_plain": round(r["pairs_per_s"] / plain, 3)})

    print(f"\n{'system':<22}{'frozen emb':>11}{'pairs/s':>10}{'ms/step':>10}{'/ plain':>9}{'warm-up loss':>14}")
    for row in rows:
        r = results[row["frozen_embeddings"]][row["system"]]
        ms = 1000 * r["seconds"] / args.steps
        print(f"{row['system']:<22}{'yes' if row['frozen_embeddings'] else 'no':>11}{row['pairs_per_s']:>10.1f}"
              f"{ms:>10.0f}{row['ratio_to_plain']:>9.2f}{r['warmup_loss']:>14.5f}")
    print()
    for frozen in (False, True):
        r = {s: results[frozen][s]["pairs_per_s"] for s in SYSTEMS}
        print(f"embeddings {'frozen' if frozen else 'trained'}: weakrank / plain {r['weakrank'] / r['plain']:.2f}, "
              f"weakrank / sentence-transformers {r['weakrank'] / r['sentence-transformers']:.2f}, "
              f"weakrank / reference ({args.reference:g} pairs/s) {r['weakrank'] / args.reference:.2f}")
    print("(warm-up loss: weakrank and plain share initialisation, batch and dropout seed, so it should match; "
          "sentence-transformers' is its BCE)")

    if args.csv:
        with args.out.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["system", "frozen_embeddings", "pairs_per_s", "ratio_to_plain"])
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
