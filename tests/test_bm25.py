import numpy as np
import pandas as pd
from rank_bm25 import BM25Okapi

from tests.conftest import shared
from weakrank.bm25 import BM25Index
from weakrank.text import tokenize


def test_pair_scores_equal_rank_bm25_on_wikiqa():
    df = pd.read_csv(shared("wikiqa") / "WikiQA-dev.tsv", sep="\t", quoting=3, keep_default_na=False)
    texts = df["Sentence"].drop_duplicates().tolist()
    row = {t: i for i, t in enumerate(texts)}
    sample = df.sample(300, random_state=0)
    ours = BM25Index(texts).score_pairs(sample["Question"].tolist(), np.array([row[t] for t in sample["Sentence"]]))
    reference = BM25Okapi([tokenize(t) for t in texts])
    theirs = [reference.get_batch_scores(tokenize(q), [row[s]])[0] for q, s in zip(sample["Question"], sample["Sentence"])]
    assert np.allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    assert (ours > 0).mean() > 0.5  # the comparison is not vacuous


def test_top_k_matches_rank_bm25_get_scores():
    texts = ["the cat sat on the mat", "dogs chase cats", "a cat and a dog", "stock prices rose", "the mat is red"]
    index = BM25Index(texts)
    rows, scores = index.top_k(["cat on a mat"], k=3)
    reference = BM25Okapi([tokenize(t) for t in texts]).get_scores(tokenize("cat on a mat"))
    assert rows[0].tolist() == np.argsort(-reference, kind="stable")[:3].tolist()
    assert np.allclose(scores[0], np.sort(reference)[::-1][:3])
