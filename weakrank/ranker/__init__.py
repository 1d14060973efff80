"""A trained ranker, loaded and run: what inference needs, and nothing of the weak-supervision stack that trained it.

- :func:`load_ranker` (``load.py``): a model directory as the shipped ranker, or its student alone, as its
  manifest says (``manifest.py``: ``weakrank_model.json``, the directory's kind, student and what it runs on);
- :class:`FusedRanker` (``fused.py``): the student averaged per query with its :class:`Teacher` (``teacher.py``:
  the LFs and the fusion label model's fitted state, scoring from that state alone), ``save`` / ``load``;
- ``teacher_state.py``: a model directory read as untrusted input (no code runs without ``trust_code``);
- the students: :class:`CrossEncoderRanker` (``cross_encoder.py``) and :class:`BiEncoder` (``bi_encoder.py``),
  both :class:`RanksPassages` (``ranking.py``), run by one of :data:`BACKENDS` (``student.py``; ONNX Runtime in
  ``onnx_runtime.py``) at one of the precisions of :mod:`weakrank.names`;
- ``rerank.py``: a model directory loaded (warning when a teacher is asked of one that holds none) and run over
  pairs.

Nothing here imports the trainer, the pipeline config, the label models or the engines (``tests/test_layers.py``).
"""

from weakrank.ranker.bi_encoder import BiEncoder
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.ranker.fused import FusedRanker, UntrustedCodeWarning, average_views
from weakrank.ranker.load import load_ranker
from weakrank.ranker.ranking import RanksPassages
from weakrank.ranker.student import BACKENDS, Student, load_student
from weakrank.ranker.teacher import Teacher

__all__ = ["BACKENDS", "BiEncoder", "CrossEncoderRanker", "FusedRanker", "RanksPassages", "Student", "Teacher",
           "UntrustedCodeWarning", "average_views", "load_ranker", "load_student"]
