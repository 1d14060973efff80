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

if TYPE_CHECKING:
    import pandas as pd

    from weakrank.config import PipelineConfig
    from weakrank.training.config import TrainConfig

# A text's tokens: its words × the tokens a word of this collection (:func:`tokens_per_word`: MiniLM's WordPiece
# tokenizer over a sample, 1.16-1.57 on the twelve collections here: TrecQA to SciFact); tokenizing every text took
# 35× longer than counting words (WikiQA's 26,196 passages: 3.06 s against 0.086 s). Where no tokenizer loads, 1.3.
TOKENS_PER_WORD, SAMPLE = 1.3, 500
# Seconds on 2 idle x86-64 cores (Intel Xeon, torch fp32), calibrated on the WikiQA main job (`weakrank run
# pipelines/wikiqa.toml`, 29,258 pairs, nothing else running): label 197 s on 2026-11-28 and 117 s on 2026-11-27
# (bm25, tfidf, answer_type and one MiniLM pass for embedding_cosine and bert_cosine over about 0.8 M tokens; the
# estimate, 170 s, lies between), train 282 s (250 steps of 4 lists × 8 at 64 tokens, and 4 evaluations of the 286
# dev lists; estimated 291 s), rerank 48 s (estimated 41 s).
# "token": a MiniLM forward pass's (encoding, evaluation, reranking); "train token": a training step's; "pair": one
# lexical LF on one pair; "load": a model loaded (and hashed); "import": torch and sentence-transformers, by the first
# encoder; "train setup": the model loaded, the lists built, best/ and final/ written (26 s for the own-made
# fixture's 4 steps on busy cores). benchmarks/bench_estimates.py compares them with the runs timed here.
SECONDS = {"token": 1.75e-4, "train token": 4.1e-4, "pair": 1.5e-4, "load": 6.0, "import": 5.0, "train setup": 12.0}
MINILM = (6, 384)  # layers and width of the packaged encoder, the unit of the per-token costs
ENCODER_LFS = {"embedding_cosine": None, "bert_cosine": 256}  # built-in encoder LFs: max_length (None: the model's)
INT8_SPEEDUP = 1.4  # int8 encodes 1.25-1.54× faster than fp32 (benchmarks/int8_speed.csv)
AUTO_LENGTH = (0.75, 32, 128)  # [train] max_length "auto": quantile, rounded up to a multiple of, at most
CHECK_SHARE, CHECK_MAX = 0.2, 300  # without a dev split the start check holds out this share of train lists, at most


@dataclass(frozen=True)
class Encoder:
    """One forward pass that encoder LFs share: its model's ``layers`` and ``width``, the tokens it reads
    (``length``, special tokens included), its ``precision`` and whether it reads later ``windows``."""

    model: str
    layers: int
    width: int
    length: int
    precision: str = "fp32"
    windows: bool = True

    @property
    def cost(self) -> float:
        """Its per-token cost in MiniLM fp32 tokens (attention's share aside: :func:`sequence_seconds`)."""
        speed = INT8_SPEEDUP if self.precision == "int8" else 1.0
        return self.layers * self.width**2 / (MINILM[0] * MINILM[1] ** 2) / speed


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


def sequence_seconds(tokens: np.ndarray, width: int = MINILM[1]) -> np.ndarray:
    """Seconds of MiniLM-unit tokens for sequences of ``tokens`` tokens (2 special tokens added): attention adds
    length / (6 × width) to a token's cost."""
    n = np.asarray(tokens, dtype=np.float64) + 2
    return SECONDS["token"] * n * (1 + n / (6 * width))


