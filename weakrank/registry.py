"""Resolve LF names from configs: built-ins by name, user LFs as ``module:attr`` or ``file.py:attr``.

A config runs no code of its own choosing: a name resolves only to a :class:`RankingLF` object or to a
factory marked with :func:`~weakrank.lf.lf_factory`, and that is checked before anything is called.
Importing the named module (or executing the named ``.py`` file) is the one thing a name does besides.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from weakrank.errors import ConfigError, LFError
from weakrank.lf import is_lf_factory
from weakrank.lf_scorer import RankingLF

RULE_KEYS = ("top_k", "bottom_fraction")
DECLARATION_KEYS = ("family", "prior")  # what the LF is (weakrank.lf.ranking_lf), overridable per config


def _import_attr(spec: str) -> Any:
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        path = Path(target)
        if not path.exists():
            raise ConfigError(f"LF file {path} not found (from {spec!r})")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(module_spec)
        _real_weakrank()
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as err:
            raise ConfigError(f"cannot import LF module {target!r}: {err}") from None
    if not hasattr(module, attr):
        raise ConfigError(f"{target} has no attribute {attr!r}")
    return getattr(module, attr)


def _real_weakrank() -> None:
    """Make ``import weakrank`` in a user's LF file give this package: a folder named ``weakrank`` in the current
    folder (a clone's, say) can make Python take ``weakrank`` for a namespace package of that folder, which has
    none of the package's names (``from weakrank import ranking_lf`` would fail)."""
    module = sys.modules.get("weakrank")
    if module is None or getattr(module, "__file__", None) is not None:
        return
    init = Path(__file__).resolve().parent / "__init__.py"
    spec = importlib.util.spec_from_file_location("weakrank", init, submodule_search_locations=[str(init.parent)])
    real = importlib.util.module_from_spec(spec)
    sys.modules["weakrank"] = real
    spec.loader.exec_module(real)


def _rule(spec: str, options: dict[str, Any]) -> dict[str, Any]:
    rule = {k: options.pop(k) for k in RULE_KEYS if k in options}
    top_k = rule.get("top_k", 0)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise ConfigError(f"LF {spec!r}: option top_k must be an integer >= 0, got {top_k!r}")
    fraction = rule.get("bottom_fraction", 0.0)
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 <= fraction <= 1:
        raise ConfigError(f"LF {spec!r}: option bottom_fraction must be a number in [0, 1], got {fraction!r}")
    return rule


def _call_factory(spec: str, factory: Callable[..., Any], options: dict[str, Any]) -> Any:
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as err:
        raise ConfigError(f"LF {spec!r}: bad options {sorted(options)}: {err}") from None
    try:
        return factory(**options)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"LF {spec!r}: {err}") from None


def resolve_lf(spec: str, options: dict[str, Any] | None = None) -> RankingLF:
    """A :class:`RankingLF` from a built-in name or ``module:attr`` / ``path.py:attr``, with options.

    ``attr`` must be a ``@ranking_lf`` object (options: only ``top_k`` / ``bottom_fraction``) or an
    ``@lf_factory`` function (called with the options); anything else is refused without being called.
    """
    from labeling_functions import BUILTIN

    if options is not None and not isinstance(options, dict):
        raise ConfigError(f"[label.options] for LF {spec!r} must be a table, got {options!r}")
    options = dict(options or {})
    rule = _rule(spec, options)
    declaration = {k: options.pop(k) for k in DECLARATION_KEYS if k in options}
    if spec in BUILTIN:
        lf = _call_factory(spec, BUILTIN[spec], options)
    elif ":" in spec:
        obj = _import_attr(spec)
        if isinstance(obj, RankingLF):
            if options:
                raise ConfigError(
                    f"LF {spec!r} is a @ranking_lf object: it takes only {list(RULE_KEYS + DECLARATION_KEYS)}, got {sorted(options)} "
                    "(mark a factory with @lf_factory to pass options)"
                )
            lf = obj
        elif is_lf_factory(obj):
            lf = _call_factory(spec, obj, options)
        else:
            raise ConfigError(
                f"{spec!r} is neither a @ranking_lf function nor an @lf_factory; a config calls nothing else"
            )
        if not isinstance(lf, RankingLF):
            raise ConfigError(f"LF factory {spec!r} returned {type(lf).__name__}, not a RankingLF")
    else:
        raise ConfigError(f"unknown LF {spec!r}; built-ins are {sorted(BUILTIN)}, or use 'module:function'")
    lf = lf.with_rule(**rule) if rule else lf
    try:
        return lf.declared(**declaration) if declaration else lf
    except LFError as err:
        raise ConfigError(f"[label.options.{spec}] {err}") from None


def resolve_lfs(specs: Sequence[str], options: Mapping[str, dict[str, Any]]) -> list[RankingLF]:
    """The LFs ``specs`` (``[label] lfs``), each built with its ``[label.options]`` (:func:`resolve_lf`)."""
    return [resolve_lf(spec, options.get(spec)) for spec in specs]


def lf_priors(specs: Sequence[str], options: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each configured LF's declared ``family`` and ``prior`` (:func:`weakrank.lf.ranking_lf`; the config's
    ``[label.options.<lf>]`` may override them), by LF name: what the fusion label model weighs, read by building
    the LFs (the stages read it from the votes instead: :meth:`weakrank.config.PipelineConfig.lf_priors`)."""
    return {lf.name: {"family": lf.family, "prior": lf.prior} for lf in resolve_lfs(specs, options)}
