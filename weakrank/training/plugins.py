"""Optional trainer plug-ins: what a package outside the product adds to training, found by name through the
entry points of :data:`GROUP` (declared in ``pyproject.toml``), so that training imports none of them.

A plug-in is a :class:`TrainerPlugin`: its options (a dataclass whose fields, with their ``metadata``, become
``[train]`` keys, ``weakrank train`` flags and rows of the guide's table, as an objective's do), the negative
samplers it drives (each a switch between the product's samplers) and what builds the callback that drives them.
AC-IR, the reproduction's sampling policy, is one (:mod:`weakrank.reproduction.acir.plugin`). Loads without torch:
the ``[train]`` options are built from it.

An installed plug-in cannot break the command line: one that fails to load (it raises on import, its module is
missing, its object is no :class:`TrainerPlugin`) or that redefines an option of the product's or of another
plug-in (:func:`refuse_clashes`) is left out and said in one line naming its package and entry point
(:func:`check_plugins`); the commands that train refuse to run until it is mended or uninstalled, their ``--help``
lists it once beside the options, and every other command (``--help`` and ``--version`` included) runs without
importing any plug-in (another package's code runs only where training needs it): it names, once on stderr, each
plug-in it can tell is broken without running its code (:func:`unrunnable`: its module missing or not Python, a module
it imports missing, its object not defined there or a literal). A plug-in whose options clash with the product's is
named by the commands that train alone: it breaks nothing else."""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection
from dataclasses import dataclass, fields, is_dataclass
from functools import cache
from importlib.machinery import PathFinder
from importlib.metadata import EntryPoint, entry_points
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from weakrank.errors import ConfigError

GROUP = "weakrank.trainer_plugins"
LITERALS = (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr)  # what is never a TrainerPlugin


@dataclass(frozen=True)
class TrainerPlugin:
    """Options, samplers and a callback that training takes from outside the product."""

    name: str
    options: type  # a dataclass: its fields are [train] keys
    samplers: tuple[str, ...] = ()  # [train] sampler names it drives
    callback: Callable[..., Any] | None = None  # (train config, model, sampler, the collection's texts) → callback


@dataclass(frozen=True)
class Installed:
    """The plug-ins that loaded, by name, with where each came from (``origins``: :func:`where`), and one line for
    each that did not (``broken``)."""

    plugins: tuple[TrainerPlugin, ...] = ()
    origins: tuple[str, ...] = ()
    broken: tuple[str, ...] = ()


def where(entry: EntryPoint) -> str:
    """Which plug-in ``entry`` is: its name, package and entry point, as a refusal names it."""
    package = entry.dist.name if entry.dist is not None else "unknown package"
    return f"trainer plug-in {entry.name!r} (package {package}, entry point {GROUP}: {entry.name} = {entry.value})"


def load(entry: EntryPoint) -> TrainerPlugin:
    """The plug-in of ``entry``; a :class:`ConfigError` naming it where it cannot load or is no plug-in."""
    try:
        plugin = entry.load()
    except (Exception, SystemExit) as err:  # another package's code: whatever it raises, it is left out
        raise ConfigError(f"{where(entry)} does not load: {type(err).__name__}: {err}; mend or uninstall the "
                          "package") from None
    if not isinstance(plugin, TrainerPlugin) or not is_dataclass(plugin.options):
        raise ConfigError(f"{where(entry)} is a {type(plugin).__name__}, not a TrainerPlugin whose options are a "
                          "dataclass; mend or uninstall the package")
    return plugin


