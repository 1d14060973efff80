"""Reranking speed and quality: a trained model scoring a test split, against sentence-transformers.

Per dataset, the first cached weak ranker of ``bench_quality.py`` (``<run_dir>/bench/models/``) scores every
candidate of the evaluation split, timed as a whole (texts in, scores out) by:

- ``CrossEncoder.predict``: sentence-transformers loading the same directory (the reference);
- ``student fp32`` / ``student int8``: ``load_ranker(dir, student_only=True[, precision="int8"])``;
- ``student onnx`` / ``student onnx int8``: the same with ``backend="onnx"`` (and ``precision="int8"``) (ONNX Runtime; the export and
  quantisation happen once, before the timing);
- ``shipped fp32`` / ``shipped int8`` / ``shipped onnx int8``: ``load_ranker(dir[, ...])``, the student with its LFs and teacher
  (its neural LFs encode every text: the process's shared encodings are cleared before each run).

Each row: pairs/s, the ratio to the reference measured in the same run, and test MAP (as ``bench_quality``).
Writes ``benchmarks/rerank.csv`` (rows of the datasets run are replaced).

Run: ``python benchmarks/bench_rerank.py --datasets wikiqa trecqa``
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from common import EVAL_SPLIT, REQUIRE, ROOT, trained_name

from weakrank.config import load_config
from weakrank.dataset import Dataset
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet, write_text
from weakrank.paths import RunPaths
from weakrank.ranker import load_ranker
from weakrank.ranker.teacher_state import FUSION_FILE
from weakrank.run_models import model_dir
from weakrank.similarity import forget_encodings
from weakrank.stages.train import run_teacher


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["wikiqa", "trecqa"], choices=list(EVAL_SPLIT))
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--markdown", action="store_true", help="only print rerank.csv as the docs' table")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "rerank.csv"
    if args.markdown:
        table = pd.read_csv(csv).set_index(["dataset", "system"])[["pairs_per_s", "vs_crossencoder", "map"]]
        print(to_markdown(table, ".3f"))
        return
    from sentence_transformers import CrossEncoder

    rows = []
    for name in args.datasets:
        cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
        paths = RunPaths(cfg.run_dir)
        directory = model_dir(cfg, f"bench/models/{trained_name(cfg, 0, False)}")
        if not (directory / FUSION_FILE).exists():
            run_teacher(cfg).save(directory)
        pairs = Dataset.load(paths.dataset).subset(splits=[EVAL_SPLIT[name]]).pairs()
        qrels = read_parquet(paths.dataset / "qrels.parquet")
        texts = list(zip(pairs["query"], pairs["passage"]))
        systems = {
            "CrossEncoder.predict": lambda: CrossEncoder(str(directory), device="cpu").predict(
                texts, batch_size=args.batch_size, show_progress_bar=False),
            "student fp32": lambda: load_ranker(directory, "cpu", student_only=True).predict(texts, args.batch_size),
            "student int8": lambda: load_ranker(directory, "cpu", student_only=True, precision="int8").predict(
                texts, args.batch_size),
            "student onnx": lambda: load_ranker(directory, student_only=True, backend="onnx").predict(
                texts, args.batch_size),
            "student onnx int8": lambda: load_ranker(directory, student_only=True, backend="onnx", precision="int8").predict(
                texts, args.batch_size),
            "shipped fp32": lambda: load_ranker(directory, "cpu").score_frame(pairs, args.batch_size),
            "shipped int8": lambda: load_ranker(directory, "cpu", precision="int8").score_frame(pairs, args.batch_size),
            "shipped onnx int8": lambda: load_ranker(directory, backend="onnx", precision="int8").score_frame(
                pairs, args.batch_size),
        }
        for precision in ("fp32", "int8"):  # export (and quantise) before the timing, as a user's second load finds it
            load_ranker(directory, student_only=True, backend="onnx", precision=precision)
        for system, score in systems.items():
            forget_encodings()  # every shipped run encodes its texts: nothing kept from the last
            started = time.perf_counter()
            scores = score()
            seconds = time.perf_counter() - started
            run = pairs[["query_id", "passage_id"]].assign(score=scores)
            ap = evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"].mean()
            rows.append({"dataset": name, "system": system, "pairs": len(pairs), "seconds": seconds,
                         "pairs_per_s": len(pairs) / seconds, "map": ap})
            print(f"{name:8} {system:22} {len(pairs) / seconds:8.1f} pairs/s  MAP {ap:.4f}", flush=True)
    table = pd.DataFrame(rows)
    reference = table[table["system"] == "CrossEncoder.predict"].set_index("dataset")["pairs_per_s"]
    table["vs_crossencoder"] = table["pairs_per_s"] / table["dataset"].map(reference)
    old = pd.read_csv(csv) if csv.exists() else pd.DataFrame(columns=table.columns)
    table = pd.concat([old[~old["dataset"].isin(table["dataset"])], table], ignore_index=True)
    write_text(table.to_csv(index=False, float_format="%.4f"), csv)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
