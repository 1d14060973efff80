"""``load_ranker``: a model directory as the ranker it ships (the student with its teacher), or its student alone."""

from __future__ import annotations

from pathlib import Path

from weakrank.errors import WeakrankError
from weakrank.ranker.fused import FusedRanker, has_teacher
from weakrank.ranker.ranking import RanksPassages
from weakrank.ranker.student import BACKENDS, load_student
from weakrank.ranker.teacher_state import check_model_files


def load_ranker(directory: str | Path, device: str | None = None, student_only: bool = False,
                backend: str = "torch", trust_code: bool = False) -> RanksPassages:
    """A ranker saved by weakrank: the shipped :class:`~weakrank.ranker.fused.FusedRanker` (the student with its
    teacher) when the directory holds the teacher's state, else (or with ``student_only``) the student, a
    cross-encoder or bi-encoder. ``backend``: where the student runs, as sentence-transformers'
    ``CrossEncoder(..., backend=)``: ``torch``, ``int8`` (linear layers dynamically quantised, CPU), ``onnx`` or
    ``onnx-int8`` (a cross-encoder run by ONNX Runtime on the CPU). ``benchmarks/bench_rerank.py`` measures each
    one's speed and MAP.

    Loading runs no code from the directory: weights are read from safetensors only, built-in LFs are rebuilt
    from their saved options and arrays. A teacher with a user's LF file (in the directory's ``lfs/``) runs that
    file only with ``trust_code``; without it the student is returned alone, with a warning."""
    if backend not in BACKENDS:
        raise WeakrankError(f"backend {backend!r}: choose one of {list(BACKENDS)}")
    directory = Path(directory)
    check_model_files(directory)
    if student_only or not has_teacher(directory):
        return load_student(directory, device, backend)
    return FusedRanker.load(directory, trust_code=trust_code, device=device, backend=backend)
