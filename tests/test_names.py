"""The names a user can choose live in one light module (:mod:`weakrank.names`) that the command line and the config
checks read; each heavy registry holds the same names in the same order."""

import subprocess
import sys

import pytest

from weakrank import names
from weakrank.errors import WeakrankError


def test_every_heavy_registry_holds_the_light_names():
    from labeling_functions import BUILTIN
    from weakrank.engines import ENGINE_OPTIONS
    from weakrank.label_models import MODELS
    from weakrank.lf import factory_precisions
    from weakrank.ranker.student import BACKENDS, STUDENTS
    from weakrank.similarity import PRECISIONS
    from weakrank.training.objectives import losses

    assert tuple(BACKENDS) == names.BACKENDS
    assert PRECISIONS == names.PRECISIONS
    assert tuple(STUDENTS) == names.ARCHITECTURES
    assert tuple(MODELS) == names.LABEL_MODELS
    assert tuple(ENGINE_OPTIONS) == names.ENGINES
    assert losses() == names.LOSSES
    # an LF declares the precisions it runs at: the encoder LFs both, the others fp32 alone
    assert {name: factory_precisions(factory) for name, factory in BUILTIN.items()} == {
        "bm25": ("fp32",), "tfidf": ("fp32",), "embedding_cosine": names.PRECISIONS,
        "bert_cosine": names.PRECISIONS, "word_overlap": ("fp32",), "answer_type": ("fp32",)}


def test_the_names_load_nothing_heavy():
    code = "import sys, weakrank.names; print(sorted({'torch', 'sklearn', 'pandas'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_a_backend_and_its_precision_are_two_names_and_the_old_spellings_split():
    assert names.split_backend("onnx") == ("onnx", "fp32")
    assert names.split_backend("torch", "int8") == ("torch", "int8")
    assert names.split_backend("int8") == ("torch", "int8")
    assert names.split_backend("onnx-int8", "fp32") == ("onnx", "int8")
    with pytest.raises(WeakrankError, match=r"backend 'gpu': choose one of \['torch', 'onnx'\]"):
        names.split_backend("gpu")
    with pytest.raises(WeakrankError, match="precision 'fp16'"):
        names.split_backend("torch", "fp16")


def flags(command: str) -> dict:
    from weakrank.commands import build_parser

    parser = build_parser()._subparsers._group_actions[0].choices[command]
    return {option: action for action in parser._actions for option in action.option_strings}


def test_the_command_line_reads_the_names():
    rerank = flags("rerank")
    assert rerank["--backend"].metavar == "{" + ",".join((*names.BACKENDS, *names.COMBINED_BACKENDS)) + "}"
    assert rerank["--precision"].metavar == "{" + ",".join(names.PRECISIONS) + "}"
    assert all(name in flags("aggregate")["--label-model"].help for name in names.LABEL_MODELS)
    assert all(name in flags("label")["--engine"].help for name in names.ENGINES)


@pytest.mark.parametrize(("given", "runtime", "note"), [
    ([], ("torch", "fp32"), False),
    (["--int8"], ("torch", "int8"), False),
    (["--backend", "onnx", "--int8"], ("onnx", "int8"), False),
    (["--backend", "onnx", "--precision", "int8"], ("onnx", "int8"), False),
    (["--backend", "onnx-int8"], ("onnx", "int8"), True),
    (["--backend", "int8"], ("torch", "int8"), True),
])
def test_rerank_flags_give_a_backend_and_a_precision(given, runtime, note, capsys):
    from weakrank.commands import build_parser
    from weakrank.commands.train import student_runtime

    args = build_parser().parse_args(["rerank", "--run", "r", *given])
    assert student_runtime(args) == runtime
    assert ("is deprecated: use --backend" in capsys.readouterr().err) == note
