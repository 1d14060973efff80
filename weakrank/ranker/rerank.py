"""A model directory loaded and run over pairs: :func:`loaded_ranker` (the shipped ranker, or its student alone,
with a warning when the teacher is asked of a directory that holds none), :func:`score_pairs`, and
:func:`rerank_trec`, a TREC run of any queries reranked (``weakrank rerank --run``). The rerank stage
(:func:`weakrank.stages.rerank.score_split`) scores with these too."""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.errors import LeftOutWarning
from weakrank.files import output_file
from weakrank.io import write_run
from weakrank.loaders.trec import load_trec
from weakrank.progress import tqdm
from weakrank.ranker.directory import model_manifest
from weakrank.ranker.load import load_ranker
from weakrank.ranker.manifest import MANIFEST_FILE
from weakrank.ranker.ranking import RanksPassages
from weakrank.ranker.teacher_state import FUSION_FILE


def loaded_ranker(model: str | Path, student_only: bool = False, backend: str = "torch",
                  trust_code: bool = False, precision: str = "fp32") -> RanksPassages:
    """:func:`load_ranker`, warning when the shipped ranker is asked of a directory that holds the student alone."""
    ranker = load_ranker(model, student_only=student_only, backend=backend, trust_code=trust_code,
                         precision=precision)
    if not student_only and not model_manifest(model).teacher:
        if (Path(model) / FUSION_FILE).exists():  # the manifest is what loads: it says student, the file is left out
            warnings.warn(f"{Path(model) / MANIFEST_FILE}: kind: its manifest says 'student', yet {FUSION_FILE} is "
                          "beside it (a manifest edited by hand, or a teacher copied in?): scoring with the student "
                          "alone; kind 'shipped' loads the teacher", LeftOutWarning, stacklevel=2)
        else:
            warnings.warn(f"{model} holds no teacher (trained without fuse_lfs, or before models carried it): "
                          "scoring with the student alone", stacklevel=2)
    return ranker


CHUNK = 256  # pairs scored at a time (whole queries): progress between them, a few seconds apart on a CPU


def score_pairs(ranker: RanksPassages, pairs: pd.DataFrame, batch_size: int = 64) -> pd.DataFrame:
    """``query_id, passage_id, score`` of the rows of ``pairs`` (``query_id, passage_id, query, passage``), scored
    a few hundred pairs of whole queries at a time, with progress: a bar, or under ``--quiet`` and in a log a line
    at most every 30 s (:class:`~weakrank.progress.tqdm`'s ``steps``)."""
    codes = pd.factorize(pairs["query_id"])[0]
    per_query = np.cumsum(np.bincount(codes, minlength=1)) // CHUNK  # each query's chunk: whole queries in each
    chunks, scores = per_query[codes], np.zeros(len(pairs))
    remembering = getattr(ranker, "remembering", nullcontext)  # a passage of several chunks is encoded once
    with tqdm(total=int(codes.max(initial=-1)) + 1, desc="reranking", unit="query", steps=True) as bar, remembering():
        for chunk in np.unique(chunks):
            rows = chunks == chunk
            scores[rows] = ranker.score_frame(pairs[rows], batch_size=batch_size)
            bar.update(int((per_query == chunk).sum()))
    return pairs[["query_id", "passage_id"]].assign(score=scores)


def rerank_trec(model: str | Path, run: str | Path, queries: str | Path, collection: str | Path, out: str | Path,
                batch_size: int = 64, backend: str = "torch", trust_code: bool = False, force: bool = False,
                precision: str = "fp32") -> Path:
    """Rerank a TREC ``run`` of any queries (``queries``: qid TAB text; ``collection``: pid TAB text) with a
    model directory (the shipped ranker when it carries its teacher) into the TREC run ``out``; nothing is
    labelled first. ``out`` is never an input, nor (unless ``force``) a file weakrank did not write
    (:func:`~weakrank.files.output_file`)."""
    with output_file(out, {"--run": run, "--queries": queries, "--collection": collection}, force) as target:
        dataset = load_trec(Path.cwd(), collection=str(collection), queries=str(queries), run=str(run), qrels=None)
        tag = Path(model).parent.name if Path(model).name in ("best", "final") else Path(model).name
        ranker = loaded_ranker(model, backend=backend, trust_code=trust_code, precision=precision)
        write_run(score_pairs(ranker, dataset.pairs(), batch_size), target, tag)
    return target
