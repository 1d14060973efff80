"""Optional trainer plug-ins: what a package outside the product adds to training, found by name through the
entry points of :data:`GROUP` (declared in ``pyproject.toml``), so that training imports none of them.

A plug-in is a :class:`TrainerPlugin`: its options (a dataclass whose fields, with their ``metadata``, become
``[train]`` keys, ``weakrank train`` flags and rows of the guide's table, as an objective's do), the negative
samplers it drives (each a switch between the product's samplers) and what builds the callback that drives them.
AC-IR, the reproduction's sampling policy, is one (:mod:`weakrank.reproduction.acir.plugin`). Loads without torch:
the ``[train]`` options are built from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any

GROUP = "weakrank.trainer_plugins"


@dataclass(frozen=True)
class TrainerPlugin:
    """Options, samplers and a callback that training takes from outside the product."""

    name: str
    options: type  # a dataclass: its fields are [train] keys
    samplers: tuple[str, ...] = ()  # [train] sampler names it drives
    callback: Callable[..., Any] | None = None  # (train config, model, sampler, the collection's texts) → callback


@cache
def plugins() -> tuple[TrainerPlugin, ...]:
    """The installed plug-ins (entry points of :data:`GROUP`), by name."""
    return tuple(entry.load() for entry in sorted(entry_points(group=GROUP), key=lambda entry: entry.name))


def option_classes() -> tuple[type, ...]:
    """The plug-ins' option dataclasses, in :func:`plugins`' order."""
    return tuple(plugin.options for plugin in plugins())


def driven_samplers() -> tuple[str, ...]:
    """The sampler names the plug-ins drive."""
    return tuple(name for plugin in plugins() for name in plugin.samplers)


def sampler_callback(sampler: str) -> Callable[..., Any] | None:
    """What builds the callback that drives ``sampler``; None for a sampler that needs none."""
    return next((plugin.callback for plugin in plugins() if sampler in plugin.samplers), None)
