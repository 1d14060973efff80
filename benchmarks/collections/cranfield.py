"""Cranfield (1,400 aeronautics abstracts, 225 questions, graded judgments) in the BEIR layout, split in three.

A domain collection whose candidates a first-stage retriever picks: ``pipelines/cranfield.toml`` gives each
question the BM25 top 20 of all 1,400 abstracts (``loader = "beir"``, ``k = 20``), judged by Cleverdon's codes.

Source: the snapshot of ``noramtboraas/information-retrieval`` (``cran.all.1400``, ``cran.qry``, ``cranqrel``
at ``COMMIT``), brought here with the search tool's ``fetch``. Conversion:

* passages: ``.I`` id, text the ``.W`` abstract (which opens with the title again; the ``.T`` title where the
  abstract is empty), white space squashed;
* questions: ``cran.qry``'s ``.I`` labels skip numbers, but ``cranqrel`` numbers the questions 1..225 in file
  order (as every user of the collection does), so the ids here are those positions;
* judgments: Cleverdon's code 1 (complete answer) .. 4 (minimum interest) becomes relevance 4 .. 1; the 225
  entries coded -1 become 0 (judged, not relevant); unjudged abstracts are not relevant;
* splits: the 225 question ids shuffled with seed 0, cut into 100 test, 25 dev and 100 train questions.

Run: ``python benchmarks/collections/cranfield.py [--mirror DIR] [--out DIR]`` (defaults: the fetched snapshot
under /work/.mirror and ``../shared/datasets/cranfield`` beside the repository).
"""

from __future__ import annotations

from pathlib import Path

from beir_layout import command, git_show, records, split_ids, write_beir

REPO = "noramtboraas/information-retrieval"
COMMIT = "4ea1b8e02da1db64b68b0364d50620b3c95528dc"
MIRROR = Path("/work/.mirror/noramtboraas+information-retrieval/repo")
SIZES = {"test": 100, "dev": 25, "train": 100}


def convert(mirror: Path, out: Path) -> dict[str, int]:
    docs = records(git_show(mirror, COMMIT, "cran.all.1400"))
    corpus = [{"_id": label, "text": f.get("W") or f.get("T", "")} for label, f in docs if f.get("W") or f.get("T")]
    questions = records(git_show(mirror, COMMIT, "cran.qry"))
    queries = [{"_id": str(i), "text": f["W"]} for i, (_, f) in enumerate(questions, start=1)]
    known = {d["_id"] for d in corpus}
    judged = {}
    for line in git_show(mirror, COMMIT, "cranqrel").splitlines():
        if line.strip():
            qid, pid, code = line.split()
            if pid in known:
                judged[qid, pid] = 5 - int(code) if int(code) in (1, 2, 3, 4) else 0
    split_of = split_ids([q["_id"] for q in queries], SIZES)
    qrels = {s: [(q, p, r) for (q, p), r in sorted(judged.items(), key=lambda kv: (int(kv[0][0]), int(kv[0][1])))
                 if split_of[q] == s] for s in ("train", "dev", "test")}
    return write_beir(out, corpus, queries, qrels)


if __name__ == "__main__":
    command(convert, __doc__, REPO, MIRROR, "cranfield")
