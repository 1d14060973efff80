"""The layout of a run directory, in one place: every stage reads and writes these paths (and, outside any run
directory, the user's cache: :func:`user_cache`).

``dataset/*.parquet``         ingest: the canonical dataset (see :mod:`weakrank.dataset`)
``dataset/qrels.trec``        ingest: the qrels as a TREC file (trec_eval, ``weakrank evaluate --qrels``)
``lf_scores/*.parquet``       label: per-LF raw score cache (re-runs reuse it)
``votes.parquet``             label: see :mod:`weakrank.labeling`
``partitioned/``              label on dask/spark: partitioned pairs/ and votes/ (see :mod:`weakrank.engines`)
``labels.parquet``            aggregate: the votes table plus p_relevant, label, confidence
``analysis/``                 analyze: lf_summary.csv, quality.csv/.md/.png
``<output>/``                 train: ``best/``, ``final/``, ``history.csv`` (``[train] output``); ``checkpoint.pt``
                              while training is unfinished (``--resume``), after it with ``keep_checkpoint``
``runs/<name>.trec``          rerank, evaluate, index: TREC runs and their metrics
``judging.tsv``, ``evaluation-judging.tsv`` only where an earlier weakrank wrote them there: a person's judging
                              files now live beside the config, in ``<config stem>.judgments/``
                              (:func:`judging_path`), which no run's deletion or ``--force`` touches
``experiment/``               experiment: cached cells, runs, labels, histories, policies of the grid
``report/<name>/``            experiment: report.md, report.html, results.csv and figures
``index/<model>/``            index: passage embeddings and Faiss index (see :mod:`weakrank.retrieval`)
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunPaths:
    """The files of one run directory."""

    root: Path

    @property
    def dataset(self) -> Path:
        return self.root / "dataset"

    @property
    def candidates(self) -> Path:
        return self.dataset / "candidates.parquet"

    @property
    def qrels(self) -> Path:
        return self.dataset / "qrels.parquet"

    @property
    def lf_scores(self) -> Path:
        return self.root / "lf_scores"

    @property
    def encodings(self) -> Path:
        """Text encodings of the neural LFs, kept across label runs (one file per model and length)."""
        return self.root / "encodings"

    @property
    def partitioned(self) -> Path:
        return self.root / "partitioned"

    @property
    def votes(self) -> Path:
        return self.root / "votes.parquet"

    @property
    def labels(self) -> Path:
        return self.root / "labels.parquet"

    @property
    def analysis(self) -> Path:
        return self.root / "analysis"

    def models(self, output: str = "model") -> Path:
        """A training run's folder (``[train] output``)."""
        return self.root / output

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def experiment(self) -> Path:
        return self.root / "experiment"

    def report(self, name: str) -> Path:
        """The report folder of experiment ``name``."""
        return self.root / "report" / name

    @property
    def index(self) -> Path:
        return self.root / "index"


def shell_path(path: str | Path) -> str:
    """``path`` as a printed command shows it, to be pasted in the current folder: relative to it when inside it,
    else absolute; quoted for the shell."""
    resolved = Path(path).resolve()
    here = Path.cwd().resolve()
    return shlex.quote(str(resolved.relative_to(here) if resolved.is_relative_to(here) else resolved))


def user_cache() -> Path:
    """The folder where weakrank keeps what it makes for a model it cannot write into (an ONNX export of a
    read-only model directory): ``$WEAKRANK_CACHE``, else ``$XDG_CACHE_HOME/weakrank``, else
    ``~/.cache/weakrank``."""
    if os.environ.get("WEAKRANK_CACHE"):
        return Path(os.environ["WEAKRANK_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "weakrank"


def program() -> str:
    """The command that runs weakrank, as a printed next step names it so that it runs when pasted here:
    ``weakrank`` where that on PATH is the one running (or where it runs as a library: tests, notebooks); else the
    script the user ran as :func:`shell_path` shows it (``.venv/bin/weakrank`` after the README's set-up), or
    ``python -m weakrank.cli`` with this interpreter."""
    ran = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if ran is None or ran.name not in ("weakrank", "cli.py", "__main__.py"):
        return "weakrank"
    on_path = shutil.which("weakrank")
    if ran.name == "weakrank":
        same = on_path is not None and Path(on_path).resolve() == ran.resolve()
        return "weakrank" if same else shell_path(ran)
    if ran.resolve().parent != Path(__file__).resolve().parent:  # a cli.py that is not weakrank's
        return "weakrank"
    return f"{shlex.quote(sys.executable)} -m weakrank.cli"  # not resolved: a venv's python is a link
