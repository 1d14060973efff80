"""The shipped ranker: the trained student averaged with its teacher, the fusion label model over the LFs.

A trained model directory holds the student (a cross-encoder or bi-encoder that loads alone, also as
``CrossEncoder(dir)``) and, written by :func:`ship`, what its teacher needs to score lists it never saw:
``weakrank_fusion.json`` (each LF's spec and options, the fusion model's fitted state) and ``lfs/`` (the
collection statistics of the LFs fitted on it, BM25's and TF-IDF's; the file of a user's LF; the folder of a
local encoder an LF reads). No path in it is absolute: the directory can be moved or copied to another machine.
Loading it runs no code of its own unless the caller trusts it (:meth:`FusedRanker.load`).

:func:`weakrank.training.rankers.load_ranker` returns a :class:`FusedRanker` for such a directory. Its scores
are those of ``weakrank rerank`` with ``fuse_lfs``: per query, the student's scores and the teacher's fused LF
scores, each standardised over the query's list, averaged. They compare candidates of one list only.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from weakrank.config import PipelineConfig
from weakrank.dataset import Dataset
from weakrank.errors import ConfigError, DataError, LFError
from weakrank.io import read_metadata, read_parquet, write_text
from weakrank.label_models.fusion import ScoreFusionModel, average_views
from weakrank.labeling import lf_names, score_lf
from weakrank.lf import RankingLF
from weakrank.paths import RunPaths
from weakrank.registry import resolve_lf
from weakrank.training.ranking import RanksPassages
from weakrank.training.teacher_state import (
    FUSION_FILE,
    LF_DIR,
    LFEntry,
    check_model_files,
    inside,
    read_teacher_state,
)

PATH_OPTIONS = ("model",)  # built-in LF options that may name a local folder (an encoder's weights)


class FusedRanker(RanksPassages):
    """A student and its teacher (``lfs`` fused by ``teacher``), scored together list by list."""

    def __init__(self, student: RanksPassages, lfs: Sequence[RankingLF], teacher: ScoreFusionModel) -> None:
        self.student, self.lfs, self.teacher = student, list(lfs), teacher

    def score_frame(self, pairs: pd.DataFrame, batch_size: int = 64) -> np.ndarray:
        """Scores of the rows of ``pairs`` (``query_id, passage_id, query, passage``); a list is a ``query_id``."""
        if pairs.empty:
            return np.zeros(0)
        pairs = pairs.reset_index(drop=True)
        student = self.student.predict(list(zip(pairs["query"], pairs["passage"])), batch_size=batch_size)
        order = np.argsort(pairs["query_id"].to_numpy(), kind="stable")  # LFs score whole lists in chunks
        ordered = pairs.iloc[order].reset_index(drop=True)
        lf_scores = np.empty((len(pairs), len(self.lfs)))
        lf_scores[order] = np.column_stack([score_lf(lf, ordered) for lf in self.lfs])
        groups = pairs["query_id"].to_numpy()
        return average_views(self.teacher.fused(lf_scores, groups), student, groups)

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64,
                groups: Sequence[str] | None = None) -> np.ndarray:
        """Scores of ``(query, passage)`` pairs; a list is the pairs of one query text (or of one ``groups`` id)."""
        queries, passages = [q for q, _ in pairs], [p for _, p in pairs]
        frame = pd.DataFrame({"query_id": list(groups) if groups is not None else queries,
                              "passage_id": [f"p{i}" for i in range(len(pairs))], "query": queries, "passage": passages})
        return self.score_frame(frame, batch_size)

    @classmethod
    def load(cls, directory: str | Path, student: RanksPassages, trust_code: bool = False) -> RanksPassages:
        """The teacher saved by :func:`ship` in ``directory``, around its ``student``. Its state is checked as
        untrusted input (:func:`~weakrank.training.teacher_state.read_teacher_state`); built-in LFs are rebuilt
        from their options and saved arrays alone. A user's LF runs the file it names in the directory's
        ``lfs/`` only with ``trust_code``; without it the student is returned alone, with a warning."""
        from labeling_functions import BUILTIN

        directory = Path(directory)
        state = read_teacher_state(directory, set(BUILTIN))
        code = [lf.code for lf in state.lfs if lf.code is not None]
        if code and not trust_code:
            warnings.warn(f"{directory}: its teacher runs Python code ({', '.join(str(c) for c in code)}); loaded as "
                          "the student alone. Pass trust_code=True (`--trust-code`) if you trust that code.",
                          UntrustedCodeWarning, stacklevel=2)
            return student
        lfs = [_load_lf(directory, entry, i) for i, entry in enumerate(state.lfs)]
        return cls(student, lfs, ScoreFusionModel.from_state(state.teacher))


class UntrustedCodeWarning(UserWarning):
    """A model directory's teacher needs code that the caller did not trust: the student is used alone."""


