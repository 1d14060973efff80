import numpy as np
import pandas as pd
import pytest

from labeling_functions import bm25, tfidf, word_overlap
from weakrank.errors import LFError
from weakrank.labeling import apply_lfs, lf_names, vote_matrix
from weakrank.lf import PairBatch, RankingLF, ranking_lf


def test_decorator_keeps_name_doc_and_scores_one_pair():
    @ranking_lf(top_k=2)
    def length(query: str, passage: str) -> float:
        """Passage length."""
        return float(len(passage))

    assert length.name == "length" and length.__doc__ == "Passage length."
    assert length.rule.top_k == 2
    assert length("q", "abcd") == 4.0


def test_a_bare_decorator_is_the_decorator_called_without_options(tiny):
    @ranking_lf
    def length(query: str, passage: str) -> float:
        """Passage length."""
        return float(len(passage))

    @ranking_lf()
    def called(query: str, passage: str) -> float:
        return float(len(passage))

    assert isinstance(length, RankingLF) and length.name == "length" and length.__doc__ == "Passage length."
    assert (length.rule, length.batched, length.fit_fn, length.per_process, length.models) == (
        called.rule, called.batched, called.fit_fn, called.per_process, called.models)
    assert length("q", "abcd") == 4.0
    votes = apply_lfs(tiny, [length, called], progress=False)
    assert votes["vote_length"].tolist() == votes["vote_called"].tolist()
    assert votes["score_length"].tolist() == votes["score_called"].tolist()


def test_obvious_matches_get_positive_votes(tiny):
    votes = apply_lfs(tiny, [bm25, tfidf, word_overlap], progress=False)
    assert lf_names(votes) == ["bm25", "tfidf", "word_overlap"]
    positives = votes[votes["vote_bm25"] == 1][["query_id", "passage_id"]].values.tolist()
    assert positives == [["q1", "p1"], ["q2", "p4"]]
    # each of the three LFs votes +1 on exactly the gold passages here
    matrix = vote_matrix(votes)
    assert ((matrix == 1).all(axis=1) == (votes["gold"] == 1).to_numpy()).all()


def test_nan_score_names_the_lf_and_the_pair(tiny):
    @ranking_lf(batched=True)
    def broken(pairs: PairBatch) -> np.ndarray:
        out = np.ones(len(pairs))
        out[1] = np.nan
        return out

    with pytest.raises(LFError, match=r"'broken'.*query_id 'q1', passage_id 'p1'"):
        apply_lfs(tiny, [broken], progress=False)


def test_wrong_length_is_an_error(tiny):
    @ranking_lf(batched=True)
    def short(pairs: PairBatch) -> np.ndarray:
        return np.ones(len(pairs) - 1)

    with pytest.raises(LFError, match="returned 5 scores for 6 pairs"):
        apply_lfs(tiny, [short], progress=False)


def test_lf_abstaining_everywhere_warns(tiny):
    @ranking_lf()
    def constant(query: str, passage: str) -> float:
        return 1.0

    with pytest.warns(UserWarning, match="'constant' abstains on every pair"):
        votes = apply_lfs(tiny, [constant], progress=False)
    assert (votes["vote_constant"] == 0).all()


def test_duplicate_lf_names_are_refused(tiny):
    with pytest.raises(LFError, match=r"labeling function 'bm25': two LFs have this name"):
        apply_lfs(tiny, [bm25, tfidf, bm25], progress=False)


def test_with_rule_changes_only_the_rule():
    wide = bm25.with_rule(top_k=3)
    assert wide.rule.top_k == 3 and bm25.rule.top_k == 1 and wide.name == "bm25"


