"""Answer type: does the passage hold the kind of thing the question asks for (a date, a number, a name)?

Every other built-in LF measures how *similar* the passage is to the question; this one looks at what an
answer must contain, so its errors are nearly independent of theirs (a near-copy of the question without
the answer scores 0 here). English factoid questions only: a question whose type it does not recognise
("what is …", "why …", a claim, a forum post) gets the same score for every candidate, which the label
models read as no information (an all-tied list abstains).
"""

from __future__ import annotations

import re

from weakrank.lf import ranking_lf

PRIOR = 0.95  # its quality prior (a loading on relevance), measured: benchmarks/teacher_priors.csv

QUESTION_TYPES = [  # (type, question start), first match wins
    ("date", re.compile(r"(in )?(when|what (year|date|century|decade)|which (year|century))\b")),
    ("number", re.compile(r"how (many|much|long|old|far|big|tall|large|high|deep|fast|wide|heavy)\b"
                          r"|what (percent|percentage|number|population)\b")),
    ("name", re.compile(r"(who|whom)\b")),
    ("place", re.compile(r"(in )?where\b")),
]
MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
DATE = re.compile(rf"\b(1\d{{3}}|20\d{{2}})s?\b|\b({MONTHS})\b|\bcentury\b", re.IGNORECASE)
NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|thousand|million|billion|dozen"
NUMBER = re.compile(rf"\d|\b({NUMBER_WORDS})\b", re.IGNORECASE)
CAPITALISED = re.compile(r"\b[A-Z][a-z]+")
WORD = re.compile(r"\w+")


def question_type(question: str) -> str | None:
    """``date``, ``number``, ``name``, ``place``, or None when the question's start names no answer type."""
    start = question.strip().lower()
    return next((kind for kind, pattern in QUESTION_TYPES if pattern.match(start)), None)


def has_answer_type(kind: str, question: str, passage: str) -> bool:
    """Whether ``passage`` contains an expression of type ``kind``: a year, month or century; a number; a
    capitalised word that is not in the question and does not start the passage (names and places)."""
    if kind == "date":
        return DATE.search(passage) is not None
    if kind == "number":
        return NUMBER.search(passage) is not None
    asked = {w.lower() for w in WORD.findall(question)}
    return any(m.start() > 0 and m.group().lower() not in asked for m in CAPITALISED.finditer(passage))


@ranking_lf(family="heuristic", prior=PRIOR)
def answer_type(query: str, passage: str) -> float:
    """1 if the passage contains the answer type the question asks for, else 0 (0 for every candidate of a
    question of no recognised type)."""
    kind = question_type(query)
    return float(kind is not None and has_answer_type(kind, query, passage))
