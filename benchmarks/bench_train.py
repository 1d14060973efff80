"""Training throughput of BERT-PR (pairs/s: each triplet is two scored pairs), CPU or GPU.

Runs a few optimisation steps on real TrecQA pairs per batch size and reports pairs/s; on a GPU it
also reports model FLOP utilisation (MFU ≈ 6 · parameters · tokens / s over the device's peak).
Run: ``python benchmarks/bench_train.py [--steps 5] [--batch-sizes 8 16] [--peak-tflops 989]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from weakrank.datasets import load_dataset
from weakrank.training import TrainConfig
from weakrank.training.data import TrainingData
from weakrank.training.samplers import UniformSampler
from weakrank.training.trainer import Trainer

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="device bf16 dense peak (H100 SXM: 989)")
    args = parser.parse_args()
    ds = load_dataset("trecqa", SHARED / "trecqa", splits=("train",))
    labels = ds.candidates.assign(label=ds.candidates["gold"].astype(int), confidence=1.0, score_bm25=0.0)
    data = TrainingData(labels, ds.queries, ds.passages, "train")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    name = torch.cuda.get_device_name() if device == "cuda" else f"CPU ({torch.get_num_threads()} threads)"
    print(f"device: {name}; max_length {args.max_length}; {args.steps} timed steps after 1 warm-up step")
    print(f"{'batch':>6}{'pairs/s':>10}{'tokens/s':>11}{'MFU':>8}")
    for bs in args.batch_sizes:
        cfg = TrainConfig(batch_size=bs, max_length=args.max_length, eval_every=0, checkpoint_every=0, max_steps=args.steps + 1)
        trainer = Trainer(cfg, data, None, Path("/tmp/weakrank-bench"), [])
        params = sum(p.numel() for p in trainer.model.parameters())
        rng = np.random.default_rng(0)
        batches = [data.batch(data.anchors[i * bs : (i + 1) * bs], UniformSampler(), 1, rng) for i in range(args.steps + 1)]
        trainer.step(batches[0])
        if device == "cuda":
            torch.cuda.synchronize()
        start, pairs, tokens = time.perf_counter(), 0, 0
        for batch in batches[1:]:
            trainer.step(batch)
            pairs += 2 * len(batch.queries)
            enc = trainer.model.tokenizer(batch.queries * 2, batch.positives + batch.negatives, truncation=True,
                                          max_length=args.max_length, padding=True)
            tokens += len(enc["input_ids"]) * len(enc["input_ids"][0])
        if device == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        mfu = 6 * params * tokens / seconds / (args.peak_tflops * 1e12) if device == "cuda" else float("nan")
        print(f"{bs:>6}{pairs / seconds:>10.1f}{tokens / seconds:>11.0f}{mfu:>8.1%}")


if __name__ == "__main__":
    main()
