"""A bi-encoder ranker: query and passage embedded apart by a sentence-transformers model, scored by
``scale · cos(query, passage)`` (the logit that ``MultipleNegativesRankingLoss`` uses, scale 20).

It has the interface of :class:`~weakrank.ranker.cross_encoder.CrossEncoderRanker` (``tokenize``/``forward``/``score``,
``predict``, ``save``/``load``, ``encoder``, ``tokenizer``, ``head``), so the same trainer, losses and
rerank code serve both. It starts from the packaged MiniLM by default, which is also the
``embedding_cosine`` LF: the weak bi-encoder starts from the strongest signal the pipeline has. Saved as a
plain sentence-transformers directory (``SentenceTransformer(path)`` loads it) plus ``bi_encoder.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from weakrank.encoders import DEFAULT_ENCODER, resolve_model
from weakrank.progress import loading_bars_off
from weakrank.ranker.manifest import student_manifest, write_manifest
from weakrank.ranker.ranking import RanksPassages

CONFIG_FILE = "bi_encoder.json"
REMEMBERED = 200_000  # the most texts whose embeddings a rerank keeps for its later chunks (300 MB at 384 wide)


class BiEncoder(nn.Module, RanksPassages):
    """Scores aligned (query, passage) pairs by the scaled cosine of their sentence embeddings: texts of up to
    ``max_length`` tokens in training, of the model's own length (``read_length``) when it ranks and is saved."""

    architecture, backends = "bi-encoder", ("torch",)  # what its directory's manifest says (ONNX: cross-encoders)

    def __init__(self, model, scale: float = 20.0, max_length: int = 256) -> None:
        super().__init__()
        # what it reads when it ranks (and saves): at least the model's own length, as the embedding LF reads its
        # first window; training may read less (``max_length``: a step's cost)
        self.read_length = max(model.max_seq_length, max_length)
        self.model, self.scale, self.max_length = model, float(scale), max_length
        self.model.max_seq_length = self.max_length
        self.head = nn.ModuleList()  # no head: parameters the trainer gives a separate learning rate
        self._memo: dict[str, np.ndarray] | None = None  # text → embedding, within :meth:`remembering`

    @classmethod
    def from_encoder(cls, name_or_path: str = DEFAULT_ENCODER, max_length: int = 256, scale: float = 20.0) -> BiEncoder:
        """A sentence-transformers model (``"minilm"``, a HF name or a local path; mean pooling when the
        folder has no sentence-transformers config)."""
        from sentence_transformers import SentenceTransformer

        loading_bars_off()
        return cls(SentenceTransformer(resolve_model(name_or_path), device="cpu"), scale=scale, max_length=max_length)

    @property
    def encoder(self) -> nn.Module:
        """The transformer inside the sentence-transformers model (its word embeddings, for freezing)."""
        return self.model[0].auto_model

    @property
    def tokenizer(self):
        return self.model.tokenizer

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def _features(self, texts: Sequence[str]) -> dict:
        features = self.model.preprocess(list(texts))
        return {k: v.to(self.device) if torch.is_tensor(v) else v for k, v in features.items()}

    def tokenize(self, queries: Sequence[str], passages: Sequence[str]) -> dict:
        """Inputs of :meth:`forward`: each distinct query tokenised once, the passages, and the index
        of each pair's query."""
        distinct = list(dict.fromkeys(queries))
        where = {q: i for i, q in enumerate(distinct)}
        index = torch.tensor([where[q] for q in queries], device=self.device)
        return {"query": self._features(distinct), "passage": self._features(passages), "query_index": index}

    def embed(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """L2-normalised sentence embeddings."""
        return F.normalize(self.model(dict(features))["sentence_embedding"], dim=-1)

    def tokenize_all(self, queries: Sequence[str], passages: Sequence[str]) -> dict:
        """Inputs of :meth:`forward` for the full queries × passages score matrix."""
        return {"query": self._features(queries), "passage": self._features(passages)}

    def forward(self, query: dict, passage: dict, query_index: torch.Tensor | None = None) -> torch.Tensor:
        """Scores of aligned pairs (``query_index``: each passage's query), or the queries × passages matrix."""
        q, p = self.embed(query), self.embed(passage)
        if query_index is None:
            return self.scale * q @ p.T
        return self.scale * (q[query_index] * p).sum(-1)

    def score(self, queries: Sequence[str], passages: Sequence[str]) -> torch.Tensor:
        """Scores of aligned pairs (with gradients)."""
        return self(**self.tokenize(queries, passages))

    @contextmanager
    def remembering(self) -> Iterator[None]:
        """Within the block, each text is encoded once (up to :data:`REMEMBERED` texts): a rerank scores chunks of
        queries whose candidates repeat across them (wikiqa_bm25's test split: 12,396 encodings of 8,197 texts)."""
        self._memo = {}
        try:
            yield
        finally:
            self._memo = None

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Normalised embeddings of ``texts`` (float32, one row each), encoded longest first so that a batch holds
        texts of about one length (little padding), as ``SentenceTransformer.encode`` does; within
        :meth:`remembering`, a text encoded before is not encoded again."""
        memo = self._memo
        if memo is None or not texts:
            return self._encode(texts, batch_size)
        new = [t for t in dict.fromkeys(texts) if t not in memo]
        fresh = dict(zip(new, self._encode(new, batch_size))) if new else {}
        for text in new[:max(REMEMBERED - len(memo), 0)]:
            memo[text] = fresh[text]
        return np.stack([memo[t] if t in memo else fresh[t] for t in texts])

    @torch.inference_mode()
    def _encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """:meth:`encode` without the memo."""
        was_training = self.training
        self.eval()
        self.model.max_seq_length = self.read_length
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = [self.embed(self._features([texts[j] for j in order[i : i + batch_size]])).float().cpu().numpy()
               for i in range(0, len(texts), batch_size)]
        self.model.max_seq_length = self.max_length
        self.train(was_training)
        if not out:
            return np.zeros((0, self.encoder.config.hidden_size), dtype=np.float32)
        embeddings = np.empty((len(texts), out[0].shape[1]), dtype=np.float32)
        embeddings[order] = np.concatenate(out)
        return embeddings

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        """Scores of ``(query, passage)`` pairs; each distinct text is encoded once."""
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        where = {t: i for i, t in enumerate(texts)}
        emb = self.encode(texts, batch_size)
        q = emb[[where[a] for a, _ in pairs]] if pairs else emb[:0]
        p = emb[[where[b] for _, b in pairs]] if pairs else emb[:0]
        return self.scale * (q * p).sum(-1)

    def save(self, directory: str | Path) -> Path:
        """A sentence-transformers directory (``SentenceTransformer(directory)`` loads it) + the scale and the
        manifest."""
        directory = Path(directory)
        self.model.max_seq_length = self.read_length
        self.model.save(str(directory))
        self.model.max_seq_length = self.max_length
        (directory / CONFIG_FILE).write_text(json.dumps({"scale": self.scale, "max_length": self.read_length}))
        write_manifest(directory, student_manifest(type(self)))
        return directory

    @classmethod
    def load(cls, directory: str | Path, device: str | None = None) -> BiEncoder:
        """A ranker saved by :meth:`save`."""
        directory = Path(directory)
        if not (directory / CONFIG_FILE).exists():
            raise FileNotFoundError(f"{directory} holds no weakrank bi-encoder ({CONFIG_FILE} missing)")
        config = json.loads((directory / CONFIG_FILE).read_text())
        model = cls.from_encoder(str(directory), max_length=config["max_length"], scale=config["scale"])
        return model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
