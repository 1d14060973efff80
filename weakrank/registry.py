"""Resolve LF names from configs: built-ins by name, user LFs as ``module:attr`` or ``file.py:attr``."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

from weakrank.errors import ConfigError
from weakrank.lf import RankingLF


def _import_attr(spec: str) -> Any:
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        path = Path(target)
        if not path.exists():
            raise ConfigError(f"LF file {path} not found (from {spec!r})")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as err:
            raise ConfigError(f"cannot import LF module {target!r}: {err}") from None
    if not hasattr(module, attr):
        raise ConfigError(f"{target} has no attribute {attr!r}")
    return getattr(module, attr)


def resolve_lf(spec: str, options: dict[str, Any] | None = None) -> RankingLF:
    """A :class:`RankingLF` from a built-in name or ``module:attr`` / ``path.py:attr``, with options."""
    from labeling_functions import BUILTIN

    options = dict(options or {})
    rule = {k: options.pop(k) for k in ("top_k", "bottom_fraction") if k in options}
    if spec in BUILTIN:
        lf = BUILTIN[spec](**options)
    elif ":" in spec:
        obj = _import_attr(spec)
        lf = obj if isinstance(obj, RankingLF) else obj(**options)
        if not isinstance(lf, RankingLF):
            raise ConfigError(f"{spec!r} is neither a @ranking_lf function nor a factory returning one")
    else:
        raise ConfigError(f"unknown LF {spec!r}; built-ins are {sorted(BUILTIN)}, or use 'module:function'")
    return lf.with_rule(**rule) if rule else lf