def test_score_cache_is_reused_and_invalidated_by_fingerprint(tiny, tmp_path):
    calls = []

    @ranking_lf()
    def counted(query: str, passage: str) -> float:
        calls.append(1)
        return float(len(set(query) & set(passage)))

    first = apply_lfs(tiny, [counted], cache_dir=tmp_path, fingerprints={"counted": "a"}, progress=False)
    n = len(calls)
    again = apply_lfs(tiny, [counted], cache_dir=tmp_path, fingerprints={"counted": "a"}, progress=False)
    assert len(calls) == n  # nothing recomputed
    assert (again["score_counted"] == first["score_counted"]).all()
    apply_lfs(tiny, [counted], cache_dir=tmp_path, fingerprints={"counted": "b"}, progress=False)
    assert len(calls) == 2 * n


def test_a_scorer_gets_only_the_lfs_the_cache_lacks_and_its_scores_are_cached(tiny, tmp_path):
    """How the Dask and Spark engines label: the same cache, the same keys, the same votes as in process."""
    keys = {"bm25": "a", "word_overlap": "a"}
    local = apply_lfs(tiny, [bm25], cache_dir=tmp_path, fingerprints=keys, progress=False)
    asked = []

    def scorer(lfs):
        asked.append([lf.name for lf in lfs])
        return {lf.name: apply_lfs(tiny, [lf], progress=False)[f"score_{lf.name}"].to_numpy() for lf in lfs}

    both = apply_lfs(tiny, [bm25, word_overlap], cache_dir=tmp_path, fingerprints=keys, progress=False, scorer=scorer)
    assert asked == [["word_overlap"]]
    pd.testing.assert_frame_equal(both, apply_lfs(tiny, [bm25, word_overlap], progress=False))
    pd.testing.assert_series_equal(both["score_bm25"], local["score_bm25"])
    apply_lfs(tiny, [bm25, word_overlap], cache_dir=tmp_path, fingerprints=keys, progress=False, scorer=scorer)
    assert asked == [["word_overlap"]]  # everything cached now: the scorer is not called


def test_a_shared_encoder_runs_each_text_once_for_every_output_and_lf():
    import torch

    from weakrank.similarity import SharedEncoder, pair_cosine

    seen = []

    class Model:  # sentence-transformers' encode(output_value=None): token vectors, mask and the embedding per text
        def encode(self, texts, batch_size, output_value, show_progress_bar):
            seen.extend(texts)
            return [{"token_embeddings": torch.tensor([[1.0, len(t)], [3.0, 0.0], [9.0, 9.0]]),
                     "attention_mask": torch.tensor([1, 1, 0]), "sentence_embedding": torch.tensor([len(t), 1.0])}
                    for t in texts]

    encoder = SharedEncoder(Model(), max_items=3)
    assert np.allclose(encoder(["ab"], "cls"), [[1.0, 2.0]]) and np.allclose(encoder(["ab"], "mean"), [[2.0, 1.0]])
    first = pair_cosine(["q", "q"], ["ab", "bbb"], encoder)  # the sentence embeddings
    again = pair_cosine(["q"], ["ab"], lambda texts: encoder(texts, "sentence"))  # every text already encoded
    pair_cosine(["q"], ["ab"], lambda texts: encoder(texts, "cls"))  # another LF, another output: no new pass
    assert sorted(seen) == ["ab", "bbb", "q"] and again[0] == first[0]
    encoder(["cccc"], "mean")
    encoder(["cccc"], "cls")  # the store is full: encoded again, not kept
    assert seen.count("cccc") == 2 and len(encoder.store) == 3


def test_embedding_and_bert_cosine_over_one_model_share_its_encoder():
    from labeling_functions import make_bert_cosine, make_embedding_cosine

    assert make_embedding_cosine().load_state().resource is make_bert_cosine().load_state().resource is not None
    assert make_bert_cosine(max_length=64).load_state().resource is not make_bert_cosine().load_state().resource


