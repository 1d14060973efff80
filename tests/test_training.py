import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from tests.conftest import shared
from weakrank.errors import ConfigError, DataError
from weakrank.loaders import load_dataset
from weakrank.modes.hold_out import HELD_OUT, HoldOut
from weakrank.modes.judged import JudgedMode
from weakrank.ranker.cross_encoder import write_model_card
from weakrank.training import BiEncoder, CrossEncoderRanker, TrainConfig, TrainerCallback
from weakrank.training.build import trainer_from_config, training_data
from weakrank.training.data import TrainingData, repeats
from weakrank.training.evaluators import dev_evaluator
from weakrank.training.losses import listwise_kl
from weakrank.training.measures import teacher_ndcg
from weakrank.training.objectives import (
    Hinge,
    InBatch,
    LabelRelaxation,
    ListwiseKL,
    Objective,
    SoftCrossEntropy,
    objective_from_config,
)
from weakrank.training.samplers import BM25Sampler, MixedSampler, RandomSampler, UniformSampler
from weakrank.training.trainer import Trainer, prepare_run


def labelled(dataset, confidence: float = 0.8) -> pd.DataFrame:
    c = dataset.candidates
    return c.assign(label=c["gold"].astype(int), confidence=confidence, score_bm25=-c["rank"].astype(float))


@pytest.fixture
def tiny_data(tiny):
    labels = labelled(tiny).assign(split="train")
    return TrainingData(labels, tiny.queries, tiny.passages, "train")


def small(**changes) -> TrainConfig:
    """A tiny pairwise hinge run of a cross-encoder (epochs, not steps; no head learning rate, no frozen embeddings)
    unless ``changes``."""
    base = dict(architecture="cross-encoder", mode="pairwise", loss="hinge", batch_size=2, max_length=32, lr=5e-4,
                head_lr=0.0, warmup=0.0,
                max_steps=0, max_epochs=0.0, freeze_embeddings=False, eval_every=0, checkpoint_every=0, seed=0)
    return TrainConfig(**{**base, **changes})


def assert_one_step_lowers_the_loss(model, batch, cfg: TrainConfig, lr: float) -> None:
    """One AdamW step on ``batch`` lowers ``cfg``'s loss of it."""
    optimizer, objective = torch.optim.AdamW(model.parameters(), lr=lr), objective_from_config(cfg)
    before = objective(model, batch, 0, 10)
    before.backward()
    optimizer.step()
    with torch.no_grad():
        after = objective(model, batch, 0, 10)
    assert after.item() < before.item(), (cfg.mode, cfg.target)


def test_triplet_confidence_is_the_geometric_mean(tiny, tiny_data):
    batch = tiny_data.batch(tiny_data.anchors, UniformSampler(), 2, np.random.default_rng(0))
    assert len(batch.queries) == 4
    assert np.allclose(batch.confidence, np.sqrt(batch.pos_confidence * batch.neg_confidence))
    assert set(batch.positives) == {"Paris is the capital of France.", "Leonardo da Vinci painted the Mona Lisa."}


def test_samplers_never_return_a_known_positive():
    ds = load_dataset("trecqa", shared("trecqa"), splits=("dev",))
    data = TrainingData(labelled(ds), ds.queries, ds.passages, "dev")
    samplers = [UniformSampler(), BM25Sampler(3), RandomSampler(ds.passages["passage_id"].tolist())]
    samplers.append(MixedSampler(samplers[1:], [0.5, 0.5]))
    rng = np.random.default_rng(0)
    for ql in data.lists.values():
        for sampler in samplers:
            negatives = sampler.sample(ql, 5, rng)
            if len(ql.negatives()) or isinstance(sampler, RandomSampler):
                assert negatives  # in-list samplers come back empty only for an all-positive list
            assert not {n.passage_id for n in negatives} & ql.positives
            assert all(0.0 <= n.ns_score <= 1.0 for n in negatives)
    # NS_BM25 only draws from the top-3 BM25 negatives of the list
    ql = next(iter(data.lists.values()))
    top = set(ql.passage_ids[ql.negatives()][np.argsort(-ql.bm25[ql.negatives()], kind="stable")[:3]])
    assert {n.passage_id for n in BM25Sampler(3).sample(ql, 20, rng)} <= top


