"""``weakrank train`` and ``weakrank rerank``; ``weakrank run`` trains and reranks through the same stages
(:mod:`weakrank.pipeline`) with the same flags."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import Field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args, get_origin

from weakrank.commands import AddCommand, defer, pipeline_config
from weakrank.errors import ConfigError, did_you_mean
from weakrank.keys import schema
from weakrank.names import BACKENDS, COMBINED_BACKENDS, PRECISIONS, split_backend

if TYPE_CHECKING:
    from weakrank.ranker.teacher_state import TeacherState
    from weakrank.training.start_check import StartCheck


def train_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The ``[train]`` keys given as flags."""
    from weakrank.training.config import TrainConfig

    return {f.name: getattr(args, f.name) for f in fields(TrainConfig) if getattr(args, f.name, None) is not None}


def train_flags(args: argparse.Namespace) -> str:
    """The ``[train]`` flags the user gave, as a printed command repeats them (``--max-steps 100 --no-fuse-lfs``)."""
    import shlex

    flags = []
    for name, value in train_overrides(args).items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            flags.append(flag if value else f"--no-{flag[2:]}")
        else:
            values = value if isinstance(value, (list, tuple)) else [value]
            flags.append(" ".join([flag, *(shlex.quote(str(v)) for v in values)]))
    return " ".join(flags)


def print_trained(model: Path) -> None:
    """Where :func:`weakrank.pipeline.train` put the model (once under torchrun), how its student was kept
    (:func:`student_lines`) and, where judged queries chose the student's weight, what its record, kept among the
    teacher state's notes, says (:meth:`~weakrank.records.StudentWeightRecord.lines`)."""
    if int(os.environ.get("RANK", "0")) != 0:
        return
    history = model.parent / "history.csv"
    measured = history.exists() and any(name.startswith("dev_") for name in history.open().readline().split(","))
    print(f"trained → {model} " + (f"(dev figures per evaluation: {history})" if measured else
                                    "(no dev split: the last step's model, with no dev figures)"))
    from weakrank.ranker.directory import saved_teacher
    from weakrank.ranker.teacher_state import FUSION_FILE
    from weakrank.records import StudentWeightRecord, noted

    state = saved_teacher(model)
    for line in student_lines(model, state):
        print(line)
    record = noted(state.notes, StudentWeightRecord, model / FUSION_FILE) if state else None
    for line in record.lines() if record else []:
        print(line)


def start_check(model: Path) -> StartCheck | None:
    """How the student of ``model`` was kept against its start (its record beside it), or None."""
    from weakrank.training.start_check import StartCheck

    return StartCheck.load(model.parent)


def student_lines(model: Path, state: TeacherState | None) -> list[str]:
    """What the check of the student of ``model`` (its teacher's ``state``) against its start says, with its weight
    in the shipped ranker, and :func:`warning_line`'s line where there is one."""
    check = start_check(model)
    if check is None:
        return []
    line = (f"student: {check.metric} {check.kept:.3f} on held-out lists, its start (the pretrained encoder) "
            f"{check.start:.3f}; saved as {check.share:g} of the fine-tuned weights (WiSE-FT)")
    line += f", weight {state.student_weight:g} in the shipped ranker" if state else ""
    return [line, *filter(None, [warning_line(check, state)])]


def student_warning(model: Path) -> str | None:
    """:func:`warning_line` of the student of ``model`` (what ``run`` says again last), or None."""
    from weakrank.ranker.directory import saved_teacher

    check = start_check(model)
    return warning_line(check, saved_teacher(model)) if check else None


def warning_line(check: StartCheck, state: TeacherState | None) -> str | None:
    """The line that says a student kept as ``check`` says (its teacher's ``state``) ended at its start, or made up
    too little of its start's disagreement with the teacher to earn its full share of the shipped ranker, and what
    more steps did on the shared collections (``benchmarks/student.csv``, 100 steps against each pipeline's
    default); else None."""
    from weakrank.fusion_state import STUDENT_WEIGHT

    if check.share == 0:
        return ("warning: training did not bring the student closer to its teacher than its start, so the start "
                "encoder is kept as the student" + (" and the shipped ranker is its teacher alone" if state else "")
                + " (never below it); where this happened on the shared collections at 100 steps, 200 (--max-steps) "
                "kept the start too")
    if state and state.student_weight < STUDENT_WEIGHT:
        return (f"note: the student surely made up {check.gain:.0%} of its start's disagreement with the teacher "
                f"on held-out lists, so it weighs {state.student_weight:g} (of {STUDENT_WEIGHT:g}) in the shipped "
                "ranker; more steps (--max-steps) may earn it more (WikiQA: 250 steps instead of 100 raised it from 0 "
                "to 0.1)")
    return None


