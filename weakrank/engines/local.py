"""The local engine on a partitioned pairs dataset: partitions labelled one after another in-process."""

from __future__ import annotations

from pathlib import Path

from weakrank.engines.partitions import part_ids, read_part, write_votes_part
from weakrank.engines.shipping import LFBundle
from weakrank.progress import tqdm


def run(pairs_dir: Path, out_dir: Path, bundle: LFBundle, *, progress: bool = True) -> None:
    """Label every partition of ``pairs_dir`` into ``out_dir`` (memory: one partition at a time)."""
    for part in tqdm(part_ids(pairs_dir), desc="labeling (local)", unit="part", disable=not progress):
        write_votes_part(bundle.label(read_part(pairs_dir, part)), out_dir, part)
