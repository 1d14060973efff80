"""How much the teacher moves when a user changes its LFs (issue: a teacher that earns the fusion gain): on each of the
twelve collections, the fusion model with the priors the built-in LFs declare (as ``aggregate`` fits it, no gold),

- ``+word_overlap``: the built-in word-overlap LF added (declared lexical);
- ``+word_count``: a user's crude LF that declares nothing (:func:`word_count`, below: how many of the query's words
  the passage holds, counted with repeats) added;
- ``-answer_type``: answer_type dropped, where the pipeline has it (with the share of pairs it ranks);
- the README's own-collection set (bm25, tfidf, word_overlap) with ``word_count`` added: its share of the fused score
  against the highest share of a declared lexical LF.

Reads the arrays ``bench_teacher.py`` caches (``benchmarks/results/teacher/<name>.pkl``; the collections' run
directories for the texts of ``word_count``). Writes ``benchmarks/teacher_robustness.csv`` (``dataset, teacher_map,
word_overlap_map, word_count_map, without_answer_type_map, answer_type_coverage, own_word_count_weight,
own_top_declared_weight``); ``…_map``: the evaluation split's MAP. Run: ``python benchmarks/bench_teacher_robustness.py``
(a few minutes on 2 cores).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from bench_teacher import CACHE, COLLECTIONS, EXTRA, Prepared, evaluated, fitted_teacher, prepare
from common import ROOT

from labeling_functions import BUILTIN
from weakrank.config import load_config
from weakrank.io import read_parquet
from weakrank.label_models.fusion import PRIOR_STRENGTH, ScoreFusionModel
from weakrank.lists import informative_rows
from weakrank.paths import RunPaths

UNSEEN = ["med", "cisi", "cacm", "msmarco", "dbpedia"]
PRIORS = {name: BUILTIN[name]().prior for name in BUILTIN}
CRUDE = "word_count"
OWN = ["bm25", "tfidf", "word_overlap"]  # the README's own-collection LFs
CSV = ROOT / "benchmarks" / "teacher_robustness.csv"


def word_count(query: str, passage: str) -> float:
    """A user's crude LF: how many of the query's words the passage holds, repeats counted; no family, no prior."""
    words = set(re.findall(r"\w+", query.lower()))
    return float(sum(word in words for word in re.findall(r"\w+", passage.lower())))


def config_path(name: str) -> Path:
    """The pipeline config of collection ``name`` (an unseen one's is built by ``benchmarks/collections``)."""
    return ROOT / ("benchmarks/collections" if name in UNSEEN else "pipelines") / f"{name}.toml"


def crude_scores(name: str, d: Prepared) -> np.ndarray:
    """:func:`word_count` of every pair of ``d`` (cached beside the arrays)."""
    cached = CACHE / f"{name}.{CRUDE}.npy"
    if cached.exists():
        return np.load(cached)
    dataset = RunPaths(load_config(config_path(name)).run_dir).dataset
    queries = read_parquet(dataset / "queries.parquet").set_index("query_id")["text"]
    passages = read_parquet(dataset / "passages.parquet").set_index("passage_id")["text"]
    found = np.array([word_count(q, p) for q, p in zip(queries.reindex(d.groups).to_numpy(),
                                                       passages.reindex(d.passages).to_numpy())])
    np.save(cached, found)
    return found


def fitted(names: list[str], scores: np.ndarray, groups: np.ndarray) -> ScoreFusionModel:
    """The fusion model as ``aggregate`` fits it with the priors the built-in LFs declare."""
    return fitted_teacher(names, scores, groups, PRIORS, PRIOR_STRENGTH)


def teacher_map(d: Prepared, names: list[str], scores: np.ndarray) -> float:
    return evaluated(d, fitted(names, scores, d.groups).fused(scores, d.groups))


def measured(name: str) -> dict:
    """One collection's row."""
    d = prepare(name, config_path(name) if name in UNSEEN else None)
    crude = crude_scores(name, d)
    base = [i for i, n in enumerate(d.names) if n != EXTRA]
    names = [d.names[i] for i in base]
    row = {"dataset": name, "teacher_map": teacher_map(d, names, d.scores[:, base]),
           "word_overlap_map": teacher_map(d, d.names, d.scores),
           "word_count_map": teacher_map(d, [*names, CRUDE], np.column_stack([d.scores[:, base], crude]))}
    if "answer_type" in names:
        kept = [i for i in base if d.names[i] != "answer_type"]
        row["without_answer_type_map"] = teacher_map(d, [d.names[i] for i in kept], d.scores[:, kept])
        column = d.scores[:, d.names.index("answer_type")][:, None]
        row["answer_type_coverage"] = float(informative_rows(column, d.groups).mean())
    own = [d.names.index(n) for n in OWN]
    model = fitted([*OWN, CRUDE], np.column_stack([d.scores[:, own], crude]), d.groups)
    weights = {w.lf: w.weight for w in model.state_.lfs}
    row["own_word_count_weight"] = weights[CRUDE]
    row["own_top_declared_weight"] = max(weights[n] for n in OWN)
    print({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}, flush=True)
    return row


def main() -> None:
    table = pd.DataFrame([measured(name) for name in COLLECTIONS + UNSEEN]).round(4)
    table.to_csv(CSV, index=False)
    moved = table[["word_overlap_map", "word_count_map", "without_answer_type_map"]].sub(table["teacher_map"], axis=0)
    print(table.to_string(index=False))
    print("largest move:", moved.abs().max().round(4).to_dict())
    print(f"wrote {CSV}")


if __name__ == "__main__":
    main()