def test_one_step_lowers_the_loss_for_every_objective(tiny_data):
    batch = tiny_data.batch(tiny_data.anchors, UniformSampler(), 2, np.random.default_rng(0))
    for changes in (
        {"loss": "hinge"},
        {"loss": "ce", "target": "wsls", "epsilon": 0.2, "noise_aware": True},
        {"loss": "ce", "mode": "pointwise", "target": "ls"},
        {"loss": "ce", "mode": "pointwise", "target": "relax", "alpha": 0.05},
    ):
        torch.manual_seed(0)
        cfg = small(**changes)
        assert_one_step_lowers_the_loss(CrossEncoderRanker.from_encoder("minilm", max_length=32), batch, cfg, 5e-4)


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_saved_and_reloaded_model_gives_the_same_scores(tmp_path, pooling):
    model = CrossEncoderRanker.from_encoder("minilm", max_length=32, pooling=pooling)
    pairs = [("capital of france", "Paris is the capital of France."), ("capital of france", "Bananas.")]
    back = CrossEncoderRanker.load(model.save(tmp_path / "m"), device="cpu")
    assert back.pooling == pooling
    assert np.allclose(model.predict(pairs), back.predict(pairs), atol=1e-6)
    assert (tmp_path / "m" / "config.json").exists()  # the encoder is a plain from_pretrained directory


class Interrupt(Exception):
    pass


def train_until_interrupted(cfg: TrainConfig, data: TrainingData, out: Path, passages, step: int) -> None:
    """Train ``cfg`` into ``out`` and stop it by an exception in the callback of ``step`` (before that
    step's checkpoint is written), as a killed run would stop."""

    class StopAt(TrainerCallback):
        def on_step(self, trainer, *_):
            if trainer.progress.step == step:
                raise Interrupt

    broken = trainer_from_config(cfg, data, None, out, passages, callbacks=[StopAt()])
    with pytest.raises(Interrupt):
        broken.fit(show_progress=False)


def test_resume_continues_from_the_saved_step_with_the_same_optimizer_state(tiny, tiny_data, tmp_path):
    cfg = small(max_steps=4, epochs=4, checkpoint_every=2)
    full = trainer_from_config(cfg, tiny_data, None, tmp_path / "full", tiny.passages)
    full.fit(show_progress=False)

    train_until_interrupted(cfg, tiny_data, tmp_path / "resumed", tiny.passages, step=3)
    resumed = trainer_from_config(cfg, tiny_data, None, tmp_path / "resumed", tiny.passages)
    resumed.load_checkpoint()
    assert resumed.progress.step == 2
    saved = torch.load(tmp_path / "resumed" / "checkpoint.pt", weights_only=True)["optimizer"]["state"]
    assert all(torch.equal(resumed.optimizer.state_dict()["state"][k]["exp_avg"], v["exp_avg"]) for k, v in saved.items())
    resumed.fit(resume=True, show_progress=False)
    assert resumed.progress.step == full.progress.step == 4
    for a, b in zip(full.model.parameters(), resumed.model.parameters()):
        assert torch.allclose(a, b, atol=1e-5)


def test_two_stage_smoothing_schedule_and_bad_configs():
    objective = objective_from_config(TrainConfig(mode="pairwise", loss="ce", target="twsls", epsilon=0.3,
                                                  two_stage_fraction=0.5))
    assert [objective.epsilon_at(s, 10) for s in (0, 4, 5, 9)] == [0.3, 0.3, 0.0, 0.0]
    assert objective_from_config(TrainConfig(mode="pairwise", loss="ce", target="ls", epsilon=0.3)).epsilon_at(9, 10) == 0.3
    with pytest.raises(ConfigError, match="hinge loss"):
        TrainConfig(mode="pairwise", loss="hinge", target="ls")
    with pytest.raises(ConfigError, match="unknown \\[train\\] key"):
        TrainConfig.from_dict({"learning_rate": 1.0})


