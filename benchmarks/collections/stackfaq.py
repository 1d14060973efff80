"""StackFAQ (StackExchange web-apps threads: 125 questions, 719 community answers, 1,250 user rephrasings) in the
BEIR layout, split by thread in three.

A community answer-selection collection: each rephrasing asks for one thread's answers out of the pool of every
answer; ``pipelines/stackfaq.toml`` gives it the BM25 top 20 of the 719 answers (``loader = "beir"``, ``k = 20``).

Source: the snapshot of ``ML-Recipes/BERT-FAQ`` (``data/StackFAQ/stackExchange-FAQ.xml`` at ``COMMIT``), a copy
of the set of Karan & Šnajder (2018), brought here with the search tool's ``fetch``. Conversion:

* passages: each ``<answer>`` of thread ``t`` (in file order, from 0) is passage ``t-a<j>``, white space squashed;
  the thread's own ``<question>`` title is not part of it (the rephrasings paraphrase it);
* queries: each ``<rephr>`` of thread ``t`` but the ``*`` that separates its two groups of five is query
  ``t-r<j>``; its thread's answers are relevant (1), every other answer not;
* splits: whole threads (so no answer is relevant in two splits), their ids shuffled with seed 0 and cut into 35
  test, 15 dev and 75 train threads.

Run: ``python benchmarks/collections/stackfaq.py [--mirror DIR] [--out DIR]`` (defaults: the fetched snapshot
under /work/.mirror and ``../shared/datasets/stackfaq`` beside the repository).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from beir_layout import command, git_show, split_ids, squash, write_beir

REPO = "ML-Recipes/BERT-FAQ"
COMMIT = "3c184030c1819b462e29f665465ab4968657440e"
PATH = "data/StackFAQ/stackExchange-FAQ.xml"
MIRROR = Path("/work/.mirror/ML-Recipes+BERT-FAQ/repo")
SIZES = {"test": 35, "dev": 15, "train": 75}


def convert(mirror: Path, out: Path) -> dict[str, int]:
    threads = ET.fromstring(git_show(mirror, COMMIT, PATH)).findall("qapair")
    corpus, queries, relevant = [], [], {}
    for t, thread in enumerate(threads):
        answers = [squash(a.text or "") for a in thread.findall("answer")]
        ids = [f"{t}-a{j}" for j, text in enumerate(answers) if text]
        corpus += [{"_id": f"{t}-a{j}", "text": text} for j, text in enumerate(answers) if text]
        rephrasings = [squash(r.text or "") for r in thread.findall("rephr")]
        for j, text in enumerate(r for r in rephrasings if r and r != "*"):
            queries.append({"_id": f"{t}-r{j}", "text": text})
            relevant[f"{t}-r{j}"] = ids
    split_of = split_ids([str(t) for t in range(len(threads))], SIZES)
    qrels = {s: [(q["_id"], p, 1) for q in queries if split_of[q["_id"].split("-")[0]] == s for p in relevant[q["_id"]]]
             for s in ("train", "dev", "test")}
    return write_beir(out, corpus, queries, qrels)


if __name__ == "__main__":
    command(convert, __doc__, REPO, MIRROR, "stackfaq")
