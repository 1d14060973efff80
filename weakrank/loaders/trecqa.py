"""TrecQA (``TRAIN.xml``/``DEV.xml``/``TEST.xml``): tokenised questions with positive/negative sentences.

The files are line-oriented pseudo-XML: after ``<question>``, ``<positive>`` or ``<negative>`` the next
line holds the tab-separated tokens (the following lines are POS tags, parses and NER, ignored).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.errors import DataError
from weakrank.loaders.tables import FILE, LINE, dataset_from_pairs, layout_files, read_text

FILES = {"train": "TRAIN.xml", "dev": "DEV.xml", "test": "TEST.xml"}


def _parse(file: Path, split: str) -> list[dict]:
    rows: list[dict] = []
    lines = read_text(file).splitlines()
    qid = query = None
    for i, line in enumerate(lines):
        tag = line.strip()
        if tag.startswith("<QApairs"):
            try:
                qid = tag.split("id=")[1].strip("'\">")
            except IndexError:
                raise DataError("<QApairs> without id", file=file, line=i + 1, field="id") from None
            query, n = None, 0
        elif tag in ("<question>", "<positive>", "<negative>"):
            if qid is None or i + 1 >= len(lines):
                raise DataError(f"{tag} outside a <QApairs> block", file=file, line=i + 1, field=tag)
            text = " ".join(lines[i + 1].split("\t")).strip()
            if tag == "<question>":
                query = text
            elif query is None:
                raise DataError(f"{tag} before the <question>", file=file, line=i + 1, field=tag)
            else:
                rows.append(
                    {
                        "query_id": qid,
                        "query": query,
                        "passage_id": f"{qid}-{n}",
                        "passage": text,
                        "split": split,
                        "gold": int(tag == "<positive>"),
                        FILE: str(file),
                        LINE: i + 2,
                    }
                )
                n += 1
    return rows


def trecqa_inputs(path: Path, splits: tuple[str, ...], **_: Any) -> list[tuple[str, Path]]:
    """The file of each split under ``path``."""
    return layout_files(path, FILES, splits)


def load_trecqa(path: Path, splits: tuple[str, ...] = ("train", "dev", "test")) -> Dataset:
    """Load TrecQA; passage ids are ``<question id>-<position>``."""
    rows = [r for (_, file), split in zip(trecqa_inputs(path, splits), splits) for r in _parse(file, split)]
    sources = {t: str(path / "*.xml") for t in ("queries", "passages", "candidates", "qrels")}
    fields = {"query_id": "id", "query": "<question>", "passage": "<positive>/<negative>"}
    return dataset_from_pairs("trecqa", pd.DataFrame(rows), sources, fields)
