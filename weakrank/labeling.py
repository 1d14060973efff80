"""Apply ranking LFs to every candidate pair of a dataset → the votes table.

Votes table columns: query_id, passage_id, split, rank, gold, then for each LF ``<name>``:
``score_<name>`` (float64, the raw score) and ``vote_<name>`` (int8: +1, −1, 0 = abstain).
"""

from __future__ import annotations

import hashlib
import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from weakrank.dataset import Dataset
from weakrank.encoders import content_hash
from weakrank.errors import DataError, LFError
from weakrank.io import read_metadata, read_parquet, write_parquet
from weakrank.lf_scorer import PairBatch, RankingLF
from weakrank.progress import tqdm
from weakrank.voting import rank_votes

SCORE, VOTE = "score_", "vote_"
KEY_COLUMNS = ["query_id", "passage_id", "split", "rank", "gold"]
CHUNK_SIZE = 5_000  # pairs per LF call; engines align their partitions to these chunks


def lf_names(votes: pd.DataFrame) -> list[str]:
    """LF names of a votes table, in column order."""
    return [c[len(VOTE) :] for c in votes.columns if c.startswith(VOTE)]


def vote_matrix(votes: pd.DataFrame, names: Sequence[str] | None = None) -> np.ndarray:
    """The n × m int8 vote matrix (+1/−1/0) of the given LFs (all by default)."""
    names = lf_names(votes) if names is None else names
    return votes[[VOTE + n for n in names]].to_numpy(dtype=np.int8)


def score_matrix(votes: pd.DataFrame, names: Sequence[str] | None = None) -> np.ndarray:
    """The n × m float64 matrix of the given LFs' raw scores (all by default)."""
    names = lf_names(votes) if names is None else names
    return votes[[SCORE + n for n in names]].to_numpy(dtype=np.float64)


def _query_chunks(query_ids: np.ndarray, chunk_size: int) -> list[tuple[int, int]]:
    """[start, end) bounds of about ``chunk_size`` pairs that never split a query's list."""
    starts = np.flatnonzero(np.r_[True, query_ids[1:] != query_ids[:-1]])
    bounds, begin = [], 0
    for s in starts[1:]:
        if s - begin >= chunk_size:
            bounds.append((begin, int(s)))
            begin = int(s)
    bounds.append((begin, len(query_ids)))
    return bounds


def score_lf(lf: RankingLF, pairs: pd.DataFrame, chunk_size: int = CHUNK_SIZE, bar: tqdm | None = None) -> np.ndarray:
    """Raw scores of ``lf`` on every row of ``pairs`` (from :meth:`Dataset.pairs`), chunk by chunk."""
    qid = pairs["query_id"].to_numpy()
    pid = pairs["passage_id"].to_numpy()
    query, passage = pairs["query"].to_numpy(), pairs["passage"].to_numpy()
    scores = np.empty(len(pairs), dtype=np.float64)
    for a, b in _query_chunks(qid, chunk_size) if len(pairs) else []:
        batch = PairBatch(qid[a:b], pid[a:b], list(query[a:b]), list(passage[a:b]))
        scores[a:b] = lf.score(batch)
        if bar is not None:
            bar.update(b - a)
    return scores


