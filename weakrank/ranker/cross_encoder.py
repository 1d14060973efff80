"""The cross-encoder student (Xu et al.'s BERT-PR): "query [SEP] passage" → transformer encoder → [CLS] (or mean)
pooling → MLP (100, 10, ReLU) → one score.

Saved as a directory: the encoder and tokenizer in Hugging Face format (``from_pretrained``-loadable),
``head.safetensors`` and ``bert_pr.json`` for the MLP head, and the same head as sentence-transformers (>= 6)
modules, so that ``CrossEncoder(directory)`` gives :meth:`CrossEncoderRanker.predict`'s scores (not a random
classifier).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import AutoModel, AutoTokenizer

from weakrank.encoders import DEFAULT_ENCODER, POOLINGS, pool_tokens, resolve_model
from weakrank.errors import DataError
from weakrank.io import write_text
from weakrank.names import BACKENDS
from weakrank.progress import loading_bars_off
from weakrank.ranker.manifest import read_manifest, student_manifest, write_manifest
from weakrank.ranker.ranking import RanksPassages

# bert_pr.json: a historical name (the class was BertPR), kept so that every model directory saved before loads
HEAD_FILE, CONFIG_FILE, CARD_FILE = "head.safetensors", "bert_pr.json", "README.md"
ST = "sentence_transformers."  # the package of the module classes in modules.json (sentence-transformers 6)


class CrossEncoderRanker(nn.Module, RanksPassages):
    """A cross-encoder ranker: one relevance score (a logit) per query–passage pair."""

    architecture, backends = "cross-encoder", BACKENDS  # what its directory's manifest says

    def __init__(self, encoder: nn.Module, tokenizer, hidden: tuple[int, ...] = (100, 10), max_length: int = 256,
                 pooling: str = "cls"):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self.encoder, self.tokenizer, self.max_length, self.pooling = encoder, tokenizer, max_length, pooling
        sizes = [encoder.config.hidden_size, *hidden]
        layers: list[nn.Module] = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.head = nn.Sequential(*layers, nn.Linear(sizes[-1], 1))
        self.hidden = tuple(hidden)

    @classmethod
    def from_encoder(cls, name_or_path: str = DEFAULT_ENCODER, max_length: int = 256,
                     pooling: str = "cls") -> CrossEncoderRanker:
        """A fresh ranker on a pretrained encoder (a HF name, a local path, or ``"minilm"``)."""
        path = resolve_model(name_or_path)
        loading_bars_off()
        return cls(AutoModel.from_pretrained(path), AutoTokenizer.from_pretrained(path), max_length=max_length,
                   pooling=pooling)

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
        hidden = self.encoder(**inputs).last_hidden_state
        return self.head(pool_tokens(hidden, inputs["attention_mask"], self.pooling)).squeeze(-1)

    def score(self, queries: Sequence[str], passages: Sequence[str]) -> torch.Tensor:
        """Scores of aligned pairs (with gradients)."""
        return self(**self.tokenize(queries, passages))

    @torch.inference_mode()
    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        """Scores of ``(query, passage)`` pairs, like ``sentence_transformers.CrossEncoder.predict``."""
        was_training = self.training
        self.eval()
        order = np.argsort([-(len(q) + len(p)) for q, p in pairs], kind="stable")  # similar lengths: less padding
        out = np.zeros(len(pairs), dtype=np.float32)
        for start in range(0, len(pairs), batch_size):
            idx = order[start : start + batch_size]
            out[idx] = self.score([pairs[i][0] for i in idx], [pairs[i][1] for i in idx]).float().cpu().numpy()
        self.train(was_training)
        return out

    def save(self, directory: str | Path) -> Path:
        """Write encoder + tokenizer (HF format), the head and the manifest into ``directory``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.encoder.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)
        save_file({k: v.contiguous().cpu() for k, v in self.head.state_dict().items()}, directory / HEAD_FILE)
        (directory / CONFIG_FILE).write_text(json.dumps({"hidden": list(self.hidden), "max_length": self.max_length,
                                                             "pooling": self.pooling}))
        self._save_cross_encoder_modules(directory)
        write_manifest(directory, student_manifest(type(self)))
        return directory

    def _save_cross_encoder_modules(self, directory: Path) -> None:
        """The head as a sentence-transformers CrossEncoder: encoder → pooling → Dense layers → raw score."""
        linears = [layer for layer in self.head if isinstance(layer, nn.Linear)]
        modules = [{"path": "", "type": ST + "base.modules.transformer.Transformer"},
                   {"path": "1_Pooling", "type": ST + "sentence_transformer.modules.pooling.Pooling"}]
        _write_json(directory / "1_Pooling" / "config.json",
                    {"embedding_dimension": self.encoder.config.hidden_size, "pooling_mode": self.pooling})
        for i, layer in enumerate(linears, start=2):
            last = i == len(linears) + 1
            folder = directory / f"{i}_Dense"
            _write_json(folder / "config.json", {
                "in_features": layer.in_features, "out_features": layer.out_features, "bias": True,
                "activation_function": "torch.nn.modules.linear.Identity" if last else "torch.nn.modules.activation.ReLU",
                "module_input_name": "sentence_embedding", "module_output_name": "scores" if last else "sentence_embedding",
            })
            save_file({"linear.weight": layer.weight.detach().contiguous().cpu(),
                       "linear.bias": layer.bias.detach().contiguous().cpu()}, folder / "model.safetensors")
            modules.append({"path": folder.name, "type": ST + "base.modules.dense.Dense"})
        _write_json(directory / "modules.json", [{"idx": i, "name": str(i), **m} for i, m in enumerate(modules)])
        _write_json(directory / "sentence_bert_config.json",
                    {"transformer_task": "feature-extraction", "max_seq_length": self.max_length})
        _write_json(directory / "config_sentence_transformers.json",
                    {"model_type": "CrossEncoder", "activation_fn": "torch.nn.modules.linear.Identity"})

    @classmethod
    def load(cls, directory: str | Path, device: str | None = None) -> CrossEncoderRanker:
        """A ranker saved by :meth:`save`."""
        directory = Path(directory)
        if not (directory / CONFIG_FILE).exists():
            raise FileNotFoundError(f"{directory} holds no cross-encoder ranker ({CONFIG_FILE} missing)")
        config = json.loads((directory / CONFIG_FILE).read_text())
        loading_bars_off()
        model = cls(
            AutoModel.from_pretrained(directory, use_safetensors=True), AutoTokenizer.from_pretrained(directory),
            hidden=tuple(config["hidden"]), max_length=config["max_length"],
            pooling=config.get("pooling", "cls"),  # saved before pooling was an option: [CLS]
        )
        try:
            model.head.load_state_dict(load_file(directory / HEAD_FILE))
        except (SafetensorError, RuntimeError) as err:  # truncated, not safetensors, or another head's shapes
            raise DataError(f"not a readable safetensors file of this model's head ({err}); save or train the "
                            "model again", file=directory / HEAD_FILE) from None
        return model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))


