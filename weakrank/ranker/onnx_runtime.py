"""A trained cross-encoder run by ONNX Runtime on the CPU, optionally int8 (the ``onnx`` backend of
:func:`weakrank.ranker.load_ranker`; needs ``pip install 'weakrank[onnx]'``).

The student is exported once (``torch.onnx.export``, dynamic batch and sequence length) into the model
directory's ``onnx/`` folder, and with ``int8`` quantised once by ONNX Runtime's dynamic quantisation (weights
int8, activations per batch). ``onnx/source.json`` records the digest of the student's weights each file was
exported from and of the file itself: a later load reuses a file only when both match (a stale, foreign or
truncated file is exported again). A directory that cannot be written exports once into the user's cache instead,
``<cache>/onnx/<digest of the weights>/`` (:func:`weakrank.paths.user_cache`: ``$WEAKRANK_CACHE``, else
``~/.cache/weakrank``), reused by the next load of the same weights and said in a warning.
Scores are the student's (``CrossEncoder.predict``'s) to float tolerance in fp32.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from weakrank.errors import WeakrankError
from weakrank.files import atomic_path, file_sha256
from weakrank.io import write_text
from weakrank.paths import user_cache
from weakrank.ranker.cross_encoder import CONFIG_FILE, HEAD_FILE, CrossEncoderRanker
from weakrank.ranker.ranking import RanksPassages

ONNX_DIR, SOURCE_FILE = "onnx", "source.json"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_file(model: CrossEncoderRanker, directory: str | Path, int8: bool) -> Path:
    """The student's ONNX file (exported and, with ``int8``, quantised on first use)."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        raise WeakrankError("backend 'onnx' needs ONNX Runtime: pip install 'weakrank[onnx]'") from None
    weights = weights_digest(Path(directory))
    folder = Path(directory) / ONNX_DIR
    try:
        folder.mkdir(exist_ok=True)
    except OSError:  # a read-only model directory: once per weights, in the user's cache
        folder = user_cache() / ONNX_DIR / weights[:16]
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise WeakrankError(f"{directory} cannot be written and neither can the cache {folder} ({err.strerror}) "
                                "for its ONNX export: set WEAKRANK_CACHE to a folder you can write") from None
        warnings.warn(f"{directory} cannot be written: its ONNX export is kept in {folder} (WEAKRANK_CACHE)",
                      stacklevel=2)
    record = _record(folder, weights)
    fp32 = folder / "model.onnx"
    if not _recorded(record, fp32):
        _export(model, fp32)
        record = _write_record(folder, weights, {fp32.name: _digest(fp32)})
    if not int8:
        return fp32
    quantised = folder / "model_int8.onnx"
    if not _recorded(record, quantised):
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with atomic_path(quantised) as tmp:
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8)
        _write_record(folder, weights, {**record, quantised.name: _digest(quantised)})
    return quantised


def weights_digest(directory: Path) -> str:
    """SHA-256 of the student's weight and config files in ``directory`` (what an export is made from)."""
    digest = hashlib.sha256()
    for name in ("model.safetensors", HEAD_FILE, CONFIG_FILE, "config.json"):
        path = directory / name
        digest.update(name.encode() + b"\0" + (_digest(path) or "-").encode() + b"\0")
    return digest.hexdigest()


def _recorded(record: dict[str, str], path: Path) -> bool:
    """Whether ``path`` exists and is the very file ``record`` lists (not truncated, replaced or foreign)."""
    return path.name in record and record[path.name] == _digest(path)


def _digest(path: Path) -> str | None:
    return file_sha256(path) if path.is_file() else None


def _record(folder: Path, weights: str) -> dict[str, str]:
    """The files of ``folder`` recorded as exported from the weights of digest ``weights`` (file → its digest)."""
    try:
        saved = json.loads((folder / SOURCE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict) or saved.get("weights") != weights or not isinstance(saved.get("files"), dict):
        return {}
    return {k: v for k, v in saved["files"].items() if isinstance(k, str) and isinstance(v, str)}


def _write_record(folder: Path, weights: str, files: dict[str, str]) -> dict[str, str]:
    write_text(json.dumps({"weights": weights, "files": files}, indent=1), folder / SOURCE_FILE)
    return files


def _export(model: CrossEncoderRanker, path: Path) -> None:
    """``model`` (on the CPU, eval mode) as an ONNX graph from token ids to one score per pair."""
    model = model.to("cpu").eval()
    example = model.tokenize(["a query"], ["a passage of a few words"])
    names = [name for name in INPUTS if name in example]
    axes = {name: {0: "batch", 1: "tokens"} for name in names}

    class Scores(torch.nn.Module):  # positional inputs, as the exporter passes them
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(names, inputs)))

    with atomic_path(path) as tmp, torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shape checks that are constant for an encoder
        torch.onnx.export(Scores(), tuple(example[n] for n in names), str(tmp), input_names=names,
                          output_names=["scores"], dynamic_axes={**axes, "scores": {0: "batch"}}, opset_version=17,
                          dynamo=False)


class OnnxCrossEncoder(RanksPassages):
    """``predict`` of a :class:`CrossEncoderRanker` student through an ONNX Runtime session (length-sorted batches)."""

    def __init__(self, model: CrossEncoderRanker, directory: str | Path, int8: bool = False, threads: int = 0) -> None:
        import onnxruntime as ort

        self.tokenizer, self.max_length = model.tokenizer, model.max_length
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()
        path = onnx_file(model, directory, int8)
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        """Scores of ``(query, passage)`` pairs, like ``sentence_transformers.CrossEncoder.predict``."""
        order = np.argsort([-(len(q) + len(p)) for q, p in pairs], kind="stable")  # similar lengths: less padding
        out = np.zeros(len(pairs), dtype=np.float32)
        for start in range(0, len(pairs), batch_size):
            idx = order[start : start + batch_size]
            enc = self.tokenizer([pairs[i][0] for i in idx], [pairs[i][1] for i in idx], padding=True,
                                 truncation="longest_first", max_length=self.max_length, return_tensors="np")
            feed = {name: enc[name].astype(np.int64) for name in self.inputs}
            out[idx] = self.session.run(None, feed)[0].reshape(-1)
        return out