def test_train_keys_map_to_an_objective_that_checks_its_settings():
    assert objective_from_config(small()) == Hinge(margin=1.0)
    assert objective_from_config(small(loss="ce", target="noise_aware")) == SoftCrossEntropy(noise_aware=True)
    assert objective_from_config(small(loss="ce", mode="pointwise", target="twsls", epsilon=0.2)) == SoftCrossEntropy(
        "pointwise", "twsls", epsilon=0.2)
    assert objective_from_config(small(loss="ce", target="relax", alpha=0.05)) == LabelRelaxation("pairwise", 0.05)
    assert objective_from_config(small(mode="listwise", loss="kl", temperature=2.0)) == ListwiseKL(2.0)
    assert objective_from_config(small(architecture="bi-encoder", mode="listwise", loss="kl", anchor=0.5)) == ListwiseKL(
        2.0, anchor=0.5)
    with pytest.raises(ConfigError, match="anchor > 0 needs architecture = 'bi-encoder'"):
        small(mode="listwise", loss="kl", anchor=0.5)
    assert objective_from_config(small(architecture="bi-encoder", mode="in_batch", loss="ce", target="tls")) == InBatch(
        "tls")
    assert ListwiseKL.listwise and not Hinge.listwise
    for build, message in (
        (lambda: Hinge(margin=-1.0), "Hinge: margin = -1.0 must be >= 0"),
        (lambda: SoftCrossEntropy(mode="listwise"), "SoftCrossEntropy: mode = 'listwise'"),
        (lambda: SoftCrossEntropy(target="relax"), "SoftCrossEntropy: target = 'relax'"),
        (lambda: SoftCrossEntropy(target="ls", epsilon=1.5), r"epsilon = 1.5 must be in \[0, 1\]"),
        (lambda: SoftCrossEntropy(target="tls", two_stage_fraction=2.0), "two_stage_fraction"),
        (lambda: LabelRelaxation(alpha=1.0), r"LabelRelaxation: alpha = 1.0 must be in \[0, 1\)"),
        (lambda: ListwiseKL(temperature=0.0), "ListwiseKL: temperature"),
        (lambda: ListwiseKL(anchor=-1.0), "ListwiseKL: anchor = -1.0 must be >= 0"),
        (lambda: InBatch(target="wsls"), "InBatch: target = 'wsls'"),
    ):
        with pytest.raises(ConfigError, match=message):
            build()


def test_the_trainer_runs_the_objective_sampler_and_callbacks_it_is_given(tiny_data, tmp_path):
    args = small(max_steps=2, eval_every=1)
    steps, hooks = [], []

    class Spy(Objective):  # any objective: here the hinge loss, recording the step it is called at
        def __call__(self, model, batch, step, total):
            steps.append((step, total))
            return Hinge()(model, batch, step, total)

    class Hooks(TrainerCallback):
        def on_step(self, trainer, batch, loss, grad_norm):
            hooks.append("step")

        def on_evaluate(self, trainer, metrics):
            hooks.append("evaluate")

        def on_end(self, trainer):
            hooks.append("end")

    prepare_run(args)
    model = CrossEncoderRanker.from_encoder("minilm", max_length=32)
    trainer = Trainer(model, Spy(), UniformSampler(), args, [Hooks()], data=tiny_data,
                      evaluator=dev_evaluator(tiny_data, args), out_dir=tmp_path / "m")
    assert trainer.fit(show_progress=False).step == 2
    assert steps == [(0, 2), (1, 2)] and hooks == ["step", "evaluate", "step", "evaluate", "end"]


def test_pairs_every_lf_abstained_on_are_never_negatives(tiny):
    labels = labelled(tiny).assign(split="train", vote_a=[0, 1, -1, 0, 0, 1], vote_b=[0, 1, 0, -1, 0, 1])
    labels = labels.assign(label=[0, 1, 0, 0, 0, 1], confidence=[0.9, 0.8, 0.7, 0.95, 0.99, 0.8])
    data = TrainingData(labels, tiny.queries, tiny.passages, "train")
    by_pid = {p: r for ql in data.lists.values() for p, r in zip(ql.passage_ids, ql.labels)}
    assert by_pid == {"p2": -1, "p1": 1, "p3": 0, "p5": 0, "p6": -1, "p4": 1}  # p2, p6: all abstain → unlabelled
    rng = np.random.default_rng(0)
    for sampler in (UniformSampler(), BM25Sampler(5), RandomSampler(tiny.passages["passage_id"].tolist())):
        for ql in data.lists.values():
            drawn = {n.passage_id for n in sampler.sample(ql, 20, rng)}
            assert drawn and not drawn & set(ql.passage_ids[ql.labels != 0])  # never a positive or unlabelled pair
    confident = TrainingData(labels, tiny.queries, tiny.passages, "train", min_confidence=0.9)
    assert {p for ql in confident.lists.values() for p in ql.passage_ids[ql.negatives()]} == {"p5"}


