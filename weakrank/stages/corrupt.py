"""The corrupt stage: semantic-aware label noise (:mod:`weakrank.noise`) added to a labels table, with the log
that undoes it."""

from __future__ import annotations

from pathlib import Path

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.encoders import DEFAULT_ENCODER
from weakrank.io import read_parquet, write_parquet
from weakrank.paths import RunPaths
from weakrank.stages.stage import stage


@stage("corrupt")
def corrupt(cfg: PipelineConfig, ratio: float = 0.02, seed: int = 0, split: str = "train", column: str = "label",
            encoder: str = DEFAULT_ENCODER, labels: str | Path | None = None, out: str | Path | None = None
            ) -> tuple[Path, Path]:
    """Semantic-aware label noise (:mod:`weakrank.noise`): the labels of ``ratio`` of ``split``'s queries in
    ``labels`` (default labels.parquet) swapped towards similar passages; writes the noisy table (default
    ``labels_noise<r>_seed<s>.parquet``) and its log. Returns both paths."""
    from weakrank.noise import corrupt_labels, sentence_encoder

    paths = RunPaths(cfg.run_dir)
    source = Path(labels) if labels else paths.labels
    passages = Dataset.load(paths.dataset).passages
    noisy, log = corrupt_labels(read_parquet(source), passages, ratio, sentence_encoder(encoder), seed=seed,
                                split=split, column=column)
    out = Path(out or paths.root / f"labels_noise{ratio:g}_seed{seed}.parquet")
    log_path = write_parquet(log, out.with_name(out.stem + "_log.parquet"))
    write_parquet(noisy, out, metadata={"noise_ratio": ratio, "seed": seed, "source": str(source)})
    return out, log_path


def undo_corrupt(labels: str | Path, log: str | Path, out: str | Path | None = None) -> Path:
    """``labels`` with the values a :func:`corrupt` log changed restored, into ``out`` (default
    ``<labels>_restored.parquet``)."""
    from weakrank.noise import undo_corruption

    labels = Path(labels)
    restored = undo_corruption(read_parquet(labels), read_parquet(log))
    return write_parquet(restored, Path(out or labels.with_name(labels.stem + "_restored.parquet")))
