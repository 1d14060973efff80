"""The teacher of a shipped ranker: the LFs and the fusion label model's fitted state, scoring lists it never saw.

A model directory carries it as ``weakrank_fusion.json`` (each LF's spec and options, the fusion model's fitted
state, a :class:`~weakrank.fusion_state.FusionState`) and ``lfs/`` (the
collection statistics of the LFs fitted on it, BM25's and TF-IDF's; the file of a user's LF; the folder of a
local encoder an LF reads). No path in it is absolute: the directory can be moved or copied to another machine.
:class:`Teacher` scores from that state alone, as the fusion model's ``fused`` does (a test holds them equal):
loading it needs no label model, config or votes. :meth:`Teacher.load` reads the directory as untrusted input
(:mod:`~weakrank.ranker.teacher_state`).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from weakrank.errors import ConfigError, DataError, LFError
from weakrank.fusion_state import STUDENT_WEIGHT, FusionState
from weakrank.io import write_text
from weakrank.labeling import score_lf
from weakrank.lf import factory_precisions
from weakrank.lf_scorer import RankingLF
from weakrank.ranker.directory import mark_shipped
from weakrank.ranker.manifest import read_manifest
from weakrank.ranker.teacher_state import (
    FUSION_FILE,
    LF_DIR,
    PATH_OPTIONS,
    STATE_FIELDS,
    LFEntry,
    TeacherState,
    check_model_files,
)
from weakrank.registry import resolve_lf

# how sentence-transformers loads a student alone, by its architecture
STUDENT_LOADERS = {"cross-encoder": "`CrossEncoder(dir)`", "bi-encoder": "`SentenceTransformer(dir)` (cosine similarity)"}


class Teacher:
    """``lfs`` fused as ``fusion_state`` says (the fusion label model's fitted state);
    ``specs`` and ``options``: how each LF is built (a built-in's name or a user's ``file.py:function``, and its
    options), what :meth:`save` writes; ``saved``: the state file an LF was restored from (a loaded teacher's,
    copied as it is by :meth:`save`)."""

    def __init__(self, lfs: Sequence[RankingLF], fusion_state: FusionState, specs: Sequence[str] | None = None,
                 options: Sequence[dict[str, Any]] | None = None, saved: Sequence[Path | None] | None = None) -> None:
        self.lfs, self.fusion_state = list(lfs), fusion_state
        self.specs = list(specs) if specs is not None else [lf.name for lf in self.lfs]
        self.options = [dict(o) for o in options] if options is not None else [{} for _ in self.lfs]
        self.saved = list(saved) if saved is not None else [None for _ in self.lfs]

    @property
    def names(self) -> list[str]:
        return [lf.name for lf in self.lfs]

    def fused(self, scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """The fused score of each row of the LFs' raw ``scores`` (rows × LFs; ``groups``: each row's list)."""
        return self.fusion_state.fused(scores, groups)

    def lf_scores(self, pairs: pd.DataFrame) -> np.ndarray:
        """Each LF's raw scores of the rows of ``pairs`` (``query_id, passage_id, query, passage``), rows × LFs."""
        for lf in self.lfs:
            if lf.per_process and lf.resource is None:  # a model, built from its options on first use
                lf.load_state()
        order = np.argsort(pairs["query_id"].to_numpy(), kind="stable")  # LFs score whole lists in chunks
        ordered = pairs.iloc[order].reset_index(drop=True)
        scores = np.empty((len(pairs), len(self.lfs)))
        scores[order] = np.column_stack([score_lf(lf, ordered) for lf in self.lfs])
        return scores

    def score_frame(self, pairs: pd.DataFrame) -> np.ndarray:
        """The fused score of each row of ``pairs``; a list is a ``query_id``."""
        pairs = pairs.reset_index(drop=True)
        return self.fused(self.lf_scores(pairs), pairs["query_id"].to_numpy())

    def save(self, directory: str | Path, student_weight: float = STUDENT_WEIGHT,
             notes: Mapping[str, Any] | None = None, card: Sequence[str] = (), taught_splits: set[str] | None = None
             ) -> Path:
        """Write the teacher into model directory ``directory`` (beside its student): each LF's state file,
        the file of a user's LF and the folder of a local encoder copied into ``lfs/``, the model card's section
        on which scores are which (with the ``card`` lines a caller adds), then ``weakrank_fusion.json`` (the commit
        point), with the student's weight in the shipped ranker and the file's ``notes`` (fields beside the state,
        such as how the weight was chosen), and last the directory's manifest, which now says
        ``shipped`` and, where given, the ``taught_splits`` whose judgments taught the model
        (:func:`~weakrank.ranker.directory.mark_shipped`). Returns the teacher's file."""
        directory = Path(directory)
        entries = []
        for lf, spec, options, saved in zip(self.lfs, self.specs, self.options, self.saved):
            state = f"{LF_DIR}/{lf.name}.npz" if lf.export_fn is not None else None
            if state and saved is not None:  # restored, not fitted: its arrays as they were saved
                if saved.resolve() != (directory / state).resolve():
                    (directory / LF_DIR).mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(saved, directory / state)
            elif state:
                lf.save_state(directory / state)
            entries.append({"name": lf.name, "spec": _portable_spec(spec, directory),
                            "options": _portable_options(lf.name, options, directory), "state": state})
        self._card(directory, sorted({e["spec"].rpartition(":")[0] for e in entries
                                      if e["spec"].startswith(LF_DIR + "/")}), student_weight, card)
        saved = {"lfs": entries, "teacher": self.fusion_state.to_dict(), "student_weight": student_weight}
        notes = {key: value for key, value in (notes or {}).items() if key not in STATE_FIELDS}  # never a state field
        written = write_text(json.dumps({**saved, **notes}, indent=1), directory / FUSION_FILE)
        mark_shipped(directory, taught_splits)
        return written

    @classmethod
    def from_checked(cls, directory: str | Path, checked: TeacherState, precision: str = "fp32") -> Teacher:
        """The teacher of a checked ``weakrank_fusion.json`` (:func:`~weakrank.ranker.teacher_state.read_teacher_state`)
        of ``directory``: built-in LFs rebuilt from their options and saved arrays, a built-in encoder LF's model run
        at ``precision`` where its factory declares it (:func:`~weakrank.lf.factory_precisions`; see
        :func:`~weakrank.similarity.shared_encoder`); a user's LF runs
        its file in ``lfs/`` (the caller decides whether that is trusted)."""
        directory = Path(directory)
        built = [_load_lf(directory, entry, i, precision) for i, entry in enumerate(checked.lfs)]
        return cls([lf for lf, _, _ in built], checked.teacher, [spec for _, spec, _ in built],
                   [options for _, _, options in built], [entry.state for entry in checked.lfs])

    def _card(self, directory: Path, code: list[str], student_weight: float, lines: Sequence[str]) -> None:
        """The model card's section that says which scores are which."""
        card = directory / "README.md"
        if not card.exists():
            return
        fused = np.asarray(self.fusion_state.weights)
        shares = fused / fused.sum()
        weights = ", ".join(f"{'+'.join(self.lfs[i].name for i in cluster)} {w:.2f}"
                            for cluster, w in zip(self.fusion_state.clusters, shares))
        text = card.read_text().split("\n## Which scores", 1)[0].rstrip("\n")
        text += ("\n\n## Which scores\n\n"
                 "- `weakrank.ranker.load_ranker(dir)`, `weakrank rerank` and `weakrank.pyterrier.reranker(dir)`: "
                 f"the shipped ranker, the student (weight {student_weight:g}) averaged with its teacher per query "
                 "(both standardised over the query's list). The teacher is the fusion label model over the LFs, "
                 f"weights {weights}.\n"
                 f"- {STUDENT_LOADERS[read_manifest(directory).architecture]} and `load_ranker(dir, student_only=True)`: "
                 "the student alone, one score per pair.\n")
        if self.fusion_state.lfs:
            text += ("- What the teacher made of each LF (family, prior, the loading agreement alone gave, the loading "
                     "used, weight, what decided it): " + "; ".join(
                         f"{w.lf} {w.family or '(own)'}, prior {'—' if w.prior is None else f'{w.prior:.2f}'}, "
                         f"{w.agreement:.2f} → {w.loading:.2f}, {w.weight:.0%}, {'prior' if w.prior_decided else 'agreement'}"
                         for w in self.fusion_state.lfs) + ".\n")
        text += "".join(f"- {line}\n" for line in lines)
        if code:
            text += ("- Loading runs no code from this directory unless asked: its teacher needs the Python file(s) "
                     f"{', '.join(code)} in `lfs/`, run only with `load_ranker(dir, trust_code=True)` or `weakrank "
                     "rerank --trust-code`; without it the student ranks alone.\n")
        write_text(text, card)