def cmd_train(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    print_trained(pipeline.train(pipeline_config(args), resume=args.resume, progress=not args.quiet,
                                 **train_overrides(args)))


def student_runtime(args: argparse.Namespace) -> tuple[str, str]:
    """``--backend`` and ``--precision`` (or ``--int8``) as :func:`~weakrank.ranker.load_ranker` takes them; a
    ``--backend`` of before that named both (``onnx-int8``) is split, with a note that it is deprecated. A name
    neither knows is a :class:`ConfigError` naming the flag (weakrank's line, not the parser's)."""
    for flag, value, known in (("--backend", args.backend, (*BACKENDS, *COMBINED_BACKENDS)),
                               ("--precision", args.precision, PRECISIONS)):
        if value not in known:
            raise ConfigError(f"{flag} {value!r}: choose one of {list(known)}{did_you_mean(value, known)}")
    backend, precision = split_backend(args.backend, args.precision)
    if args.backend in COMBINED_BACKENDS:
        print(f"weakrank: --backend {args.backend} is deprecated: use --backend {backend} --precision {precision}",
              file=sys.stderr)
    return backend, precision


def cmd_rerank(args: argparse.Namespace) -> None:
    if args.run:  # queries never labelled: a TREC run, its queries and its collection
        from weakrank.ranker.rerank import rerank_trec

        missing = [flag for flag, value in (("--model-dir", args.model), ("--queries", args.queries),
                                            ("--collection", args.collection)) if not value]
        if missing:
            raise ConfigError(f"rerank --run also needs {', '.join(missing)}")
        out = Path(args.output or Path(args.run).with_suffix(".reranked.trec"))
        backend, precision = student_runtime(args)
        path = rerank_trec(args.model, args.run, args.queries, args.collection, out, backend=backend,
                           precision=precision, trust_code=args.trust_code, force=args.force)
        print(f"wrote {path}")
    elif args.config is None:
        raise ConfigError("rerank needs a pipeline config, or --run with --model-dir, --queries and --collection")
    else:
        from weakrank import pipeline

        backend, precision = student_runtime(args)
        path = pipeline.rerank(pipeline_config(args), model=args.model, split=args.split, name=args.name,
                               backend=backend, precision=precision, trust_code=args.trust_code)
        print(f"wrote {path}")


def or_auto(kind: type) -> Any:
    """The flag type of a value that is a ``kind`` (a whole number, a number) or ``auto``."""
    what = "a whole number" if kind is int else "a number"

    def parse(text: str) -> int | float | str:
        if text == "auto":
            return text
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} or 'auto', got {text!r}") from None

    parse.__name__ = f"{kind.__name__}_or_auto"  # as --help and the options snapshot name it
    return parse


