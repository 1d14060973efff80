"""The two ranker architectures behind one door: build a fresh one from a config, load a saved one (with its
teacher, when the directory ships one: :mod:`weakrank.training.shipped`)."""

from __future__ import annotations

from pathlib import Path

from weakrank.errors import WeakrankError
from weakrank.training.bi_encoder import CONFIG_FILE as BI_ENCODER_FILE
from weakrank.training.bi_encoder import BiEncoder
from weakrank.training.config import TrainConfig
from weakrank.training.cross_encoder import CONFIG_FILE as BERT_PR_FILE
from weakrank.training.cross_encoder import BertPR
from weakrank.training.onnx_runtime import OnnxCrossEncoder
from weakrank.training.shipped import FUSION_FILE, FusedRanker
from weakrank.training.teacher_state import check_model_files

Ranker = BertPR | BiEncoder
BACKENDS = ("torch", "onnx")  # where a loaded student runs: PyTorch, or ONNX Runtime (CPU, cross-encoders)


def new_ranker(cfg: TrainConfig) -> Ranker:
    """A fresh ranker of ``cfg.architecture`` on ``cfg.encoder``, its word embeddings frozen with
    ``freeze_embeddings`` (seed first: the cross-encoder's head starts from torch's RNG). ``max_length = "auto"``
    must have been resolved (:func:`weakrank.training.lengths.resolve_max_length`)."""
    if not isinstance(cfg.max_length, int):
        raise ValueError(f"max_length {cfg.max_length!r} is not resolved to a number of tokens")
    if cfg.architecture == "bi-encoder":
        model = BiEncoder.from_encoder(cfg.encoder, max_length=cfg.max_length, scale=cfg.scale)
    else:
        model = BertPR.from_encoder(cfg.encoder, max_length=cfg.max_length, pooling=cfg.pooling)
    if cfg.freeze_embeddings:
        model.encoder.get_input_embeddings().weight.requires_grad_(False)
    return model


def load_ranker(directory: str | Path, device: str | None = None, student_only: bool = False,
                int8: bool = False, backend: str = "torch", trust_code: bool = False
                ) -> Ranker | FusedRanker | OnnxCrossEncoder:
    """A ranker saved by weakrank: the shipped :class:`FusedRanker` (the student with its teacher) when the
    directory holds the teacher's state, else (or with ``student_only``) the student, a cross-encoder or
    bi-encoder told apart by its config file. ``int8``: the student's linear layers dynamically quantised
    (CPU inference); ``backend = "onnx"``: a cross-encoder student run by ONNX Runtime on the CPU
    (:mod:`~weakrank.training.onnx_runtime`). ``benchmarks/bench_rerank.py`` measures each one's speed and MAP.

    Loading runs no code from the directory: weights are read from safetensors only, built-in LFs are rebuilt
    from their saved options and arrays. A teacher with a user's LF file (in the directory's ``lfs/``) runs that
    file only with ``trust_code``; without it the student is returned alone, with a warning."""
    if backend not in BACKENDS:
        raise WeakrankError(f"backend {backend!r}: choose one of {BACKENDS}")
    directory = Path(directory)
    check_model_files(directory)
    if (directory / BI_ENCODER_FILE).exists():
        student = BiEncoder.load(directory, device)
    elif (directory / BERT_PR_FILE).exists():
        student = BertPR.load(directory, device)
    else:
        raise FileNotFoundError(f"{directory} holds no weakrank ranker ({BERT_PR_FILE} or {BI_ENCODER_FILE} missing)")
    if backend == "onnx":
        if not isinstance(student, BertPR):
            raise WeakrankError(f"{directory}: backend 'onnx' runs cross-encoders; this is a bi-encoder")
        student = OnnxCrossEncoder(student, directory, int8=int8)
    elif int8:
        student = quantized(student)
    if student_only or not (directory / FUSION_FILE).exists():
        return student
    return FusedRanker.load(directory, student, trust_code=trust_code)


def quantized(model: Ranker) -> Ranker:
    """``model`` for CPU inference with its linear layers dynamically quantised to int8 (torch's
    ``quantize_dynamic``: weights int8, activations quantised per batch); it cannot be trained further."""
    import warnings

    import torch

    with warnings.catch_warnings():  # torch.ao.quantization's deprecation notice: the API is still the one in torch
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model.to("cpu").eval(), {torch.nn.Linear}, dtype=torch.qint8)
