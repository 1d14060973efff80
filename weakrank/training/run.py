"""A TREC run of any queries reranked by a model directory (``weakrank rerank --run``). It reads nothing of
training (:mod:`weakrank.ranker.rerank` loads and scores); its home is beside those, in :mod:`weakrank.ranker`,
once the command imports it from there."""

from __future__ import annotations

from pathlib import Path

from weakrank.io import check_output, mark_written, write_run
from weakrank.loaders.trec import load_trec
from weakrank.ranker.rerank import loaded_ranker, score_pairs


def rerank_trec(model: str | Path, run: str | Path, queries: str | Path, collection: str | Path, out: str | Path,
                batch_size: int = 64, backend: str = "torch", trust_code: bool = False, force: bool = False) -> Path:
    """Rerank a TREC ``run`` of any queries (``queries``: qid TAB text; ``collection``: pid TAB text) with a
    model directory (the shipped ranker when it carries its teacher) into the TREC run ``out``; nothing is
    labelled first. ``out`` is never an input, nor (unless ``force``) a file weakrank did not write
    (:func:`~weakrank.io.check_output`)."""
    check_output(out, {"--run": run, "--queries": queries, "--collection": collection}, force)
    dataset = load_trec(Path.cwd(), collection=str(collection), queries=str(queries), run=str(run), qrels=None)
    tag = Path(model).parent.name if Path(model).name in ("best", "final") else Path(model).name
    ranker = loaded_ranker(model, backend=backend, trust_code=trust_code)
    return mark_written(write_run(score_pairs(ranker, dataset.pairs(), batch_size), out, tag))
