"""The up-front time of each stage (``weakrank.estimates``: from the work, as 2 idle cores take it) against the
time measured, on the runs timed here; no run is launched.

Rows: fresh runs of the shared collections and the own collection on idle cores (``data/est/*``: the estimate
their plan said up front, :func:`planned_runs`) and beside a process that keeps one of the two cores busy
(``data/est_busy/*``, the shared collections cut to 100 queries per split and 40 steps: the "busy" rows, whose
``paced_s`` is what counts there); each run directory with a ``timings.json`` and an ingested dataset (the quick start, ``data/quickstart``, and
the four unseen collections, ``data/unseen/*``: timed with other jobs sometimes running on the same 2 cores), its
label, train and rerank stages; the label stage estimated with the caches as that run found them (an LF whose
``lf_scores/`` file the run wrote is counted with its texts all to encode; the others as cached). Also where an
earlier run of the collection wrote its lexical and its encoder LFs' scores in one label stage, the encoder LFs
alone (``label encoders``: the time between the two files, the texts all to encode), and the idle-core timings the
README and the notebook quote (``WikiQA main job``, the calibration; the cross-encoder quick start of 2026-11-27).
A rerank whose shipped ranker is its teacher alone (the student's weight 0 in ``weakrank_fusion.json``: kept at its
start, or earning no share) runs no student and takes a second or less; the plan says rerank's time both ways, and
such a row compares the measured time with the plan's teacher-alone figure (``teacher_alone_s`` in ``timings.json``,
else computed from the run's data with today's constants, as rerank also says it as it starts). Times under a second
are printed "<1 s": a row where the time said and the time taken are both under one is as close as a person reads.
Writes ``benchmarks/estimates.csv`` (``run, stage, estimated_s, measured_s, ratio, paced_s, paced_ratio, cores,
note``: ratio is measured over estimated; ``paced_s``, where a run's ``timings.json`` records it (runs since the
estimates from the work), the time label or train said in all once its first batches were timed).
Run: ``python benchmarks/bench_estimates.py`` (seconds).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from weakrank import estimates
from weakrank.config import PipelineConfig, load_config
from weakrank.dataset import Dataset
from weakrank.paths import RunPaths
from weakrank.stages.stage import train_config

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks" / "estimates.csv"
RUNS = {"data/quickstart": ("pipelines/wikiqa.toml", {"max_queries": 300}),
        **{f"data/unseen/{name}": (f"benchmarks/collections/{name}.toml", {}) for name in ("med", "cisi", "cacm",
                                                                                          "msmarco")}}
BUSY = "timed with other jobs sometimes running"
KEPT = ("; the shipped ranker is its teacher alone (the student's weight 0): no student runs; estimated and paced: "
        "the plan's figure for that case, which rerank says as it starts (computed with today's constants where the run "
        "predates it)")
PLANNED = "a fresh run, each pipeline's defaults, 2026-11-29: the plan's own up-front estimate"
BUSY_PLANNED = ("a fresh run beside a process that keeps one core busy, 2026-11-29 (the shared collections with "
                "--max-queries 100 --max-steps 40): the plan's up-front estimate for idle cores; paced: once its first "
                "batches were timed")
# idle-core timings quoted in README.md and docs/experiments.md: run dir (its dataset), config, [train] overrides,
# the stages' seconds, note
IDLE = [("data/wikiqa", "pipelines/wikiqa.toml", {}, {"label": 197, "train": 282, "rerank": 48},
         "WikiQA main job, 2026-11-28, README: the calibration"),
        ("data/wikiqa", "pipelines/wikiqa.toml", {}, {"label": 116.6}, "WikiQA main job, 2026-11-27 (notebook)"),
        ("data/quickstart", "pipelines/wikiqa.toml", {"max_steps": 100, "architecture": "cross-encoder"},
         {"label": 48, "train": 101, "rerank": 20}, "quick start, cross-encoder student, 2026-11-27 (notebook)"),
        *[(f"data/est/{name}", f"pipelines/{name}.toml", {}, {"rerank": seconds},
           "the fresh run's rerank re-timed alone (the stage's scoring, outside a run) once a passage that several "
           "chunks share is encoded once, 2026-11-29 (notebook)") for name, seconds in (("wikiqa_bm25", 68.6),
                                                                                        ("wikiqa", 52.3))]]


def pairs_of(run_dir: Path) -> pd.DataFrame:
    """The ingested dataset's pairs, with their texts and tokens."""
    return estimates.with_tokens(Dataset.load(RunPaths(run_dir).dataset).pairs())


