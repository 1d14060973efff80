"""The papers' reproduction, built on the product and never imported by it (``tests/test_layers.py``): the grids of
training variants (:mod:`~weakrank.reproduction.grid`), the systems they compare, the papers' label sources (the gold
labels of the noise study, one LF's own votes), the report, and AC-IR (:mod:`~weakrank.reproduction.acir`, whose
callback a trainer finds by sampler name: :data:`weakrank.training.callbacks.SAMPLER_CALLBACKS`)."""
