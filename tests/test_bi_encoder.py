import numpy as np
import torch
import torch.nn.functional as F
from sentence_transformers import SentenceTransformer

from tests.test_training import assert_one_step_lowers_the_loss, labelled, small
from weakrank.errors import ConfigError
from weakrank.ranker import load_ranker
from weakrank.training import BiEncoder, TrainConfig
from weakrank.training.build import trainer_from_config
from weakrank.training.data import TrainingData
from weakrank.training.losses import in_batch_cross_entropy, in_batch_relaxation
from weakrank.training.objectives import InBatch
from weakrank.training.samplers import UniformSampler

PAIRS = [("capital of france", "Paris is the capital of France."), ("capital of france", "Bananas are yellow.")]


def test_in_batch_pr_and_ls_by_hand():
    logits = torch.tensor([[2.0, 0.5, float("-inf"), -1.0], [0.0, 1.0, 3.0, 0.5]])
    target = torch.tensor([0, 1])
    p = [np.exp([2.0, 0.5, -1.0]) / np.exp([2.0, 0.5, -1.0]).sum(), np.exp([0, 1, 3, 0.5]) / np.exp([0, 1, 3, 0.5]).sum()]
    assert np.allclose(in_batch_cross_entropy(logits, target).numpy(), [-np.log(p[0][0]), -np.log(p[1][1])], atol=1e-6)
    eps = 0.3  # LS: target (1 − ε)·one-hot + ε / C over the unmasked candidates (C = 3 and 4)
    q0, q1 = (1 - eps) * np.eye(3)[0] + eps / 3, (1 - eps) * np.eye(4)[1] + eps / 4
    expected = [-(q0 * np.log(p[0])).sum(), -(q1 * np.log(p[1])).sum()]
    assert np.allclose(in_batch_cross_entropy(logits, target, eps).numpy(), expected, atol=1e-6)


def test_in_batch_label_relaxation_is_zero_inside_the_credal_set_and_kl_to_its_boundary_outside():
    alpha = 0.2
    inside = torch.tensor([[5.0, 0.0, 0.0]])  # p(y) ≈ 0.987 ≥ 0.8
    assert in_batch_relaxation(inside, torch.tensor([0]), alpha).item() == 0.0
    logits = torch.tensor([[0.5, 1.0, -0.5]])
    p = F.softmax(logits, -1)[0].numpy()
    p_r = np.r_[1 - alpha, alpha * p[1:] / p[1:].sum()]
    kl = (p_r * np.log(p_r / p)).sum()
    assert np.isclose(in_batch_relaxation(logits, torch.tensor([0]), alpha).item(), kl, atol=1e-6)


def test_a_saved_bi_encoder_reloads_with_sentence_transformers_and_scores_by_scaled_cosine(tmp_path):
    model = BiEncoder.from_encoder("minilm", max_length=32, scale=20.0)
    path = model.save(tmp_path / "bi")
    plain = SentenceTransformer(str(path), device="cpu")
    texts = [t for pair in PAIRS for t in pair]
    assert np.allclose(plain.encode(texts, normalize_embeddings=True), model.encode(texts), atol=1e-5)
    emb = model.encode([q for q, _ in PAIRS]), model.encode([p for _, p in PAIRS])
    assert np.allclose(model.predict(PAIRS), 20.0 * (emb[0] * emb[1]).sum(1), atol=1e-4)
    back = load_ranker(path, device="cpu")
    assert isinstance(back, BiEncoder) and np.allclose(back.predict(PAIRS), model.predict(PAIRS), atol=1e-5)
    assert model.predict(PAIRS)[0] > model.predict(PAIRS)[1]


def test_a_rerank_encodes_a_passage_shared_by_its_chunks_once(monkeypatch):
    """Reranking scores a few hundred pairs at a time; a passage that several chunks' queries share is encoded once,
    and the scores are those of scoring without the memo."""
    import pandas as pd

    import weakrank.ranker.rerank as rerank

    model = BiEncoder.from_encoder("minilm", max_length=32, scale=20.0)
    shared = ["Paris is the capital of France.", "Bananas are yellow.", "Berlin is in Germany."]
    pairs = pd.DataFrame([(f"q{i}", f"p{j}", f"question {i} about capitals", text) for i in range(6)
                          for j, text in enumerate(shared)], columns=["query_id", "passage_id", "query", "passage"])
    monkeypatch.setattr(rerank, "CHUNK", 3)  # each query its own chunk
    encoded, real = [], model._encode
    monkeypatch.setattr(model, "_encode", lambda texts, batch_size=64: encoded.extend(texts) or real(texts, batch_size))
    scored = rerank.score_pairs(model, pairs)
    assert sorted(encoded) == sorted({*pairs["query"], *shared})  # each text once
    assert np.allclose(scored["score"], model.predict(list(zip(pairs["query"], pairs["passage"]))), atol=1e-5)
    assert model._memo is None  # kept only while the rerank runs


