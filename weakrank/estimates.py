"""Each stage's rough time from the work it does (:func:`estimate`; corrected on the user's machine by the first
batches timed: :mod:`weakrank.pace`): for each encoder (encoder LFs over one model, length and precision share one
pass) the tokens of the distinct texts it must encode, later windows included, less what ``encodings/`` and
``lf_scores/`` hold; the lexical LFs by pairs; training by steps × lists × candidates × ``max_length`` tokens and its
evaluations; reranking by the evaluated split's texts. Per-token costs are MiniLM's (6 layers, 384 wide), scaled
for another encoder by layers × width² and, within a sequence, by its length (attention)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from weakrank.costs import SECONDS, Encoder, encode_seconds, sequence_seconds

if TYPE_CHECKING:
    import pandas as pd

    from weakrank.config import PipelineConfig
    from weakrank.training.config import TrainConfig

# A text's tokens: its words × the tokens a word of this collection (:func:`tokens_per_word`: MiniLM's WordPiece
# tokenizer over a sample, 1.16-1.57 on the twelve collections here: TrecQA to SciFact); tokenizing every text took
# 35× longer than counting words (WikiQA's 26,196 passages: 3.06 s against 0.086 s). Where no tokenizer loads, 1.3.
TOKENS_PER_WORD, SAMPLE = 1.3, 500
ENCODER_LFS = {"embedding_cosine": None, "bert_cosine": 256}  # built-in encoder LFs: max_length (None: the model's)


def model_shape(name_or_path: str) -> tuple[int, int, int]:
    """Layers, width and the tokens a sentence-transformers model reads, from its files where they are here
    (the packaged MiniLM: 6, 384, 256); a BERT-base's (12, 768, 512) where they are not."""
    from weakrank.encoders import resolve_model

    folder = Path(resolve_model(name_or_path))
    try:
        if not folder.is_dir():  # a hub name: the files of its download, where there is one
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(name_or_path, "config.json")
            folder = Path(found).parent if isinstance(found, str) else folder
        config = json.loads((folder / "config.json").read_text())
        st = folder / "sentence_bert_config.json"
        length = json.loads(st.read_text())["max_seq_length"] if st.exists() else config["max_position_embeddings"]
        return config["num_hidden_layers"], config["hidden_size"], min(int(length), 512)
    except (ImportError, OSError, KeyError, ValueError):
        return 12, 768, 512


def lf_encoder(spec: str, options: dict[str, Any] | None, models: Sequence[str] = ()) -> Encoder | None:
    """The encoder a built-in encoder LF (:data:`ENCODER_LFS`) runs with these options; for another LF that declares
    ``models``, the first's at its own length, without windows; else None."""
    if spec not in ENCODER_LFS:
        return Encoder(models[0], *model_shape(models[0]), windows=False) if models else None
    options = options or {}
    model = str(options.get("model", "minilm"))
    layers, width, own = model_shape(model)
    length = int(options.get("max_length") or ENCODER_LFS[spec] or own)
    return Encoder(model, layers, width, min(length, own) if spec == "embedding_cosine" else length,
                   str(options.get("precision", "fp32")), options.get("windows", "first+best") != "first")


def tokens_per_word(texts: Sequence[str]) -> float:
    """The tokens a word of ``texts``: MiniLM's tokenizer over :data:`SAMPLE` of them (a fixed draw);
    :data:`TOKENS_PER_WORD` where it does not load."""
    chosen = [texts[i] for i in np.random.default_rng(0).permutation(len(texts))[:SAMPLE]]
    words = sum(len(t.split()) for t in chosen)
    try:
        from transformers import AutoTokenizer

        from weakrank.encoders import resolve_model

        tokenizer = AutoTokenizer.from_pretrained(resolve_model())
        tokens = sum(map(len, tokenizer(chosen, add_special_tokens=False, verbose=False)["input_ids"]))
    except (ImportError, OSError, ValueError):
        return TOKENS_PER_WORD
    return tokens / words if words else TOKENS_PER_WORD