def test_list_fraction_keeps_the_lists_whose_teacher_top_stands_out(tiny):
    labels = labelled(tiny).assign(split="train", score=[0.1, 5.0, 0.0, 1.0, 1.1, 1.2])  # q1: a clear top
    everything = TrainingData(labels, tiny.queries, tiny.passages, "train")
    confident = TrainingData(labels, tiny.queries, tiny.passages, "train", list_fraction=0.5)
    assert sorted(everything.list_ids) == ["q1", "q2"] and confident.list_ids == ["q1"]
    assert {qid for qid, _ in confident.anchors} == {"q1"} and len(confident.lists) == 2  # texts/dev lists kept
    with pytest.raises(ConfigError, match="list_fraction"):
        TrainConfig(list_fraction=0.0)


def test_judged_lists_are_kept_and_repeated_to_their_share_of_an_epoch(tiny):
    labels = labelled(tiny).assign(split="train", score=[0.1, 5.0, 0.0, 1.0, 1.1, 1.2],  # q1: a clear top
                                   judged=[np.nan, np.nan, np.nan, 1.0, 0.0, np.nan])  # q2: a person judged it
    mode = JudgedMode(labels, ["q2"], tiny, small(list_fraction=0.5, judged_share=0.75))  # the judged queries: boosted
    data = training_data(labels, tiny, mode.tc, "train", mode.boosted, mode.boost_share)
    assert sorted(data.list_ids) == ["q1", "q2", "q2", "q2"] and data.boosted == {"q2"}
    assert [qid for qid, _ in data.anchors].count("q2") == 3 and [qid for qid, _ in data.anchors].count("q1") == 1
    assert len(data.epoch_order(0, 0, listwise=True)) == 4
    assert sorted(training_data(labels, tiny, small(), "train", {"q2"}, 0.0).list_ids) == ["q1", "q2"]
    assert repeats(10, 2000, 0.1) == 22 and repeats(10, 83, 0.1) == 1  # WikiQA's train split; TrecQA's: once
    with pytest.raises(ConfigError, match="judged_share"):
        TrainConfig(judged_share=1.0)


def test_judged_queries_are_held_out_until_judged_after_and_the_student_is_saved_then(tiny, tmp_path):
    labels = labelled(tiny).assign(split="train")
    data = training_data(labels, tiny, small(), "train", {"q2"})  # q2 judged
    assert data.units(leave_out={"q2"}) == [a for a in data.anchors if a[0] == "q1"]
    assert data.epoch_order(0, 0, listwise=True, leave_out={"q2"}) == ["q1"]

    class Seen(TrainerCallback):
        def __init__(self) -> None:
            self.queries: list[list[str]] = []

        def on_step(self, trainer, batch, loss, grad_norm) -> None:
            self.queries.append(sorted(set(batch.queries)))

    seen, hold_out = Seen(), HoldOut({"q2"}, 0.5)
    trainer_from_config(small(max_steps=6, batch_size=1), data, None, tmp_path / "m", tiny.passages,
                        [seen, hold_out]).fit(show_progress=False)
    assert hold_out.step == 3 and hold_out.student == tmp_path / "m" / HELD_OUT
    q2 = tiny.queries.set_index("query_id").loc["q2", "text"]
    assert all(q2 not in step for step in seen.queries[:3]) and any(q2 in step for step in seen.queries[3:])
    held_out = tmp_path / "m" / HELD_OUT
    assert "| steps | 3 |" in (held_out / "README.md").read_text()  # the student before it saw the judged query
    # a resumed run crosses the switch as a whole one does; a fresh run leaves no earlier run's held-out student
    keep = dict(max_steps=6, batch_size=1, checkpoint_every=1, keep_checkpoint=True)
    class Killed(TrainerCallback):  # after step 2, before its checkpoint: the run goes on from step 1's
        def on_step(self, trainer, batch, loss, grad_norm) -> None:
            if trainer.progress.step == 2:
                raise KeyboardInterrupt

    first = trainer_from_config(small(**keep), data, None, tmp_path / "r", tiny.passages,
                                [HoldOut({"q2"}, 0.5), Killed()])
    with pytest.raises(KeyboardInterrupt):
        first.fit(show_progress=False)
    assert not (tmp_path / "r" / HELD_OUT).exists()
    assert torch.load(tmp_path / "r" / "checkpoint.pt", weights_only=True)["progress"]["judged_in"] is False
    resumed = Seen()
    trainer_from_config(small(**keep), data, None, tmp_path / "r", tiny.passages, [resumed, HoldOut({"q2"}, 0.5)]).fit(
        resume=True, show_progress=False)
    assert resumed.queries == seen.queries[1:] and (tmp_path / "r" / HELD_OUT).is_dir()
    trainer_from_config(small(max_steps=2, batch_size=1), data, None, tmp_path / "r", tiny.passages,
                        [HoldOut({"q2"}, 0.0)]).fit(show_progress=False)
    assert not (tmp_path / "r" / HELD_OUT).exists()
    with pytest.raises(ConfigError, match="judged_after"):
        TrainConfig(judged_after=1.0)


