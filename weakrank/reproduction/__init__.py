"""The papers' reproduction, built on the product and never imported by it (``tests/test_layers.py``): the grids of
training variants (:mod:`~weakrank.reproduction.grid`), the systems they compare, the papers' label sources (the gold
labels of the noise study, one LF's own votes), the report, and AC-IR (:mod:`~weakrank.reproduction.acir`, a trainer
plug-in: its options and its samplers' callback, :mod:`weakrank.reproduction.acir.plugin`)."""