def test_in_batch_masks_another_positive_of_the_same_query_and_a_step_lowers_the_loss(tiny):
    data = TrainingData(labelled(tiny).assign(split="train"), tiny.queries, tiny.passages, "train")
    batch = data.batch(data.anchors, UniformSampler(), 2, np.random.default_rng(0))  # each anchor twice
    for changes in ({"target": "plain"}, {"target": "ls", "epsilon": 0.2}, {"target": "relax", "alpha": 0.1}):
        torch.manual_seed(0)
        cfg = small(architecture="bi-encoder", mode="in_batch", loss="ce", **changes)
        model = BiEncoder.from_encoder("minilm", max_length=32, scale=1.0)  # a flat softmax: LR is not yet 0
        assert_one_step_lowers_the_loss(model, batch, cfg, 1e-4)
    # the duplicate anchor's positive is masked: PR equals a cross-entropy without those columns
    with torch.no_grad():
        k = len(batch.queries)
        full = model.scale * model.embed(model._features(batch.queries)) @ model.embed(model._features(batch.positives + batch.negatives)).T
        keep = [[j for j in range(2 * k) if j == i or j >= k or batch.queries[j] != batch.queries[i]] for i in range(k)]
        by_hand = np.mean([-F.log_softmax(full[i, keep[i]], -1)[keep[i].index(i)].item() for i in range(k)])
        assert np.isclose(InBatch(target="plain")(model, batch, 0, 10).item(), by_hand, atol=1e-4)


def test_the_trainer_fine_tunes_a_bi_encoder_listwise(tiny, tmp_path):
    labels = labelled(tiny).assign(split="train", score=lambda d: d["gold"].astype(float))
    data = TrainingData(labels, tiny.queries, tiny.passages, "train", ns_lf=None)
    cfg = small(architecture="bi-encoder", mode="listwise", loss="kl", group_size=3, max_steps=2)
    trainer = trainer_from_config(cfg, data, None, tmp_path / "m", tiny.passages)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.fit(show_progress=False)
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))
    assert isinstance(load_ranker(tmp_path / "m" / "final"), BiEncoder)


def test_in_batch_needs_a_bi_encoder():
    for bad in ({"mode": "in_batch", "loss": "ce", "architecture": "cross-encoder"},
                {"architecture": "bi-encoder", "mode": "in_batch", "loss": "ce", "target": "wsls"},
                {"architecture": "bi"}):
        try:
            TrainConfig(**bad)
        except ConfigError:
            continue
        raise AssertionError(f"{bad} accepted")


def test_interpolate_saves_the_wise_ft_mix_of_start_and_fine_tuned_weights(tiny, tmp_path):
    labels = labelled(tiny).assign(split="train", score=lambda d: d["gold"].astype(float))
    data = TrainingData(labels, tiny.queries, tiny.passages, "train", ns_lf=None)
    cfg = small(architecture="bi-encoder", mode="listwise", loss="kl", group_size=3, max_steps=2, interpolate=0.25)
    trainer = trainer_from_config(cfg, data, None, tmp_path / "m", tiny.passages)
    start = {k: v.clone() for k, v in trainer.model.encoder.state_dict().items()}
    trainer.fit(show_progress=False)
    tuned = trainer.model.encoder.state_dict()  # the model in memory stays the fine-tuned one
    saved = load_ranker(tmp_path / "m" / "final").encoder.state_dict()
    moved = [k for k in start if not torch.equal(start[k], tuned[k])]
    assert moved
    for k in moved:
        assert torch.allclose(saved[k], 0.25 * tuned[k] + 0.75 * start[k], atol=1e-6)
    assert "WiSE-FT" in (tmp_path / "m" / "final" / "README.md").read_text()
    for bad in ({"interpolate": 0.0}, {"interpolate": 1.5}, {"interpolate": "half"},
                {"interpolate": 0.5, "architecture": "cross-encoder"}):
        try:
            TrainConfig(**bad)
        except ConfigError:
            continue
        raise AssertionError(f"{bad} accepted")
