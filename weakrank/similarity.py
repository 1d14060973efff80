"""Cosine similarity of aligned pairs, encoding each distinct text once (across calls and LFs: a shared encoder);
a passage longer than the model reads scored over windows of its tokens (:func:`window_cosine`)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from weakrank.encoders import content_hash, dynamic_int8, pool_tokens
from weakrank.io import read_npz, write_npz
from weakrank.pace import timed
from weakrank.progress import loading_bars_off

Encoder = Callable[[list[str]], np.ndarray]


def pair_cosine(queries: Sequence[str], passages: Sequence[str], encode: Encoder) -> np.ndarray:
    """cos(encode(queries[i]), encode(passages[i])) for every i; each distinct text is encoded once."""
    texts, inverse = np.unique(np.asarray(list(queries) + list(passages), dtype=object), return_inverse=True)
    emb = np.asarray(encode(list(texts)), dtype=np.float64)
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    emb = emb / np.where(norms == 0, 1.0, norms)
    n = len(queries)
    return np.einsum("ij,ij->i", emb[inverse[:n]], emb[inverse[n:]])


WINDOWS = ("first", "best", "first+best")  # how an encoder LF scores a passage longer than its model reads


def check_windows(windows: str) -> str:
    """``windows`` when it is one of :data:`WINDOWS`; else a ValueError naming them (an LF factory's early check)."""
    if windows not in WINDOWS:
        raise ValueError(f"windows must be one of {list(WINDOWS)}, got {windows!r}")
    return windows


def window_cosine(queries: Sequence[str], passages: Sequence[str], encoder: SharedEncoder, output: str = "sentence",
                  windows: str = "first+best") -> np.ndarray:
    """cos(query, passage) of each pair over ``encoder``'s ``output`` vectors, a passage longer than the model reads
    scored by ``windows`` (:data:`WINDOWS`): ``"first"`` its first window alone (the model's own truncation),
    ``"best"`` its best window (MaxP, Dai & Callan 2019), ``"first+best"`` the mean of the two. A passage that fits
    scores the same under each."""
    check_windows(windows)
    encode = lambda texts: encoder(texts, output)  # noqa: E731
    first = pair_cosine(queries, passages, encode)
    later = encoder.later_windows(passages) if windows != "first" else []
    owner = np.repeat(np.arange(len(later)), np.array([len(w) for w in later], dtype=np.int64))
    if not len(owner):
        return first
    best = first.copy()
    np.maximum.at(best, owner, pair_cosine([queries[i] for i in owner], [w for ws in later for w in ws], encode))
    return best if windows == "best" else (first + best) / 2


OUTPUTS = ("sentence", "cls", "mean")  # what one forward pass gives: the model's embedding, [CLS], the tokens' mean


class SharedEncoder:
    """A sentence-transformers model that encodes each distinct text once for every LF reading it: its
    sentence embedding, the [CLS] vector and the tokens' masked mean all come from one forward pass
    (length-sorted batches, as ``SentenceTransformer.encode``), kept for ``max_items`` texts, by text hash
    (:meth:`save` / :meth:`load`: across runs, see :func:`kept_encodings`)."""

    def __init__(self, model, batch_size: int = 64, chunk: int = 1024, max_items: int = 200_000,
                 precision: str = "fp32") -> None:
        self.model, self.batch_size, self.chunk, self.max_items = model, batch_size, chunk, max_items
        self.precision = precision  # of the model's weights (its encodings are kept apart from another's)
        self.store: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.added = 0  # encodings stored since the last save or load
        self.windows: dict[bytes, list[str]] = {}  # each passage's later windows (:meth:`later_windows`)

    def _forward(self, texts: list[str]) -> dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        out = {}
        for start in range(0, len(texts), self.chunk):  # token vectors of a chunk only, then three vectors a text
            part = texts[start : start + self.chunk]
            started = time.perf_counter()
            encoded = self.model.encode(part, batch_size=self.batch_size, output_value=None, show_progress_bar=False)
            tokens = [int(features["attention_mask"].sum()) for features in encoded]
            timed(tokens, self.model, time.perf_counter() - started, self.precision)  # the label stage's time left
            for text, features in zip(part, encoded):
                tokens, mask = features["token_embeddings"].float()[None], features["attention_mask"][None]
                out[text_key(text)] = (features["sentence_embedding"].float().cpu().numpy(),
                                       *(pool_tokens(tokens, mask, pooling)[0].cpu().numpy() for pooling in ("cls", "mean")))
        return out

    def __call__(self, texts: list[str], output: str = "sentence") -> np.ndarray:
        """``output`` (one of :data:`OUTPUTS`) of each of ``texts``."""
        k = OUTPUTS.index(output)
        keys = [text_key(t) for t in texts]
        missing = {key: t for key, t in zip(keys, texts) if key not in self.store}
        fresh = self._forward(sorted(missing.values(), key=len)) if missing else {}
        kept = list(fresh.items())[: max(self.max_items - len(self.store), 0)]
        self.store.update(kept)
        self.added += len(kept)
        vectors = [(self.store.get(key) or fresh[key])[k] for key in keys]
        return np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)

    def later_windows(self, texts: Sequence[str]) -> list[list[str]]:
        """The windows of each of ``texts`` after the first that the model reads (its ``max_seq_length`` less the
        special tokens, at a half-window stride, the last reaching the text's end); none for a text that fits. Kept
        for ``max_items`` texts, as the encodings are."""
        keys = [text_key(t) for t in texts]
        missing = {key: t for key, t in zip(keys, texts) if key not in self.windows}
        fresh = {}
        if missing:
            tokenizer = self.model.tokenizer
            width = self.model.max_seq_length - tokenizer.num_special_tokens_to_add()
            step = max(width // 2, 1)
            ids = tokenizer(list(missing.values()), add_special_tokens=False, verbose=False)["input_ids"]
            for key, tokens in zip(missing, ids):
                starts = range(step, step * -(-(len(tokens) - width) // step) + 1, step) if len(tokens) > width else ()
                fresh[key] = [tokenizer.decode(tokens[s : s + width]) for s in starts]
            self.windows.update(list(fresh.items())[: max(self.max_items - len(self.windows), 0)])
        return [self.windows[key] if key in self.windows else fresh[key] for key in keys]

    def save(self, path: str | Path) -> Path:
        """Write every stored encoding to ``path`` (``.npz``: text hashes and the three outputs)."""
        keys = list(self.store)
        arrays = {"keys": np.array(keys, dtype="S20")}
        for k, output in enumerate(OUTPUTS):
            arrays[output] = np.stack([self.store[key][k] for key in keys]) if keys else np.zeros((0, 0), np.float32)
        self.added = 0
        return write_npz(arrays, path)

    def load(self, path: str | Path) -> SharedEncoder:
        """Add the encodings :meth:`save` wrote to ``path`` (none when it does not exist)."""
        if Path(path).exists():
            arrays = read_npz(path)
            rows = zip(*(arrays[output] for output in OUTPUTS))
            self.store.update(list(zip(arrays["keys"].tolist(), rows))[: max(self.max_items - len(self.store), 0)])
        return self


def text_key(text: str) -> bytes:
    """A text's key in an encoder's store: its SHA-1."""
    return hashlib.sha1(text.encode()).digest()


_MODELS: dict[tuple[str, int | None, str], SharedEncoder] = {}  # by the model's content hash, max_length, precision
_KEPT: list[tuple[Path, bool]] = []  # the folder of kept encodings and whether to read them, in kept_encodings()
PRECISIONS = ("fp32", "int8")  # int8: linear layers dynamically quantised (torch's quantize_dynamic), CPU only


def shared_encoder(path: str, max_length: int | None = None, batch_size: int = 64,
                   precision: str = "fp32") -> SharedEncoder:
    """The process's :class:`SharedEncoder` of the sentence-transformers model at ``path`` truncating at
    ``max_length`` tokens (None: the model's own ``max_seq_length``) at ``precision`` (:data:`PRECISIONS`): LFs over
    the same model, length and precision share one, so their texts are encoded once. A model is known by its
    content (:func:`~weakrank.encoders.content_hash`), not its path: one changed in place is loaded again and reads
    none of the old one's encodings."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    key = content_hash(path)
    if (key, None, precision) not in _MODELS:
        _MODELS[key, None, precision] = _kept(_encoder(path, None, batch_size, precision), key)
    default = _MODELS[key, None, precision]
    if max_length is None or max_length == default.model.max_seq_length:
        return default
    if (key, max_length, precision) not in _MODELS:
        _MODELS[key, max_length, precision] = _kept(_encoder(path, max_length, batch_size, precision), key)
    return _MODELS[key, max_length, precision]


def _encoder(path: str, max_length: int | None, batch_size: int, precision: str) -> SharedEncoder:
    """A fresh :class:`SharedEncoder` of the model at ``path`` (int8: on the CPU, where its kernels run)."""
    from sentence_transformers import SentenceTransformer

    loading_bars_off()
    model = SentenceTransformer(path, device="cpu" if precision == "int8" else None)
    if max_length is not None:
        model.max_seq_length = max_length
    return SharedEncoder(dynamic_int8(model) if precision == "int8" else model, batch_size, precision=precision)


def _file(encoder: SharedEncoder, key: str, folder: Path) -> Path:
    return encodings_file(folder, key, encoder.model.max_seq_length, encoder.precision)


def encodings_file(folder: str | Path, key: str, max_length: int, precision: str = "fp32") -> Path:
    """The file in ``folder`` that keeps the encodings of the model of content hash ``key`` at ``max_length``
    tokens and ``precision`` (:func:`kept_encodings`)."""
    precision = "" if precision == "fp32" else f"\0{precision}"  # fp32 files keep their names
    name = hashlib.sha1(f"{key}\0{max_length}{precision}".encode()).hexdigest()[:16]
    return Path(folder) / f"{name}.npz"


def _kept(encoder: SharedEncoder, key: str) -> SharedEncoder:
    return encoder.load(_file(encoder, key, _KEPT[-1][0])) if _KEPT and _KEPT[-1][1] else encoder


def forget_encodings() -> None:
    """Empty every shared encoder's encodings held in memory: the next texts are encoded again (a timing's cold
    start)."""
    for encoder in _MODELS.values():
        encoder.store.clear()


@contextmanager
def kept_encodings(folder: str | Path, reuse: bool = True) -> Iterator[None]:
    """Within the block, the shared encoders read the encodings kept in ``folder`` (one file per model content
    and length) and write back what they added: a later run encodes no text twice (an LF added to a labelled
    run, a re-label). ``reuse=False`` reads none, kept or held in memory: every text is encoded again and the
    kept files rewritten."""
    folder = Path(folder)
    _KEPT.append((folder, reuse))
    for (key, *_), encoder in _MODELS.items():
        if reuse:
            encoder.load(_file(encoder, key, folder))
        else:
            encoder.store.clear()
    try:
        yield
    finally:
        _KEPT.pop()
        for (key, *_), encoder in _MODELS.items():
            if encoder.added:
                encoder.save(_file(encoder, key, folder))
