"""The shipped ranker is a model: a trained directory carries its teacher (LFs and fusion label model), loads
as the student fused with it, scores queries that were never labelled, and moves to another folder."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from labeling_functions import BUILTIN
from weakrank import pipeline
from weakrank.cli import main
from weakrank.dataset import Dataset
from weakrank.errors import DataError, WeakrankError
from weakrank.fusion_state import STUDENT_WEIGHT
from weakrank.io import read_metadata, read_npz, read_parquet, read_run, write_npz
from weakrank.judged.rule import MIN_QUERIES
from weakrank.judged.student_weight import StudentWeightSelector
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.label_models.labels_file import LabelsInfo
from weakrank.labeling import score_matrix
from weakrank.lists import standardize_within
from weakrank.paths import RunPaths
from weakrank.ranker import FusedRanker, Teacher, average_views, load_ranker
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.ranker.manifest import read_manifest, write_manifest
from weakrank.ranker.teacher_state import FUSION_FILE, read_teacher_state
from weakrank.records import StudentWeightRecord, noted
from weakrank.stages.rerank import score_split
from weakrank.stages.train import run_teacher

OWN = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"


def test_the_loaded_ranker_gives_the_batch_fusion_of_student_and_teacher(trained):
    cfg, _ = trained
    best = RunPaths(cfg.run_dir).models() / "best"
    ranker = load_ranker(best, device="cpu", trust_code=True)  # a user's LF file: trusted
    assert isinstance(ranker, FusedRanker) and isinstance(ranker.student, CrossEncoderRanker)
    assert isinstance(load_ranker(best, student_only=True), CrossEncoderRanker)
    # the batch fusion over labelled votes: the student's run averaged with the teacher fitted on every pair
    votes = read_parquet(RunPaths(cfg.run_dir).votes)
    teacher = ScoreFusionModel(**cfg.aggregate.options).fit(score_matrix(votes), votes["query_id"].to_numpy())
    student = score_split(cfg, best, "test")
    rows = votes[votes["split"] == "test"].merge(student, on=["query_id", "passage_id"], validate="one_to_one")
    scores, groups = score_matrix(rows), rows["query_id"].to_numpy()
    batch = rows[["query_id", "passage_id"]].assign(score=average_views(teacher.fused(scores, groups),
                                                                        rows["score"].to_numpy(), groups))
    shipped = score_split(cfg, best, "test", student_only=False, trust_code=True)
    both = batch.merge(shipped, on=["query_id", "passage_id"], suffixes=("_batch", "_shipped"))
    assert len(both) == len(batch) == len(shipped)
    z = standardize_within(both[["score_batch", "score_shipped"]].to_numpy(), both["query_id"].to_numpy())
    assert np.abs(z[:, 0] - z[:, 1]).max() < 1e-6
    assert "## Which scores" in (best / "README.md").read_text()  # the card says which is which


def test_reranking_reads_the_encodings_the_label_stage_kept(trained):
    cfg, _ = trained
    best, paths = RunPaths(cfg.run_dir).models() / "best", RunPaths(cfg.run_dir)
    shipped = score_split(cfg, best, "test", student_only=False, trust_code=True)
    [kept] = paths.encodings.glob("*.npz")
    original = read_npz(kept)
    try:  # encodings that are not the model's: the teacher's embedding LF reads them instead of encoding
        write_npz({k: np.zeros_like(a) if a.dtype.kind == "f" else a for k, a in original.items()}, kept)
        poisoned = score_split(cfg, best, "test", student_only=False, trust_code=True)
    finally:
        write_npz(original, kept)
    assert not np.allclose(poisoned["score"], shipped["score"])
    assert np.allclose(score_split(cfg, best, "test", student_only=False, trust_code=True)["score"], shipped["score"])


def test_a_query_never_labelled_is_scored_and_ranked(trained):
    cfg, _ = trained
    ranker = load_ranker(RunPaths(cfg.run_dir).models() / "final", device="cpu", trust_code=True)
    passages = ["Lisbon is the capital and largest city of Portugal.", "The Nile is a river in Africa.",
                "Portugal borders Spain."]
    scores = ranker.predict([("what is the capital of portugal", p) for p in passages])
    assert np.isfinite(scores).all() and abs(scores.mean()) < 1e-9  # per-list standardised views, averaged
    ranked = ranker.rank("what is the capital of portugal", passages, return_documents=True)
    assert [r["corpus_id"] for r in ranked] == np.argsort(-scores, kind="stable").tolist()
    assert ranked[0]["text"] == passages[ranked[0]["corpus_id"]]
    # two queries in one call are two lists: each scored as it is alone
    other = [("which river flows through egypt", p) for p in passages]
    together = ranker.predict([("what is the capital of portugal", p) for p in passages] + other)
    assert np.allclose(together[:3], scores, atol=1e-6)


def test_a_moved_directory_loads_and_scores_the_same(trained, tmp_path):
    cfg, root = trained
    best = RunPaths(cfg.run_dir).models() / "best"
    saved = (best / FUSION_FILE).read_text()
    assert str(root) not in saved and str(OWN) not in saved  # no absolute path inside
    moved = shutil.copytree(best, tmp_path / "elsewhere" / "model")
    (root / "user_lfs.py").rename(root / "user_lfs.py.away")  # the user's LF file travels inside the directory
    try:
        pairs = [("what is the capital of france", "Paris is the capital of France."),
                 ("what is the capital of france", "Berlin is in Germany.")]
        assert np.allclose(load_ranker(moved, trust_code=True).predict(pairs),
                           load_ranker(best, trust_code=True).predict(pairs), atol=1e-6)
    finally:
        (root / "user_lfs.py.away").rename(root / "user_lfs.py")
    assert [entry["spec"] for entry in json.loads(saved)["lfs"]][-1] == "lfs/user_lfs.py:query_words"


def test_without_the_teacher_the_directory_loads_as_the_student(trained, tmp_path):
    cfg, _ = trained
    student = shutil.copytree(RunPaths(cfg.run_dir).models() / "best", tmp_path / "student")
    (student / FUSION_FILE).unlink()
    write_manifest(student, replace(read_manifest(student), kind="student"))
    assert isinstance(load_ranker(student), CrossEncoderRanker)
    with pytest.warns(UserWarning, match="holds no teacher"):
        run = score_split(cfg, student, "test", student_only=False)
    assert np.allclose(run["score"], score_split(cfg, student, "test")["score"])


def test_an_lf_fitted_on_the_collection_that_cannot_export_keeps_the_student_alone(trained, tmp_path):
    cfg, _ = trained
    (tmp_path / "fitted.py").write_text(
        "from weakrank.lf import ranking_lf\n\n"
        "@ranking_lf(fit=lambda dataset: len(dataset.passages))\n"
        "def short(query, passage, n):\n    return -len(passage) / n\n")
    lfs = [*cfg.label.lfs[:-1], f"{tmp_path / 'fitted.py'}:short"]
    other = replace(cfg, run_dir=tmp_path / "run", label=replace(cfg.label, lfs=lfs))
    shutil.copytree(cfg.run_dir / "dataset", other.run_dir / "dataset")
    pipeline.label(other, progress=False)
    target = shutil.copytree(RunPaths(cfg.run_dir).models() / "best", tmp_path / "model")
    (target / FUSION_FILE).unlink()
    with pytest.warns(UserWarning, match="export no state"):
        assert run_teacher(other) is None
    assert not (target / FUSION_FILE).exists()


def test_rerank_a_trec_run_of_new_queries_without_labelling(trained, tmp_path, capsys):
    cfg, _ = trained
    best = RunPaths(cfg.run_dir).models() / "best"
    (tmp_path / "queries.tsv").write_text("n1\twhat is the capital of spain\nn2\twhat is the largest ocean\n")
    (tmp_path / "collection.tsv").write_text("a\tMadrid is the capital of Spain.\nb\tThe Pacific is the largest "
                                             "ocean.\nc\tSpain is in Europe.\n")
    (tmp_path / "new.run").write_text("n1 Q0 a 1 3 bm25\nn1 Q0 c 2 2 bm25\nn1 Q0 b 3 1 bm25\n"
                                      "n2 Q0 b 1 3 bm25\nn2 Q0 a 2 1 bm25\n")
    out = tmp_path / "reranked.trec"
    assert main(["rerank", "--model-dir", str(best), "--run", str(tmp_path / "new.run"), "--queries",
                 str(tmp_path / "queries.tsv"), "--collection", str(tmp_path / "collection.tsv"),
                 "--output", str(out), "--trust-code", "--quiet"]) == 0
    run = read_run(out)
    assert sorted(zip(run["query_id"], run["passage_id"])) == [("n1", "a"), ("n1", "b"), ("n1", "c"),
                                                              ("n2", "a"), ("n2", "b")]
    texts = {"a": "Madrid is the capital of Spain.", "b": "The Pacific is the largest ocean.", "c": "Spain is in Europe."}
    n1 = run[run["query_id"] == "n1"]
    expected = load_ranker(best, trust_code=True).predict([("what is the capital of spain", texts[p]) for p in n1["passage_id"]])
    assert np.allclose(n1["score"], expected, atol=1e-5)
    assert main(["rerank", "--model-dir", str(best), "--run", str(tmp_path / "new.run"), "--queries",
                 str(tmp_path / "queries.tsv"), "--collection", str(tmp_path / "collection.tsv"),
                 "--output", str(out), "--trust-code", "--quiet"]) == 0  # weakrank wrote it: replaced without --force
    assert read_run(out).equals(run)
    assert main(["rerank", "--run", str(tmp_path / "new.run"), "--quiet"]) == 2
    assert "--model-dir, --queries, --collection" in capsys.readouterr().err


def test_the_bm25_and_tfidf_lfs_travel_as_collection_statistics(tiny, tmp_path):
    from labeling_functions import make_bm25, make_tfidf
    from weakrank.lf import PairBatch

    pairs = tiny.pairs()
    batch = PairBatch(pairs["query_id"].to_numpy(), pairs["passage_id"].to_numpy(), list(pairs["query"]),
                      list(pairs["passage"]))
    new = PairBatch(np.array(["x", "x"]), np.array(["new1", "new2"]), ["capital city"] * 2,
                    ["a capital city of a country", "no shared words"])
    for make in (make_bm25, make_tfidf):
        fitted = make().fit(tiny)
        assert fitted.save_state(tmp_path / "state.npz")
        restored = make().load_state(tmp_path / "state.npz")
        assert np.allclose(restored.score(batch), fitted.score(batch), atol=1e-12)  # the collection's passages
        assert np.allclose(restored.score(new), fitted.score(new), atol=1e-12)  # and ones it never held
        assert restored.score(new)[0] > 0 == restored.score(new)[1]


def test_a_dataset_frame_scores_like_pairs_for_the_student(trained):
    cfg, _ = trained
    student = load_ranker(RunPaths(cfg.run_dir).models() / "best", student_only=True)
    pairs = Dataset.load(RunPaths(cfg.run_dir).dataset).pairs().head(5)
    assert np.allclose(student.score_frame(pairs), student.predict(list(zip(pairs["query"], pairs["passage"]))))


def test_an_int8_student_scores_as_the_fp32_one_up_to_quantisation(trained):
    cfg, _ = trained
    best = RunPaths(cfg.run_dir).models() / "best"
    pairs = Dataset.load(RunPaths(cfg.run_dir).dataset).pairs()
    texts = list(zip(pairs["query"], pairs["passage"]))
    fp32, int8 = load_ranker(best, student_only=True), load_ranker(best, student_only=True, precision="int8")
    assert any("quantized" in type(m).__module__ for m in int8.modules())
    assert np.corrcoef(fp32.predict(texts), int8.predict(texts))[0, 1] > 0.95  # a 4-step model: scores close together
    shipped = load_ranker(best, backend="int8", trust_code=True)  # the name of before: torch at int8
    assert isinstance(shipped, FusedRanker)
    encoder = next(lf for lf in shipped.teacher.lfs if lf.name == "embedding_cosine")
    encoder.load_state()  # its model, built on first use: at the student's precision
    assert encoder.resource.precision == "int8" and "precision" not in json.dumps(shipped.teacher.options)
    frame = pairs.head(12)
    assert np.corrcoef(load_ranker(best, trust_code=True).score_frame(frame), shipped.score_frame(frame))[0, 1] > 0.9


def test_the_onnx_backend_scores_as_torch_and_exports_once(trained, tmp_path):
    pytest.importorskip("onnxruntime")
    cfg, _ = trained
    best = tmp_path / "best"
    shutil.copytree(RunPaths(cfg.run_dir).models() / "best", best)
    pairs = Dataset.load(RunPaths(cfg.run_dir).dataset).pairs()
    texts = list(zip(pairs["query"], pairs["passage"]))
    torch_scores = load_ranker(best, "cpu", student_only=True).predict(texts)
    onnx = load_ranker(best, student_only=True, backend="onnx")
    assert np.allclose(onnx.predict(texts, batch_size=3), torch_scores, atol=1e-4)  # batches padded differently
    exported = (best / "onnx" / "model.onnx").stat().st_mtime_ns
    int8 = load_ranker(best, student_only=True, backend="onnx-int8")
    assert (best / "onnx" / "model_int8.onnx").exists() and (best / "onnx" / "model.onnx").stat().st_mtime_ns == exported
    assert np.corrcoef(int8.predict(texts), torch_scores)[0, 1] > 0.95
    shipped = load_ranker(best, backend="onnx", trust_code=True)  # the shipped ranker with an ONNX student
    assert isinstance(shipped, FusedRanker)
    assert np.allclose(shipped.score_frame(pairs), load_ranker(best, "cpu", trust_code=True).score_frame(pairs), atol=1e-3)
    with pytest.raises(WeakrankError, match="backend 'gpu'"):
        load_ranker(best, backend="gpu")


def test_the_teacher_scores_from_its_state_as_the_fusion_model_that_fitted_it(trained):
    cfg, _ = trained
    votes = read_parquet(RunPaths(cfg.run_dir).votes)
    scores, groups = score_matrix(votes), votes["query_id"].to_numpy()
    model = ScoreFusionModel(**cfg.aggregate.options).fit(scores, groups)
    assert np.array_equal(Teacher([], model.state()).fused(scores, groups), model.fused(scores, groups))
    m = scores.shape[1]  # judged mode's RRF: one LF a cluster
    rrf = replace(model.state(), combine="rrf", clusters=tuple((i,) for i in range(m)),
                  weights=(1.0, 2.0, 0.0, 1.0)[:m], scales=(1.0,) * m, loadings=(0.5,) * m)
    assert np.array_equal(Teacher([], rrf).fused(scores, groups), ScoreFusionModel.from_state(rrf).fused(scores, groups))


def test_a_saved_and_loaded_ranker_scores_as_the_one_saved_and_writes_the_same_files(trained, tmp_path):
    cfg, _ = trained
    best = RunPaths(cfg.run_dir).models() / "best"
    ranker = load_ranker(best, device="cpu", trust_code=True)
    pairs = Dataset.load(RunPaths(cfg.run_dir).dataset).pairs()
    again = tmp_path / "again"
    ranker.save(again)
    assert json.loads((again / FUSION_FILE).read_text()) == json.loads((best / FUSION_FILE).read_text())
    assert {p.relative_to(again) for p in (again / "lfs").rglob("*")} == {p.relative_to(best) for p in
                                                                          (best / "lfs").rglob("*")}
    loaded = FusedRanker.load(again, trust_code=True, device="cpu")
    assert np.array_equal(loaded.score_frame(pairs), ranker.score_frame(pairs))
    fresh = FusedRanker(ranker.student, run_teacher(cfg))  # the teacher as training hands it over: the same scores
    assert np.allclose(fresh.score_frame(pairs), ranker.score_frame(pairs), atol=1e-9)


def test_labels_without_a_fusion_state_give_a_teacher_refitted_on_every_pair(trained):
    cfg, _ = trained
    votes = read_parquet(RunPaths(cfg.run_dir).votes)
    refitted = ScoreFusionModel(**cfg.fusion_options()).fit_table(votes).state()  # the LFs declared priors included
    assert run_teacher(cfg, LabelsInfo()).fusion_state == refitted
    assert run_teacher(cfg).fusion_state.to_dict() == read_metadata(RunPaths(cfg.run_dir).labels)["params"]


class Fixed:
    """A student or teacher whose score of a passage is given by a table (passage text → score)."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def predict(self, pairs, batch_size: int = 64) -> np.ndarray:
        return np.array([self.scores[p] for _, p in pairs])

    def score_frame(self, pairs: pd.DataFrame) -> np.ndarray:
        return np.array([self.scores[p] for p in pairs["passage"]])


