"""Loaders that turn each source format into a canonical :class:`~weakrank.dataset.Dataset`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from weakrank.dataset import Dataset
from weakrank.errors import ConfigError, DataError, did_you_mean
from weakrank.loaders.beir import beir_inputs, load_beir
from weakrank.loaders.semeval import load_semeval, semeval_inputs
from weakrank.loaders.trec import load_trec, split_files, trec_inputs
from weakrank.loaders.trecqa import load_trecqa, trecqa_inputs
from weakrank.loaders.wikiqa import load_wikiqa, wikiqa_inputs

Inputs = list[tuple[str, Path]]  # (the config key that names a file, the file)

LOADERS: dict[str, Callable[..., Dataset]] = {
    "wikiqa": load_wikiqa,
    "trecqa": load_trecqa,
    "semeval": load_semeval,
    "beir": load_beir,
    "trec": load_trec,
}
INPUTS: dict[str, Callable[..., Inputs]] = {  # loader → the files it reads, from its arguments (defaults applied)
    "wikiqa": wikiqa_inputs,
    "trecqa": trecqa_inputs,
    "semeval": semeval_inputs,
    "beir": beir_inputs,
    "trec": trec_inputs,
}


def input_files(loader: str, path: str | Path, **options: Any) -> Inputs:
    """The files ``loader`` would read from ``path`` with ``options``, each with the config key that names it
    (``path`` for a file of the loader's layout under it); nothing is read."""
    arguments = inspect.signature(LOADERS[loader]).bind(Path(path), **options)
    arguments.apply_defaults()
    return INPUTS[loader](**arguments.arguments)


def check_inputs(loader: str, path: str | Path, **options: Any) -> None:
    """A :class:`ConfigError` when ``path`` is missing, else a :class:`DataError` naming the config key and the
    file for the first file of :func:`input_files` missing."""
    if not Path(path).exists():
        raise ConfigError(f"path: {path} does not exist (loader {loader!r})")
    for key, file in input_files(loader, path, **options):
        if not file.is_file():
            raise DataError(f"file {file} not found", field=key)


YOUR_RUN = "first stage (your run)"


def first_stage(loader: str, path: str | Path, split: str, **options: Any) -> str | None:
    """What ranked ``split``'s candidates, as an evaluation table names its row: :data:`YOUR_RUN` where a run file
    gave them, ``first stage (BM25 top k)`` where the loader built them with BM25; None where the dataset lists
    them in an order that ranks nothing (WikiQA's, TrecQA's, SemEval's listed candidates)."""
    if loader not in LOADERS:
        return None
    arguments = inspect.signature(LOADERS[loader]).bind(Path(path), **options)
    arguments.apply_defaults()
    given = arguments.arguments
    if loader == "trec":
        files = split_files(Path(path), given["splits"], given["queries"], given["run"], given["qrels"], given["split"])
        ran = files.get(split, {}).get("run")
    elif loader == "beir":
        ran = given["run"]
    elif loader == "wikiqa" and given["candidates"] == "bm25":
        ran = None
    else:
        return None
    return YOUR_RUN if ran else f"first stage (BM25 top {given['k']})"


def load_dataset(loader: str, path: str | Path, **options: Any) -> Dataset:
    """Load ``path`` with the named loader and validate the result."""
    if loader not in LOADERS:
        raise ConfigError(f"unknown dataset loader {loader!r}{did_you_mean(loader, LOADERS)}; "
                          f"choose one of {sorted(LOADERS)}")
    path = Path(path)
    check_inputs(loader, path, **options)
    return LOADERS[loader](path, **options).validate()


__all__ = ["INPUTS", "LOADERS", "YOUR_RUN", "check_inputs", "first_stage", "input_files", "load_dataset"]
