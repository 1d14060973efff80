"""A model directory is data, not code: loading it runs no Python file unless the caller trusts it (and then only
one inside its ``lfs/``), its teacher state is checked as untrusted input, it keeps no absolute path, and its ONNX
export is reused only when it was made from the very weights beside it."""

import json
import math
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from labeling_functions import BUILTIN
from weakrank.cli import main
from weakrank.errors import DataError
from weakrank.paths import RunPaths
from weakrank.ranker import FusedRanker, UntrustedCodeWarning, load_ranker
from weakrank.ranker.cross_encoder import CrossEncoderRanker
from weakrank.ranker.teacher_state import FUSION_FILE, read_teacher_state
from weakrank.records import StudentWeightRecord, noted
from weakrank.stages.train import run_teacher

PAIRS = [("what is the capital of france", "Paris is the capital of France."),
         ("what is the capital of france", "Berlin is in Germany.")]


def planted(marker: Path) -> str:
    """An LF file that, run, leaves ``marker`` behind."""
    return (f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
            "from weakrank.lf import ranking_lf\n\n@ranking_lf()\ndef query_words(query, passage):\n    return 1.0\n")


@pytest.fixture
def model(trained, tmp_path) -> Path:
    """A copy of the trained best model, whose teacher names a user's LF file (``lfs/user_lfs.py``)."""
    cfg, _ = trained
    return Path(shutil.copytree(RunPaths(cfg.run_dir).models() / "best", tmp_path / "model"))


def edit(directory: Path, change) -> None:
    saved = json.loads((directory / FUSION_FILE).read_text())
    change(saved)
    (directory / FUSION_FILE).write_text(json.dumps(saved))


def test_a_planted_lf_file_never_runs_without_the_opt_in(model, tmp_path):
    marker = tmp_path / "marker"
    (model / "lfs" / "user_lfs.py").write_text(planted(marker))
    with pytest.warns(UntrustedCodeWarning, match=r"lfs/user_lfs\.py.*trust_code=True"):
        ranker = load_ranker(model)
    assert isinstance(ranker, CrossEncoderRanker) and not marker.exists()  # the student alone
    assert isinstance(load_ranker(model, trust_code=True), FusedRanker) and marker.exists()


def test_the_rerank_command_and_pyterrier_run_nothing_without_the_opt_in(model, tmp_path, capsys):
    marker = tmp_path / "marker"
    (model / "lfs" / "user_lfs.py").write_text(planted(marker))
    (tmp_path / "q.tsv").write_text("n1\tcapital of spain\n")
    (tmp_path / "c.tsv").write_text("a\tMadrid is the capital of Spain.\nb\tSpain is in Europe.\n")
    (tmp_path / "r.run").write_text("n1 Q0 a 1 2 bm25\nn1 Q0 b 2 1 bm25\n")
    args = ["rerank", "--model-dir", str(model), "--run", str(tmp_path / "r.run"), "--queries", str(tmp_path / "q.tsv"),
            "--collection", str(tmp_path / "c.tsv"), "--output", str(tmp_path / "out.trec")]
    assert main(args) == 0
    assert not marker.exists() and "Pass trust_code=True (`--trust-code`)" in capsys.readouterr().err
    pyterrier = pytest.importorskip("weakrank.pyterrier")
    try:
        with pytest.warns(UntrustedCodeWarning):
            pyterrier.reranker(model)
    except ImportError:  # PyTerrier not installed
        pass
    assert not marker.exists()


@pytest.mark.parametrize("spec", ["{outside}:query_words", "lfs/../../outside.py:query_words",
                                  "outside.py:query_words", "os:system", "planted_module:query_words",
                                  "lfs/linked.py:query_words"])
def test_code_outside_lfs_is_refused_even_when_trusted(model, tmp_path, monkeypatch, spec):
    marker = tmp_path / "marker"
    outside = tmp_path / "outside.py"
    outside.write_text(planted(marker))
    (tmp_path / "planted_module.py").write_text(planted(marker))
    (model / "lfs" / "linked.py").symlink_to(outside)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    edit(model, lambda saved: saved["lfs"][-1].update(spec=spec.format(outside=outside)))
    for trust in (False, True):
        with pytest.raises(DataError, match=rf"{FUSION_FILE}: lfs\[3\]\.spec: "):
            load_ranker(model, trust_code=trust)
    assert not marker.exists()


@pytest.mark.parametrize("state", ["/etc/passwd", "../model/lfs/bm25.npz", "lfs/none.npz"])
def test_an_lf_state_file_must_lie_inside_the_directory(model, state):
    edit(model, lambda saved: saved["lfs"][0].update(state=state))
    with pytest.raises(DataError, match=r"lfs\[0\]\.state: "):
        load_ranker(model, trust_code=True)