def write_model_card(directory: str | Path, info: Mapping[str, object], metrics: Mapping[str, float] | None = None,
                     against: str | None = None) -> Path:
    """Write ``README.md`` into a saved ranker's folder: how it was trained (``info``: labels, LFs, target,
    steps, …, in order) and its dev figures (``metrics``; ``against``: what they are measured against, a
    sentence)."""
    directory = Path(directory)
    lines = ["---", "library_name: sentence-transformers", "pipeline_tag: text-ranking",
             "tags: [weakrank, weak-supervision, reranker]", "---", "",
             "# A weakrank ranker", "",
             "Higher scores mean more relevant; they compare the candidates of one query. The student alone gives "
             "one logit per pair; see \"Which scores\" below where the model also carries its teacher.", "",
             "## Use", "", "```python",
             "from weakrank.ranker import load_ranker", "",
             'scores = load_ranker("path/to/model").predict([("query", "passage")])']
    if read_manifest(directory).architecture == CrossEncoderRanker.architecture:
        lines += ["", "from sentence_transformers import CrossEncoder  # sentence-transformers >= 6: the same scores", "",
                  'scores = CrossEncoder("path/to/model").predict([("query", "passage")])']
    else:  # a bi-encoder: the same order (its scores are the cosine times its scale)
        lines += ["", "from sentence_transformers import SentenceTransformer  # the student alone: the same order", "",
                  'model = SentenceTransformer("path/to/model")',
                  'scores = model.similarity(model.encode(["query"]), model.encode(["passage"]))']
    lines += ["```", "", "## Training", "", "| | |", "|---|---|"]
    lines += [f"| {key} | {_cell(value)} |" for key, value in info.items()]
    if metrics:
        lines += ["", "## Dev figures", "", *([against, ""] if against else []), "| metric | value |", "|---|---|"]
        lines += [f"| {key} | {value if isinstance(value, int) else f'{value:.4f}'} |" for key, value in metrics.items()]
    return write_text("\n".join(lines) + "\n", directory / CARD_FILE)


def _write_json(path: Path, value: object) -> None:
    write_text(json.dumps(value, indent=2), path)


def _cell(value: object) -> str:
    if isinstance(value, (list, tuple, set)):
        return ", ".join(map(str, value)) or "–"
    return str(value).replace("|", "\\|") or "–"