def test_an_int8_encoder_is_its_own_shared_encoder_close_to_fp32_and_kept_apart(tmp_path):
    from labeling_functions import make_bert_cosine, make_embedding_cosine
    from weakrank.similarity import kept_encodings

    fp32, int8 = make_embedding_cosine().load_state().resource, make_embedding_cosine(precision="int8").load_state().resource
    assert int8 is not fp32 and int8 is make_bert_cosine(precision="int8").load_state().resource  # one pass, both LFs
    assert any("quantized" in type(m).__module__ for m in int8.model.modules())
    assert not any("quantized" in type(m).__module__ for m in fp32.model.modules())
    texts = ["who wrote emma", "Emma is a novel by Jane Austen.", "Mars has two moons."]
    a, b = fp32(texts), int8(texts)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert not np.array_equal(a, b) and cos.min() > 0.9  # measured: 0.96

    def sim(e):
        return e[0] @ e[1] / np.linalg.norm(e[0]) / np.linalg.norm(e[1]) - e[0] @ e[2] / np.linalg.norm(e[0]) / np.linalg.norm(e[2])

    assert sim(a) > 0.2 and sim(b) > 0.2  # the answer above the unrelated passage in both
    with kept_encodings(tmp_path):
        fp32(texts[:1]), int8(texts[:1])
    assert len(list(tmp_path.glob("*.npz"))) == 2  # one file each: an fp32 run never reads int8 encodings
    with pytest.raises(ValueError, match="precision"):
        make_embedding_cosine(precision="fp16").load_state()


def test_the_encoder_lfs_run_int8_by_default_only_where_the_committed_table_allows_it():
    """benchmarks/bench_int8_lfs.py measures each encoder LF's MAP at int8 against fp32 on the seven shared
    collections; an LF's default precision is int8 only if every one moved by at most 0.005."""
    import inspect
    from pathlib import Path

    from labeling_functions import make_bert_cosine, make_embedding_cosine

    table = pd.read_csv(Path(__file__).resolve().parents[1] / "benchmarks" / "int8_lfs.csv")
    assert (table["within"] == ((table["map_int8"] - table["map_fp32"]).abs() <= 0.005)).all()
    for factory in (make_embedding_cosine, make_bert_cosine):
        rows = table[table["lf"] == factory().name]
        assert len(rows) == 7 and rows["dataset"].is_unique
        default = inspect.signature(factory).parameters["precision"].default
        assert default == ("int8" if rows["within"].all() else "fp32"), factory().name


def test_answer_type_lf_scores_the_asked_type_and_abstains_on_other_questions(tiny):
    from labeling_functions import answer_type
    from labeling_functions.answer_type import question_type

    assert [question_type(q) for q in ("When was Tolstoy born?", "how many moons has Mars", "Who wrote Emma?",
                                       "Where is Lima?", "In what year did it end?", "What is a gene?")] \
        == ["date", "number", "name", "place", "date", None]
    assert answer_type("When was Tolstoy born?", "Leo Tolstoy was born on 9 September 1828.") == 1.0
    assert answer_type("When was Tolstoy born?", "Tolstoy was a Russian writer.") == 0.0
    assert answer_type("How many moons has Mars?", "Mars has two moons.") == 1.0
    assert answer_type("Who wrote Emma?", "Emma is a novel.") == 0.0  # its only name is the question's own
    assert answer_type("Who wrote Emma?", "Emma is a novel by Jane Austen.") == 1.0
    votes = apply_lfs(tiny, [answer_type], progress=False).set_index("passage_id")["vote_answer_type"]
    # "who painted the mona lisa": only the Leonardo sentence names someone else; "capital of france" has no
    # known answer type, so every candidate ties and the LF abstains on the whole list
    assert votes.to_dict() == {"p1": 0, "p2": 0, "p3": 0, "p4": 1, "p5": 0, "p6": 0}