def judged_lists(queries: int, seed: int = 0) -> pd.DataFrame:
    """``queries`` lists of 6 passages, the first 4 judged (one relevant), the other 2 not."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(queries):
        relevant = rng.integers(4)
        rows += [{"query_id": f"q{q}", "passage_id": f"q{q}p{i}", "query": f"query {q}", "passage": f"q{q}p{i}",
                  "judged": float(i == relevant) if i < 4 else np.nan} for i in range(6)]
    return pd.DataFrame(rows)


def choose_student_weight(student: Fixed, teacher: Fixed, pairs: pd.DataFrame):
    """The weight, the choice and each weight's estimated MAP of the selector over ``student`` and ``teacher``,
    which it leaves as they were."""
    base = FusedRanker(student, teacher)
    selector = StudentWeightSelector(base).fit(pairs)
    assert base.student_weight == STUDENT_WEIGHT and base.student is student and base.teacher is teacher
    assert selector.record_.estimates == selector.choice_.estimates
    assert selector.record_.choice == selector.choice_.name and selector.record_.reason == selector.choice_.reason()
    assert selector.record_.queries == sorted(pairs.loc[pairs["judged"].notna(), "query_id"].unique())
    return selector.weight_, selector.choice_, selector.choice_.estimates


def test_the_student_weight_is_kept_at_the_label_free_share_unless_the_judged_queries_show_another_clearly_ahead():
    pairs = judged_lists(10)
    rng = np.random.default_rng(1)
    knows = {p: j + rng.normal(scale=0.1) if j == j else -5.0 for p, j in zip(pairs["passage"], pairs["judged"])}
    guesses = dict(zip(pairs["passage"], rng.normal(size=len(pairs))))
    weight, choice, maps = choose_student_weight(Fixed(knows), Fixed(guesses), pairs)  # the student knows
    assert weight > STUDENT_WEIGHT and "taken" in choice.reason() and maps["student weight 1"] == 1.0
    weight, choice, _ = choose_student_weight(Fixed(guesses), Fixed(knows), pairs)  # the teacher knows
    assert weight < STUDENT_WEIGHT and choice.name == f"student weight {weight:g}"
    weight, choice, _ = choose_student_weight(Fixed(knows), Fixed(knows), pairs)  # both do: nothing to choose
    assert weight == STUDENT_WEIGHT and "nothing is estimated above the label-free share" in choice.reason()
    few = pairs[pairs["query_id"].isin([f"q{q}" for q in range(MIN_QUERIES - 1)])]
    weight, choice, _ = choose_student_weight(Fixed(knows), Fixed(guesses), few)
    assert weight == STUDENT_WEIGHT and f"{MIN_QUERIES - 1} judged queries have a relevant passage, fewer than the {MIN_QUERIES}" \
        in choice.reason()


def test_the_label_free_student_share_is_the_one_fitted_on_dev_splits():
    """benchmarks/bench_student_weight.py measures each share's dev MAP; the shipped share has the largest mean gain
    over the teacher alone (weight 0), read here from its table."""
    table = pd.read_csv(Path(__file__).resolve().parents[1] / "benchmarks" / "student_weight.csv")
    wide = table.groupby(["weight", "dataset"])["map"].mean().unstack("dataset")
    gains = (wide - wide.loc[0.0]).mean(axis=1)
    assert table["dataset"].nunique() >= 5 and set(gains.index) >= {0.0, 0.5, 1.0}
    assert STUDENT_WEIGHT == pytest.approx(float(gains.idxmax()))


def test_a_mix_record_says_how_the_student_weight_was_chosen_best_estimate_first():
    mix = StudentWeightRecord("student weight 1", {"student weight 1": 0.6, "the label-free share": 0.7},
                              ["q1", "q2"], "chosen by hand", {"margin": 2.5})
    assert mix.card() == "The student's weight, chosen on judged queries it had not trained on: chosen by hand."
    assert mix.lines() == ["shipped ranker: chosen by hand", "  estimated MAP over the judged sample's pool: "
                               "the label-free share 0.700, student weight 1 0.600"]


def test_the_saved_student_weight_is_the_shipped_rankers_mix(trained, tmp_path):
    cfg, _ = trained
    best = RunPaths(cfg.run_dir).models() / "best"
    pairs = Dataset.load(RunPaths(cfg.run_dir).dataset).pairs()
    shipped = load_ranker(best, device="cpu", trust_code=True)
    groups = pairs["query_id"].to_numpy()
    teacher = standardize_within(shipped.teacher.score_frame(pairs).reshape(-1, 1), groups)[:, 0]
    student = standardize_within(shipped.student.predict(list(zip(pairs["query"], pairs["passage"]))).reshape(-1, 1),
                                 groups)[:, 0]
    assert shipped.student_weight == STUDENT_WEIGHT  # no judgments: the label-free share
    assert np.allclose(shipped.score_frame(pairs), (1 - STUDENT_WEIGHT) * teacher + STUDENT_WEIGHT * student, atol=1e-6)
    mix = StudentWeightRecord("student weight 1", {"student weight 1": 0.6}, ["q1", "q2"], "chosen by hand",
                              {"margin": 2.5}).to_dict()
    for weight, expected in ((0.0, teacher), (1.0, student), (0.25, 0.75 * teacher + 0.25 * student)):
        moved = shutil.copytree(best, tmp_path / f"w{weight}")
        saved = json.loads((moved / FUSION_FILE).read_text())
        saved.update(student_weight=weight, mix=mix)
        (moved / FUSION_FILE).write_text(json.dumps(saved))
        ranker = load_ranker(moved, device="cpu", trust_code=True)
        assert ranker.student_weight == weight and np.allclose(ranker.score_frame(pairs), expected, atol=1e-6)
        ranker.save(tmp_path / f"again{weight}")  # saved again, the weight and how it was chosen go with it
        assert json.loads((tmp_path / f"again{weight}" / FUSION_FILE).read_text())["mix"] == mix
    assert noted(ranker.notes, StudentWeightRecord).to_dict() == mix  # read where it is used
    saved.update(mix={**mix, "reason": 3})  # a mix someone changed: scoring never reads it; its reader refuses it
    (moved / FUSION_FILE).write_text(json.dumps(saved))
    state = read_teacher_state(moved, set(BUILTIN))
    assert load_ranker(moved, device="cpu", trust_code=True).student_weight == weight
    with pytest.raises(DataError, match=r"weakrank_fusion.json: mix.reason"):
        noted(state.notes, StudentWeightRecord, moved / FUSION_FILE)
