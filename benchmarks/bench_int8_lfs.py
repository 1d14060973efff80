"""The encoder LFs at int8 against fp32: each LF's MAP on every shared collection's evaluation split, and the
encoders' speed.

``embedding_cosine`` and ``bert_cosine`` (the packaged MiniLM, one shared forward pass) score the evaluation split's
pairs (``bench_quality.EVAL_SPLIT``: test, semeval's dev) at ``precision="int8"`` (torch dynamic quantisation, the
library path). The fp32 scores are the label stage's own (``<runs>/<name>/lf_scores/<lf>.parquet``, not encoded
again); a few pairs are scored at fp32 here too, to check that those files are what today's code gives
(``fp32_check_max_diff``). Each LF's MAP is :func:`weakrank.evaluation.metrics.evaluate_run`'s over the split's
queries, as ``bench_teacher.py`` measures it; an LF passes where ``|map_int8 - map_fp32| <= 0.005``.
Writes ``benchmarks/int8_lfs.csv`` (``dataset, lf, split, queries, pairs, map_fp32, map_int8, delta, within,
spearman, fp32_check_max_diff``). The int8 scores are kept under ``benchmarks/results/int8_lfs/`` (re-runs read them).

``--speed``: ``SentenceTransformer.encode`` at fp32 against the same model at torch int8 and against ONNX Runtime
(fp32 and dynamic int8, the exported transformer's forward only) on the same texts (``--texts`` passages of each of
WikiQA and SciFact), length-sorted batches of 64, one warm-up, rounds interleaved; writes
``benchmarks/int8_speed.csv`` (``dataset, system, texts, seconds, texts_per_s, vs_fp32, threads``).

Everything runs on ``--threads`` (default 1) torch / ONNX Runtime threads. Run: ``python benchmarks/bench_int8_lfs.py
--runs ../data [--speed]`` (``--runs``: the folder of the collections' labelled run folders; about 10 minutes on one
thread for the seven).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from common import EVAL_SPLIT, REQUIRE, ROOT
from scipy.stats import spearmanr

from labeling_functions.bert import make_bert_cosine
from labeling_functions.embedding import make_embedding_cosine
from weakrank.encoders import dynamic_int8, resolve_model
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet, write_parquet
from weakrank.lf import PairBatch

COLLECTIONS = ["wikiqa", "trecqa", "semeval", "scifact", "wikiqa_bm25", "cranfield", "stackfaq"]
LFS = {"embedding_cosine": make_embedding_cosine, "bert_cosine": make_bert_cosine}
TOLERANCE = 0.005
CHECKED = 16  # pairs a collection scored at fp32 here, against the stored fp32 scores
CACHE = ROOT / "benchmarks" / "results" / "int8_lfs"


def eval_pairs(run_dir: Path, name: str) -> pd.DataFrame:
    """The evaluation split's candidates with their texts (query_id, passage_id, query, passage)."""
    data = run_dir / "dataset"
    pairs = read_parquet(data / "candidates.parquet")
    pairs = pairs[pairs["split"] == EVAL_SPLIT[name]][["query_id", "passage_id"]].reset_index(drop=True)
    queries = read_parquet(data / "queries.parquet").set_index("query_id")["text"]
    passages = read_parquet(data / "passages.parquet").set_index("passage_id")["text"]
    return pairs.assign(query=queries.reindex(pairs["query_id"]).to_numpy(),
                        passage=passages.reindex(pairs["passage_id"]).to_numpy())


def scored(pairs: pd.DataFrame, lf_name: str, precision: str) -> np.ndarray:
    """``lf_name``'s scores of ``pairs`` at ``precision`` (the built-in LF itself, its default options)."""
    lf = LFS[lf_name](precision=precision).load_state()
    batch = PairBatch(pairs["query_id"].to_numpy(), pairs["passage_id"].to_numpy(), list(pairs["query"]),
                      list(pairs["passage"]))
    return lf.score(batch)


def int8_scores(run_dir: Path, name: str) -> pd.DataFrame:
    """Both LFs' int8 scores of the evaluation split (cached)."""
    path = CACHE / f"{name}.parquet"
    if path.exists():
        return read_parquet(path)
    pairs = eval_pairs(run_dir, name)
    start = time.perf_counter()
    out = pairs[["query_id", "passage_id"]].assign(**{lf: scored(pairs, lf, "int8") for lf in LFS})
    print(f"{name}: {len(pairs)} pairs at int8 in {time.perf_counter() - start:.0f} s", flush=True)
    write_parquet(out, path)
    return out


def split_map(name: str, qrels: pd.DataFrame, pairs: pd.DataFrame, score: np.ndarray) -> pd.Series:
    """Per-query MAP of ``score`` over ``pairs``, as the project evaluates the collection."""
    run = pd.DataFrame({"query_id": pairs["query_id"], "passage_id": pairs["passage_id"], "score": score})
    return evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"]