def _load_lf(directory: Path, entry: LFEntry, index: int, precision: str = "fp32") -> tuple[RankingLF, str, dict[str, Any]]:
    """The LF of ``entry`` ready to score (built from its spec and options, its state restored; a built-in encoder
    LF at ``precision``), and the spec and options it was built from (paths inside ``directory`` made whole, so
    that :meth:`Teacher.save` copies them; the precision is the loader's choice, not saved)."""
    from labeling_functions import BUILTIN

    options = dict(entry.options)
    for key, folder in entry.folders.items():  # a model folder (outside the directory only when trusted)
        check_model_files(folder)
        options[key] = str(folder)
    spec = entry.spec if entry.code is None else f"{entry.code}:{entry.spec.rpartition(':')[2]}"
    try:
        factory = BUILTIN.get(spec) if entry.code is None else None
        runs_at = {"precision": precision} if precision != "fp32" and precision in factory_precisions(factory) else {}
        lf = resolve_lf(spec, {**options, **runs_at})
        if lf.name != entry.name:
            raise ConfigError(f"builds an LF named {lf.name!r}")
        return lf.load_state(entry.state), spec, options
    except (ConfigError, LFError, OSError, ValueError, KeyError, ImportError, SyntaxError) as err:
        raise DataError(f"cannot rebuild LF {entry.name!r}: {err}", file=directory / FUSION_FILE,
                        field=f"lfs[{index}]") from None


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
    if source.resolve() != (directory / LF_DIR / source.name).resolve():  # a loaded teacher saved where it was
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
            if Path(value).expanduser().resolve() != target.resolve():
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(Path(value).expanduser(), target, ignore=shutil.ignore_patterns("onnx", ".git"))
            kept[key] = f"{LF_DIR}/{target.name}"
    return kept