def test_wsls_scores_are_min_max_over_the_query_negatives_and_need_the_lf(tiny):
    labels = labelled(tiny).assign(split="train", score_bm25=[3.0, 9.0, 1.0, 2.0, 6.0, 7.0])
    data = TrainingData(labels, tiny.queries, tiny.passages, "train")
    q1 = data.lists["q1"]  # negatives p2 (3.0) and p3 (1.0); the positive p1 (9.0) is left out of the scaling
    assert dict(zip(q1.passage_ids[q1.negatives()], q1.bm25[q1.negatives()])) == {"p2": 1.0, "p3": 0.0}
    batch = data.batch([("q1", 1)], BM25Sampler(1), 1, np.random.default_rng(0))
    assert batch.ns_score.tolist() == [1.0]  # the hardest negative gets the full ε: target 1 − ε
    with pytest.raises(DataError, match="score_bm25.*missing.*ns_lf"):
        TrainingData(labels.drop(columns="score_bm25"), tiny.queries, tiny.passages, "train")
    TrainingData(labels.drop(columns="score_bm25"), tiny.queries, tiny.passages, "train", ns_lf=None)  # uniform: fine


def test_training_runs_to_max_steps_over_as_many_epochs_as_it_takes(tiny, tiny_data, tmp_path):
    cfg = small(max_steps=5, epochs=1)  # 2 anchors, batch 2: one step an epoch
    trainer = trainer_from_config(cfg, tiny_data, None, tmp_path / "m", tiny.passages)
    progress = trainer.fit(show_progress=False)
    assert progress.step == 5 and progress.epoch >= 4
    capped = trainer_from_config(small(max_steps=5, max_epochs=3), tiny_data, None, tmp_path / "c", tiny.passages)
    assert capped.fit(show_progress=False).step == 3  # max_epochs: 3 epochs of one step, before max_steps
    assert small(max_steps=400, max_epochs=8).total_steps(22) == 176 and small(max_steps=400).total_steps(22) == 400


def test_listwise_kl_by_hand_and_a_listwise_step(tiny, tiny_data, tmp_path):
    student, teacher = torch.tensor([0.0, 0.0]), torch.tensor([1.0, 0.0])
    p = torch.softmax(teacher, 0)  # (e/(e+1), 1/(e+1))
    expected = float((p * (p.log() - torch.log(torch.tensor([0.5, 0.5])))).sum())
    assert listwise_kl(student, teacher).item() == pytest.approx(expected)
    assert listwise_kl(teacher.clone(), teacher).item() == pytest.approx(0.0, abs=1e-7)
    cfg = small(mode="listwise", loss="kl", max_steps=2, group_size=3)
    trainer = trainer_from_config(cfg, tiny_data, None, tmp_path / "l", tiny.passages)
    batch = tiny_data.list_batch(["q1", "q2"], 3, np.random.default_rng(0))
    assert [len(g) for g in batch.passages] == [3, 3]
    assert all(t[0] == t.max() for t in batch.teacher)  # the teacher's top candidate is always in the group
    assert trainer.fit(show_progress=False).step == 2
    with pytest.raises(ConfigError, match="listwise"):
        TrainConfig(mode="listwise", loss="ce")


