"""``load_ranker``: a model directory as the ranker it ships (the student with its teacher), or its student alone."""

from __future__ import annotations

from pathlib import Path

from weakrank.names import split_backend
from weakrank.ranker.directory import model_manifest
from weakrank.ranker.fused import FusedRanker
from weakrank.ranker.ranking import RanksPassages
from weakrank.ranker.student import load_student
from weakrank.ranker.teacher_state import check_model_files


def load_ranker(directory: str | Path, device: str | None = None, student_only: bool = False,
                backend: str = "torch", trust_code: bool = False, precision: str = "fp32") -> RanksPassages:
    """A ranker saved by weakrank: the shipped :class:`~weakrank.ranker.fused.FusedRanker` (the student with its
    teacher) when the directory's manifest says it carries the teacher, else (or with ``student_only``) the
    student, a cross-encoder or bi-encoder. ``backend``: where the student runs, as sentence-transformers'
    ``CrossEncoder(..., backend=)``: ``torch`` or ``onnx`` (a cross-encoder run by ONNX Runtime on the CPU);
    ``precision``: ``fp32`` or ``int8`` (linear layers dynamically quantised, CPU; the shipped ranker's encoder
    LFs too). The names of before, ``backend="int8"`` and ``"onnx-int8"``, still load
    (:func:`~weakrank.names.split_backend`). ``benchmarks/bench_rerank.py`` measures each one's speed and MAP.

    Loading runs no code from the directory: weights are read from safetensors only, built-in LFs are rebuilt
    from their saved options and arrays. A teacher with a user's LF file (in the directory's ``lfs/``) runs that
    file only with ``trust_code``; without it the student is returned alone, with a warning."""
    backend, precision = split_backend(backend, precision)
    directory = Path(directory)
    check_model_files(directory)
    if student_only or not model_manifest(directory).teacher:
        return load_student(directory, device, backend, precision)
    return FusedRanker.load(directory, trust_code=trust_code, device=device, backend=backend, precision=precision)