def apply_lfs(
    dataset: Dataset,
    lfs: Sequence[RankingLF],
    *,
    cache_dir: str | Path | None = None,
    fingerprints: Mapping[str, str] | None = None,
    progress: bool = True,
    chunk_size: int = CHUNK_SIZE,
    reuse: bool = True,
    scorer: Callable[[Sequence[RankingLF]], Mapping[str, np.ndarray]] | None = None,
) -> pd.DataFrame:
    """Score every candidate with every LF (``chunk_size`` pairs per call, whole queries) and vote per query.

    With ``cache_dir``, each LF's scores are stored there as ``<name>.parquet`` and reused by a later
    call on the same pairs with the same fingerprint (:func:`cache_key`), so an interrupted or extended
    labeling run only computes what is missing; ``reuse=False`` recomputes every LF and rewrites its cache.
    ``scorer`` computes the scores of the LFs the cache lacks, all at once (name → scores in the order of
    :meth:`Dataset.pairs`; a Dask or Spark engine, see :func:`weakrank.engines.label_dataset`); without it they
    are computed here, one LF after another, and each is cached as soon as it is done.
    """
    fingerprints = fingerprints or {}
    names = [lf.name for lf in lfs]
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise LFError(twice, "two LFs have this name (each becomes a column of the votes): rename one")
    pairs = dataset.pairs()
    out = pairs[KEY_COLUMNS].copy()
    known = {}
    for lf in lfs if reuse else []:
        scores = _cached_scores(cache_dir, lf.name, fingerprints.get(lf.name, ""), pairs)
        if scores is not None:
            known[lf.name] = scores
    missing = [lf for lf in lfs if lf.name not in known]
    if scorer is not None and missing:
        computed = scorer(missing)
        for lf in missing:
            known[lf.name] = np.asarray(computed[lf.name], dtype=np.float64)
            _cache_scores(cache_dir, lf.name, fingerprints.get(lf.name, ""), pairs, known[lf.name])
    bar = tqdm(total=len(pairs) * len(lfs), unit="pair", desc="labeling", disable=not progress)
    for lf in lfs:
        bar.set_postfix_str(lf.name)
        scores = known.get(lf.name)
        if scores is None:
            scores = score_lf(lf.fit(dataset), pairs, chunk_size, bar=bar)
            _cache_scores(cache_dir, lf.name, fingerprints.get(lf.name, ""), pairs, scores)
        else:
            bar.update(len(pairs))
        votes = rank_votes(scores, pairs["query_id"].to_numpy(), lf.rule)
        if len(votes) and not votes.any():
            warnings.warn(f"labeling function {lf.name!r} abstains on every pair", stacklevel=2)
        out[SCORE + lf.name] = scores
        out[VOTE + lf.name] = votes
    bar.close()
    return out


def _cache_scores(
    cache_dir: str | Path | None, name: str, fingerprint: str, pairs: pd.DataFrame, scores: np.ndarray
) -> None:
    if cache_dir is not None:
        write_parquet(
            pd.DataFrame({"query_id": pairs["query_id"], "passage_id": pairs["passage_id"], "score": scores}),
            Path(cache_dir) / f"{name}.parquet",
            metadata={"fingerprint": fingerprint},
        )


def lf_source(lf: RankingLF) -> str:
    """The source code of an LF's score and fit functions ("" for one Python cannot read, e.g. a C extension)."""
    parts = []
    for fn in (lf.fn, lf.fit_fn):
        try:
            parts.append(inspect.getsource(fn) if fn is not None else "")
        except (OSError, TypeError):
            parts.append("")
    return "\n".join(parts)


def lf_modules(lf: RankingLF) -> str:
    """The text of the files an LF's score and fit functions are defined in ("" for one with no file): a helper
    they call there changes it too."""
    files = []
    for fn in (lf.fn, lf.fit_fn):
        try:
            files.append(Path(inspect.getsourcefile(fn) or "").read_text() if fn is not None else "")
        except (OSError, TypeError):
            files.append("")
    return "\n".join(files)


