"""``weakrank`` command line: the sub-commands of every module in :mod:`weakrank.commands`, and of the ``commands``
module of any package of ``weakrank`` (a mode's commands live beside the mode, at the commands layer)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path

import weakrank.commands
from weakrank.commands import DEFERRED
from weakrank.errors import WeakrankError
from weakrank.progress import configure


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``weakrank`` command; with ``command``, only that sub-command's deferred flags
    are added (:func:`weakrank.commands.defer`: what they need is imported only for it), else every one's."""
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
    """``(name, module)`` of every module that registers sub-commands: those in :mod:`weakrank.commands`, named by
    their own name, and each package's ``commands.py``, named by its package (found by file, importing none)."""
    found = [(info.name, f"weakrank.commands.{info.name}") for info in pkgutil.iter_modules(weakrank.commands.__path__)]
    return found + [(info.name, f"weakrank.{info.name}.commands") for info in pkgutil.iter_modules(weakrank.__path__)
                    if info.ispkg and (Path(weakrank.__path__[0]) / info.name / "commands.py").is_file()]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``weakrank`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(next((arg for arg in argv if not arg.startswith("-")), ""))
    args, rest = parser.parse_known_args(argv)
    spill = getattr(args, "more_positionals", None)  # a sub-command's list of positionals, given after its flags
    if rest and spill and not any(arg.startswith("-") for arg in rest):
        setattr(args, spill, [*getattr(args, spill), *rest])
    elif rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        with configure(quiet=getattr(args, "quiet", False)):
            args.func(args)
    except WeakrankError as err:
        print(f"weakrank: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # unreadable or unwritable files, a full disk: the file and the reason
        where = f"{err.filename}: " if err.filename else ""
        print(f"weakrank: error: {where}{err.strerror or err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("weakrank: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
