"""Judged mode: a person judges a small sample of the pool's queries, and the sample moves the LFs' quality priors
— for the whole collection, not just for the queries judged — and chooses the student's weight.

- :mod:`.design`: which queries and passages to judge (a stratified random sample with known inclusion
  probabilities, over the rankings the judgments weigh; ``weakrank select``);
- :mod:`.judging_file`: the judging file a person fills in (``weakrank judge``);
- :mod:`.checks`: judgments checked against the run they are to teach, before any is used;
- :mod:`.judgments`: the judgments read back with their probabilities, aligned with the votes;
- :mod:`.estimate`: a ranking's MAP over the pool, estimated without bias from the sample;
- :mod:`.prior_update`: the update of the LFs' priors (:class:`~.prior_update.PriorSelector`, a meta-estimator over
  the fusion label model); :mod:`.teach`: what it makes of the labels;
- :mod:`.rule`: the rule that keeps a default unless another is clearly ahead (its constants, and the measurement
  behind each), which chooses the student's weight (:mod:`.student_weight`);
- :mod:`.evaluation`: the same sample and estimate on the evaluated split, for a user with no qrels;
- :mod:`.pooling`: the evaluated split's pooled design (the union of the compared systems' and the first stage's
  top k), and :mod:`.topk`: its exact top-k measures against the first stage (no MAP);
- :mod:`.sequential`: the confidence sequence that lets a person stop judging once the answer is settled.

Its stage, ``select``, is :mod:`weakrank.stages.select`; its commands are :mod:`weakrank.commands.select` and
:mod:`weakrank.commands.judge`.

:data:`EVALUATION_DESIGNS` are how ``select --evaluation`` draws its sample (:mod:`.pooling`, the default, and
:mod:`.evaluation`): here, where the command's parser reads them without importing either.
"""

EVALUATION_DESIGNS = ("pooled", "today")