def cache_key(lf: RankingLF, options: str, dataset: str) -> str:
    """The key of an LF's cached scores: a short hash of its options' fingerprint, its source, its module's
    (:func:`lf_modules`), the content of the models it reads (``models``:
    :func:`~weakrank.encoders.content_hash`, not their paths) and the precision they run at, and the dataset's
    fingerprint (:meth:`~weakrank.dataset.Dataset.fingerprint`), so that no stale score is read back (fp32 adds
    nothing: the keys of scores cached before precisions were keyed stay valid)."""
    precision = [] if lf.precision == "fp32" else [lf.precision]
    blob = "\0".join([options, lf_source(lf), lf_modules(lf), *map(content_hash, lf.models), *precision, dataset])
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def holds_scores(cache_dir: Path, name: str, fingerprint: str, pairs: int) -> bool:
    """Whether the score cache ``cache_dir`` holds LF ``name``'s scores of ``pairs`` pairs under ``fingerprint``
    (:func:`cache_key`), by its metadata alone (what the plan counts as done; the stage still checks the pairs)."""
    path = Path(cache_dir) / f"{name}.parquet"
    try:
        return read_metadata(path).get("fingerprint") == fingerprint and pq.ParquetFile(path).metadata.num_rows == pairs
    except (DataError, OSError, pa.ArrowException):  # none, or not Parquet: the label stage computes it again
        return False


def _cached_scores(
    cache_dir: str | Path | None, name: str, fingerprint: str, pairs: pd.DataFrame
) -> np.ndarray | None:
    path = None if cache_dir is None else Path(cache_dir) / f"{name}.parquet"
    if path is None or not path.exists():
        return None
    try:
        if read_metadata(path).get("fingerprint") != fingerprint:
            return None
        cached = read_parquet(path, columns=["query_id", "passage_id", "score"])
    except (DataError, pa.ArrowException, OSError):  # truncated or not Parquet: recomputed and rewritten
        return None
    same = len(cached) == len(pairs) and all(
        (cached[c].to_numpy() == pairs[c].to_numpy()).all() for c in ("query_id", "passage_id")
    )
    scores = cached["score"].to_numpy()
    finite = scores.dtype.kind == "f" and np.isfinite(scores).all()  # as LF scores must be: else recomputed
    return scores.astype(np.float64) if same and finite else None


def check_votes_lfs(votes: pd.DataFrame, names: Sequence[str], path: str | Path) -> None:
    """The LFs of ``votes`` (of file ``path``) are exactly ``names`` (the config's ``[label] lfs``): a vote column
    that no listed LF owns, or a listed LF with none, is a :class:`DataError` naming the file and the column."""
    found = lf_names(votes)
    extra, missing = [n for n in found if n not in names], [n for n in names if n not in found]
    if extra:
        raise DataError(f"LF {extra[0]!r} voted here, but [label] lfs does not list it (lists {', '.join(names)}): "
                        "the labels weigh the config's LFs only; label again, or list it", file=path,
                        field=VOTE + extra[0])
    if missing:
        raise DataError(f"[label] lfs lists LF {missing[0]!r}, which has no votes here: label again", file=path,
                        field=VOTE + missing[0])


def check_votes_table(votes: pd.DataFrame, path: str | Path) -> None:
    """Raise :class:`DataError` when a votes table lacks key columns, holds votes other than ±1/0 or an LF score
    that is not a finite number (LF scores must be finite: :meth:`~weakrank.lf_scorer.RankingLF.score`), naming the file,
    the row, the column and the pair."""
    for col in KEY_COLUMNS:
        if col not in votes.columns:
            raise DataError("votes table lacks a key column", file=path, field=col)
    for name in lf_names(votes):
        col = votes[VOTE + name]
        bad = ~col.isin([-1, 0, 1])
        if bad.any():
            row = int(bad.to_numpy().argmax())
            raise DataError(f"vote {col.iloc[row]!r} is not -1, 0 or 1", file=path, row=row, field=VOTE + name)
        if SCORE + name in votes.columns:
            scores = pd.to_numeric(votes[SCORE + name], errors="coerce").to_numpy(dtype=np.float64)
            bad = ~np.isfinite(scores)
            if bad.any():
                row = int(bad.argmax())
                raise DataError(f"LF {name!r} scores query_id {votes['query_id'].iloc[row]!r}, passage_id "
                                f"{votes['passage_id'].iloc[row]!r} {votes[SCORE + name].iloc[row]}: LF scores "
                                "must be finite (label again to recompute them)", file=path, row=row,
                                field=SCORE + name)
