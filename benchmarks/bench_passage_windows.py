"""Long passages and the encoder LFs' window (issue "a teacher that knows its LFs"): does the embedding LF gain
where it reads the whole passage?

The encoder LFs truncate a text at the model's ``max_seq_length`` (MiniLM: 256 tokens). On SciFact 71 % of the
abstracts are longer (the LF reads 78 % of their tokens), on cranfield 25 %, elsewhere almost none. Here, on a
labelled run's *train* split (never the split a table reports), the embedding LF's cosine of each query with:

* ``truncated``: the passage cut at the window (today's LF; its cached score, ``today``, checks the set-up);
* ``maxp``: the best of the passage's windows (256 tokens, half-window stride; Dai & Callan 2019's MaxP);
* ``avgp``: the mean of the windows' unit embeddings;
* ``maxp+truncated``: the two averaged.

Writes ``benchmarks/passage_windows.csv`` (dataset, split, scorer, map, queries, passages, long, windows).
Run: ``python benchmarks/bench_passage_windows.py --datasets scifact cranfield stackfaq`` (SciFact: about 8
minutes on 2 cores).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from bench_quality import REQUIRE

from weakrank.config import load_config
from weakrank.encoders import resolve_model
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet, write_text

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks" / "passage_windows.csv"


def windows_of(text: str, tokenizer, width: int) -> list[str]:
    """``text`` itself if it fits ``width`` tokens, else its windows of ``width`` tokens at a half-window stride."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) <= width:
        return [text]
    out = []
    for start in range(0, len(ids), width // 2):
        out.append(tokenizer.decode(ids[start:start + width]))
        if start + width >= len(ids):
            break
    return out


def scores(dataset: str, split: str) -> tuple[pd.DataFrame, dict]:
    """Each pair of ``split``'s lists scored each way, and the counts of passages, long ones and windows."""
    from sentence_transformers import SentenceTransformer

    cfg = load_config(ROOT / "pipelines" / f"{dataset}.toml")
    votes = read_parquet(cfg.run_dir / "votes.parquet")
    votes = votes[votes["split"] == split]
    passages = read_parquet(cfg.run_dir / "dataset" / "passages.parquet").set_index("passage_id")["text"]
    queries = read_parquet(cfg.run_dir / "dataset" / "queries.parquet").set_index("query_id")["text"]
    model = SentenceTransformer(resolve_model(), device="cpu")
    width = model.max_seq_length - 2  # [CLS] and [SEP]
    pids, qids = votes["passage_id"].unique(), votes["query_id"].unique()
    windows = {p: windows_of(passages[p], model.tokenizer, width) for p in pids}
    flat = [w for p in pids for w in windows[p]]
    encode = lambda texts: model.encode(texts, batch_size=64, normalize_embeddings=True)  # noqa: E731
    window_vectors, whole = encode(flat), dict(zip(pids, encode([passages[p] for p in pids])))
    bounds = np.cumsum([0] + [len(windows[p]) for p in pids])
    per_passage = {p: window_vectors[bounds[i]:bounds[i + 1]] for i, p in enumerate(pids)}
    query = dict(zip(qids, encode([queries[q] for q in qids])))
    rows = []
    for q, p in zip(votes["query_id"], votes["passage_id"]):
        cosines = per_passage[p] @ query[q]
        mean = per_passage[p].mean(axis=0)
        truncated, maxp = float(whole[p] @ query[q]), float(cosines.max())
        rows.append((q, p, truncated, maxp, float(mean @ query[q] / np.linalg.norm(mean)), (maxp + truncated) / 2))
    table = pd.DataFrame(rows, columns=["query_id", "passage_id", "truncated", "maxp", "avgp", "maxp+truncated"])
    table["today"] = votes["score_embedding_cosine"].to_numpy()
    counts = {"passages": len(pids), "long": sum(len(w) > 1 for w in windows.values()), "windows": len(flat)}
    return table, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["scifact", "cranfield", "stackfaq"], choices=list(REQUIRE))
    parser.add_argument("--split", default="train")
    args = parser.parse_args()
    rows = []
    for dataset in args.datasets:
        table, counts = scores(dataset, args.split)
        qrels = read_parquet(load_config(ROOT / "pipelines" / f"{dataset}.toml").run_dir / "dataset" / "qrels.parquet")
        for scorer in ["today", "truncated", "maxp", "avgp", "maxp+truncated"]:
            run = table[["query_id", "passage_id"]].assign(score=table[scorer])
            ap = evaluate_run(run, qrels, require=REQUIRE[dataset], rn=())["MAP"]
            rows.append({"dataset": dataset, "split": args.split, "scorer": scorer, "map": ap.mean(),
                         "queries": len(ap), **counts})
            print(f"{dataset} {args.split} {scorer}: MAP {ap.mean():.4f} ({len(ap)} queries)", flush=True)
    write_text(pd.DataFrame(rows).to_csv(index=False, float_format="%.4f"), CSV)


if __name__ == "__main__":
    main()