def toml_value(value: Any) -> str:
    """``value`` as a TOML config writes it (``true``, ``"auto"``, ``[0.5, 0.5]``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return f'"{value}"' if isinstance(value, str) else repr(value)


def flag_names(f: Field) -> list[str]:
    """The flags of [train] key ``f``: its Hugging Face name first where it has one (``alias``), then ours."""
    alias = f.metadata.get("alias")
    flag = "--" + f.name.replace("_", "-")
    return ["--" + alias.replace("_", "-"), flag] if alias else [flag]


def options_table() -> str:
    """The Markdown table of every ``[train]`` key: its flag, its default (``TrainConfig()``), its group and its
    help; docs/guide.md holds it verbatim (tested)."""
    from weakrank.training.config import option_fields

    rows = ["| `[train]` key | flag | default | group | meaning |", "|---|---|---|---|---|"]
    for f in option_fields():
        rows.append(f"| `{f.name}` | `{flag_names(f)[0]}` | `{toml_value(f.default)}` | {f.metadata['group']} | "
                    f"{f.metadata['help'].replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def flag_options(f: Field, hint: Any) -> dict[str, Any]:
    """``add_argument`` options of [train] key ``f`` of type ``hint``: absent, the flag is None (the config's value
    holds, else the default its help shows)."""
    options = {"dest": f.name, "help": f"{f.metadata['help']} (default: {toml_value(f.default)})"}
    if hint is bool:
        return {**options, "action": argparse.BooleanOptionalAction}
    if hint in (int | str, float | str):
        return {**options, "type": or_auto(get_args(hint)[0])}
    if get_origin(hint) is tuple:
        return {**options, "type": get_args(hint)[0], "nargs": len(get_args(hint)), "metavar": f.metadata["metavar"]}
    choices = f.metadata.get("choices")
    return {**options, "type": hint, "choices": choices and (*choices, *f.metadata.get("deprecated", ()))}


def add_train_flags(p: argparse.ArgumentParser) -> None:
    """One flag per [train] key, overriding the config, in a section of ``--help`` per group of keys, and a section
    naming each installed trainer plug-in left out (the commands add them deferred,
    :func:`~weakrank.commands.defer`: the trainer plug-ins load with them)."""
    from weakrank.training.config import GROUPS, PLUGINS, TrainConfig, option_fields

    groups = {name: p.add_argument_group(f"[train] {name}", description) for name, description in GROUPS.items()}
    hints = schema(TrainConfig)
    for f in option_fields():
        groups[f.metadata["group"]].add_argument(*flag_names(f), **flag_options(f, hints[f.name]))
    if PLUGINS.broken:  # named where the options are listed; the commands that train refuse with the first
        p.add_argument_group("trainer plug-ins left out (training refuses to run until each is mended or "
                             "uninstalled)", "; ".join(PLUGINS.broken).replace("%", "%%"))
    p.set_defaults(plugins_named=True)  # loaded, the broken ones named here and refused: not named again up front


def register(add: AddCommand) -> None:
    """Add ``train`` (every [train] key is also a flag) and ``rerank``."""
    p = add("train", cmd_train, "fine-tune a ranker on the pseudo-labels (or gold with --supervised); every flag "
            "overrides the config's [train] key of the same name")
    p.add_argument("--resume", action="store_true", help="continue from <output>/checkpoint.pt")
    defer(p, add_train_flags)
    p = add("rerank", cmd_rerank, "score a split's candidates with a trained model and write a TREC run")
    p.add_argument("--model-dir", "--model", dest="model", help="trained model directory (default: <run_dir>/model/best or final)")
    p.add_argument("--split", help="split whose candidates are scored (default: [evaluate] split, else test)")
    p.add_argument("--name", help="run name (file runs/<name>.trec and TREC tag; default: the model's folder)")
    config = next(action for action in p._actions if action.dest == "config")
    config.nargs, config.default, config.help = "?", None, "pipeline config (none with --run)"
    p.add_argument("--run", help="rerank this TREC run of new queries instead of a split (no config, nothing labelled)")
    p.add_argument("--queries", help="with --run: the queries, query_id TAB text")
    p.add_argument("--collection", help="with --run: the passages, passage_id TAB text")
    p.add_argument("--output", help="with --run: the reranked TREC run (default: <run>.reranked.trec); never one "
                   "of the inputs, nor a file weakrank did not write unless --force")
    p.add_argument("--force", action="store_true", help="with --run: replace --output even if weakrank did not "
                   "write it")
    p.add_argument("--trust-code", action="store_true",
                   help="run the Python LF files a model directory carries in its lfs/ (without it, a teacher that "
                        "needs them is left out: the student ranks alone)")
    p.add_argument("--backend", metavar="{" + ",".join((*BACKENDS, *COMBINED_BACKENDS)) + "}", default=BACKENDS[0],
                   help="where the student runs: torch (default) or onnx (ONNX Runtime on the CPU, a cross-encoder; "
                        "pip install 'weakrank[onnx]'; exported once into the model's onnx/ folder); "
                        f"{' and '.join(COMBINED_BACKENDS)}: deprecated, give --precision")
    p.add_argument("--precision", metavar="{" + ",".join(PRECISIONS) + "}", default=PRECISIONS[0],
                   help="what the student and the shipped ranker's encoder LFs run at: fp32 (default) or int8 (linear "
                        "layers quantised, CPU; faster, MAP in benchmarks/rerank.csv)")
    p.add_argument("--int8", dest="precision", action="store_const", const="int8", help="--precision int8")