def test_the_anchor_mixes_in_the_ranking_of_the_model_as_training_began(tiny, tiny_data, tmp_path):
    student, teacher, start = torch.tensor([0.0, 0.0]), torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0])
    mix = (torch.softmax(teacher, 0) + 3 * torch.softmax(start, 0)) / 4
    expected = float((mix * (mix.log() - torch.log(torch.tensor([0.5, 0.5])))).sum())
    assert listwise_kl(student, teacher, 1.0, start, 3.0).item() == pytest.approx(expected)
    assert listwise_kl(student, teacher, 1.0, start, 0.0).item() == pytest.approx(listwise_kl(student, teacher).item())
    model = BiEncoder.from_encoder("minilm", max_length=32)
    batch = tiny_data.list_batch(["q1", "q2"], 3, np.random.default_rng(0))
    queries = [q for q, g in zip(batch.queries, batch.passages) for _ in g]
    passages = [p for g in batch.passages for p in g]
    assert ListwiseKL(2.0).start_scores(queries, passages) is None
    objective = ListwiseKL(2.0, anchor=1.0)
    with pytest.raises(RuntimeError, match="begin"):
        objective(model, batch, 0, 1)
    objective.begin(model)
    start = objective.start_scores(queries, passages)
    assert torch.allclose(start, model.score(queries, passages).detach(), atol=1e-5)  # zero-shot: the model itself
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    assert not torch.allclose(model.score(queries, passages).detach(), start, atol=1e-3)
    assert torch.allclose(objective.start_scores(queries, passages), start, atol=1e-5)  # frozen at the start
    cfg = small(mode="listwise", loss="kl", architecture="bi-encoder", anchor=1.0, max_steps=1, group_size=3)
    trainer = trainer_from_config(cfg, tiny_data, None, tmp_path / "a", tiny.passages)  # the trainer calls begin()
    assert trainer.fit(show_progress=False).step == 1


def test_two_stage_targets_never_keep_a_smoothing_stage_checkpoint(tiny, tiny_data, tmp_path):
    cfg = small(loss="ce", target="tls", epsilon=0.2, max_steps=4, eval_every=1)
    trainer = trainer_from_config(cfg, tiny_data, dev_evaluator(tiny_data, cfg), tmp_path / "t", tiny.passages)
    saved = []
    trainer.save_model = lambda directory: saved.append((trainer.progress.step, directory.name))
    trainer.fit(show_progress=False)
    assert [s for s, name in saved if name == "best"] and all(s > 2 for s, name in saved if name == "best")