def label_work(cfg: PipelineConfig, pairs: pd.DataFrame, computed: set[str]) -> float:
    """The label stage's estimate with the LFs of ``computed`` to score and their texts all to encode."""
    from weakrank.registry import resolve_lf

    uses = {spec: estimates.lf_encoder(spec, cfg.label.lf_options.get(spec),
                                       resolve_lf(spec, cfg.label.lf_options.get(spec)).models)
            for spec in cfg.label.lfs if spec in computed}
    return estimates.label_seconds(pairs, [e for e in uses.values() if e is not None],
                                   sum(e is None for e in uses.values()))


def stage_work(cfg: PipelineConfig, pairs: pd.DataFrame, overrides: dict) -> dict[str, float]:
    """Train's and rerank's estimates for the config's ``[train]`` with ``overrides``."""
    tc = train_config(cfg, **overrides)
    lexical = sum(estimates.lf_encoder(spec, cfg.label.lf_options.get(spec)) is None for spec in cfg.label.lfs)
    length = estimates.train_length(pairs[pairs["split"] == tc.train_split], tc)
    return {"train": estimates.train_seconds(pairs, tc)[0],
            "rerank": estimates.rerank_seconds(pairs[pairs["split"] == cfg.evaluate.split], tc, lexical, length)}


def timed_runs() -> list[dict]:
    """The rows of the run directories with a ``timings.json``."""
    rows = []
    for run, (config, options) in RUNS.items():
        run_dir = ROOT / run
        timings = run_dir / "timings.json"
        if not timings.exists() or not RunPaths(run_dir).candidates.exists():
            continue
        cfg = load_config(ROOT / config, run_dir=run_dir, **options)
        recorded = json.loads(timings.read_text())
        measured = {stage: t["seconds"] for stage, t in recorded.items()}
        started = timings.stat().st_mtime - sum(measured.values()) - 5
        scores = {spec: RunPaths(run_dir).lf_scores / f"{spec}.parquet" for spec in cfg.label.lfs}
        written = {spec: path.stat().st_mtime for spec, path in scores.items() if path.exists()}
        pairs = pairs_of(run_dir)
        steps = json.loads((run_dir / "model" / "train_config.json").read_text())["max_steps"]
        work = {"label": label_work(cfg, pairs, {spec for spec, t in written.items() if t >= started}),
                **stage_work(cfg, pairs, {"max_steps": steps})}
        start = teacher_alone(run_dir)
        if start:
            work["rerank"] = teacher_rerank(run_dir, cfg)
        for stage, seconds in work.items():
            kept = KEPT if stage == "rerank" and start else ""
            rows.append(row(run, stage, seconds, measured[stage], BUSY + kept, paced=recorded[stage].get("paced_s")))
        lexical = [t for spec, t in written.items() if estimates.lf_encoder(spec, None) is None]
        encoders = {spec for spec in written if estimates.lf_encoder(spec, None) is not None}
        gap = min(written[spec] for spec in encoders) - max(lexical) if lexical and encoders else 0
        if 0 < gap and max(written.values()) < started:  # an earlier label stage: its encoder LFs alone
            rows.append(row(run, "label encoders", label_work(cfg, pairs, encoders), gap,
                            f"an earlier run, from its lf_scores files' times, texts assumed all to encode; {BUSY}"))
    return rows