def with_tokens(pairs: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` (columns ``query``, ``passage``) with each side's tokens, special tokens aside (``query_tokens``,
    ``passage_tokens``): its words × :func:`tokens_per_word` of the passages."""
    per_word = tokens_per_word(pairs["passage"].unique().tolist())
    words = {side: np.array([len(t.split()) for t in pairs[side]], dtype=np.float64) for side in ("query", "passage")}
    return pairs.assign(query_tokens=words["query"] * per_word, passage_tokens=words["passage"] * per_word)


def cached_keys(folder: Path, encoder: Encoder) -> set[bytes]:
    """The text keys (:func:`~weakrank.similarity.text_key`) whose encodings by ``encoder`` ``folder`` keeps."""
    from weakrank.encoders import content_hash, resolve_model
    from weakrank.similarity import encodings_file

    path = encodings_file(folder, content_hash(resolve_model(encoder.model)), encoder.length, encoder.precision)
    try:
        with np.load(path) as arrays:
            return set(arrays["keys"].tolist())
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):  # none, or unreadable: the label stage says which
        return set()


def distinct(pairs: pd.DataFrame) -> pd.DataFrame:
    """The distinct texts of ``pairs`` (:func:`with_tokens`), queries and passages: ``text``, ``tokens``."""
    import pandas as pd

    sides = [pairs[[side, f"{side}_tokens"]].set_axis(["text", "tokens"], axis=1) for side in ("query", "passage")]
    return pd.concat(sides).drop_duplicates("text")


def label_seconds(pairs: pd.DataFrame, encoders: Sequence[Encoder], lexical: int,
                  kept: Callable[[Encoder], set[bytes]] = lambda _: set()) -> float:
    """The label stage's seconds over ``pairs`` (:func:`with_tokens`): each encoder's texts less those
    ``kept(encoder)`` holds (text keys), ``lexical`` LFs by pairs, a model load per encoder."""
    texts = distinct(pairs)
    seconds, imported = lexical * len(pairs) * SECONDS["pair"], 0.0
    for encoder in set(encoders):
        have = kept(encoder)
        left = texts[[hashlib.sha1(t.encode()).digest() not in have for t in texts["text"]]] if have else texts
        if len(left):
            seconds += SECONDS["load"] + encode_seconds(left["tokens"].to_numpy(), encoder)
            imported = SECONDS["import"]
    return seconds + imported


def train_length(pairs: pd.DataFrame, tc: TrainConfig) -> int:
    """``[train] max_length``, read from the pairs' token proxies where it is "auto" (as
    :func:`~weakrank.training.lengths.auto_max_length`)."""
    if tc.max_length != "auto":
        return int(tc.max_length)
    from weakrank.training.lengths import CAP as cap
    from weakrank.training.lengths import QUANTILE as quantile
    from weakrank.training.lengths import STEP as step

    tokens = pairs["passage_tokens"].to_numpy() + 2
    if tc.architecture != "bi-encoder":
        tokens = tokens + pairs["query_tokens"].to_numpy() + 1
    needed = float(np.quantile(tokens, quantile)) if len(tokens) else cap
    return int(min(cap, max(step, -(-needed // step) * step)))


def read_length(tc: TrainConfig, length: int) -> int:
    """The tokens a student trained at ``length`` reads when it is evaluated and ranks: a bi-encoder at least its
    model's own length (as the embedding LF reads its first window), a cross-encoder ``length``."""
    return max(model_shape(tc.encoder)[2], length) if tc.architecture == "bi-encoder" else length


def forward_seconds(pairs: pd.DataFrame, length: int, cross: bool, encoder: Encoder) -> float:
    """Seconds a student at ``length`` tokens takes to score ``pairs``: a cross-encoder each pair, a bi-encoder each
    distinct text."""
    if cross:
        tokens = (pairs["query_tokens"] + pairs["passage_tokens"] + 1).to_numpy()
    else:
        tokens = distinct(pairs)["tokens"].to_numpy()
    return float(sequence_seconds(np.minimum(tokens, length - 2), encoder.width).sum()) * encoder.cost


def train_seconds(pairs: pd.DataFrame, tc: TrainConfig) -> tuple[float, float, float]:
    """The train stage's seconds, one step's and the steps: steps × lists × candidates × ``max_length`` tokens, and the
    evaluations (one at the end, or every ``eval_every`` steps; a bi-encoder's start check adds two: the start and
    the halfway mix) over the dev split's lists, else the held-out train lists."""
    layers, width, _ = model_shape(tc.encoder)
    encoder, cross = Encoder(tc.encoder, layers, width, 512), tc.architecture != "bi-encoder"
    train = pairs[pairs["split"] == tc.train_split]
    queries = train["query_id"].nunique()
    dev = pairs[pairs["split"] == tc.dev_split] if tc.dev_split else pairs.iloc[:0]
    if dev.empty:  # the start check's lists come out of training
        from weakrank.training.start_check import CHECK_MAX, CHECK_SHARE

        held = train["query_id"].drop_duplicates().head(min(round(CHECK_SHARE * queries), CHECK_MAX))
        dev, queries = train[train["query_id"].isin(held)], queries - len(held)
    batches = -(-queries // tc.batch_size)
    steps = float(tc.max_steps or tc.epochs * batches)
    steps = min(steps, tc.max_epochs * batches) if tc.max_epochs else steps
    length = train_length(train, tc)
    tokens = tc.batch_size * getattr(tc, "group_size", 8) * length
    if not cross:
        tokens += tc.batch_size * min(float(train["query_tokens"].mean()) + 2 if len(train) else 0, length)
    step = SECONDS["train token"] * tokens * (1 + length / (6 * width)) * encoder.cost
    evaluations = (int(steps // tc.eval_every) if tc.eval_every else 1) + (0 if cross else 2)
    evaluation = forward_seconds(dev, read_length(tc, length), cross, encoder)
    return SECONDS["train setup"] + steps * step + evaluations * evaluation, step, steps


def teacher_seconds(pairs: pd.DataFrame, tc: TrainConfig, lexical: int) -> float:
    """The shipped ranker's teacher over ``pairs`` at rerank: its ``lexical`` LFs (its encoder LFs read the encodings
    the label stage kept); 0 for a student alone (no ``fuse_lfs``)."""
    return lexical * len(pairs) * SECONDS["rerank pair"] if tc.fuse_lfs else 0.0


def rerank_seconds(pairs: pd.DataFrame, tc: TrainConfig, lexical: int, length: int) -> float:
    """The rerank stage's seconds over the evaluated split's ``pairs`` for a student of ``length`` tokens: its
    forward pass and, for the shipped ranker, its teacher (:func:`teacher_seconds`)."""
    layers, width, _ = model_shape(tc.encoder)
    encoder = Encoder(tc.encoder, layers, width, 512)
    student = forward_seconds(pairs, read_length(tc, length), tc.architecture != "bi-encoder", encoder)
    return SECONDS["load"] + student + teacher_seconds(pairs, tc, lexical)


@dataclass
class Estimate:
    """Each stage's rough ``seconds`` (:func:`estimate`), one training ``step``'s and the ``steps``, and rerank's
    where the shipped ranker is its teacher alone (``teacher_rerank``: the student's weight 0, the lexical LFs' time;
    which case it is, training tells)."""

    seconds: dict[str, float]
    step: float = 0.0
    steps: float = 0.0
    teacher_rerank: float | None = None  # rerank's seconds where the student weighs 0; None: no teacher (no fuse_lfs)


def scored_lfs(cfg: PipelineConfig, lfs: Sequence[Any], dataset: Any, pairs: int) -> set[str]:
    """The specs of the LFs whose scores the label stage's cache (``lf_scores/``) holds for these ``pairs``."""
    from weakrank.labeling import cache_key, holds_scores
    from weakrank.paths import RunPaths

    folder, data_key = RunPaths(cfg.run_dir).lf_scores, dataset.fingerprint()
    scored = {spec for spec, lf in zip(cfg.label.lfs, lfs)
              if holds_scores(folder, lf.name, cache_key(lf, cfg.label.fingerprint(spec), data_key), pairs)}
    return scored


def estimate(cfg: PipelineConfig, stages: Iterable[str], tc: TrainConfig | None, split: str,
             force: bool = False, lfs: Sequence[Any] | None = None) -> Estimate:
    """Each of ``stages``' rough seconds on 2 idle cores (:data:`SECONDS`) from the ingested dataset's texts, the
    LFs (``lfs``: those of ``[label] lfs`` already built, else built here), what the label stage's caches hold
    (nothing with ``force``), ``[train]`` (``tc``) and ``split`` (what rerank and evaluate score); empty before
    anything is ingested."""
    from weakrank.dataset import Dataset
    from weakrank.paths import RunPaths
    from weakrank.registry import resolve_lfs

    paths, stages = RunPaths(cfg.run_dir), list(stages)
    if not paths.candidates.exists():
        return Estimate({})
    dataset = Dataset.load(paths.dataset)
    pairs = with_tokens(dataset.pairs())
    lfs = list(lfs) if lfs is not None else resolve_lfs(cfg.label.lfs, cfg.label.lf_options)
    uses = {spec: lf_encoder(spec, cfg.label.lf_options.get(spec), lf.models) for spec, lf in zip(cfg.label.lfs, lfs)}
    scored = scored_lfs(cfg, lfs, dataset, len(pairs)) if "label" in stages and not force else set()
    lexical = [spec for spec, encoder in uses.items() if encoder is None]
    seconds = {"ingest": 1 + len(pairs) * 2e-5, "aggregate": 1 + len(pairs) * 5e-5, "analyze": 1 + len(pairs) * 5e-5}
    if "label" in stages:
        seconds["label"] = label_seconds(
            pairs, [e for spec, e in uses.items() if e is not None and spec not in scored],
            len(set(lexical) - scored), (lambda _: set()) if force else (lambda e: cached_keys(paths.encodings, e)))
    step = steps = 0.0
    alone = None
    if tc is not None:
        seconds["train"], step, steps = train_seconds(pairs, tc)
        tested = pairs[pairs["split"] == split]
        length = train_length(pairs[pairs["split"] == tc.train_split], tc)
        seconds["rerank"] = rerank_seconds(tested, tc, len(lexical), length)
        alone = teacher_seconds(tested, tc, len(lexical)) if tc.fuse_lfs else None
        seconds["evaluate"] = 2 + len(tested) * 5e-4
    return Estimate({stage: seconds[stage] for stage in stages if stage in seconds}, step, steps, alone)
