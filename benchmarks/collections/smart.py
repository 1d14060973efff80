"""Three classic SMART test collections in the BEIR layout, each one split (``test``): collections no constant was
fitted on, for checking a design where it was not tuned.

* ``med``: MEDLINE, 1,033 medical abstracts, 30 questions (``MED.ALL``, ``MED.QRY``, ``MED.REL``);
* ``cisi``: CISI, 1,460 information-science abstracts, the questions with judgments (``CISI.ALL``, ``CISI.QRY``,
  ``CISI.REL``);
* ``cacm``: CACM, 3,204 computing titles and abstracts, the questions with judgments (``cacm.all``, ``query.text``,
  ``qrels.text``).

Sources: the snapshots of ``lailaglez/belief-network-irs`` (``med/``, ``cisi/``) and ``atcherepanov/Stemming-Algorithm``
(CACM) at the commits below, brought here with the search tool's ``fetch``. Conversion: passages are a record's ``.T``
title and ``.W`` abstract (white space squashed; a record with neither is left out); questions their ``.W`` text;
judgments binary (every listed pair relevant; unjudged passages not relevant); a question with no judgment is left
out. Every question is in ``test``: the collections check a label-free teacher, which reads no split.

Run: ``python benchmarks/collections/smart.py NAME [--mirror DIR] [--out DIR]`` (default ``../collections/NAME``
beside the repository, where ``benchmarks/collections/NAME.toml``, the collection's pipeline, reads it: ``weakrank run
benchmarks/collections/NAME.toml`` labels it into ``data/unseen/NAME``, trains a student on its questions' pseudo-labels
and evaluates).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from beir_layout import COLLECTIONS, git_show, records, write_beir

SOURCES = {  # name: (repository, commit, passages, questions, judgments)
    "med": ("lailaglez/belief-network-irs", "9094e4cde738bd93ed1747dc958b5acb0e0fa684",
            "med/MED.ALL", "med/MED.QRY", "med/MED.REL"),
    "cisi": ("lailaglez/belief-network-irs", "9094e4cde738bd93ed1747dc958b5acb0e0fa684",
             "cisi/CISI.ALL", "cisi/CISI.QRY", "cisi/CISI.REL"),
    "cacm": ("atcherepanov/Stemming-Algorithm", "a92ce141e3cba95b0213569a42cb1668201963f7",
             "cacm.all", "query.text", "qrels.text"),
}


def judged_pairs(text: str) -> set[tuple[str, str]]:
    """(question, passage) ids of a judgments file, the first two fields of a line: MED ``q p 1``, CISI ``q p 0 0.0``,
    CACM ``q p 0 0`` (zero-padded question ids)."""
    pairs = set()
    for line in text.splitlines():
        fields = line.split()
        if fields:
            pairs.add((str(int(fields[0])), str(int(fields[1]))))
    return pairs


def convert(name: str, mirror: Path, out: Path) -> dict[str, int]:
    _, commit, all_path, qry_path, rel_path = SOURCES[name]
    corpus = [{"_id": str(int(label)), "text": " ".join(t for t in (f.get("T"), f.get("W")) if t)}
              for label, f in records(git_show(mirror, commit, all_path)) if f.get("T") or f.get("W")]
    judged = judged_pairs(git_show(mirror, commit, rel_path))
    known, asked = {d["_id"] for d in corpus}, {q for q, _ in judged}
    queries = [{"_id": str(int(label)), "text": f["W"]} for label, f in records(git_show(mirror, commit, qry_path))
               if f.get("W") and str(int(label)) in asked]
    kept = {q["_id"] for q in queries}
    qrels = sorted(((q, p, 1) for q, p in judged if q in kept and p in known), key=lambda r: (int(r[0]), int(r[1])))
    return write_beir(out, corpus, queries, {"test": qrels})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=list(SOURCES))
    parser.add_argument("--mirror", type=Path, help="bare git directory of the source's snapshot "
                        "(default: /work/.mirror/<owner>+<name>/repo)")
    parser.add_argument("--out", type=Path, help="default: ../collections/<name> beside the repository")
    args = parser.parse_args()
    repo = SOURCES[args.name][0]
    mirror = args.mirror or Path("/work/.mirror") / repo.replace("/", "+") / "repo"
    print(convert(args.name, mirror, args.out or COLLECTIONS / args.name))
