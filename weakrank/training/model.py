"""BERT-PR: "query [SEP] passage" → transformer encoder → [CLS] → MLP (100, 10, ReLU) → one score.

Saved as a directory: the encoder and tokenizer in Hugging Face format (``from_pretrained``-loadable)
plus ``head.safetensors`` and ``bert_pr.json`` for the MLP head.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import AutoModel, AutoTokenizer

from weakrank.models import DEFAULT_ENCODER, resolve_model

HEAD_FILE, CONFIG_FILE = "head.safetensors", "bert_pr.json"


class BertPR(nn.Module):
    """A cross-encoder ranker: one relevance score (a logit) per query–passage pair."""

    def __init__(self, encoder: nn.Module, tokenizer, hidden: tuple[int, ...] = (100, 10), max_length: int = 256):
        super().__init__()
        self.encoder, self.tokenizer, self.max_length = encoder, tokenizer, max_length
        sizes = [encoder.config.hidden_size, *hidden]
        layers: list[nn.Module] = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.head = nn.Sequential(*layers, nn.Linear(sizes[-1], 1))
        self.hidden = tuple(hidden)

    @classmethod
    def from_encoder(cls, name_or_path: str = DEFAULT_ENCODER, max_length: int = 256) -> BertPR:
        """A fresh ranker on a pretrained encoder (a HF name, a local path, or ``"minilm"``)."""
        path = resolve_model(name_or_path)
        return cls(AutoModel.from_pretrained(path), AutoTokenizer.from_pretrained(path), max_length=max_length)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def tokenize(self, queries: Sequence[str], passages: Sequence[str]) -> dict[str, torch.Tensor]:
        """Dynamically padded "query [SEP] passage" inputs on the model's device."""
        enc = self.tokenizer(
            list(queries), list(passages), padding=True, truncation="longest_first", max_length=self.max_length,
            return_tensors="pt",
        )
        return {k: v.to(self.device) for k, v in enc.items()}

    def forward(self, **inputs: torch.Tensor) -> torch.Tensor:
        cls = self.encoder(**inputs).last_hidden_state[:, 0]
        return self.head(cls).squeeze(-1)

    def score(self, queries: Sequence[str], passages: Sequence[str]) -> torch.Tensor:
        """Scores of aligned pairs (with gradients)."""
        return self(**self.tokenize(queries, passages))

    @torch.inference_mode()
    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        """Scores of ``(query, passage)`` pairs, like ``sentence_transformers.CrossEncoder.predict``."""
        was_training = self.training
        self.eval()
        out = []
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start : start + batch_size]
            out.append(self.score([q for q, _ in chunk], [p for _, p in chunk]).float().cpu().numpy())
        self.train(was_training)
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)

    def save(self, directory: str | Path) -> Path:
        """Write encoder + tokenizer (HF format) and the head into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.encoder.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)
        save_file({k: v.contiguous().cpu() for k, v in self.head.state_dict().items()}, directory / HEAD_FILE)
        (directory / CONFIG_FILE).write_text(json.dumps({"hidden": list(self.hidden), "max_length": self.max_length}))
        return directory

    @classmethod
    def load(cls, directory: str | Path, device: str | None = None) -> BertPR:
        """A ranker saved by :meth:`save`."""
        directory = Path(directory)
        if not (directory / CONFIG_FILE).exists():
            raise FileNotFoundError(f"{directory} holds no BERT-PR model ({CONFIG_FILE} missing)")
        config = json.loads((directory / CONFIG_FILE).read_text())
        model = cls(
            AutoModel.from_pretrained(directory), AutoTokenizer.from_pretrained(directory),
            hidden=tuple(config["hidden"]), max_length=config["max_length"],
        )
        model.head.load_state_dict(load_file(directory / HEAD_FILE))
        return model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