def _load_lf(directory: Path, entry: LFEntry, index: int) -> RankingLF:
    """The LF of ``entry`` ready to score: built from its spec and options, its state restored."""
    options = dict(entry.options)
    for key in PATH_OPTIONS:
        value = options.get(key)
        if isinstance(value, str) and value.startswith(LF_DIR + "/"):  # a model folder carried in the directory
            folder = inside(directory, value, f"lfs[{index}].options.{key}", directory / FUSION_FILE)
            check_model_files(folder)
            options[key] = str(folder)
    spec = entry.spec if entry.code is None else f"{entry.code}:{entry.spec.rpartition(':')[2]}"
    try:
        lf = resolve_lf(spec, options)
        if lf.name != entry.name:
            raise ConfigError(f"builds an LF named {lf.name!r}")
        return lf.load_state(entry.state)
    except (ConfigError, LFError, OSError, ValueError, KeyError, ImportError, SyntaxError) as err:
        raise DataError(f"cannot rebuild LF {entry.name!r}: {err}", file=directory / FUSION_FILE,
                        field=f"lfs[{index}]") from None


def ship(cfg: PipelineConfig, *directories: str | Path, labels: str | Path | None = None) -> list[Path] | None:
    """Write the teacher of a model trained on ``cfg``'s run directory into each of ``directories``: each LF
    (spec, options, collection statistics) and the fusion label model as ``aggregate`` fitted it (its state in
    ``labels``, by default labels.parquet; refitted without gold on every pair of ``votes.parquet`` when the
    labels come from another label model or carry no state). Returns the fusion files written; None, with a warning, when an LF cannot
    score without the collection (a ``fit`` without ``export``): the directories stay the student's."""
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    lfs = [resolve_lf(spec, cfg.label.lf_options.get(spec)) for spec in cfg.label.lfs]
    if [lf.name for lf in lfs] != lf_names(votes):
        raise DataError(f"labelled by the LFs {lf_names(votes)}, but [label] lfs names {[lf.name for lf in lfs]}: "
                        "re-run `weakrank label`", file=paths.votes)
    stuck = [lf.name for lf in lfs if not lf.portable]
    if stuck:
        warnings.warn(f"LFs {stuck} are fitted on the collection and export no state: {', '.join(map(str, directories))} "
                      "holds the student alone (give ranking_lf export= and restore=)", stacklevel=2)
        return None
    teacher = _teacher(cfg, Path(labels) if labels else paths.labels, votes)
    dataset = Dataset.load(paths.dataset) if any(lf.export_fn for lf in lfs) else None
    fitted = [lf.fit(dataset) if lf.export_fn is not None else lf for lf in lfs]
    written = []
    for directory in map(Path, directories):
        entries = []
        for spec, lf in zip(cfg.label.lfs, fitted):
            state = f"{LF_DIR}/{lf.name}.npz" if lf.export_fn is not None else None
            if state:
                lf.save_state(directory / state)
            entries.append({"name": lf.name, "spec": _portable_spec(spec, directory),
                            "options": _portable_options(lf.name, cfg.label.lf_options.get(spec, {}), directory),
                            "state": state})
        _card(directory, lfs, teacher, sorted({e["spec"].rpartition(":")[0] for e in entries
                                               if e["spec"].startswith(LF_DIR + "/")}))
        saved = {"lfs": entries, "teacher": teacher.state()}
        written.append(write_text(json.dumps(saved, indent=1), directory / FUSION_FILE))  # the commit point
    return written


