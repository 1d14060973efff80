"""SemEval-2016 Task 3 (Qatar Living CQA) XML.

Subtask ``"A"`` (default): each related question ranks its comments; Good = relevant,
PotentiallyUseful/Bad = not. Subtask ``"B"``: each original question ranks its related questions;
PerfectMatch/Relevant = relevant, Irrelevant = not.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pandas as pd

from weakrank.dataset import Dataset
from weakrank.errors import DataError
from weakrank.loaders.tables import FILE, dataset_from_pairs, layout_files

FILES = {
    "train": "SemEval2016-Task3-CQA-QL-train-part2.xml",
    "dev": "SemEval2016-Task3-CQA-QL-dev.xml",
}


def _text(node: ET.Element, tag: str, file: Path, owner: str) -> str:
    child = node.find(tag)
    if child is None:
        raise DataError(f"{owner} has no <{tag}>", file=file, field=tag)
    return " ".join((child.text or "").split())


def _id(node: ET.Element, attr: str, file: Path) -> str:
    value = node.get(attr)
    if not value:
        raise DataError(f"<{node.tag}> without an id", file=file, field=attr)
    return value


def _subject_body(node: ET.Element, prefix: str, file: Path, owner: str) -> str:
    return f"{_text(node, prefix + 'Subject', file, owner)} {_text(node, prefix + 'Body', file, owner)}".strip()


def _row(qid: str, query: str, pid: str, passage: str, split: str, relevant: bool, file: Path) -> dict:
    return {
        "query_id": qid, "query": query, "passage_id": pid, "passage": passage, "split": split, "gold": int(relevant),
        FILE: str(file),
    }


def _rows_a(root: ET.Element, file: Path, split: str) -> list[dict]:
    rows = []
    for thread in root.iter("Thread"):
        if thread.get("SubtaskA_Skip_Because_Same_As_RelQuestion_ID"):
            continue  # the same related question appears in another thread
        relq = thread.find("RelQuestion")
        qid = _id(relq, "RELQ_ID", file)
        query = _subject_body(relq, "RelQ", file, qid)
        for c in thread.iter("RelComment"):
            cid = _id(c, "RELC_ID", file)
            good = c.get("RELC_RELEVANCE2RELQ") == "Good"
            rows.append(_row(qid, query, cid, _text(c, "RelCText", file, cid), split, good, file))
    return rows


def _rows_b(root: ET.Element, file: Path, split: str) -> list[dict]:
    rows = []
    for orgq in root.iter("OrgQuestion"):
        qid = _id(orgq, "ORGQ_ID", file)
        query = _subject_body(orgq, "OrgQ", file, qid)
        for relq in orgq.iter("RelQuestion"):
            rid = _id(relq, "RELQ_ID", file)
            relevant = relq.get("RELQ_RELEVANCE2ORGQ") in ("PerfectMatch", "Relevant")
            rows.append(_row(qid, query, rid, _subject_body(relq, "RelQ", file, rid), split, relevant, file))
    return rows


def semeval_inputs(path: Path, splits: tuple[str, ...], **_: Any) -> list[tuple[str, Path]]:
    """The file of each split under ``path``."""
    return layout_files(path, FILES, splits)


def load_semeval(path: Path, subtask: str = "A", splits: tuple[str, ...] = ("train", "dev")) -> Dataset:
    """Load the Qatar Living XML files for subtask A or B."""
    parse = {"A": _rows_a, "B": _rows_b}.get(subtask.upper())
    if parse is None:
        raise DataError(f"subtask must be 'A' or 'B', got {subtask!r}", field="subtask")
    rows = []
    for (_, file), split in zip(semeval_inputs(path, splits), splits):
        try:
            root = ET.parse(file).getroot()
        except ET.ParseError as err:
            raise DataError(f"not well-formed XML: {err}", file=file, line=err.position[0]) from None
        rows += parse(root, file, split)
    sources = {t: str(path / "*.xml") for t in ("queries", "passages", "candidates", "qrels")}
    # the same comment/question can hang under two threads: its first occurrence per query is kept
    return dataset_from_pairs(f"semeval2016-{subtask.lower()}", pd.DataFrame(rows), sources, repeated_pairs=True)
