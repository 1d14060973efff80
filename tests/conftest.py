"""Shared fixtures: paths of the real shared datasets and a tiny own-made dataset."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from weakrank.dataset import Dataset, candidates_from_rows, qrels_from_candidates

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


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
