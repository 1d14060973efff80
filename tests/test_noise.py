import zlib

import numpy as np
import pandas as pd
import pytest

from tests.conftest import shared
from weakrank.errors import DataError
from weakrank.loaders import load_dataset
from weakrank.noise import corrupt_labels, undo_corruption


def bag_of_words(texts):
    """A cheap deterministic encoder for tests: hashed word counts."""
    out = np.zeros((len(texts), 512))
    for i, t in enumerate(texts):
        for w in t.lower().strip(".").split():
            out[i, zlib.crc32(w.encode()) % 512] += 1
    return out


@pytest.fixture(scope="module")
def trecqa_labels():
    ds = load_dataset("trecqa", shared("trecqa"), splits=("train", "dev"))
    labels = ds.candidates.assign(label=ds.candidates["gold"].astype("int8"), confidence=0.9)
    return labels, ds.passages


@pytest.mark.parametrize("ratio", [0.0, 0.02, 0.05, 0.3])
def test_changes_exactly_round_r_q_queries_and_undo_restores(trecqa_labels, ratio):
    labels, passages = trecqa_labels
    noisy, log = corrupt_labels(labels, passages, ratio, bag_of_words, seed=1)
    q = labels.loc[labels["split"] == "train", "query_id"].nunique()
    changed = (noisy["label"] != labels["label"]).groupby(labels["query_id"]).any()
    assert changed.sum() == round(ratio * q) == log["query_id"].nunique()
    other = labels["split"] != "train"
    assert (noisy.loc[other, "label"] == labels.loc[other, "label"]).all()  # only the chosen split changes
    assert noisy["label"].sum() == labels["label"].sum()  # a swap keeps the number of positives
    pd.testing.assert_frame_equal(undo_corruption(noisy, log), labels)


def test_the_positive_swaps_with_its_most_similar_negative(tiny):
    # only q1 (p2, p1, p3) has a positive, so ratio 0.5 of the 2 queries picks it
    labels = tiny.candidates.assign(label=[0, 1, 0, 0, 0, 0], confidence=[0.6, 0.9, 0.7, 0.5, 0.5, 0.5], split="train")
    passages = tiny.passages.copy()
    passages.loc[passages["passage_id"] == "p3", "text"] = "Paris is the capital city of France."
    noisy, log = corrupt_labels(labels, passages, 0.5, bag_of_words, seed=0)
    by_id = noisy.set_index("passage_id")
    assert by_id.loc[["p1", "p3", "p2"], "label"].tolist() == [0, 1, 0]  # p3 is the near-copy of p1
    assert by_id.loc[["p1", "p3"], "confidence"].tolist() == [0.7, 0.9]  # confidences travel with labels
    assert set(log["swapped_with"]) == {"p1", "p3"}


def test_too_high_a_ratio_is_refused(tiny):
    labels = tiny.candidates.assign(label=[0, 0, 0, 0, 0, 1], split="train")
    with pytest.raises(DataError, match="only 1 have both"):
        corrupt_labels(labels, tiny.passages, 1.0, bag_of_words)
