"""The student of a model directory, a cross-encoder or a bi-encoder, loaded to run on one of :data:`BACKENDS`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from weakrank.encoders import dynamic_int8
from weakrank.errors import WeakrankError
from weakrank.ranker.bi_encoder import CONFIG_FILE as BI_ENCODER_FILE
from weakrank.ranker.bi_encoder import BiEncoder
from weakrank.ranker.cross_encoder import CONFIG_FILE as CROSS_ENCODER_FILE
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.ranker.ranking import RanksPassages

Student = CrossEncoderRanker | BiEncoder


def onnx_runtime(student: Student, directory: Path, int8: bool = False) -> RanksPassages:
    """A cross-encoder ``student`` run by ONNX Runtime on the CPU, exported once into ``directory``'s ``onnx/``
    (:mod:`~weakrank.ranker.onnx_runtime`), fp32 or with ORT's dynamic int8 quantisation."""
    from weakrank.ranker.onnx_runtime import OnnxCrossEncoder

    if not isinstance(student, CrossEncoderRanker):
        raise WeakrankError(f"{directory}: backend 'onnx{'-int8' if int8 else ''}' runs cross-encoders; "
                            "this is a bi-encoder")
    return OnnxCrossEncoder(student, directory, int8=int8)


# where a loaded student runs, as sentence-transformers' CrossEncoder(..., backend=): each a function
# (student, its directory) -> what scores. A backend is one function and its line here.
BACKENDS: dict[str, Callable[[Student, Path], RanksPassages]] = {
    "torch": lambda student, directory: student,
    "int8": lambda student, directory: dynamic_int8(student),  # linear layers dynamically quantised (CPU)
    "onnx": onnx_runtime,
    "onnx-int8": lambda student, directory: onnx_runtime(student, directory, int8=True),
}
INT8_BACKENDS = ("int8", "onnx-int8")  # whose shipped ranker runs its encoder LFs at int8 too


def load_student(directory: str | Path, device: str | None = None, backend: str = "torch") -> RanksPassages:
    """The student saved in ``directory``, a cross-encoder or bi-encoder told apart by its config file, run by
    ``backend`` (one of :data:`BACKENDS`)."""
    if backend not in BACKENDS:
        raise WeakrankError(f"backend {backend!r}: choose one of {list(BACKENDS)}")
    directory = Path(directory)
    if (directory / BI_ENCODER_FILE).exists():
        student = BiEncoder.load(directory, device)
    elif (directory / CROSS_ENCODER_FILE).exists():
        student = CrossEncoderRanker.load(directory, device)
    else:
        raise FileNotFoundError(f"{directory} holds no weakrank ranker ({CROSS_ENCODER_FILE} or {BI_ENCODER_FILE} "
                                "missing)")
    return BACKENDS[backend](student, directory)
