"""The student of a model directory, a cross-encoder or a bi-encoder (as its manifest says), loaded to run on one of
:data:`BACKENDS` at one of :data:`~weakrank.names.PRECISIONS`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from weakrank.encoders import dynamic_int8
from weakrank.errors import WeakrankError
from weakrank.names import split_backend
from weakrank.ranker.bi_encoder import BiEncoder
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.ranker.directory import model_manifest
from weakrank.ranker.ranking import RanksPassages

Student = CrossEncoderRanker | BiEncoder
STUDENTS: dict[str, type[Student]] = {cls.architecture: cls for cls in (CrossEncoderRanker, BiEncoder)}


def torch_runtime(student: Student, directory: Path, precision: str) -> RanksPassages:
    """``student`` as it is, or at int8 with its linear layers dynamically quantised (CPU)."""
    return dynamic_int8(student) if precision == "int8" else student


def onnx_runtime(student: Student, directory: Path, precision: str) -> RanksPassages:
    """A cross-encoder ``student`` run by ONNX Runtime on the CPU, exported once into ``directory``'s ``onnx/``
    (:mod:`~weakrank.ranker.onnx_runtime`), fp32 or with ORT's dynamic int8 quantisation."""
    from weakrank.ranker.onnx_runtime import OnnxCrossEncoder

    return OnnxCrossEncoder(student, directory, int8=precision == "int8")


# where a loaded student runs, as sentence-transformers' CrossEncoder(..., backend=): each a function
# (student, its directory, precision) -> what scores. A backend is one function, its line here and its name in
# weakrank.names.BACKENDS.
BACKENDS: dict[str, Callable[[Student, Path, str], RanksPassages]] = {"torch": torch_runtime, "onnx": onnx_runtime}


def load_student(directory: str | Path, device: str | None = None, backend: str = "torch",
                 precision: str = "fp32") -> RanksPassages:
    """The student saved in ``directory``, the class its manifest names (:mod:`~weakrank.ranker.manifest`), run by
    ``backend`` (one of :data:`BACKENDS`) at ``precision``: each checked against what the manifest says it runs on
    (:func:`~weakrank.names.split_backend`)."""
    backend, precision = split_backend(backend, precision)
    directory = Path(directory)
    manifest = model_manifest(directory)
    if backend not in manifest.backends or precision not in manifest.precisions:
        raise WeakrankError(f"{directory}: a {manifest.architecture} runs on backends {list(manifest.backends)} at "
                            f"{list(manifest.precisions)}, not backend {backend!r} at {precision!r}")
    student = STUDENTS[manifest.architecture].load(directory, device)
    return BACKENDS[backend](student, directory, precision)