def encode_seconds(tokens: np.ndarray, encoder: Encoder) -> float:
    """Seconds ``encoder`` takes over texts of ``tokens`` tokens: each text's first window and, with ``windows``,
    its later ones, a half window apart, the last reaching its end."""
    room = encoder.length - 2
    step = max(room // 2, 1)
    tokens = np.asarray(tokens, dtype=np.float64)
    seconds = sequence_seconds(np.minimum(tokens, room), encoder.width)
    if encoder.windows and len(tokens):
        over = np.maximum(tokens - room, 0) / step
        full, later = np.floor(over), np.ceil(over)  # later windows: the full ones, and a shorter last
        last = sequence_seconds(np.maximum(tokens - later * step, 0), encoder.width)
        seconds = seconds + full * sequence_seconds(np.array([room]), encoder.width)[0] + (later > full) * last
    return float(seconds.sum()) * encoder.cost


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
    quantile, step, cap = AUTO_LENGTH
    tokens = pairs["passage_tokens"].to_numpy() + 2
    if tc.architecture != "bi-encoder":
        tokens = tokens + pairs["query_tokens"].to_numpy() + 1
    needed = float(np.quantile(tokens, quantile)) if len(tokens) else cap
    return int(min(cap, max(step, -(-needed // step) * step)))


def forward_seconds(pairs: pd.DataFrame, length: int, cross: bool, encoder: Encoder) -> float:
    """Seconds a student at ``length`` tokens takes to score ``pairs``: a cross-encoder each pair, a bi-encoder each
    distinct text."""
    if cross:
        tokens = (pairs["query_tokens"] + pairs["passage_tokens"] + 1).to_numpy()
    else:
        tokens = distinct(pairs)["tokens"].to_numpy()
    return float(sequence_seconds(np.minimum(tokens, length - 2), encoder.width).sum()) * encoder.cost


def train_seconds(pairs: pd.DataFrame, tc: TrainConfig) -> tuple[float, float]:
    """The train stage's seconds and one step's: steps × lists × candidates × ``max_length`` tokens, and the
    evaluations (one at the end, or every ``eval_every`` steps; a bi-encoder's start check adds three) over the dev
    split's lists, else the held-out train lists."""
    layers, width, _ = model_shape(tc.encoder)
    encoder, cross = Encoder(tc.encoder, layers, width, 512), tc.architecture != "bi-encoder"
    train = pairs[pairs["split"] == tc.train_split]
    queries = train["query_id"].nunique()
    dev = pairs[pairs["split"] == tc.dev_split] if tc.dev_split else pairs.iloc[:0]
    if dev.empty:  # the start check's lists come out of training
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
    evaluations = (int(steps // tc.eval_every) if tc.eval_every else 1) + (0 if cross else 3)
    evaluation = forward_seconds(dev, length, cross, encoder)
    return SECONDS["train setup"] + steps * step + evaluations * evaluation, step


def rerank_seconds(pairs: pd.DataFrame, tc: TrainConfig, lexical: int, length: int) -> float:
    """The rerank stage's seconds over the evaluated split's ``pairs`` for a student of ``length`` tokens: its
    forward pass and, for the shipped ranker, the lexical LFs (its encoder LFs read the encodings the label stage
    kept)."""
    layers, width, _ = model_shape(tc.encoder)
    encoder = Encoder(tc.encoder, layers, width, 512)
    student = forward_seconds(pairs, length, tc.architecture != "bi-encoder", encoder)
    return SECONDS["load"] + student + (lexical * len(pairs) * SECONDS["pair"] if tc.fuse_lfs else 0.0)


@dataclass
class Estimate:
    """Each stage's rough ``seconds`` (:func:`estimate`) and one training ``step``'s."""

    seconds: dict[str, float]
    step: float = 0.0


def scored_lfs(cfg: PipelineConfig, lfs: Sequence[Any], dataset: Any, pairs: int) -> set[str]:
    """The specs of the LFs whose scores the label stage's cache (``lf_scores/``) holds for these ``pairs``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from weakrank.io import read_metadata
    from weakrank.labeling import cache_key
    from weakrank.paths import RunPaths

    folder, data_key, scored = RunPaths(cfg.run_dir).lf_scores, dataset.fingerprint(), set()
    for spec, lf in zip(cfg.label.lfs, lfs):
        path = folder / f"{lf.name}.parquet"
        try:
            same = read_metadata(path).get("fingerprint") == cache_key(lf, cfg.label.fingerprint(spec), data_key)
            scored |= {spec} if same and pq.ParquetFile(path).metadata.num_rows == pairs else set()
        except (OSError, pa.ArrowException):  # none, or not Parquet: the label stage computes it again
            continue
    return scored


def estimate(cfg: PipelineConfig, stages: Iterable[str], tc: TrainConfig | None, split: str,
             force: bool = False) -> Estimate:
    """Each of ``stages``' rough seconds on 2 idle cores (:data:`SECONDS`) from the ingested dataset's texts, the
    LFs, what the label stage's caches hold (nothing with ``force``), ``[train]`` (``tc``) and ``split`` (what
    rerank and evaluate score); empty before anything is ingested."""
    from weakrank.dataset import Dataset
    from weakrank.paths import RunPaths
    from weakrank.registry import resolve_lf

    paths, stages = RunPaths(cfg.run_dir), list(stages)
    if not paths.candidates.exists():
        return Estimate({})
    dataset = Dataset.load(paths.dataset)
    pairs = with_tokens(dataset.pairs())
    lfs = [resolve_lf(spec, cfg.label.lf_options.get(spec)) for spec in cfg.label.lfs]
    uses = {spec: lf_encoder(spec, cfg.label.lf_options.get(spec), lf.models) for spec, lf in zip(cfg.label.lfs, lfs)}
    scored = scored_lfs(cfg, lfs, dataset, len(pairs)) if "label" in stages and not force else set()
    lexical = [spec for spec, encoder in uses.items() if encoder is None]
    seconds = {"ingest": 1 + len(pairs) * 2e-5, "aggregate": 1 + len(pairs) * 5e-5, "analyze": 1 + len(pairs) * 5e-5}
    if "label" in stages:
        seconds["label"] = label_seconds(
            pairs, [e for spec, e in uses.items() if e is not None and spec not in scored],
            len(set(lexical) - scored), (lambda _: set()) if force else (lambda e: cached_keys(paths.encodings, e)))
    step = 0.0
    if tc is not None:
        seconds["train"], step = train_seconds(pairs, tc)
        tested = pairs[pairs["split"] == split]
        length = train_length(pairs[pairs["split"] == tc.train_split], tc)
        seconds["rerank"] = rerank_seconds(tested, tc, len(lexical), length)
        seconds["evaluate"] = 2 + len(tested) * 5e-4
    return Estimate({stage: seconds[stage] for stage in stages if stage in seconds}, step)
