"""Loaders that turn each source format into a canonical :class:`~weakrank.dataset.Dataset`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from weakrank.dataset import Dataset
from weakrank.errors import ConfigError, did_you_mean
from weakrank.loaders.beir import load_beir
from weakrank.loaders.semeval import load_semeval
from weakrank.loaders.trec import load_trec
from weakrank.loaders.trecqa import load_trecqa
from weakrank.loaders.wikiqa import load_wikiqa

LOADERS: dict[str, Callable[..., Dataset]] = {
    "wikiqa": load_wikiqa,
    "trecqa": load_trecqa,
    "semeval": load_semeval,
    "beir": load_beir,
    "trec": load_trec,
}


def load_dataset(loader: str, path: str | Path, **options: Any) -> Dataset:
    """Load ``path`` with the named loader and validate the result."""
    if loader not in LOADERS:
        raise ConfigError(f"unknown dataset loader {loader!r}{did_you_mean(loader, LOADERS)}; "
                          f"choose one of {sorted(LOADERS)}")
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"dataset path {path} does not exist (loader {loader!r})")
    return LOADERS[loader](path, **options).validate()


__all__ = ["LOADERS", "load_dataset"]
