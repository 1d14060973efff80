"""The pipeline's stages, one module each, every one declared with :func:`~weakrank.stages.stage.stage`;
:mod:`weakrank.pipeline` names them as the Python API and runs them in order. A mode's own stage lives beside the
rest of the mode, at this layer (``tests/test_layers.py`` lists it)."""
