"""The canonical dataset: queries, passages, per-query candidate lists, optional gold.

Tables (all string ids):

* ``queries``    — query_id, text, split
* ``passages``   — passage_id, text
* ``candidates`` — query_id, passage_id, split, rank (0 = first in the list), gold (Int8: 1, 0 or <NA>)
* ``qrels``      — query_id, passage_id, relevance (all assessed pairs, also those outside the candidates)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from weakrank.errors import DataError
from weakrank.files import atomic_dir, settle
from weakrank.io import read_parquet, write_parquet, write_qrels

SCHEMA: dict[str, list[str]] = {
    "queries": ["query_id", "text", "split"],
    "passages": ["passage_id", "text"],
    "candidates": ["query_id", "passage_id", "split", "rank", "gold"],
    "qrels": ["query_id", "passage_id", "relevance"],
}
FILES = (*(f"{table}.parquet" for table in SCHEMA), "qrels.trec")  # what save writes: all it may replace
_KEYS = {
    "queries": ["query_id"],
    "passages": ["passage_id"],
    "candidates": ["query_id", "passage_id"],
    "qrels": ["query_id", "passage_id"],
}


@dataclass
class Dataset:
    """Queries, passages, candidate lists and gold of one collection, with their splits."""

    name: str
    queries: pd.DataFrame
    passages: pd.DataFrame
    candidates: pd.DataFrame
    qrels: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame({"query_id": [], "passage_id": [], "relevance": []})
    )
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for table, columns in SCHEMA.items():
            df = getattr(self, table)
            for col in (c for c in columns if c != "gold" and c in df.columns):
                null = df[col].isna().to_numpy()
                if null.any():
                    src = self.sources.get(table, f"<{table} table>")
                    raise DataError(f"null {col} in {table}", file=src, row=int(null.argmax()), field=col)
        self.queries = self.queries.astype({"query_id": str, "text": str, "split": str})
        self.passages = self.passages.astype({"passage_id": str, "text": str})
        self.candidates = self.candidates.astype(
            {"query_id": str, "passage_id": str, "split": str, "rank": "int32", "gold": "Int8"}
        )
        self.qrels = self.qrels.astype({"query_id": str, "passage_id": str, "relevance": "int32"})

    @property
    def splits(self) -> list[str]:
        """Split names in order of first appearance."""
        return list(dict.fromkeys(self.queries["split"]))

    def subset(self, splits: list[str] | None = None, max_queries: int | None = None) -> Dataset:
        """The same dataset restricted to ``splits`` and to the first ``max_queries`` queries of each."""
        queries = self.queries
        if splits is not None:
            unknown = sorted(set(splits) - set(queries["split"]))
            if unknown:
                raise DataError(f"unknown split(s) {unknown}; have {self.splits}", field="split")
            queries = queries[queries["split"].isin(splits)]
        if max_queries is not None:
            queries = queries.groupby("split", sort=False).head(max_queries)
        keep = set(queries["query_id"])
        candidates = self.candidates[self.candidates["query_id"].isin(keep)]
        return Dataset(
            name=self.name,
            queries=queries.reset_index(drop=True),
            passages=self.passages,
            candidates=candidates.reset_index(drop=True),
            qrels=self.qrels[self.qrels["query_id"].isin(keep)].reset_index(drop=True),
            sources=self.sources,
        )

    def pairs(self) -> pd.DataFrame:
        """Candidates joined with query and passage texts (columns query, passage)."""
        q = self.queries.set_index("query_id")["text"]
        p = self.passages.set_index("passage_id")["text"]
        out = self.candidates.copy()
        out["query"] = q.loc[out["query_id"]].to_numpy()
        out["passage"] = p.loc[out["passage_id"]].to_numpy()
        return out

    def fingerprint(self) -> str:
        """A short hash of the queries, passages and candidates (ids and texts): LF score caches are keyed by it."""
        digest = hashlib.sha1()
        for table in (self.queries, self.passages, self.candidates):
            digest.update(pd.util.hash_pandas_object(table.astype(str), index=False).to_numpy().tobytes())
        return digest.hexdigest()[:12]

    def validate(self) -> Dataset:
        """Check ids, texts and references; raise :class:`DataError` naming file, row and field."""
        for table, columns in SCHEMA.items():
            df = getattr(self, table)
            src = self.sources.get(table, f"<{table} table>")
            for col in columns:
                if col not in df.columns:
                    raise DataError(f"{table} table lacks column {col!r}", file=src, field=col)
            dup = df.duplicated(_KEYS[table], keep="first")
            if dup.any():
                row = int(dup.to_numpy().argmax())
                ids = df.iloc[row][_KEYS[table]].tolist()
                raise DataError(f"duplicate id {ids} in {table}", file=src, row=row, field=_KEYS[table][-1])
            if "text" in df.columns:
                empty = df["text"].str.strip().eq("")
                if empty.any():
                    row = int(empty.to_numpy().argmax())
                    raise DataError(
                        f"empty text for {df.columns[0]} {df.iloc[row, 0]!r}", file=src, row=row, field="text"
                    )
        src = self.sources.get("candidates", "<candidates table>")
        for col, table, key in (("passage_id", self.passages, "passage_id"), ("query_id", self.queries, "query_id")):
            unknown = ~self.candidates[col].isin(table[key])
            if unknown.any():
                row = int(unknown.to_numpy().argmax())
                raise DataError(
                    f"candidate references unknown {col} {self.candidates[col].iloc[row]!r}",
                    file=src,
                    row=row,
                    field=col,
                )
        gold = self.candidates["gold"].dropna()
        if not gold.isin([0, 1]).all():
            raise DataError("gold must be 0, 1 or missing", file=src, field="gold")
        return self

    def save(self, directory: str | Path) -> Path:
        """Write the four tables as Parquet files, and the qrels as ``qrels.trec`` (trec_eval's format), into
        ``directory``, replacing it as a whole: a reader sees the previous files or the new ones, never a mix."""
        directory = Path(directory)
        check_replaceable(directory)
        with atomic_dir(directory) as tmp:
            for table in SCHEMA:
                write_parquet(getattr(self, table), tmp / f"{table}.parquet", metadata={"dataset": self.name})
            write_qrels(self.qrels, tmp / "qrels.trec")
        return directory

    @classmethod
    def load(cls, directory: str | Path, name: str | None = None) -> Dataset:
        """Read a dataset written by :meth:`save`."""
        directory = Path(directory)
        settle(directory)
        tables = {t: read_parquet(directory / f"{t}.parquet", columns=cols) for t, cols in SCHEMA.items()}
        sources = {t: str(directory / f"{t}.parquet") for t in SCHEMA}
        return cls(name=name or directory.name, sources=sources, **tables).validate()


def check_replaceable(directory: str | Path) -> None:
    """A :class:`DataError` when ``directory`` holds a file that :meth:`Dataset.save` did not write (a user's):
    saving replaces the folder whole and would delete it."""
    directory = Path(directory)
    foreign = sorted(p.name for p in directory.iterdir() if p.name not in FILES) if directory.is_dir() else []
    if foreign:
        named = ", ".join(map(repr, foreign[:3])) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise DataError(f"holds {named}, which weakrank did not write; ingest replaces this folder whole: "
                        "move them out first", file=directory)


def candidates_from_rows(rows: pd.DataFrame, queries: pd.DataFrame) -> pd.DataFrame:
    """Add ``split`` (from the queries) and ``rank`` (order within each query) to candidate rows."""
    out = rows.copy()
    out["split"] = queries.set_index("query_id")["split"].loc[out["query_id"]].to_numpy()
    out["rank"] = out.groupby("query_id", sort=False).cumcount()
    if "gold" not in out.columns:
        out["gold"] = pd.NA
    return out[SCHEMA["candidates"]]


def qrels_from_candidates(candidates: pd.DataFrame) -> pd.DataFrame:
    """Qrels holding every candidate with a gold label."""
    assessed = candidates.dropna(subset=["gold"])
    return pd.DataFrame(
        {
            "query_id": assessed["query_id"],
            "passage_id": assessed["passage_id"],
            "relevance": assessed["gold"].astype("int32"),
        }
    ).reset_index(drop=True)
