"""Shared fixtures: paths of the real shared datasets, a tiny own-made dataset, and a model trained on the own
collection that carries its teacher (``trained``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from weakrank.dataset import Dataset, candidates_from_rows, qrels_from_candidates

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"


def shared(name: str) -> Path:
    """Path of a shared dataset; skips the test when the shared folder is absent."""
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"shared dataset {path} not available")
    return path


@pytest.fixture
def tiny() -> Dataset:
    """Two queries with obvious matches, made by hand."""
    queries = pd.DataFrame(
        {"query_id": ["q1", "q2"], "text": ["capital of france", "who painted the mona lisa"], "split": ["test", "test"]}
    )
    passages = pd.DataFrame(
        {
            "passage_id": ["p1", "p2", "p3", "p4", "p5", "p6"],
            "text": [
                "Paris is the capital of France.",
                "Bananas are rich in potassium.",
                "The stock market fell on Monday.",
                "Leonardo da Vinci painted the Mona Lisa.",
                "Rain is expected tomorrow in the north.",
                "Cats sleep for most of the day.",
            ],
        }
    )
    rows = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q1", "q2", "q2", "q2"],
            "passage_id": ["p2", "p1", "p3", "p5", "p6", "p4"],
            "gold": [0, 1, 0, 0, 0, 1],
        }
    )
    candidates = candidates_from_rows(rows, queries)
    return Dataset("tiny", queries, passages, candidates, qrels_from_candidates(candidates)).validate()


USER_LF = '''
from weakrank.lf import ranking_lf

@ranking_lf()
def query_words(query: str, passage: str) -> float:
    """How many of the query's words the passage holds."""
    return float(len(set(query.lower().split()) & set(passage.lower().split())))
'''


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    """The README's own collection labelled by two lexical LFs, the embedding LF and a user's LF file, and a
    cross-encoder trained 4 steps on it (``fuse_lfs``: its directories carry the teacher)."""
    import torch

    from weakrank import pipeline
    from weakrank.config import load_config
    from weakrank.stages.stage import train_config
    from weakrank.stages.train import train_ranker

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("shipped")
    (root / "user_lfs.py").write_text(USER_LF)
    cfg = load_config(OWN / "pipeline.toml")
    lfs = ["bm25", "tfidf", "embedding_cosine", f"{root / 'user_lfs.py'}:query_words"]
    cfg = replace(cfg, run_dir=root / "run", label=replace(cfg.label, lfs=lfs))
    for stage in (pipeline.ingest, pipeline.label, pipeline.aggregate):
        stage(cfg, **({"progress": False} if stage is pipeline.label else {}))
    train_ranker(cfg, train_config(cfg, fuse_lfs=True, architecture="cross-encoder"), progress=False)
    yield cfg, root
    torch.set_num_threads(threads)
