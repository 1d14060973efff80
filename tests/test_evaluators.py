"""What the trainer measures: evaluators handed to it, each choosing the checkpoint by its primary metric."""

import numpy as np
import pandas as pd

from weakrank.judged.evaluator import JudgedEstimateEvaluator
from weakrank.training import TrainConfig
from weakrank.training.build import trainer_from_config
from weakrank.training.data import TrainingData
from weakrank.training.evaluators import AgreementEvaluator, GoldMapEvaluator, dev_evaluator


class ByText:
    """A model whose score of a pair is given by its passage's text."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def predict(self, pairs, batch_size=64):
        return np.array([self.scores[passage] for _, passage in pairs])


def test_the_judged_estimate_ranks_whole_lists_not_the_judged_pairs_alone():
    # q1: an unjudged passage above the relevant one; q2: its relevant passage first, one passage sampled at 1/2
    pairs = pd.DataFrame({"query_id": ["q1", "q1", "q1", "q2", "q2", "q2"], "passage_id": list("abcdef"),
                          "query": "q", "passage": list("abcdef"),
                          "judged": [np.nan, 1.0, 0.0, 1.0, 0.0, np.nan],
                          "judged_inclusion": [np.nan, 1.0, 1.0, 1.0, 0.5, np.nan], "judged_weight": 1.0})
    model = ByText({"a": 3, "b": 2, "c": 1, "d": 3, "e": 2, "f": 1})
    metrics = JudgedEstimateEvaluator(pairs)(model, temperature=1.0)
    # q1's relevant passage at rank 2 (AP 1/2, a condensed list would say 1), q2's at rank 1: (1/2 + 1) / 2
    assert metrics == {"dev_judged_map": 0.75, "dev_judged_queries": 2}
    figures, note = JudgedEstimateEvaluator.describe(metrics)
    assert figures == metrics and "judged sample" in note and "gold" not in note


def test_dev_lists_are_measured_against_gold_only_when_they_carry_it(tiny):
    c = tiny.candidates
    labels = c.assign(split="dev", label=c["gold"].astype(int), confidence=0.8, score_bm25=-c["rank"].astype(float))
    weak = TrainingData(labels, tiny.queries, tiny.passages, "dev")
    gold = TrainingData(labels, tiny.queries, tiny.passages, "dev", supervised=True)
    assert isinstance(dev_evaluator(weak, TrainConfig()), AgreementEvaluator)
    assert isinstance(dev_evaluator(gold, TrainConfig()), GoldMapEvaluator)
    assert isinstance(dev_evaluator(weak, TrainConfig(supervised=True)), GoldMapEvaluator)
    shown, _ = AgreementEvaluator.describe({"dev_map": 0.5, "dev_agreement": 0.9, "train_agreement": 0.8})
    assert shown == {"dev_agreement": 0.9, "train_agreement": 0.8}  # no MAP against pseudo-labels on the card


def test_an_evaluator_of_ones_own_chooses_the_checkpoint(tiny, tmp_path):
    class Countdown:  # a new evaluator: this class, handed to the trainer; nothing else changes
        primary_metric = "dev_countdown"

        def __init__(self):
            self.calls = 0

        def __call__(self, model, temperature):
            self.calls += 1
            return {"dev_countdown": [0.2, 0.9, 0.5, 0.1][self.calls - 1]}

        @staticmethod
        def describe(figures):
            return figures, "Counted down."

    c = tiny.candidates
    labels = c.assign(split="train", label=c["gold"].astype(int), confidence=0.8, score_bm25=-c["rank"].astype(float))
    data = TrainingData(labels, tiny.queries, tiny.passages, "train")
    cfg = TrainConfig(mode="pairwise", loss="hinge", batch_size=1, max_length=32, max_steps=4, eval_every=1,
                      patience=10, checkpoint_every=0, seed=0)
    trainer = trainer_from_config(cfg, data, Countdown(), tmp_path / "m", tiny.passages)
    saved = []
    save = trainer.save_model
    trainer.save_model = lambda directory: (saved.append((trainer.progress.step, directory.name)), save(directory))
    trainer.fit(show_progress=False)
    history = pd.read_csv(tmp_path / "m" / "history.csv")
    assert list(history.columns) == ["step", "dev_countdown"] and history["dev_countdown"].tolist() == [0.2, 0.9, 0.5, 0.1]
    assert [step for step, name in saved if name == "best"] == [1, 2]  # kept when its primary metric rose
    assert "Counted down." in (tmp_path / "m" / "best" / "README.md").read_text()
