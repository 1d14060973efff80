"""A student that never ends below where it started: the scale-free listwise loss, the WiSE-FT share chosen on
held-out lists (the start itself among the candidates) and the student's weight in the shipped ranker earned there."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from tests.test_training import small
from weakrank.dataset import Dataset, candidates_from_rows
from weakrank.ranker import load_ranker
from weakrank.training.build import trainer_from_config
from weakrank.training.callbacks import TrainerCallback
from weakrank.training.data import TrainingData
from weakrank.training.evaluators import AgreementEvaluator
from weakrank.training.losses import listwise_kl
from weakrank.training.start_check import FULL_GAIN, START_CHECK, StartCheck, choose_share, earned_weight

SUBJECTS = ["the river Nile", "Mount Everest", "the Eiffel Tower", "penguins", "the Moon", "coffee", "volcanoes",
            "the violin", "honey bees", "the Sahara", "glaciers", "the piano"]
FACTS = ["is described in many school books.", "was measured again last year.", "attracts visitors every summer.",
         "appears in an old legend.", "was painted by a local artist."]


def test_the_scale_free_loss_reads_the_order_and_gaps_of_the_student_scores_not_their_spread():
    student, teacher = torch.tensor([0.3, -0.1, 0.9, 0.2]), torch.tensor([1.0, -0.5, 0.8, 0.0])
    stretched = 7.0 * student - 3.0
    assert torch.isclose(listwise_kl(stretched, teacher, 2.0, scale_free=True),
                         listwise_kl(student, teacher, 2.0, scale_free=True), atol=1e-6)
    assert not torch.isclose(listwise_kl(stretched, teacher, 2.0), listwise_kl(student, teacher, 2.0), atol=1e-3)
    # the teacher's own standardised scores are its target's minimum: KL 0
    z = (teacher - teacher.mean()) / teacher.std(unbiased=False)
    assert listwise_kl(3.0 * teacher, z, 2.0, scale_free=True).item() == pytest.approx(0.0, abs=1e-6)


def test_the_share_is_the_mix_that_measures_best_the_start_wins_a_tie_and_chance_earns_nothing():
    encoder = torch.nn.Linear(2, 1)
    start = {k: torch.zeros_like(v) for k, v in encoder.state_dict().items()}
    trained = {k: v.clone() for k, v in encoder.state_dict().items()}
    noise = np.random.default_rng(0).normal(size=40)

    def closeness(target: float, spread: float = 0.0):  # per list: best where the weights are ``target`` of the way
        return lambda: -abs(float(encoder.weight.detach().sum() - target * trained["weight"].sum())) + spread * noise

    assert choose_share(encoder, start, closeness(0.5), "m").share == 0.5
    assert choose_share(encoder, start, closeness(0.0), "m").share == 0.0
    flat = choose_share(encoder, start, lambda: np.ones(40), "m")
    assert flat.share == 0.0 and flat.gain == 0.0
    sure = choose_share(encoder, start, closeness(1.0), "m")
    assert sure.share == 1.0 and sure.lower > 0 and sure.gain > 0
    # the same lead, measured on lists whose values are as noisy as the lead is large (the start's noise and the
    # student's differ), is not sure: no gain
    lists = iter([noise, np.roll(noise, 1) + 0.05, np.roll(noise, 2) + 0.1])
    unsure = choose_share(encoder, start, lambda: next(lists), "m")
    assert unsure.share == 1.0 and unsure.kept > unsure.start and unsure.gain == 0.0
    assert torch.equal(encoder.weight, trained["weight"])  # left as trained


def test_the_weight_is_earned_by_the_share_of_the_start_disagreement_surely_made_up():
    def check(start: float, lead: float) -> StartCheck:
        return StartCheck("dev_agreement", {0.0: start, 1.0: start + lead}, 1.0 if lead > 0 else 0.0, lead)

    assert earned_weight(None, 0.35) == 0.35  # no start to compare with (a cross-encoder): the label-free constant
    assert earned_weight(check(0.9, 0.0), 0.35) == 0.0
    assert earned_weight(check(0.9, 0.1 * FULL_GAIN), 0.35) == pytest.approx(0.35)
    assert earned_weight(check(0.9, 0.09), 0.35) == pytest.approx(0.35)
    weights = [earned_weight(check(0.8, g), 0.35) for g in (0.0, 0.01, 0.02, 0.04)]
    assert weights == sorted(weights) and 0 < weights[1] < weights[-1]


def noise_dataset() -> Dataset:
    """Twelve train and twelve dev queries over sixty made-up sentences, five candidates each."""
    texts = [f"{s.capitalize()} {f}" for s in SUBJECTS for f in FACTS]
    passages = pd.DataFrame({"passage_id": [f"p{i}" for i in range(len(texts))], "text": texts})
    ids = [f"q{i}" for i in range(24)]
    queries = pd.DataFrame({"query_id": ids, "text": [f"tell me about {SUBJECTS[i % 12]}" for i in range(24)],
                            "split": ["train"] * 12 + ["dev"] * 12})
    rng = np.random.default_rng(0)
    rows = pd.DataFrame([{"query_id": q, "passage_id": f"p{p}", "gold": 0}
                         for q in ids for p in rng.choice(len(texts), 5, replace=False)])
    return Dataset("noise", queries, passages, candidates_from_rows(rows, queries))


def test_a_student_trained_on_noise_gets_a_small_share_and_never_ends_below_its_start(tmp_path):
    dataset = noise_dataset()
    rng = np.random.default_rng(1)
    labels = dataset.candidates.assign(label=0, confidence=0.5,
                                       score=rng.normal(size=len(dataset.candidates)))  # a teacher that is noise
    data = TrainingData(labels, dataset.queries, dataset.passages, "train", ns_lf=None)
    dev = AgreementEvaluator(TrainingData(labels, dataset.queries, dataset.passages, "dev", ns_lf=None))
    cfg = small(architecture="bi-encoder", mode="listwise", loss="kl", group_size=5, batch_size=4, max_steps=12,
                lr=1e-4, max_length=32)
    trainer = trainer_from_config(cfg, data, dev, tmp_path / "m", dataset.passages)
    trainer.fit(show_progress=False)
    record = json.loads((tmp_path / "m" / START_CHECK).read_text())
    check = trainer.start_check_
    assert record["share"] == check.share and record["scores"]["0"] == check.start
    assert check.kept >= check.start  # the student kept agrees with its teacher at least as well as its start
    assert earned_weight(check, 0.35) <= 0.1
    shipped = load_ranker(tmp_path / "m" / "best")  # what is saved is the mix measured
    assert dev(shipped, cfg.temperature)["dev_agreement"] == pytest.approx(check.kept, abs=1e-4)


class Stop(TrainerCallback):
    """Kills training after step ``at`` (a run cut off)."""

    def __init__(self, at: int) -> None:
        self.at = at

    def on_step(self, trainer, batch, loss, grad_norm) -> None:
        if trainer.progress.step == self.at:
            raise KeyboardInterrupt


class Counting(AgreementEvaluator):
    """The agreement evaluator, counting how often it scores the dev lists."""

    scored = 0

    def __call__(self, model, temperature):
        self.scored += 1
        return super().__call__(model, temperature)

    def per_list(self, model, temperature):
        self.scored += 1
        return super().per_list(model, temperature)


def test_the_check_reuses_the_best_evaluation_and_a_resumed_run_brings_it_back(tmp_path):
    dataset = noise_dataset()
    labels = dataset.candidates.assign(label=0, confidence=0.5,
                                       score=np.random.default_rng(2).normal(size=len(dataset.candidates)))
    data = TrainingData(labels, dataset.queries, dataset.passages, "train", ns_lf=None)
    dev = TrainingData(labels, dataset.queries, dataset.passages, "dev", ns_lf=None)
    cfg = small(architecture="bi-encoder", mode="listwise", loss="kl", group_size=5, batch_size=4, max_steps=12,
                lr=1e-4, max_length=32, eval_every=4, checkpoint_every=4)
    with pytest.raises(KeyboardInterrupt):
        trainer_from_config(cfg, data, Counting(dev), tmp_path / "m", dataset.passages, callbacks=[Stop(10)]).fit(
            show_progress=False)
    evaluator = Counting(dev)
    trainer = trainer_from_config(cfg, data, evaluator, tmp_path / "m", dataset.passages)
    trainer.resume()  # what the checkpoint of step 8 brings back: the best of the evaluations at steps 4 and 8
    before = pd.DataFrame(trainer.progress.history)["dev_agreement"]
    assert trainer.best_weights is not None and trainer.best_per_list.mean() == pytest.approx(before.max())
    trainer.fit(resume=True, show_progress=False)
    history = pd.DataFrame(trainer.progress.history)
    assert list(history["step"]) == [4, 8, 12]  # steps 4 and 8 evaluated before the cut, 12 after the resume
    assert evaluator.scored == 1 + 2  # one evaluation after the resume, then the start and the halfway mix only
    best = history["dev_agreement"].max()
    assert trainer.start_check_.scores[1.0] == pytest.approx(best)  # the fine-tuned weights: the best evaluation's
