"""Two more collections no constant was fitted on, already in the BEIR layout, copied out of a public repository's
snapshot, each one split (``test``):

* ``msmarco``: web passages, 50 questions of the TREC Deep Learning track and a sample of 5,000 MS MARCO passages
  holding the judged ones; the track's grades 2 and 3 are relevant, 1 ("related": does not answer) is not, as the
  track binarises them;
* ``dbpedia``: entity search, 50 DBpedia-Entity questions, graded judgments (0–2), 5,000 DBpedia abstracts.

Source: the snapshot of ``agentset-ai/embedding-leaderboard`` (``datasets/<name>/``) at ``COMMIT``, brought here with
the search tool's ``fetch``; passages keep their ``title`` and ``text``, queries their ``text``, judgments their grade
(but MS MARCO's 1).

Run: ``python benchmarks/collections/leaderboard.py NAME [--mirror DIR] [--out DIR]`` (default ``../collections/NAME``
beside the repository, which ``benchmarks/collections/NAME.toml`` reads).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from beir_layout import COLLECTIONS, git_show, write_beir

REPO = "agentset-ai/embedding-leaderboard"
COMMIT = "7a1376ca20a006b470e3bbb4a08b17affd380d90"
MIRROR = Path("/work/.mirror/agentset-ai+embedding-leaderboard/repo")
NAMES = ("msmarco", "dbpedia")


def convert(name: str, mirror: Path, out: Path) -> dict[str, int]:
    def rows(path: str) -> list[dict]:
        return [json.loads(line) for line in git_show(mirror, COMMIT, f"datasets/{name}/{path}").split("\n") if line]

    corpus = [{"_id": d["_id"], "title": d.get("title") or "", "text": d["text"]} for d in rows("corpus.jsonl")]
    queries = [{"_id": q["_id"], "text": q["text"]} for q in rows("queries.jsonl")]
    lines = git_show(mirror, COMMIT, f"datasets/{name}/qrels/test.tsv").splitlines()[1:]
    floor = 2 if name == "msmarco" else 1  # the lowest grade that is relevant
    qrels = [(q, p, int(s) if int(s) >= floor else 0) for q, p, s in (line.split("\t") for line in lines if line)]
    return write_beir(out, corpus, queries, {"test": qrels})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=NAMES)
    parser.add_argument("--mirror", type=Path, default=MIRROR, help=f"bare git directory of {REPO}'s snapshot")
    parser.add_argument("--out", type=Path, help="default: ../collections/<name> beside the repository")
    args = parser.parse_args()
    print(convert(args.name, args.mirror, args.out or COLLECTIONS / args.name))
