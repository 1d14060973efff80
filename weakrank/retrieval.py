"""Dense first-stage retrieval: a collection encoded by a bi-encoder, searched by a Faiss inner-product
index (cosine, as embeddings are normalised), top-k passages per query as a run table.

The embeddings and the index are cached in one directory (``embeddings.npy``, ``index.faiss``,
``manifest.json``), reused while the manifest's hashes of the model files and of the passages table
match, rebuilt otherwise; the directory is replaced as a whole (:func:`weakrank.files.atomic_dir`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import faiss
import numpy as np
import pandas as pd
import torch

from weakrank.encoders import content_hash
from weakrank.errors import ConfigError
from weakrank.files import atomic_dir, settle
from weakrank.progress import tqdm
from weakrank.ranker.bi_encoder import BiEncoder
from weakrank.ranker.directory import model_manifest

MANIFEST = "manifest.json"


class Encoder(Protocol):
    """What retrieval needs of a model: normalised float32 embeddings, one row per text."""

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray: ...


def load_encoder(name_or_path: str) -> BiEncoder:
    """A bi-encoder saved by weakrank, or any sentence-transformers model (``"minilm"``, a HF name, a path)."""
    path = Path(name_or_path)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        architecture = model_manifest(path).architecture
    except FileNotFoundError:  # not a model directory of weakrank's: a sentence-transformers model
        architecture = None
    if architecture == "bi-encoder":
        return BiEncoder.load(path, device)
    if architecture == "cross-encoder":
        raise ConfigError(f"{path} is a cross-encoder: it scores pairs and cannot index (use `weakrank rerank`)")
    return BiEncoder.from_encoder(name_or_path).to(device)


def collection_hash(passages: pd.DataFrame) -> str:
    """SHA-256 of the passages table's ids and texts, in order."""
    digest = hashlib.sha256()
    for pid, text in zip(passages["passage_id"], passages["text"]):
        digest.update(f"{pid}\t{text}\n".encode())
    return digest.hexdigest()


def model_key(name_or_path: str) -> str:
    """A folder name for a model's index: its last path parts and a short hash of the name."""
    parts = [p for p in Path(name_or_path).parts if p not in ("/", ".", "..")][-2:]
    slug = "-".join(parts).replace(" ", "_") or "model"
    return f"{slug}-{hashlib.sha1(name_or_path.encode()).hexdigest()[:8]}"


def encode_texts(encoder: Encoder, texts: Sequence[str], batch_size: int = 64, progress: bool = True,
                 desc: str = "encoding") -> np.ndarray:
    """Embeddings of ``texts`` in their order, encoded longest first (less padding per batch)."""
    order = np.argsort([-len(t) for t in texts], kind="stable")
    batches = [[texts[i] for i in order[s : s + batch_size]] for s in range(0, len(texts), batch_size)]
    parts = [encoder.encode(b, batch_size) for b in tqdm(batches, desc=desc, unit="batch", disable=not progress)]
    out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
    out[order] = np.concatenate(parts)
    return out


def flat_index(embeddings: np.ndarray) -> faiss.IndexFlatIP:
    """An exact inner-product Faiss index over ``embeddings`` (rows: passages)."""
    index = faiss.IndexFlatIP(embeddings.shape[1])
    index.add(np.ascontiguousarray(embeddings, dtype=np.float32))
    return index


def numpy_search(embeddings: np.ndarray, queries: np.ndarray, k: int, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force top-k by inner product (the baseline of :func:`flat_index`): scores and row indices, best first."""
    k = min(k, len(embeddings))
    scores, ids = [], []
    for start in range(0, len(queries), chunk):
        sims = queries[start : start + chunk] @ embeddings.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        top_sims = np.take_along_axis(sims, top, axis=1)
        order = np.argsort(-top_sims, axis=1, kind="stable")
        ids.append(np.take_along_axis(top, order, axis=1))
        scores.append(np.take_along_axis(top_sims, order, axis=1))
    return np.concatenate(scores), np.concatenate(ids)


@dataclass
class DenseIndex:
    """A collection's passage ids, their embeddings and the Faiss index over them (``cached``: read from disk)."""

    passage_ids: np.ndarray
    embeddings: np.ndarray
    index: faiss.Index
    cached: bool = False

    def search(self, queries: np.ndarray, query_ids: Sequence[str], k: int = 100) -> pd.DataFrame:
        """``query_id, passage_id, score`` of each query's top ``k`` passages (cosine), best first."""
        k = min(k, len(self.passage_ids))
        scores, rows = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        return pd.DataFrame({
            "query_id": np.repeat(np.asarray(query_ids, dtype=object), k),
            "passage_id": self.passage_ids[rows.ravel()],
            "score": scores.ravel().astype(np.float64),
        })


def passage_index(encoder: Encoder, model_digest: str, passages: pd.DataFrame, directory: str | Path,
                  batch_size: int = 64, progress: bool = True) -> DenseIndex:
    """The index of ``passages`` under ``encoder`` (whose files hash to ``model_digest``), read from
    ``directory`` when its manifest matches the model and the collection, else encoded and written there."""
    directory = Path(directory)
    settle(directory)
    manifest = {"model": model_digest, "collection": collection_hash(passages), "passages": len(passages)}
    ids = passages["passage_id"].to_numpy(dtype=object)
    if (directory / MANIFEST).exists() and json.loads((directory / MANIFEST).read_text()) == manifest:
        embeddings = np.load(directory / "embeddings.npy")
        return DenseIndex(ids, embeddings, faiss.read_index(str(directory / "index.faiss")), cached=True)
    embeddings = encode_texts(encoder, passages["text"].tolist(), batch_size, progress, desc="encoding passages")
    index = flat_index(embeddings)
    with atomic_dir(directory) as tmp:
        np.save(tmp / "embeddings.npy", embeddings)
        faiss.write_index(index, str(tmp / "index.faiss"))
        (tmp / MANIFEST).write_text(json.dumps(manifest))
    return DenseIndex(ids, embeddings, index)


def retrieve(model: str, passages: pd.DataFrame, queries: pd.DataFrame, cache_root: str | Path, k: int = 100,
             batch_size: int = 64, progress: bool = True) -> tuple[pd.DataFrame, DenseIndex]:
    """Top-``k`` passages of each query (``query_id, text``) under ``model`` (a name or directory), and the
    collection's index, cached in ``<cache_root>/<model key>/``."""
    encoder = load_encoder(model)
    index = passage_index(encoder, content_hash(model), passages, Path(cache_root) / model_key(model), batch_size, progress)
    embedded = encode_texts(encoder, queries["text"].tolist(), batch_size, progress, desc="encoding queries")
    return index.search(embedded, queries["query_id"].tolist(), k), index
