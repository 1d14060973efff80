"""No stale cache: an LF's cached scores and the kept text encodings are keyed on the model's content (not its
path) and the LF's module; ``label --force`` reads no cache; cached scores must be finite as fresh ones."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from tests.test_bad_input import _trec
from weakrank import pipeline
from weakrank.config import load_config
from weakrank.encoders import resolve_model
from weakrank.io import read_metadata, read_npz, read_parquet, write_npz, write_parquet
from weakrank.paths import RunPaths


def _pipeline(tmp_path: Path, lfs: list[str], options: str = "", run: str = "run") -> Path:
    cfg = tmp_path / f"{run}.toml"
    cfg.write_text(f'run_dir = "{tmp_path / run}"\n[dataset]\nloader = "trec"\npath = "{tmp_path}"\n'
                   f"[label]\nlfs = {json.dumps(lfs)}\n{options}")
    return cfg


def _label(cfg: Path, force: bool = False):
    loaded = load_config(cfg)
    if not RunPaths(loaded.run_dir).dataset.exists():
        pipeline.ingest(loaded)
    return pipeline.label(loaded, progress=False, force=force)


def _model_copy(folder: Path) -> Path:
    """The packaged MiniLM as a folder of one's own (its weights linked, the small files copied)."""
    source = Path(resolve_model())
    for file in source.rglob("*"):
        target = folder / file.relative_to(source)
        if file.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif file.name == "model.safetensors":
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(file, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.read_bytes())
    return folder


def test_a_model_changed_in_place_is_not_read_back_from_the_score_or_encoding_caches(tmp_path):
    model = _model_copy(tmp_path / "model")
    options = f'[label.options.embedding_cosine]\nmodel = "{model}"\n'
    cfg = _pipeline(_trec(tmp_path), ["bm25", "embedding_cosine"], options)
    mean = _label(cfg)["score_embedding_cosine"]
    [kept] = RunPaths(tmp_path / "run").encodings.glob("*.npz")
    write_npz({name: np.zeros_like(array) if array.dtype.kind == "f" else array
               for name, array in read_npz(kept).items()}, kept)  # encodings that are not the model's
    assert np.allclose(_label(cfg, force=True)["score_embedding_cosine"], mean)  # --force reads no kept encoding
    pooling = model / "1_Pooling" / "config.json"  # the same path, another model: [CLS] instead of the mean
    config = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**config, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}))
    fresh = _label(_pipeline(tmp_path, ["bm25", "embedding_cosine"], options, run="fresh"))["score_embedding_cosine"]
    assert not np.allclose(fresh, mean)
    assert np.allclose(_label(cfg)["score_embedding_cosine"], fresh)


HELPER = """
from weakrank.lf import ranking_lf


def helper(query, passage):
    return float(len(set(query.split()) & set(passage.split())))


@ranking_lf()
def shared(query, passage):
    return helper(query, passage)
"""


def test_an_lf_whose_module_changed_is_scored_again(tmp_path):
    (tmp_path / "mine.py").write_text(HELPER)
    cfg = _pipeline(_trec(tmp_path), ["bm25", f"{tmp_path / 'mine.py'}:shared"])
    assert _label(cfg)["score_shared"].tolist() == [2.0, 2.0]
    (tmp_path / "mine.py").write_text(HELPER.replace("float(len(", "-float(len("))  # the helper alone changed
    assert _label(cfg)["score_shared"].tolist() == [-2.0, -2.0]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_cached_scores_that_are_not_finite_are_scored_again(tmp_path, bad):
    cfg = _pipeline(_trec(tmp_path), ["bm25", "tfidf"])
    votes = _label(cfg)
    cache = RunPaths(tmp_path / "run").lf_scores / "bm25.parquet"
    scores = read_parquet(cache)
    write_parquet(scores.assign(score=[bad] * len(scores)), cache, metadata=read_metadata(cache))
    assert _label(cfg).equals(votes)
    assert np.isfinite(read_parquet(cache)["score"]).all()


def test_scores_cached_at_one_precision_are_never_read_back_at_the_other(tiny, tmp_path):
    from labeling_functions import make_embedding_cosine
    from weakrank.labeling import apply_lfs, cache_key

    lfs = {precision: make_embedding_cosine(precision=precision) for precision in ("fp32", "int8")}
    keys = {precision: cache_key(lf, "same options", tiny.fingerprint()) for precision, lf in lfs.items()}
    assert keys["fp32"] != keys["int8"]  # the precision is in the key, whatever the options say

    def label(precision: str) -> np.ndarray:
        return apply_lfs(tiny, [lfs[precision]], cache_dir=tmp_path, fingerprints={"embedding_cosine": keys[precision]},
                         progress=False)["score_embedding_cosine"].to_numpy()

    fp32 = label("fp32")
    int8 = label("int8")  # fp32's cached scores are in tmp_path: not read
    assert not np.allclose(int8, fp32, rtol=0, atol=1e-6) and np.corrcoef(int8, fp32)[0, 1] > 0.9
    assert read_metadata(tmp_path / "embedding_cosine.parquet")["fingerprint"] == keys["int8"]
    assert np.array_equal(label("fp32"), fp32)  # and the reverse