def teacher_alone(run_dir: Path) -> bool:
    """Whether the run's shipped ranker is its teacher alone (the student's weight 0 in its saved teacher state)."""
    for name in ("best", "final"):
        state = run_dir / "model" / name / "weakrank_fusion.json"
        if state.exists():
            return json.loads(state.read_text()).get("student_weight") == 0
    return False


def row(run: str, stage: str, estimated: float, measured: float, note: str, cores: str = "2, shared",
        paced: float | None = None) -> dict:
    """One row of the table (``paced``: the time the stage said in all once its first batches were timed)."""
    nan = float("nan")
    return {"run": run, "stage": stage, "estimated_s": round(estimated, 1), "measured_s": round(measured, 1),
            "ratio": round(measured / estimated, 2) if estimated > 0 else nan, "paced_s": nan if paced is None else paced,
            "paced_ratio": round(measured / paced, 2) if paced else nan, "cores": cores, "note": note}


def idle_runs() -> list[dict]:
    """The rows of the idle-core timings the README and the notebook quote."""
    rows = []
    for run, config, overrides, measured, note in IDLE:
        cfg = load_config(ROOT / config, run_dir=ROOT / run, **RUNS.get(run, ("", {}))[1])
        pairs = pairs_of(ROOT / run)
        work = {"label": label_work(cfg, pairs, set(cfg.label.lfs)), **stage_work(cfg, pairs, overrides)}
        rows += [row(run, stage, work[stage], seconds, note, "2, idle") for stage, seconds in measured.items()]
    return rows


def planned_runs(folder: str = "est", cores: str = "2, idle", note: str = PLANNED) -> list[dict]:
    """The rows of the fresh runs timed one at a time under ``data/<folder>/<collection>`` (``weakrank run CONFIG
    --run-dir data/<folder>/<collection> --quiet``, CONFIG: the collection's pipeline, the own collection's the
    fixture's): the estimate each run's plan said up front and, where the stage said it, the time once its first
    batches were timed (``timings.json``); a teacher alone's rerank against the plan's figure for it."""
    rows = []
    for timings in sorted((ROOT / "data" / folder).glob("*/timings.json")):
        run = str(timings.parent.relative_to(ROOT))
        start = teacher_alone(timings.parent)
        for stage, t in json.loads(timings.read_text()).items():
            if stage in ("label", "train", "rerank") and t.get("estimated_s"):
                estimated, paced, kept = t["estimated_s"], t.get("paced_s"), ""
                if stage == "rerank" and start:
                    estimated = paced = t.get("teacher_alone_s", teacher_rerank(timings.parent, planned_config(run)))
                    kept = KEPT
                rows.append(row(run, stage, estimated, t["seconds"], note + kept, cores, paced))
    return rows


def planned_config(run: str) -> PipelineConfig:
    """The config of a fresh run under ``data/<folder>/<collection>``: the collection's pipeline, the fixture's for
    the own collection."""
    name = Path(run).name
    config = "data/fixtures/own_collection/pipeline.toml" if name == "own" else f"pipelines/{name}.toml"
    return load_config(ROOT / config, run_dir=ROOT / run)


def teacher_rerank(run_dir: Path, cfg: PipelineConfig) -> float:
    """The plan's teacher-alone rerank figure for a run that predates it, from its data with today's constants."""
    tested = pairs_of(run_dir)
    tested = tested[tested["split"] == cfg.evaluate.split]
    lexical = sum(estimates.lf_encoder(spec, cfg.label.lf_options.get(spec)) is None for spec in cfg.label.lfs)
    return round(estimates.teacher_seconds(tested, train_config(cfg), lexical), 1)


def main() -> None:
    table = pd.DataFrame(idle_runs() + planned_runs() + planned_runs("est_busy", "2, one busy", BUSY_PLANNED)
                         + timed_runs())
    table.to_csv(CSV, index=False)
    print(table.to_string(index=False))
    print(f"wrote {CSV}")


if __name__ == "__main__":
    main()
