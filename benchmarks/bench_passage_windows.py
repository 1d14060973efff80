"""Long passages and the encoder LFs' window (issue "a teacher that knows its LFs"): how should an encoder LF score a
passage longer than its model reads?

The encoder LFs' model (MiniLM) reads 256 tokens. On SciFact 71 % of the abstracts are longer (the LF would read 78 %
of their tokens), on cranfield 25 %, on stackfaq 6 %, elsewhere almost none. Here, on a labelled run's *train* split
(never the split a table reports), ``embedding_cosine`` and ``bert_cosine`` score each pair under each rule of
:data:`weakrank.similarity.WINDOWS` (the library's own :func:`~weakrank.similarity.window_cosine`): ``first`` (the
model's truncation, the former LF), ``best`` (the best of 256-token windows at a half-window stride: MaxP, Dai &
Callan 2019) and ``first+best`` (the mean of the two); the LFs' default is the rule with the highest mean train MAP
over these rows. Also the teacher: the fusion model over the config's LFs with both encoder LFs under the rule, its
priors those fitted without the collection (``teacher_priors.csv``).

Writes ``benchmarks/passage_windows.csv`` (dataset, split, scorer, windows, map, queries, passages, long, windows_read).
Run: ``python benchmarks/bench_passage_windows.py`` (17 s on 2 cores once ``label`` has kept the windows' encodings in
the run directories; without them SciFact's 5,618 later windows take about 3 minutes).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from common import REQUIRE

from labeling_functions import BUILTIN
from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.io import read_parquet, write_text
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import SCORE
from weakrank.lf import PairBatch
from weakrank.paths import RunPaths
from weakrank.similarity import WINDOWS, kept_encodings

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks" / "passage_windows.csv"
ENCODER_LFS = ("embedding_cosine", "bert_cosine")


def rows_of(dataset: str, split: str) -> list[dict]:
    """The rows of one collection: each encoder LF and the teacher under each rule, train MAP."""
    cfg = load_config(ROOT / "pipelines" / f"{dataset}.toml")
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    votes = votes[votes["split"] == split].reset_index(drop=True)
    passages = read_parquet(paths.dataset / "passages.parquet").set_index("passage_id")["text"]
    queries = read_parquet(paths.dataset / "queries.parquet").set_index("query_id")["text"]
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    pairs = PairBatch(votes["query_id"].to_numpy(), votes["passage_id"].to_numpy(),
                      queries.reindex(votes["query_id"]).tolist(), passages.reindex(votes["passage_id"]).tolist())
    priors = pd.read_csv(ROOT / "benchmarks" / "teacher_priors.csv").query("held_out == @dataset")
    declared = {r.lf: {"family": r.family, "prior": r.prior} for r in priors.itertuples()}
    names = [c[len(SCORE):] for c in votes.columns if c.startswith(SCORE)]

    def map_of(score: np.ndarray) -> tuple[float, int]:
        run = votes[["query_id", "passage_id"]].assign(score=score)
        ap = evaluate_run(run, qrels, require=REQUIRE[dataset], rn=())["MAP"]
        return float(ap.mean()), len(ap)

    out = []
    with kept_encodings(paths.encodings):
        for rule in WINDOWS:
            scores = {n: votes[SCORE + n].to_numpy(float) for n in names}
            for lf_name in ENCODER_LFS:
                lf = BUILTIN[lf_name](windows=rule)
                scores[lf_name] = lf.fn(pairs, lf.load_state().resource)
                found, n = map_of(scores[lf_name])
                out.append({"scorer": lf_name, "windows": rule, "map": found, "queries": n})
            matrix = np.column_stack([scores[n] for n in names])
            model = ScoreFusionModel(priors={n: declared[n] for n in names if n in declared},
                                     prior_strength=float(priors["strength"].iloc[0]))
            fused = model.fit(matrix, votes["query_id"].to_numpy(), names).fused(matrix, votes["query_id"].to_numpy())
            found, n = map_of(fused)
            out.append({"scorer": "teacher", "windows": rule, "map": found, "queries": n})
            print(f"{dataset} {split} {rule}: " + ", ".join(f"{r['scorer']} {r['map']:.4f}" for r in out[-3:]), flush=True)
        encoder = BUILTIN["embedding_cosine"]().load_state().resource
        later = [len(w) for w in encoder.later_windows(passages.reindex(votes["passage_id"].unique()).tolist())]
    counts = {"passages": len(later), "long": sum(n > 0 for n in later), "windows_read": len(later) + sum(later)}
    return [{"dataset": dataset, "split": split, **row, **counts} for row in out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["scifact", "cranfield", "stackfaq"], choices=list(REQUIRE))
    parser.add_argument("--split", default="train")
    args = parser.parse_args()
    rows = [row for dataset in args.datasets for row in rows_of(dataset, args.split)]
    write_text(pd.DataFrame(rows).to_csv(index=False, float_format="%.4f"), CSV)


if __name__ == "__main__":
    main()