def test_kept_encodings_let_a_later_run_encode_no_text_twice(tmp_path):
    import torch

    from weakrank.similarity import _MODELS, SharedEncoder, kept_encodings

    seen = []

    class Model:
        max_seq_length = 8

        def encode(self, texts, batch_size, output_value, show_progress_bar):
            seen.extend(texts)
            return [{"token_embeddings": torch.ones(2, 2) * len(t), "attention_mask": torch.tensor([1, 1]),
                     "sentence_embedding": torch.tensor([len(t), 1.0])} for t in texts]

    _MODELS["fake", None, "fp32"] = first = SharedEncoder(Model())
    try:
        with kept_encodings(tmp_path):
            first(["a", "bb"], "cls")
        assert sorted(seen) == ["a", "bb"] and len(list(tmp_path.glob("*.npz"))) == 1
        _MODELS["fake", None, "fp32"] = second = SharedEncoder(Model())  # a new process: an empty store
        with kept_encodings(tmp_path):
            assert np.allclose(second(["bb", "ccc"], "sentence"), [[2, 1], [3, 1]])
            assert np.allclose(second(["a"], "mean"), [[1, 1]])
        assert sorted(seen) == ["a", "bb", "ccc"]  # only the new text was encoded
    finally:
        del _MODELS["fake", None, "fp32"]


def test_a_passage_longer_than_the_model_reads_is_scored_over_windows_that_cover_it():
    """The encoder LFs' ``windows``: a passage whose answer lies past the model's 256 tokens scores low on its first
    window (the model's truncation) and high on its best; a passage that fits scores the same under every rule."""
    from labeling_functions import make_bert_cosine, make_embedding_cosine
    from weakrank.similarity import pair_cosine, window_cosine

    encoder = make_embedding_cosine().load_state().resource
    filler = " ".join(f"The bakery on street number {i} sells rye bread, butter croissants and apple pies." for i in range(40))
    answer = "The Peace of Westphalia, signed in 1648, ended the Thirty Years' War in Europe."
    query, long, short = "which treaty ended the thirty years war", f"{filler} {answer}", answer
    tokenizer, width = encoder.model.tokenizer, encoder.model.max_seq_length - 2
    ids = tokenizer(long, add_special_tokens=False)["input_ids"]
    windows, none = encoder.later_windows([long, short])
    assert len(windows) == -(-(len(ids) - width) // (width // 2)) > 1 and none == []
    # a window cut inside a word reads a token or two more when its text is tokenised again; the model truncates it
    assert all(len(tokenizer(w, add_special_tokens=False)["input_ids"]) <= width + 2 for w in windows)
    assert tokenizer(windows[-1], add_special_tokens=False)["input_ids"][-8:] == ids[-8:]  # the last reaches the end
    scores = {rule: window_cosine([query, query], [long, short], encoder, "sentence", rule)
              for rule in ("first", "best", "first+best")}
    assert np.allclose(scores["first"], pair_cosine([query, query], [long, short], encoder))  # the truncation
    assert scores["best"][0] > scores["first"][0] + 0.15  # measured: −0.05 → 0.19
    assert np.isclose(scores["first+best"][0], (scores["first"][0] + scores["best"][0]) / 2)
    assert len({round(s[1], 6) for s in scores.values()}) == 1  # a passage that fits: the same under each rule
    with pytest.raises(ValueError, match="windows"):
        make_bert_cosine(windows="all")


def test_the_encoder_lfs_default_window_rule_is_the_best_on_the_committed_train_splits():
    """benchmarks/bench_passage_windows.py scores both encoder LFs under each rule on the train splits of the
    collections with long passages; the LFs' default is the rule with the highest mean MAP there."""
    import inspect
    from pathlib import Path

    from labeling_functions import make_bert_cosine, make_embedding_cosine
    from weakrank.similarity import WINDOWS

    table = pd.read_csv(Path(__file__).resolve().parents[1] / "benchmarks" / "passage_windows.csv")
    lfs = table[table["scorer"].isin(["embedding_cosine", "bert_cosine"]) & (table["split"] == "train")]
    assert set(lfs["windows"]) == set(WINDOWS) and lfs["dataset"].nunique() == 3
    best = lfs.groupby("windows")["map"].mean().idxmax()
    for factory in (make_embedding_cosine, make_bert_cosine):
        assert inspect.signature(factory).parameters["windows"].default == best