def _teacher(cfg: PipelineConfig, labels: Path, votes: pd.DataFrame) -> ScoreFusionModel:
    """The fusion label model that wrote ``labels`` (few-shot weighting included), else one fitted without gold
    on every pair of ``votes``."""
    meta = read_metadata(labels) if labels.exists() else {}
    state = meta.get("params") or {}
    if meta.get("model") == "fusion" and meta.get("lfs") == lf_names(votes) and "scales" in state:
        return ScoreFusionModel.from_state(state)
    options = cfg.aggregate.options if cfg.aggregate.model == "fusion" else {}
    return ScoreFusionModel(**options).fit_table(votes)


def _portable_spec(spec: str, directory: Path) -> str:
    """``spec`` as the model directory keeps it: a user's LF (``path.py:function`` or ``module:function``) as a
    copy of its file in ``lfs/``; a built-in by its name."""
    from labeling_functions import BUILTIN

    if spec in BUILTIN:
        return spec
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        source = Path(target)
    else:
        found = importlib.util.find_spec(target)
        if found is None or not found.origin or not found.origin.endswith(".py"):
            raise DataError(f"LF {spec!r}: its module is not a Python file that a model directory can carry",
                            field="[label] lfs")
        source = Path(found.origin)
    (directory / LF_DIR).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, directory / LF_DIR / source.name)
    return f"{LF_DIR}/{source.name}:{attr}"


def _portable_options(name: str, options: dict, directory: Path) -> dict:
    """An LF's options as the model directory keeps them: a local model folder (``model = "/path"``) copied into
    ``lfs/<lf>.<option>/`` and named relative to the directory, so that no absolute path is kept."""
    kept = dict(options)
    for key in PATH_OPTIONS:
        value = kept.get(key)
        if isinstance(value, str) and Path(value).expanduser().is_dir():
            target = directory / LF_DIR / f"{name}.{key}"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(Path(value).expanduser(), target, ignore=shutil.ignore_patterns("onnx", ".git"))
            kept[key] = f"{LF_DIR}/{target.name}"
    return kept


def _card(directory: Path, lfs: list[RankingLF], teacher: ScoreFusionModel, code: list[str]) -> None:
    """The model card's section that says which scores are which."""
    card = directory / "README.md"
    if not card.exists():
        return
    weights = ", ".join(f"{'+'.join(lfs[i].name for i in cluster)} {w:.2f}"
                        for cluster, w in zip(teacher.clusters_, teacher.weights_ / teacher.weights_.sum()))
    text = card.read_text().split("\n## Which scores", 1)[0].rstrip("\n")
    text += ("\n\n## Which scores\n\n"
             "- `weakrank.training.rankers.load_ranker(dir)`, `weakrank rerank` and `weakrank.pyterrier.reranker(dir)`: "
             "the shipped ranker, the student averaged with its teacher per query (both standardised over the "
             f"query's list). The teacher is the fusion label model over the LFs, weights {weights}.\n"
             "- `CrossEncoder(dir)` and `load_ranker(dir, student_only=True)`: the student alone, one logit per pair.\n")
    if code:
        text += ("- Loading runs no code from this directory unless asked: its teacher needs the Python file(s) "
                 f"{', '.join(code)} in `lfs/`, run only with `load_ranker(dir, trust_code=True)` or `weakrank rerank "
                 "--trust-code`; without it the student ranks alone.\n")
    write_text(text, card)
