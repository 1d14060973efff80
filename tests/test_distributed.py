"""DDP on CPU (gloo, 2 processes) and gradient accumulation keep the effective batch."""

import os
import socket

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
from transformers import AutoTokenizer, BertConfig, BertModel

from tests.test_training import labelled
from weakrank.encoders import resolve_model
from weakrank.training import TrainConfig
from weakrank.training.build import trainer_from_config
from weakrank.training.data import TrainingData
from weakrank.training.distributed import DistEnv, micro_batches
from weakrank.training.samplers import UniformSampler


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    """A 2-layer, 32-wide BERT (random weights, no dropout) with the MiniLM tokenizer, saved as a directory."""
    path = tmp_path_factory.mktemp("tiny_bert")
    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    BertModel(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(resolve_model("minilm")).save_pretrained(path)
    return str(path)


def data_of(dataset) -> TrainingData:
    return TrainingData(labelled(dataset).assign(split="train"), dataset.queries, dataset.passages, "train")


def config(encoder: str, **changes) -> TrainConfig:
    base = dict(
        encoder=encoder,
        mode="pairwise",
        loss="hinge",
        head_lr=0.0,
        max_epochs=0.0,
        freeze_embeddings=False,
        batch_size=4,
        negatives=2,
        sampler="uniform",
        max_length=32,
        lr=1e-3,
        warmup=0.0,
        eval_every=0,
        checkpoint_every=0,
        max_steps=3,
        epochs=3,
        seed=0,
    )
    return TrainConfig(**{**base, **changes})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank: int, world: int, port: int, encoder: str, dataset, out: str) -> None:
    os.environ.update(
        RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    torch.set_num_threads(1)
    from weakrank.training.distributed import teardown

    data = data_of(dataset)
    trainer = trainer_from_config(config(encoder), data, None, f"{out}/model", dataset.passages)
    assert trainer.dist == DistEnv(rank, world, rank)
    loss = trainer.backward(data.batch(data.anchors, UniformSampler(), 2, np.random.default_rng(0)))
    grads = {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None}
    trainer.fit(show_progress=False)
    params = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    torch.save({"loss": loss, "grads": grads, "params": params}, f"{out}/rank{rank}.pt")
    teardown()


@pytest.mark.slow
def test_ddp_on_two_cpu_processes_matches_one_process(tiny, tiny_encoder, tmp_path):
    mp.spawn(_rank_main, args=(2, _free_port(), tiny_encoder, tiny, str(tmp_path)), nprocs=2, join=True)
    rank0, rank1 = (torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1))
    data = data_of(tiny)
    single = trainer_from_config(config(tiny_encoder), data, None, tmp_path / "single", tiny.passages)
    start = {k: v.detach().clone() for k, v in single.model.state_dict().items()}
    loss = single.backward(data.batch(data.anchors, UniformSampler(), 2, np.random.default_rng(0)))
    # the synchronised gradient of each half of the batch is the gradient of the whole batch on one process
    assert rank0["loss"] == pytest.approx(loss, rel=1e-5) and rank1["loss"] == pytest.approx(loss, rel=1e-5)
    for name, param in single.model.named_parameters():
        if param.grad is not None:
            assert torch.allclose(rank0["grads"][name], param.grad, atol=1e-6, rtol=1e-4), name
    for name, value in rank0["params"].items():
        assert torch.equal(value, rank1["params"][name]), name  # every rank ends with the same parameters
    assert any(not torch.equal(start[k], v) for k, v in rank0["params"].items())  # and it did train
    assert (tmp_path / "model" / "final").is_dir()  # written once, by rank 0


def test_two_micro_batches_give_the_full_batch_gradient(tiny, tiny_encoder, tmp_path):
    data = data_of(tiny)
    batch = data.batch(data.anchors, UniformSampler(), 2, np.random.default_rng(0))
    grads = []
    for accum in (1, 2):
        cfg = config(tiny_encoder, grad_accum=accum)
        trainer = trainer_from_config(cfg, data, None, tmp_path / str(accum), tiny.passages)
        loss = trainer.backward(batch)
        grads.append((loss, {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None}))
    (loss1, full), (loss2, accumulated) = grads
    assert len(micro_batches(batch, DistEnv(), 2)) == 2
    assert loss2 == pytest.approx(loss1, rel=1e-5)
    assert full.keys() == accumulated.keys() and len(full) > 10
    for name in full:
        assert torch.allclose(full[name], accumulated[name], atol=1e-6, rtol=1e-4), name


def test_micro_batches_split_triplets_over_ranks_with_weights_summing_to_the_world_size(tiny):
    data = data_of(tiny)
    batch = data.batch(data.anchors, UniformSampler(), 2, np.random.default_rng(0))  # 4 triplets
    seen = []
    for rank in range(3):
        parts = micro_batches(batch, DistEnv(rank, 3, rank), 2)
        assert len(parts) == 2  # every rank runs the same number of forward/backward passes
        seen += [(q, n) for part, w in parts if w for q, n in zip(part.queries, part.negatives)]
        assert sum(w for _, w in parts) == pytest.approx(3 * sum(len(p.queries) for p, w in parts if w) / 4)
    assert sorted(seen) == sorted(zip(batch.queries, batch.negatives))
    with pytest.raises(Exception, match="grad_accum"):
        TrainConfig(grad_accum=0)
