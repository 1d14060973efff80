"""The main job's stages timed against references measured in the same run, on the same machine and load.

``weakrank run pipelines/wikiqa.toml``'s label, train and rerank stages run on a slice of WikiQA (the first
``--max-queries`` queries of each split, ``[train] max_steps`` ``--steps`` with evaluation and checkpoints every
quarter of them, as the full run's 400 steps have every 100; ``--max-queries 0 --steps 0``: the whole job), each
followed at once by its reference:

* label: a bare ``SentenceTransformer.encode`` (fp32, the packaged MiniLM, batches of 64) of the distinct texts the
  encoder LFs read (every candidate's query and passage): what the stage would cost if it did nothing but encode;
* train: a plain training-step loop of as many steps: the same cross-encoder (``CrossEncoderRanker.from_encoder``
  at the run's resolved ``max_length``, embeddings frozen as configured), each step ``batch_size`` train queries'
  lists of ``group_size`` candidates (the teacher's top one and the next by rank), tokenise, forward, listwise KL to
  the teacher's softmax at ``temperature``, backward, AdamW; no evaluation, checkpoint, scheduler or clipping;
* rerank: ``sentence_transformers.CrossEncoder(<model>).predict`` of the evaluation split's pairs (the student
  alone, batches of 64).

Each stage's ``ratio`` is its seconds over its reference's (model loads are inside the stages, outside the
references). Writes ``benchmarks/stage_timing.csv`` (``stage, seconds, reference, reference_seconds, ratio, work,
threads, load_before, cpu``: ``load_before`` the 1-minute load average when the stage started, ``cpu`` the machine).
Run: ``python benchmarks/bench_stages.py [--max-queries 100] [--steps 100] [--threads N]`` (about 10 minutes on
2 cores at the defaults; the run folder is ``benchmarks/results/stage_timing/``, made afresh).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from common import ROOT

from weakrank import pipeline
from weakrank.config import PipelineConfig, load_config
from weakrank.dataset import Dataset
from weakrank.encoders import resolve_model
from weakrank.io import read_parquet
from weakrank.paths import RunPaths
from weakrank.ranker.cross_encoder import CrossEncoderRanker

WORK = ROOT / "benchmarks" / "results" / "stage_timing"
CSV = ROOT / "benchmarks" / "stage_timing.csv"


def cpu_name() -> str:
    """The CPU's model name and the cores this process may use."""
    model = platform.processor() or platform.machine()
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {len(os.sched_getaffinity(0))} cores"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def encode_reference(cfg: PipelineConfig) -> tuple[float, str]:
    """Seconds of a bare fp32 ``SentenceTransformer.encode`` of every distinct text of the candidates."""
    from sentence_transformers import SentenceTransformer

    pairs = Dataset.load(RunPaths(cfg.run_dir).dataset).pairs()
    texts = list(dict.fromkeys([*pairs["query"], *pairs["passage"]]))
    model = SentenceTransformer(resolve_model(), device="cpu")
    return timed(lambda: model.encode(texts, batch_size=64, show_progress_bar=False)), f"{len(texts)} texts"


def plain_train_reference(cfg: PipelineConfig) -> tuple[float, str]:
    """Seconds of a plain listwise-KL training loop of the run's step count, batch, list size and max_length."""
    run_dir = RunPaths(cfg.run_dir).root
    tc = json.loads((run_dir / "model" / "train_config.json").read_text())
    labels = read_parquet(RunPaths(cfg.run_dir).labels)
    labels = labels[labels["split"] == tc["train_split"]].sort_values(["query_id", "rank"])
    data = Dataset.load(RunPaths(cfg.run_dir).dataset)
    query_text = data.queries.set_index("query_id")["text"]
    passage_text = data.passages.set_index("passage_id")["text"]
    lists = []
    for qid, group in labels.groupby("query_id", sort=False):
        top = group.sort_values("score", ascending=False, kind="stable").head(1)
        chosen = pd.concat([top, group.drop(top.index).head(tc["group_size"] - 1)])
        if len(chosen) > 1:
            lists.append((query_text[qid], passage_text.reindex(chosen["passage_id"]).tolist(),
                          torch.tensor(chosen["score"].to_numpy(np.float32))))
    torch.manual_seed(tc["seed"])
    model = CrossEncoderRanker.from_encoder(tc["encoder"], max_length=tc["max_length"])
    if tc["freeze_embeddings"]:
        model.encoder.get_input_embeddings().weight.requires_grad_(False)
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=tc["lr"],
                                  weight_decay=tc["weight_decay"])
    batch = tc["batch_size"]

    def loop() -> None:
        for step in range(tc["max_steps"]):
            chosen = [lists[(step * batch + i) % len(lists)] for i in range(batch)]
            queries = [q for q, passages, _ in chosen for _ in passages]
            scores = model.score(queries, [p for _, passages, _ in chosen for p in passages]).float()
            loss, start = scores.new_zeros(()), 0
            for _, passages, teacher in chosen:
                student = F.log_softmax(scores[start : start + len(passages)], dim=0)
                target = F.softmax(teacher / tc["temperature"], dim=0)
                loss = loss + F.kl_div(student, target, reduction="sum")
                start += len(passages)
            optimizer.zero_grad(set_to_none=True)
            (loss / batch).backward()
            optimizer.step()

    return timed(loop), f"{tc['max_steps']} steps of {batch} lists x {tc['group_size']}, {tc['max_length']} tokens"


def predict_reference(cfg: PipelineConfig) -> tuple[float, str]:
    """Seconds of ``CrossEncoder(model).predict`` of the evaluation split's pairs (the student alone)."""
    from sentence_transformers import CrossEncoder

    from weakrank.run_models import model_dir

    pairs = Dataset.load(RunPaths(cfg.run_dir).dataset).subset(splits=[cfg.evaluate.split]).pairs()
    model = CrossEncoder(str(model_dir(cfg, "model")), device="cpu")
    texts = list(zip(pairs["query"], pairs["passage"]))
    return timed(lambda: model.predict(texts, batch_size=64, show_progress_bar=False)), f"{len(texts)} pairs"


REFERENCES = {"label": ("SentenceTransformer.encode fp32", encode_reference),
              "train": ("plain torch training-step loop", plain_train_reference),
              "rerank": ("CrossEncoder.predict (student alone)", predict_reference)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "pipelines" / "wikiqa.toml")
    parser.add_argument("--max-queries", type=int, default=100, help="first N queries of each split (0: all)")
    parser.add_argument("--steps", type=int, default=100, help="[train] max_steps (0: the config's)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--out", type=Path, default=CSV)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    shutil.rmtree(WORK, ignore_errors=True)
    every = max(args.steps // 4, 1)
    cfg = load_config(args.config, run_dir=WORK, max_queries=args.max_queries or None,
                      train={"max_steps": args.steps, "eval_every": every, "checkpoint_every": every} if args.steps else {})
    pipeline.run(cfg, ["ingest"], progress=False)
    rows = []
    for stage in ("label", "aggregate", "train", "rerank"):
        load = os.getloadavg()[0]
        seconds = pipeline.run(cfg, [stage], progress=False).timings[stage]["seconds"]
        if stage not in REFERENCES:
            continue
        reference, measure = REFERENCES[stage]
        reference_seconds, work = measure(cfg)
        rows.append({"stage": stage, "seconds": round(seconds, 1), "reference": reference,
                     "reference_seconds": round(reference_seconds, 1), "ratio": round(seconds / reference_seconds, 2),
                     "work": work, "threads": args.threads, "load_before": round(load, 2), "cpu": cpu_name()})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
