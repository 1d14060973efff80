"""The student of a model directory, a cross-encoder or a bi-encoder, loaded to run on one of :data:`BACKENDS`."""

from __future__ import annotations

from pathlib import Path

from weakrank.errors import WeakrankError
from weakrank.ranker.bi_encoder import CONFIG_FILE as BI_ENCODER_FILE
from weakrank.ranker.bi_encoder import BiEncoder
from weakrank.ranker.cross_encoder import CONFIG_FILE as CROSS_ENCODER_FILE
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.ranker.ranking import RanksPassages

Student = CrossEncoderRanker | BiEncoder
# where a loaded student runs, as sentence-transformers' CrossEncoder(..., backend=): PyTorch; PyTorch with its
# linear layers dynamically quantised to int8 (CPU); ONNX Runtime on the CPU (cross-encoders), fp32 or int8
BACKENDS = ("torch", "int8", "onnx", "onnx-int8")
INT8_BACKENDS = ("int8", "onnx-int8")


def load_student(directory: str | Path, device: str | None = None, backend: str = "torch") -> RanksPassages:
    """The student saved in ``directory``, a cross-encoder or bi-encoder told apart by its config file, run by
    ``backend``: ``torch``; ``int8``, its linear layers dynamically quantised (:func:`quantized`); ``onnx`` or
    ``onnx-int8``, a cross-encoder run by ONNX Runtime on the CPU (:mod:`~weakrank.ranker.onnx_runtime`)."""
    if backend not in BACKENDS:
        raise WeakrankError(f"backend {backend!r}: choose one of {BACKENDS}")
    directory = Path(directory)
    if (directory / BI_ENCODER_FILE).exists():
        student = BiEncoder.load(directory, device)
    elif (directory / CROSS_ENCODER_FILE).exists():
        student = CrossEncoderRanker.load(directory, device)
    else:
        raise FileNotFoundError(
            f"{directory} holds no weakrank ranker ({CROSS_ENCODER_FILE} or {BI_ENCODER_FILE} missing)")
    if backend.startswith("onnx"):
        from weakrank.ranker.onnx_runtime import OnnxCrossEncoder

        if not isinstance(student, CrossEncoderRanker):
            raise WeakrankError(f"{directory}: backend {backend!r} runs cross-encoders; this is a bi-encoder")
        return OnnxCrossEncoder(student, directory, int8=backend == "onnx-int8")
    return quantized(student) if backend == "int8" else student


def quantized(model: Student) -> Student:
    """``model`` for CPU inference with its linear layers dynamically quantised to int8 (torch's
    ``quantize_dynamic``: weights int8, activations quantised per batch); it cannot be trained further."""
    import warnings

    import torch

    with warnings.catch_warnings():  # torch.ao.quantization's deprecation notice: the API is still the one in torch
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model.to("cpu").eval(), {torch.nn.Linear}, dtype=torch.qint8)
