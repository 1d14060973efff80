"""The ``[train]`` options as users see them: every key, its type, default, group, flags and choices, and the
``weakrank train`` flags built from them, compared with a snapshot taken before the options were split by
concern (model, objective, loop). A key or a flag that disappears, or a default that moves, fails here."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from weakrank.commands.train import add_train_flags, flag_names, toml_value
from weakrank.keys import schema
from weakrank.training.config import TrainConfig, option_fields

SNAPSHOT = Path(__file__).parent / "data" / "train_options.json"


def current_options() -> dict:
    hints = schema(TrainConfig)
    keys = [[f.name, str(hints[f.name]), toml_value(f.default), f.metadata["group"], flag_names(f),
             list(f.metadata.get("choices") or ()), dict(f.metadata.get("deprecated", {})),
             list(f.metadata.get("metavar") or ())] for f in option_fields()]
    parser = argparse.ArgumentParser()
    add_train_flags(parser)
    flags = [[a.option_strings, a.dest, getattr(a.type, "__name__", str(a.type)), str(a.nargs),
              list(a.choices or ()), str(a.metavar), a.default, type(a).__name__, a.container.title]
             for a in parser._actions if a.dest != "help"]
    defaults = {name: list(value) if isinstance(value, tuple) else value
                for name, value in vars(TrainConfig()).items()}
    return {"keys": keys, "flags": flags, "defaults": defaults}


def dump(options: dict) -> str:
    lines = ["{"]
    for i, (part, rows) in enumerate(options.items()):
        items = rows.items() if isinstance(rows, dict) else rows
        body = [json.dumps(row, ensure_ascii=False) if not isinstance(rows, dict)
                else f"{json.dumps(row[0])}: {json.dumps(row[1], ensure_ascii=False)}" for row in items]
        opening, closing = ("{", "}") if isinstance(rows, dict) else ("[", "]")
        lines.append(f' "{part}": {opening}\n  ' + ",\n  ".join(body) + f"\n {closing}"
                     + ("," if i < len(options) - 1 else ""))
    return "\n".join(lines) + "\n}\n"


def test_the_train_keys_flags_and_defaults_are_those_of_the_snapshot():
    """Regenerate (only for a deliberate change of the options): ``python -c "from tests.test_train_options
    import *; SNAPSHOT.write_text(dump(current_options()))"``."""
    assert json.loads(dump(current_options())) == current_options()
    assert current_options() == json.loads(SNAPSHOT.read_text())
