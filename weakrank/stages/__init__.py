"""What the stages of :mod:`weakrank.pipeline` share with the reproduction's grids but not with
:mod:`weakrank.training`: the run directory and the pipeline config read for training (:mod:`weakrank.stages.training`)."""
