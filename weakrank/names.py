"""The names a user can choose, below everything: what the command line's parsers and the config checks read
without importing what each name stands for (no torch, no scikit-learn). Each heavy registry keeps its
implementations under the same names, in the same order (``tests/test_names.py``):

- :data:`BACKENDS`: where a loaded student runs (:data:`weakrank.ranker.student.BACKENDS`);
- :data:`PRECISIONS`: the precision it and the shipped ranker's encoder LFs run at
  (:data:`weakrank.similarity.PRECISIONS`);
- :data:`ARCHITECTURES`: the students (each class's ``architecture``, :mod:`weakrank.ranker.student`);
- :data:`LABEL_MODELS`: :data:`weakrank.label_models.MODELS`;
- :data:`ENGINES`: where ``label`` runs (:data:`weakrank.engines.ENGINE_OPTIONS`);
- :data:`LOSSES`: the ``[train] loss`` names (:func:`weakrank.training.objectives.losses`).
"""

from __future__ import annotations

from weakrank.errors import WeakrankError

BACKENDS = ("torch", "onnx")
PRECISIONS = ("fp32", "int8")
ARCHITECTURES = ("cross-encoder", "bi-encoder")
LABEL_MODELS = ("majority", "snorkel", "generative", "dawid_skene", "fusion")
ENGINES = ("local", "dask", "spark")
LOSSES = ("hinge", "ce", "kl")

# a backend and a precision as one name, as ``backend=`` took them before they were two arguments
COMBINED_BACKENDS = {"int8": ("torch", "int8"), "onnx-int8": ("onnx", "int8")}


def split_backend(backend: str, precision: str = "fp32") -> tuple[str, str]:
    """``(backend, precision)`` checked against :data:`BACKENDS` and :data:`PRECISIONS`; a name of
    :data:`COMBINED_BACKENDS` (``"onnx-int8"``) is split into both, its precision taking the place of ``precision``."""
    backend, precision = COMBINED_BACKENDS.get(backend, (backend, precision))
    if backend not in BACKENDS:
        raise WeakrankError(f"backend {backend!r}: choose one of {list(BACKENDS)}")
    if precision not in PRECISIONS:
        raise WeakrankError(f"precision {precision!r}: choose one of {list(PRECISIONS)}")
    return backend, precision
