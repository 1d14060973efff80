import numpy as np
import pandas as pd
import pytest
import torch

from tests.conftest import shared
from weakrank.datasets import load_dataset
from weakrank.errors import ConfigError
from weakrank.training import BertPR, TrainConfig
from weakrank.training.data import TrainingData
from weakrank.training.objective import batch_loss
from weakrank.training.samplers import BM25Sampler, MixedSampler, RandomSampler, UniformSampler
from weakrank.training.trainer import Trainer


def labelled(dataset, confidence: float = 0.8) -> pd.DataFrame:
    c = dataset.candidates
    return c.assign(label=c["gold"].astype(int), confidence=confidence, score_bm25=-c["rank"].astype(float))


@pytest.fixture
def tiny_data(tiny):
    labels = labelled(tiny).assign(split="train")
    return TrainingData(labels, tiny.queries, tiny.passages, "train")


def small(**changes) -> TrainConfig:
    base = dict(batch_size=2, max_length=32, lr=5e-4, warmup=0.0, eval_every=0, checkpoint_every=0, seed=0)
    return TrainConfig(**{**base, **changes})


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
        {"loss": "ce", "mode": "pointwise", "target": "lr", "alpha": 0.05},
    ):
        torch.manual_seed(0)
        cfg = small(**changes)
        model = BertPR.from_encoder("minilm", max_length=32)
        optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
        before = batch_loss(model, batch, cfg, cfg.epsilon_at(0, 10))
        before.backward()
        optimizer.step()
        with torch.no_grad():
            after = batch_loss(model, batch, cfg, cfg.epsilon_at(0, 10))
        assert after.item() < before.item(), changes


def test_saved_and_reloaded_model_gives_the_same_scores(tmp_path):
    model = BertPR.from_encoder("minilm", max_length=32)
    pairs = [("capital of france", "Paris is the capital of France."), ("capital of france", "Bananas.")]
    back = BertPR.load(model.save(tmp_path / "m"), device="cpu")
    assert np.allclose(model.predict(pairs), back.predict(pairs), atol=1e-6)
    assert (tmp_path / "m" / "config.json").exists()  # the encoder is a plain from_pretrained directory


def test_resume_continues_from_the_saved_step_with_the_same_optimizer_state(tiny, tiny_data, tmp_path):
    collection = tiny.passages["passage_id"].tolist()
    cfg = small(max_steps=4, epochs=4, checkpoint_every=2)
    full = Trainer(cfg, tiny_data, None, tmp_path / "full", collection)
    full.fit(show_progress=False)

    class Interrupt(Exception):
        pass

    def stop_after_3(trainer, *_):
        if trainer.progress.step == 3:
            raise Interrupt

    broken = Trainer(cfg, tiny_data, None, tmp_path / "resumed", collection, callbacks=[stop_after_3])
    with pytest.raises(Interrupt):
        broken.fit(show_progress=False)
    resumed = Trainer(cfg, tiny_data, None, tmp_path / "resumed", collection)
    resumed.load_checkpoint()
    assert resumed.progress.step == 2
    saved = torch.load(tmp_path / "resumed" / "checkpoint.pt", weights_only=False)["optimizer"]["state"]
    assert all(torch.equal(resumed.optimizer.state_dict()["state"][k]["exp_avg"], v["exp_avg"]) for k, v in saved.items())
    resumed.fit(resume=True, show_progress=False)
    assert resumed.progress.step == full.progress.step == 4
    for a, b in zip(full.model.parameters(), resumed.model.parameters()):
        assert torch.allclose(a, b, atol=1e-5)


def test_two_stage_smoothing_schedule_and_bad_configs():
    cfg = TrainConfig(loss="ce", target="twsls", epsilon=0.3, two_stage_fraction=0.5)
    assert [cfg.epsilon_at(s, 10) for s in (0, 4, 5, 9)] == [0.3, 0.3, 0.0, 0.0]
    assert TrainConfig(loss="ce", target="ls", epsilon=0.3).epsilon_at(9, 10) == 0.3
    with pytest.raises(ConfigError, match="hinge loss"):
        TrainConfig(loss="hinge", target="ls")
    with pytest.raises(ConfigError, match="unknown \\[train\\] key"):
        TrainConfig.from_dict({"learning_rate": 1.0})
