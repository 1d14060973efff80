"""Sub-commands of the ``weakrank`` CLI and its parser (:func:`build_parser`): each module here has ``register(add)``.

``add(name, func, help)`` creates a sub-command that takes a pipeline config, ``--run-dir``, ``--max-queries``
and ``--quiet`` (``add(..., config=False)``: none of them); the module adds its own options to the returned
parser. New modules are found automatically, so a feature's CLI lives beside nothing else's. Building the
parser imports no module that loads pandas or torch (``weakrank --help`` answers at once): a command imports
what it runs when it runs. Flags built from what must not load for every command (the ``[train]`` options, which
the trainer plug-ins extend) are :func:`defer`-red: added only to the parser of the command that is run.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from importlib.metadata import version
from typing import Any, Protocol

from weakrank.config import PipelineConfig, check_max_queries, load_config
from weakrank.names import ENGINES


class AddCommand(Protocol):
    """``add(name, func, help)``; ``config=False``: a sub-command that reads no pipeline config (it has neither
    the config argument nor ``--run-dir``, ``--max-queries``, ``--quiet``; it declares its own arguments)."""

    def __call__(self, name: str, func: Callable[[argparse.Namespace], None], help_: str,
                 config: bool = True) -> argparse.ArgumentParser: ...


DEFERRED = "weakrank_deferred"  # the parser attribute that holds the flags added only when its command runs


def defer(parser: argparse.ArgumentParser, add_flags: Callable[[argparse.ArgumentParser], None]) -> None:
    """Have ``add_flags(parser)`` add its flags once ``parser``'s command is known to be the one run
    (:func:`build_parser`)."""
    setattr(parser, DEFERRED, [*getattr(parser, DEFERRED, []), add_flags])


def pipeline_config(args: argparse.Namespace) -> PipelineConfig:
    """The config named on the command line, with ``--run-dir`` / ``--max-queries`` applied (what the stages
    read of it is checked by each stage of :mod:`weakrank.pipeline`, and by ``pipeline.run`` before the first)."""
    max_queries = getattr(args, "max_queries", None)
    if max_queries is not None:
        check_max_queries(max_queries, "--max-queries")
    return load_config(args.config, run_dir=args.run_dir or None, max_queries=max_queries)


def repeated_flags(args: argparse.Namespace) -> str:
    """The flags every config command takes that the user gave (``--run-dir``, ``--max-queries``), as a printed
    command repeats them (a path as :func:`~weakrank.paths.shell_path` shows it)."""
    from weakrank.paths import shell_path

    flags = [f"--run-dir {shell_path(args.run_dir)}"] if getattr(args, "run_dir", None) else []
    if getattr(args, "max_queries", None) is not None:
        flags.append(f"--max-queries {args.max_queries}")
    return " ".join(flags)


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--engine``, ``--address`` (Dask scheduler) and ``--master`` (Spark master URL) options."""
    parser.add_argument("--engine", help=f"where the LFs run: {', '.join(ENGINES)} (default: [label] engine, else "
                        f"{ENGINES[0]})")
    parser.add_argument("--address", help="Dask scheduler address, e.g. tcp://host:8786 (default: a LocalCluster)")
    parser.add_argument("--master", help="Spark master URL, e.g. spark://host:7077 (default: local[*])")


def engine_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The engine options given on the command line (none when absent)."""
    given = {"address": getattr(args, "address", None), "master": getattr(args, "master", None)}
    return {k: v for k, v in given.items() if v is not None}


def whole_number(text: str) -> int:
    """A flag value that is a whole number >= 0 (argparse then names the flag and the value)."""
    if not text.isascii() or not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(text)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``weakrank`` command; with ``command``, only that sub-command's deferred flags
    are added (:func:`defer`: what they need is imported only for it), else every one's."""
    parser = argparse.ArgumentParser(prog="weakrank", description="Train rankers without labels: weak supervision.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('weakrank')}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, func: Callable[[argparse.Namespace], None], help_: str, config: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        if config:
            p.add_argument("config", help="pipeline config (pipelines/*.toml)")
            p.add_argument("--run-dir", help="override the config's run_dir")
            p.add_argument("--max-queries", type=int, metavar="N",
                           help="keep the first N queries of each split at ingest (overrides [dataset] max_queries)")
            p.add_argument("--quiet", action="store_true",
                           help="no progress bars (transformers' and huggingface_hub's included); each stage's "
                           "start and end and training's steps are still said, in lines")
        p.set_defaults(func=func)
        return p

    for _, module in sorted(command_modules(), key=lambda found: (found[0] != "stages", found[0])):
        importlib.import_module(module).register(add)
    for name, p in sub.choices.items():
        if command is None or name == command:
            for add_flags in getattr(p, DEFERRED, ()):
                add_flags(p)
    return parser


def command_modules() -> list[tuple[str, str]]:
    """``(name, module)`` of every module of this package, each of which registers sub-commands (found by file,
    importing none)."""
    return [(info.name, f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)]
