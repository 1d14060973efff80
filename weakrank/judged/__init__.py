"""Judged mode: a person judges a small sample of queries. A sample of a training split moves the LFs' quality priors
(:mod:`.prior_update`, through :mod:`.teach`) and chooses the student's weight (:mod:`.student_weight`); a sample of
the evaluated split measures the systems without qrels (:mod:`.evaluation`; the pooled design, :mod:`.pooling` and
:mod:`.topk`). Each module's place: docs/architecture.md; each design and why: docs/judged-design.md.

:data:`EVALUATION_DESIGNS` are how ``select --evaluation`` draws its sample (:mod:`.pooling`, the default, and
:mod:`.evaluation`): here, where the command's parser reads them without importing either.
"""

EVALUATION_DESIGNS = ("pooled", "today")