def compare(runs: Path, name: str) -> list[dict]:
    """One row per LF: its fp32 and int8 MAP on the collection's evaluation split."""
    run_dir = runs / name
    int8 = int8_scores(run_dir, name)
    qrels = read_parquet(run_dir / "dataset" / "qrels.parquet")
    check = eval_pairs(run_dir, name).head(CHECKED)
    rows = []
    for lf in LFS:
        fp32 = read_parquet(run_dir / "lf_scores" / f"{lf}.parquet", columns=["query_id", "passage_id", "score"])
        both = int8.merge(fp32, on=["query_id", "passage_id"], how="left", validate="one_to_one")
        if both["score"].isna().any():
            raise SystemExit(f"{run_dir}/lf_scores/{lf}.parquet lacks pairs of the {EVAL_SPLIT[name]} split: label again")
        stored = check.merge(fp32, on=["query_id", "passage_id"], how="left")["score"].to_numpy()
        m32, m8 = (split_map(name, qrels, both, both[col].to_numpy()) for col in ("score", lf))
        rows.append({"dataset": name, "lf": lf, "split": EVAL_SPLIT[name], "queries": len(m32), "pairs": len(both),
                     "map_fp32": round(m32.mean(), 4), "map_int8": round(m8.mean(), 4),
                     "delta": round(m8.mean() - m32.mean(), 4), "within": bool(abs(m8.mean() - m32.mean()) <= TOLERANCE),
                     "spearman": round(float(spearmanr(both["score"], both[lf]).statistic), 4),
                     "fp32_check_max_diff": float(f"{np.abs(scored(check, lf, 'fp32') - stored).max():.2g}")})
        print(rows[-1], flush=True)
    return rows


def onnx_session(model, folder: Path, int8: bool, threads: int):
    """An ONNX Runtime session of ``model``'s transformer (token ids → last hidden layer), fp32 or dynamic int8."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    names = ["input_ids", "attention_mask", "token_type_ids"]
    fp32, path = folder / "encoder.onnx", folder / ("encoder_int8.onnx" if int8 else "encoder.onnx")
    if not fp32.exists():
        bert = model[0].auto_model.eval()

        class Hidden(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = bert

            def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
                return self.bert(**dict(zip(names, inputs))).last_hidden_state

        example = model.tokenizer(["a query"], return_tensors="pt")
        torch.onnx.export(Hidden(), tuple(example[n] for n in names), str(fp32), input_names=names,
                          output_names=["hidden"], dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]},
                          opset_version=17, dynamo=False)
    if int8 and not path.exists():
        quantize_dynamic(str(fp32), str(path), weight_type=QuantType.QInt8)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]), names


def speed(runs: Path, count: int, threads: int, rounds: int = 3) -> pd.DataFrame:
    """Seconds to encode ``count`` passages of WikiQA and of SciFact, by system (fp32 encode the reference)."""
    from sentence_transformers import SentenceTransformer

    path = resolve_model()
    fp32 = SentenceTransformer(path, device="cpu")
    int8 = dynamic_int8(SentenceTransformer(path, device="cpu"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sessions = {system: onnx_session(fp32, Path(tmp), system.endswith("int8"), threads)
                    for system in ("onnxruntime fp32", "onnxruntime int8")}
        for name in ("wikiqa", "scifact"):
            texts = read_parquet(runs / name / "dataset" / "passages.parquet")["text"].head(count).tolist()

            def onnx(session, names: list[str]) -> None:
                ordered = sorted(texts, key=len)
                for start in range(0, len(ordered), 64):
                    enc = fp32.tokenizer(ordered[start : start + 64], padding=True, truncation=True,
                                         max_length=fp32.max_seq_length, return_tensors="np")
                    session.run(None, {n: enc[n].astype(np.int64) for n in names})

            systems: dict[str, Callable[[], object]] = {
                "SentenceTransformer.encode fp32": lambda: fp32.encode(texts, batch_size=64),
                "torch dynamic int8 (weakrank)": lambda: int8.encode(texts, batch_size=64),
                **{system: (lambda s=s: onnx(*s)) for system, s in sessions.items()},
            }
            seconds = dict.fromkeys(systems, 0.0)
            for run in systems.values():
                run()  # warm-up
            for r in range(rounds):
                for system in list(systems)[r % len(systems):] + list(systems)[: r % len(systems)]:
                    start = time.perf_counter()
                    systems[system]()
                    seconds[system] += time.perf_counter() - start
            reference = seconds["SentenceTransformer.encode fp32"]
            rows += [{"dataset": name, "system": system, "texts": len(texts), "seconds": round(s / rounds, 3),
                      "texts_per_s": round(len(texts) * rounds / s, 1), "vs_fp32": round(reference / s, 3),
                      "threads": threads} for system, s in seconds.items()]
            print(pd.DataFrame(rows).to_string(index=False), flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=ROOT / "data", help="folder of the collections' run folders")
    parser.add_argument("--datasets", nargs="+", default=COLLECTIONS)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--speed", action="store_true", help="time the encoders instead (int8_speed.csv)")
    parser.add_argument("--texts", type=int, default=256, help="--speed: passages of each collection")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.speed:
        speed(args.runs, args.texts, args.threads).to_csv(ROOT / "benchmarks" / "int8_speed.csv", index=False)
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    table = pd.DataFrame([row for name in args.datasets for row in compare(args.runs, name)])
    print(table.to_string(index=False))
    table.to_csv(ROOT / "benchmarks" / "int8_lfs.csv", index=False)


if __name__ == "__main__":
    main()
