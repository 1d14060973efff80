"""The pipeline's stages, one module each, every one declared with :func:`~weakrank.stages.stage.stage`;
:mod:`weakrank.pipeline` names them as the Python API and runs them in order; judged mode's, ``select``, among
them (:mod:`.select`)."""
