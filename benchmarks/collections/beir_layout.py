"""What the collection scripts beside this file share: reading a file of a fetched repository snapshot (a bare git
directory) at a pinned commit, the records of a SMART-format file, a deterministic split of ids, and writing the BEIR
layout that ``weakrank/loaders/beir.py`` reads (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``)."""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"  # beside the repository: ../shared/datasets
COLLECTIONS = SHARED.parents[1] / "collections"  # beside the repository: ../collections (built here, not shared)


def git_show(git_dir: Path, commit: str, path: str) -> str:
    """The text of ``path`` at ``commit`` in the bare git directory ``git_dir`` (a snapshot's ``…/repo``);
    Windows line ends become ``\\n``."""
    out = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True, check=True)
    return out.stdout.decode("utf-8", errors="replace").replace("\r\n", "\n")


def squash(text: str) -> str:
    """``text`` with every run of white space one blank, stripped."""
    return re.sub(r"\s+", " ", text).strip()


def records(text: str) -> list[tuple[str, dict[str, str]]]:
    """(``.I`` label, {field letter: text}) of each record of a SMART-format file (``.I n`` then ``.T``, ``.A``,
    ``.B``, ``.W`` sections)."""
    out = []
    for chunk in re.split(r"^\.I\s+", text, flags=re.M)[1:]:
        label, _, body = chunk.partition("\n")
        parts = re.split(r"^\.([A-Z])\s*$", body, flags=re.M)
        fields = {parts[i]: squash(parts[i + 1]) for i in range(1, len(parts) - 1, 2)}
        out.append((label.strip(), fields))
    return out


def split_ids(ids: Sequence[str], sizes: dict[str, int], seed: int = 0) -> dict[str, str]:
    """id → split: ``ids`` shuffled with ``seed``, then cut in the order of ``sizes`` (the last split takes the
    rest, whatever its size says)."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    split_of, start = {}, 0
    names = list(sizes)
    for i, name in enumerate(names):
        end = len(order) if i == len(names) - 1 else start + sizes[name]
        split_of |= {x: name for x in order[start:end]}
        start = end
    return split_of


def write_beir(out: Path, corpus: Iterable[dict], queries: Iterable[dict],
               qrels: dict[str, list[tuple[str, str, int]]]) -> dict[str, int]:
    """Write ``corpus.jsonl`` (``_id``, ``text``[, ``title``]), ``queries.jsonl`` (``_id``, ``text``) and
    ``qrels/<split>.tsv`` (``query-id corpus-id score`` with BEIR's header) under ``out``; the counts written."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, rows in (("corpus", corpus), ("queries", queries)):
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            counts[name] = sum(f.write(json.dumps(row, ensure_ascii=False) + "\n") > 0 for row in rows)
    for split, rows in qrels.items():
        with open(out / "qrels" / f"{split}.tsv", "w", encoding="utf-8") as f:
            f.write("query-id\tcorpus-id\tscore\n")
            f.writelines(f"{q}\t{p}\t{s}\n" for q, p, s in rows)
        counts[f"qrels/{split}"] = len(rows)
    return counts


def command(convert: Callable[[Path, Path], object], doc: str, repo: str, mirror: Path, name: str) -> None:
    """A collection script's command line: ``--mirror`` (the bare git directory of ``repo``'s snapshot) and
    ``--out`` (default ``../shared/datasets/<name>``), then ``convert(mirror, out)``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=mirror, help=f"bare git directory of {repo}'s snapshot")
    parser.add_argument("--out", type=Path, default=SHARED / name)
    args = parser.parse_args()
    print(convert(args.mirror, args.out), "→", args.out)
