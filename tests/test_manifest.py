"""A model directory says what it is in ``weakrank_model.json``: written where a student or its teacher is saved,
read as untrusted input, and guessed from the files (as before manifests) only for a directory saved without one."""

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from weakrank.errors import DataError, WeakrankError
from weakrank.names import BACKENDS, PRECISIONS
from weakrank.paths import RunPaths
from weakrank.ranker import BiEncoder, CrossEncoderRanker, FusedRanker, load_ranker
from weakrank.ranker.directory import mark_shipped, model_manifest
from weakrank.ranker.manifest import MANIFEST_FILE, MAX_BYTES, ModelManifest, read_manifest, write_manifest
from weakrank.ranker.teacher_state import FUSION_FILE


@pytest.fixture(scope="module")
def student(tmp_path_factory) -> Path:
    return CrossEncoderRanker.from_encoder("minilm", max_length=32).save(tmp_path_factory.mktemp("m") / "student")


def test_a_saved_student_says_what_it_is_and_runs_on(student, tmp_path):
    assert read_manifest(student) == ModelManifest("student", "cross-encoder", BACKENDS, PRECISIONS)
    assert not read_manifest(student).teacher
    bi = BiEncoder.from_encoder("minilm", max_length=32).save(tmp_path / "bi")
    assert read_manifest(bi) == ModelManifest("student", "bi-encoder", ("torch",), PRECISIONS)
    assert isinstance(load_ranker(bi, device="cpu"), BiEncoder)
    with pytest.raises(WeakrankError, match=r"a bi-encoder runs on backends \['torch'\] .*not backend 'onnx'"):
        load_ranker(bi, backend="onnx")


def test_a_shipped_directory_says_so_and_one_saved_before_manifests_is_guessed_the_same(trained, tmp_path):
    cfg, _ = trained
    best = RunPaths(cfg.run_dir).models() / "best"
    assert read_manifest(best) == ModelManifest("shipped", "cross-encoder", BACKENDS, PRECISIONS)
    old = Path(shutil.copytree(best, tmp_path / "old"))
    (old / MANIFEST_FILE).unlink()  # saved before manifests
    assert model_manifest(old) == read_manifest(best)
    assert isinstance(load_ranker(old, trust_code=True), FusedRanker)
    (old / FUSION_FILE).unlink()
    assert model_manifest(old) == replace(read_manifest(best), kind="student")
    assert isinstance(load_ranker(old), CrossEncoderRanker)
    ranker = load_ranker(best, trust_code=True)
    ranker.save(tmp_path / "again")  # a shipped ranker saved again says it is one
    assert read_manifest(tmp_path / "again") == read_manifest(best)


def test_a_folder_without_a_student_is_no_model_and_gets_no_manifest(tmp_path):
    with pytest.raises(FileNotFoundError, match="holds no weakrank ranker"):
        model_manifest(tmp_path)
    mark_shipped(tmp_path)
    assert not (tmp_path / MANIFEST_FILE).exists()


@pytest.mark.parametrize(("text", "where"), [
    ("{", "not JSON"),
    ("[]", "expected an object"),
    ('{"format": 1, "kind": "student", "architecture": "cross-encoder", "backends": ["torch"], '
     '"precisions": ["fp32"], "code": "import os"}', "unknown field 'code'"),
    ('{"kind": "student"}', "format: missing"),
    ('{"format": 2}', "format: 2: this weakrank reads format 1"),
    ('{"format": true}', "format: expected an integer, got bool True"),
    ('{"format": 1, "kind": "teacher"}', "kind: 'teacher' is not one of"),
    ('{"format": 1, "kind": "student", "architecture": 3}', "architecture: expected a string, got int 3"),
    ('{"format": 1, "kind": "student", "architecture": "bi-encoder", "backends": []}', "backends: expected distinct"),
    ('{"format": 1, "kind": "student", "architecture": "bi-encoder", "backends": ["gpu"]}', "backends: expected"),
    ('{"format": 1, "kind": "student", "architecture": "bi-encoder", "backends": ["torch"], "precisions": '
     '["int8", "int8"]}', "precisions: expected distinct"),
    (" " * (MAX_BYTES + 1), "larger than"),
])
def test_a_bad_manifest_is_an_error_naming_the_file_and_field(student, tmp_path, text, where):
    model = Path(shutil.copytree(student, tmp_path / "model"))
    (model / MANIFEST_FILE).write_text(text)
    with pytest.raises(DataError, match=f"{MANIFEST_FILE}: {where}"):
        load_ranker(model)


def test_a_manifest_that_is_not_a_file_is_refused(student, tmp_path):
    model = Path(shutil.copytree(student, tmp_path / "model"))
    (model / MANIFEST_FILE).unlink()
    os.mkfifo(model / MANIFEST_FILE)
    with pytest.raises(DataError, match=f"{MANIFEST_FILE}: is a named pipe; expected a file"):
        load_ranker(model)


def test_the_written_manifest_is_the_one_read(student, tmp_path):
    model = Path(shutil.copytree(student, tmp_path / "model"))
    manifest = ModelManifest("student", "cross-encoder", ("torch",), ("fp32",))
    write_manifest(model, manifest)
    assert read_manifest(model) == manifest and json.loads((model / MANIFEST_FILE).read_text())["format"] == 1
    with pytest.raises(WeakrankError, match="not backend 'torch' at 'int8'"):
        load_ranker(model, precision="int8")