def static_problem(entry: EntryPoint) -> str | None:
    """What keeps ``entry`` from loading that can be seen without running any of its package's code (its module not
    found, not Python, importing a module that is not installed, not defining the entry point's object, or binding
    it to a literal), or None: finding a module's file runs none of it."""
    top, *inner = entry.module.split(".")
    spec = find_spec(top)  # a top-level name: found, not imported
    for depth in range(len(inner)):
        locations = spec.submodule_search_locations if spec is not None else None
        spec = PathFinder.find_spec(".".join([top, *inner[:depth + 1]]), locations) if locations else None
    if spec is None:
        return f"its module {entry.module} is not installed"
    if not (spec.origin or "").endswith(".py"):  # compiled, built in or a namespace: only importing it tells
        return None
    try:
        tree = ast.parse(Path(spec.origin).read_bytes(), spec.origin)
    except (OSError, SyntaxError, ValueError) as err:
        return f"its module {entry.module} ({spec.origin}) is not Python that parses: {err}"
    imported = [alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module and not node.level]
    missing = next((name for name in imported if find_spec(name.split(".")[0]) is None), None)
    if missing is not None:
        return f"its module {entry.module} imports {missing}, which is not installed"
    name = (entry.attr or "").split(".")[0]
    values = {target.id: node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
              for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
              if isinstance(target, ast.Name)}
    bound = set(values) | {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    bound |= {(alias.asname or alias.name).split(".")[0] for node in tree.body
              if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    if any(isinstance(node, (ast.If, ast.Try)) for node in tree.body):  # what it binds depends on running it
        return None
    if name and name not in bound:
        return f"its module {entry.module} defines no {name}"
    if name == entry.attr and isinstance(values.get(name), LITERALS):
        value = values[name]
        kind = type(value.value).__name__ if isinstance(value, ast.Constant) else \
            "str" if isinstance(value, ast.JoinedStr) else type(value).__name__.lower()
        return f"its module {entry.module} binds {name} to a {kind}, not a TrainerPlugin"
    return None


def unrunnable() -> tuple[str, ...]:
    """One line for each installed plug-in that :func:`static_problem` shows broken, as the commands that train
    nothing say it (none of its code run)."""
    return tuple(f"{where(entry)} does not load: {problem}; training refuses to run until the package is mended or "
                 "uninstalled" for entry in sorted(entry_points(group=GROUP), key=lambda entry: entry.name)
                 if (problem := static_problem(entry)))


@cache
def installed() -> Installed:
    """The installed plug-ins (entry points of :data:`GROUP`), loaded, by name; the broken ones said apart."""
    found, broken = [], []
    for entry in sorted(entry_points(group=GROUP), key=lambda entry: entry.name):
        try:
            found.append((entry, load(entry)))
        except ConfigError as err:
            broken.append(str(err))
    return Installed(tuple(plugin for _, plugin in found), tuple(where(entry) for entry, _ in found), tuple(broken))


def refuse_clashes(core: Collection[str]) -> Installed:
    """:func:`installed`, less each plug-in with an option named as one of ``core`` (the product's ``[train]``
    keys) or of a plug-in before it: it would silently replace that option's default for every training."""
    found = installed()
    taken, kept, broken = set(core), [], list(found.broken)
    for plugin, origin in zip(found.plugins, found.origins):
        names = {f.name for f in fields(plugin.options)}
        clash = sorted(names & taken)
        if clash:
            broken.append(f"{origin} redefines the [train] option {clash[0]!r}: a plug-in adds options, it never "
                          "replaces one; rename it in the plug-in")
            continue
        taken |= names
        kept.append((plugin, origin))
    return Installed(tuple(p for p, _ in kept), tuple(o for _, o in kept), tuple(broken))


def check_plugins(broken: Collection[str]) -> None:
    """Training runs only with every installed plug-in usable: a :class:`ConfigError`, the first of ``broken``
    (and how many more), else nothing."""
    if broken:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise ConfigError(f"{next(iter(broken))}{more}")


def plugins() -> tuple[TrainerPlugin, ...]:
    """The installed plug-ins that load, by name."""
    return installed().plugins


def driven_samplers() -> tuple[str, ...]:
    """The sampler names the plug-ins drive."""
    return tuple(name for plugin in plugins() for name in plugin.samplers)


def sampler_callback(sampler: str) -> Callable[..., Any] | None:
    """What builds the callback that drives ``sampler``; None for a sampler that needs none."""
    return next((plugin.callback for plugin in plugins() if sampler in plugin.samplers), None)