@pytest.mark.parametrize("change, field", [
    (lambda t: t["teacher"].update(weights=[math.nan] * len(t["teacher"]["weights"])), r"teacher\.weights\[0\]"),
    (lambda t: t["teacher"].update(scales=[math.inf] * len(t["teacher"]["scales"])), r"teacher\.scales\[0\]"),
    (lambda t: t["teacher"].update(clusters=[[0], [7]] + t["teacher"]["clusters"][2:]), r"teacher\.clusters\[1\]"),
    (lambda t: t["teacher"].update(weights=t["teacher"]["weights"][:-1]), r"teacher\.weights"),
    (lambda t: t["teacher"]["options"].update(temperature=0), r"teacher\.options\.temperature"),
    (lambda t: t.update(lfs=[]), r"lfs"),
    (lambda t: t["lfs"][0].update(options="x"), r"lfs\[0\]\.options"),
    (lambda t: t["lfs"][1].update(name=t["lfs"][0]["name"]), r"lfs: LF 'bm25' is named twice"),
    (lambda t: t.update(deep=[[[[[[[[[[[[1]]]]]]]]]]]]), r"nested deeper"),
    (lambda t: t.update(student_weight=1.5), r"student_weight: 1.5 is not a number in \[0, 1\]"),
    (lambda t: t.update(student_weight="0.5"), r"student_weight: "),
])
def test_a_bad_teacher_state_is_a_located_error(model, change, field):
    edit(model, change)
    with pytest.raises(DataError, match=rf"{FUSION_FILE}: {field}"):
        load_ranker(model, trust_code=True)


def test_a_teacher_states_notes_are_kept_as_written_and_checked_where_they_are_read(model):
    edit(model, lambda t: t.update(mix="x"))  # the record of how the student's weight was chosen, changed by hand
    assert load_ranker(model, trust_code=True).notes == {"mix": "x"}  # scoring reads no note
    with pytest.raises(DataError, match=rf"{FUSION_FILE}: mix: expected an object, got str 'x'"):
        noted(read_teacher_state(model, set(BUILTIN)).notes, StudentWeightRecord, model / FUSION_FILE)


def test_unreadable_huge_or_deeply_nested_teacher_files_are_located_errors(model, tmp_path):
    path = model / FUSION_FILE
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataError, match="not JSON|nested deeper"):
        load_ranker(model)
    path.write_text(" " * (5 * 2**20))
    with pytest.raises(DataError, match="too large"):
        load_ranker(model)
    path.write_text('{"lfs": [')
    result = subprocess.run([sys.executable, "-m", "weakrank.cli", "rerank", "--model-dir", str(model), "--run", "x",
                             "--queries", "x", "--collection", "x", "--quiet"], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode != 0 and "Traceback" not in result.stderr


def test_pickled_weights_are_refused_with_a_located_error(model):
    (model / "model.safetensors").rename(model / "pytorch_model.bin")
    with pytest.raises(DataError, match=r"pytorch_model\.bin: weights stored as a pickle"):
        load_ranker(model, student_only=True)
    (model / "pytorch_model.bin").rename(model / "model.safetensors")
    modules = json.loads((model / "modules.json").read_text())
    modules[0]["type"] = "os.system"
    (model / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(DataError, match=r"modules\.json: names a module class outside"):
        load_ranker(model)


def test_an_embedding_lf_over_a_local_model_travels_inside_the_directory(trained, model, tmp_path):
    from weakrank.encoders import resolve_model

    cfg, _ = trained
    encoder = Path(shutil.copytree(resolve_model("minilm"), tmp_path / "my-encoder"))
    options = {**cfg.label.lf_options, "embedding_cosine": {"model": str(encoder)}}
    local = replace(cfg, label=replace(cfg.label, lf_options=options))
    (model / FUSION_FILE).unlink()
    run_teacher(local).save(model)
    saved = (model / FUSION_FILE).read_text()
    assert str(tmp_path) not in saved and "/" + "root" not in saved and '"lfs/embedding_cosine.model"' in saved
    before = load_ranker(model, trust_code=True).predict(PAIRS)
    moved = shutil.move(model, tmp_path / "elsewhere")
    shutil.rmtree(encoder)  # another machine: the encoder's old folder is gone
    assert np.allclose(load_ranker(moved, trust_code=True).predict(PAIRS), before, atol=1e-6)
    assert str(tmp_path) not in (Path(moved) / "README.md").read_text()


def test_the_model_card_keeps_no_absolute_path_and_says_what_the_scores_are(trained):
    cfg, root = trained
    card = (RunPaths(cfg.run_dir).models() / "best" / "README.md").read_text()
    assert str(root) not in card and "Scores are logits" not in card
    assert "compare the candidates of one query" in card and "trust_code=True" in card


def test_a_stale_foreign_or_truncated_onnx_export_is_made_again(model, trained, tmp_path):
    pytest.importorskip("onnxruntime")
    from weakrank.ranker.onnx_runtime import onnx_file

    student = load_ranker(model, student_only=True)
    path = onnx_file(student, model, int8=False)
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])  # truncated
    assert onnx_file(student, model, int8=False).read_bytes() == good
    path.write_bytes(b"foreign")  # a file from elsewhere, with its record left as it was
    assert onnx_file(student, model, int8=False).read_bytes() == good
    other = Path(shutil.copytree(model, tmp_path / "other"))  # the record of other weights
    weights = other / "head.safetensors"
    from safetensors.torch import load_file, save_file

    head = load_file(weights)
    save_file({k: v + 1 for k, v in head.items()}, weights)
    stale = other / "onnx" / "model.onnx"
    before = stale.read_bytes()
    retrained = load_ranker(other, student_only=True)
    assert onnx_file(retrained, other, int8=False).read_bytes() != before  # exported again from the new weights
