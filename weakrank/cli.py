"""``weakrank`` command line: the parser of the sub-commands of every module in :mod:`weakrank.commands`
(:func:`~weakrank.commands.build_parser`), run with the errors a user can act on printed, not raised."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from weakrank.commands import build_parser
from weakrank.errors import WeakrankError
from weakrank.progress import configure
from weakrank.training.plugins import unrunnable


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
    if not getattr(args, "plugins_named", False):  # a command that trains loads them and names each broken one
        for line in unrunnable():
            print(f"weakrank: {line}", file=sys.stderr)
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
