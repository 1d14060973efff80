"""What a config names outside itself, checked before any stage runs and without loading any data: the dataset
loader, its options and the files it reads, and the labeling functions (built-ins, ``file.py:function`` and
``module:function``) with their options. A user's LF module is imported (the config names code its user chose);
a syntax error in it, a misspelt function or an error while importing it is one located line."""

from __future__ import annotations

import ast
import inspect
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from weakrank.errors import ConfigError, DataError, LFError, did_you_mean, located


def check_loader(loader: str, options: Mapping[str, Any], source: Path | None) -> None:
    """``loader`` names a loader and ``options`` are its keyword arguments."""
    from weakrank.loaders import LOADERS

    if loader not in LOADERS:
        raise ConfigError(f"{located(source, '[dataset]')} unknown loader {loader!r}{did_you_mean(loader, LOADERS)};"
                          f" choose one of {sorted(LOADERS)}")
    known = [p for p in inspect.signature(LOADERS[loader]).parameters if p != "path"]
    for key in options:
        if key not in known:
            raise ConfigError(f"{located(source, '[dataset] options')} unknown option {key!r} of loader "
                              f"{loader!r}{did_you_mean(key, known)}; known: {', '.join(known)}")


def check_dataset_files(loader: str, path: Path, options: Mapping[str, Any], source: Path | None) -> None:
    """``path`` and every file the loader reads from it exist (nothing is read)."""
    from weakrank.loaders import check_inputs

    try:
        check_inputs(loader, path, **options)
    except (ConfigError, DataError) as err:
        raise ConfigError(f"{located(source, '[dataset]')} {err}") from None


def check_lfs(lfs: list[str], lf_options: Mapping[str, dict[str, Any]], source: Path | None) -> None:
    """Every LF resolves (:func:`~weakrank.registry.resolve_lf`) with its options, and every ``[label.options]``
    table belongs to one of them."""
    from labeling_functions import BUILTIN
    from weakrank.registry import resolve_lf

    where = located(source, "[label]")
    for spec in lfs:
        target, colon, attr = spec.rpartition(":")
        if not colon and spec not in BUILTIN:
            raise ConfigError(f"{where} unknown LF {spec!r}{did_you_mean(spec, BUILTIN)}; built-ins are "
                              f"{sorted(BUILTIN)}, or give your own as 'module:function' or 'file.py:function'")
        if colon and not attr:
            raise ConfigError(f"{where} LF {spec!r} names no function after the colon")
        try:
            resolve_lf(spec, lf_options.get(spec))
        except ConfigError as err:
            raise ConfigError(f"{where} {_missing(target, attr) or err}") from None
        except SyntaxError as err:
            raise ConfigError(f"{where} LF {spec!r}: {err.filename}:{err.lineno}: syntax error: {err.msg}") from None
        except Exception as err:  # the user's module raised while it was imported
            if isinstance(err, LFError) and err.where:  # a bad declaration: it names the user's decorator line
                raise ConfigError(f"{where} LF {spec!r}: {err}") from None
            raise ConfigError(f"{where} LF {spec!r}: importing it raised {type(err).__name__}: {err} "
                              f"({_user_line(err)})") from None
    for name in lf_options:
        if name not in lfs:
            raise ConfigError(f"{located(source, '[label.options]')} options of {name!r}, which is not in lfs"
                              f"{did_you_mean(name, lfs)}")


def _user_line(err: BaseException) -> str:
    """``file:line`` of the deepest frame of ``err``'s traceback outside weakrank's own code (the user's line that
    called into weakrank), else its deepest."""
    frames = traceback.extract_tb(err.__traceback__)
    own = str(Path(__file__).resolve().parent)
    frame = next((f for f in reversed(frames) if not str(Path(f.filename).resolve()).startswith(own)), frames[-1])
    return f"{frame.filename}:{frame.lineno}"


def _missing(target: str, attr: str) -> str | None:
    """``"<target> has no 'attr' (did you mean ...)"`` when the LF file or imported module ``target`` defines no
    ``attr`` at its top level, else None."""
    if target.endswith(".py") and Path(target).is_file():
        nodes = list(ast.walk(ast.parse(Path(target).read_bytes())))
        names = {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        names |= {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    elif target in sys.modules:
        names = set(dir(sys.modules[target]))
    else:
        return None
    return None if attr in names else f"{target} defines no {attr!r}{did_you_mean(attr, names)}"