class _Plant:
    """Unpickling this writes a marker file: what a crafted checkpoint could do."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_a_crafted_checkpoint_runs_no_code(tiny, tiny_data, tmp_path):
    marker = tmp_path / "pwned"
    (tmp_path / "m").mkdir()
    torch.save({"model": _Plant(str(marker))}, tmp_path / "m" / "checkpoint.pt")
    trainer = trainer_from_config(small(max_steps=1), tiny_data, None, tmp_path / "m", tiny.passages)
    with pytest.raises(DataError, match="checkpoint.pt.*[Ww]eights only"):
        trainer.load_checkpoint()
    assert not marker.exists()
    (tmp_path / "m" / "checkpoint.pt").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(DataError, match="checkpoint.pt: not a readable weakrank checkpoint"):
        trainer.fit(resume=True, show_progress=False)
    torch.save({"model": {}}, tmp_path / "m" / "checkpoint.pt")
    with pytest.raises(DataError, match="not a weakrank checkpoint"):
        trainer.load_checkpoint()


def test_a_split_without_positives_is_refused_by_pairwise_training_only(tiny, tmp_path):
    labels = labelled(tiny).assign(split="train", label=0, score=[0.1, 0.9, 0.2, 0.3, 0.1, 0.8])
    data = TrainingData(labels, tiny.queries, tiny.passages, "train")
    with pytest.raises(DataError, match="split .train. has no pair labelled relevant"):
        trainer_from_config(small(max_steps=1), data, None, tmp_path / "p", tiny.passages)
    listwise = small(mode="listwise", loss="kl", max_steps=1)
    trainer_from_config(listwise, data, None, tmp_path / "l", tiny.passages)  # the scores rank


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_sentence_transformers_cross_encoder_loads_the_saved_model_with_its_scores(tmp_path, pooling):
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    model = CrossEncoderRanker.from_encoder("minilm", max_length=32, pooling=pooling)
    long = "a passage longer than max_length, truncated the same way by both " * 8
    pairs = [("capital of france", "Paris is the capital of France."), ("capital of france", "Bananas."), ("q", long)]
    loaded = CrossEncoder(str(model.save(tmp_path / "m")), device="cpu")
    assert np.allclose(loaded.predict(pairs), model.predict(pairs), atol=1e-5)
    if pooling == "mean":  # padding must not count: a pair scores the same alone and beside a longer one
        assert np.allclose(model.predict(pairs[:1]), model.predict(pairs)[:1], atol=1e-5)


def test_the_model_card_says_how_the_model_was_trained(tmp_path):
    directory = CrossEncoderRanker.from_encoder("minilm", max_length=32).save(tmp_path / "m")
    card = write_model_card(directory, {"labels": "snorkel", "LFs": ["bm25", "tfidf"], "steps": 20}, {"dev_map": 0.5})
    text = card.read_text()
    assert "| LFs | bm25, tfidf |" in text and "| steps | 20 |" in text and "| dev_map | 0.5000 |" in text
    assert "CrossEncoder" in text


def test_resume_refuses_a_missing_checkpoint_and_changed_settings(tiny, tiny_data, tmp_path):
    def trainer(**changes):
        return trainer_from_config(small(**changes), tiny_data, None, tmp_path / "m", tiny.passages)

    with pytest.raises(DataError, match="no checkpoint"):
        trainer(max_steps=1).fit(resume=True, show_progress=False)
    trainer(max_steps=1, keep_checkpoint=True).fit(show_progress=False)
    before = (tmp_path / "m" / "checkpoint.pt").read_bytes()
    with pytest.raises(ConfigError, match="'lr'"):
        trainer(max_steps=2, lr=1e-3).fit(resume=True)
    assert (tmp_path / "m" / "checkpoint.pt").read_bytes() == before
    resumed = trainer(max_steps=1, eval_every=5)
    resumed.fit(resume=True, show_progress=False)  # when to evaluate may change
    card = (tmp_path / "m" / "final" / "README.md").read_text()
    assert "| steps | 1 |" in card and "| mode | pairwise |" in card


def test_a_finished_training_keeps_best_and_final_and_drops_its_checkpoint(tiny, tiny_data, tmp_path):
    cfg = small(max_steps=4, epochs=4, checkpoint_every=2, eval_every=2)
    train_until_interrupted(cfg, tiny_data, tmp_path / "m", tiny.passages, step=3)
    assert (tmp_path / "m" / "checkpoint.pt").exists()  # unfinished: --resume needs it
    resumed = trainer_from_config(cfg, tiny_data, dev_evaluator(tiny_data, cfg), tmp_path / "m", tiny.passages)
    assert resumed.fit(resume=True, show_progress=False).step == 4
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["best", "final", "history.csv", "train_config.json"]
    kept = trainer_from_config(small(max_steps=2, keep_checkpoint=True), tiny_data, None, tmp_path / "k", tiny.passages)
    kept.fit(show_progress=False)
    assert torch.load(tmp_path / "k" / "checkpoint.pt", weights_only=True)["progress"]["step"] == 2


def test_train_config_json_describes_the_finished_run_only(tiny, tiny_data, tmp_path):
    trainer_from_config(small(max_steps=2), tiny_data, None, tmp_path / "m", tiny.passages).fit(show_progress=False)
    assert json.loads((tmp_path / "m" / "train_config.json").read_text())["max_steps"] == 2
    cfg = small(max_steps=4, checkpoint_every=2)
    train_until_interrupted(cfg, tiny_data, tmp_path / "m", tiny.passages, step=3)
    assert not (tmp_path / "m" / "train_config.json").exists()  # nothing describes the killed run as the last one
    trainer_from_config(cfg, tiny_data, None, tmp_path / "m", tiny.passages).fit(resume=True, show_progress=False)
    assert json.loads((tmp_path / "m" / "train_config.json").read_text())["max_steps"] == 4


def test_target_lr_is_the_deprecated_name_of_relax():
    with pytest.warns(FutureWarning, match="target = 'lr' is deprecated: use 'relax'"):
        cfg = TrainConfig.from_dict({"mode": "pairwise", "loss": "ce", "target": "lr"})
    assert cfg.target == "relax"


def test_auto_max_length_fits_three_of_four_training_pairs_within_the_cap(tiny):
    from transformers import AutoTokenizer

    from weakrank.encoders import resolve_model
    from weakrank.training.lengths import CAP, STEP, auto_max_length, resolve_max_length

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("minilm"))
    short = TrainingData(labelled(tiny).assign(split="train"), tiny.queries, tiny.passages, "train")
    pairs = [(short.query_text[q], short.passage_text[p]) for q in short.list_ids for p in short.lists[q].passage_ids]
    counts = [len(tokenizer(q, p)["input_ids"]) for q, p in pairs]
    chosen = auto_max_length(short, "minilm")
    assert chosen % STEP == 0 and np.mean(np.array(counts) <= chosen) >= 0.75 and chosen - STEP < np.quantile(counts, 0.75)
    wordy = tiny.passages.assign(text=tiny.passages["text"] + " and much more" * 60)
    assert auto_max_length(TrainingData(labelled(tiny).assign(split="train"), tiny.queries, wordy, "train"), "minilm") == CAP
    assert resolve_max_length(small(max_length="auto"), short).max_length == chosen
    assert resolve_max_length(small(max_length=48), short).max_length == 48


def test_max_length_is_a_number_or_auto():
    with pytest.raises(ConfigError, match="max_length"):
        TrainConfig(max_length="long")
    with pytest.raises(ConfigError, match="max_length"):
        TrainConfig(max_length=0)
    assert TrainConfig().max_length == "auto"


def test_training_with_auto_max_length_builds_the_model_at_the_resolved_length(tiny_data, tmp_path, tiny):
    trainer = trainer_from_config(small(max_length="auto", max_steps=1), tiny_data, None, tmp_path / "m", tiny.passages)
    assert isinstance(trainer.model.max_length, int) and trainer.model.max_length == trainer.args.max_length


def test_average_weights_saves_the_mean_of_the_last_steps_and_survives_a_resume(tiny, tiny_data, tmp_path):
    from weakrank.ranker import load_ranker

    cfg = small(max_steps=4, epochs=4, checkpoint_every=1, average_weights=0.5)  # the mean after steps 3 and 4
    seen: dict[int, dict[str, torch.Tensor]] = {}

    class Record(TrainerCallback):
        def on_step(self, trainer, *_):
            seen[trainer.progress.step] = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}

    full = trainer_from_config(cfg, tiny_data, None, tmp_path / "full", tiny.passages, callbacks=[Record()])
    full.fit(show_progress=False)
    saved = load_ranker(tmp_path / "full" / "final").state_dict()
    moved = [k for k in seen[3] if seen[3][k].is_floating_point() and not torch.equal(seen[3][k], seen[4][k])]
    assert moved
    for k in moved:
        assert torch.allclose(saved[k], (seen[3][k] + seen[4][k]) / 2, atol=1e-6)
        assert torch.equal(full.model.state_dict()[k], seen[4][k])  # the model in memory is the last step's
    assert "SWA" in (tmp_path / "full" / "final" / "README.md").read_text()

    train_until_interrupted(cfg, tiny_data, tmp_path / "resumed", tiny.passages, step=4)
    resumed = trainer_from_config(cfg, tiny_data, None, tmp_path / "resumed", tiny.passages)
    resumed.fit(resume=True, show_progress=False)  # from step 3's checkpoint, which holds the mean so far
    again = load_ranker(tmp_path / "resumed" / "final").state_dict()
    assert all(torch.allclose(saved[k], again[k], atol=1e-5) for k in moved)
    for bad in (1.0, -0.1):
        with pytest.raises(ConfigError, match="average_weights"):
            TrainConfig(average_weights=bad)


def test_teacher_ndcg_is_one_for_the_teachers_order_and_falls_as_the_order_departs_from_it():
    teacher = np.array([2.0, 1.0, 0.0, -1.0])
    assert teacher_ndcg(teacher * 3 + 1, teacher) == pytest.approx(1.0)  # any increasing map of the teacher
    swapped, reversed_ = teacher_ndcg(np.array([1.0, 2.0, 0.0, -1.0]), teacher), teacher_ndcg(-teacher, teacher)
    assert 0 < reversed_ < swapped < 1
    # a softer teacher (higher temperature) spreads its gains: the same swap costs less
    assert teacher_ndcg(np.array([1.0, 2.0, 0.0, -1.0]), teacher, temperature=4.0) > swapped


def test_frozen_lower_layers_stay_as_they_were_while_the_upper_ones_train(tiny_data, tmp_path):
    from weakrank.training.rankers import new_ranker

    cfg = small(freeze_layers=4, max_steps=2)
    model = new_ranker(cfg)
    before = {n: p.detach().clone() for n, p in model.encoder.named_parameters()}
    trainer = Trainer(model, objective_from_config(cfg), UniformSampler(), cfg, data=tiny_data, out_dir=tmp_path)
    trainer.fit(show_progress=False)
    moved = {n for n, p in model.encoder.named_parameters() if not torch.equal(p, before[n])}
    frozen = [n for n in before if n.startswith(("embeddings.", *(f"encoder.layer.{i}." for i in range(4))))]
    assert frozen and not moved & set(frozen)
    assert any(n.startswith("encoder.layer.5.") for n in moved)  # the top layer trains
    with pytest.raises(ConfigError, match="freeze_layers = 7, but the encoder has 6 layers"):
        new_ranker(small(freeze_layers=7))
