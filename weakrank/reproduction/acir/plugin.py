"""AC-IR as a trainer plug-in (:class:`~weakrank.training.plugins.TrainerPlugin`), named in ``pyproject.toml``'s
entry points ``weakrank.trainer_plugins``: its ``[train]`` options and the callback its samplers (``policy``, the
uniform ``random_policy``) need. Loads without torch; the callback's module is imported when a trainer needs it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from weakrank.reproduction.acir.options import PolicyOptions
from weakrank.training.plugins import TrainerPlugin

if TYPE_CHECKING:
    from weakrank.reproduction.acir.callback import PolicyCallback
    from weakrank.training.config import TrainConfig
    from weakrank.training.rankers import Ranker
    from weakrank.training.samplers import SwitchSampler


def policy_callback(tc: TrainConfig, model: Ranker, sampler: SwitchSampler, texts: list[str]) -> PolicyCallback:
    """:func:`weakrank.reproduction.acir.callback.policy_callback`, imported on first use (it needs torch)."""
    from weakrank.reproduction.acir.callback import policy_callback as build

    return build(tc, model, sampler, texts)


PLUGIN = TrainerPlugin("acir", PolicyOptions, samplers=("policy", "random_policy"), callback=policy_callback)
