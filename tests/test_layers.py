"""The import graph of ``weakrank/``: layers that only point down, no cycles, no backend switched at import."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "weakrank"

# lowest first; a module may import its own layer and those below, never one above
LAYERS = [
    # foundations: errors, the names a user chooses, files and paths, progress bars, figures, text, encoders, maths over lists, the records of judged decisions, measuring runs, what encoding costs and a stage's pace; what measures never teaches
    ["weakrank.errors", "weakrank.names", "weakrank.progress", "weakrank.text", "weakrank.similarity", "weakrank.encoders",
     "weakrank.paths", "weakrank.files", "weakrank.io", "weakrank.lock", "weakrank.plots", "weakrank.bm25", "weakrank.lists",
     "weakrank.checked", "weakrank.combinations", "weakrank.records", "weakrank.fusion_state", "weakrank.apart",
     "weakrank.evaluation", "weakrank.keys", "weakrank.costs", "weakrank.pace"],
    # data and labeling functions
    ["weakrank.dataset", "weakrank.loaders", "weakrank.lf_declaration", "weakrank.lf_scorer", "weakrank.lf",
     "weakrank.voting", "weakrank.registry",
     "weakrank.labeling", "weakrank.votes_file", "weakrank.snorkel_bridge", "weakrank.noise"],
    # from votes to labels, and where the LFs run
    ["weakrank.label_models", "weakrank.baselines", "weakrank.analysis", "weakrank.fusion_checks", "weakrank.engines",
     "weakrank.judged"],
    # a trained ranker loaded and run: the students, the teacher restored from its state, the model directory
    ["weakrank.ranker"],
    # the pipeline config and its checks
    ["weakrank.sections", "weakrank.config", "weakrank.inputs", "weakrank.validation",
     # a run's trained models: where they are, and the check that one may score a split
     "weakrank.run_models"],
    # rankers trained on the labels
    ["weakrank.training"],
    # every stage as a function (the train and rerank stages' run-directory side: stages/; judged mode's select among
    # them) and the plan's estimates; what is built on trained rankers
    ["weakrank.pipeline", "weakrank.estimates", "weakrank.stages", "weakrank.retrieval", "weakrank.pyterrier",
     # the modes a run trains in, plug-ins of the train stage (judged mode's: its hold-out a trainer callback)
     "weakrank.modes"],
    # the papers' reproduction: the grids of training variants, the systems they compare, the report, the papers'
    # label sources, AC-IR (a policy driving a trainer through its callback hooks)
    ["weakrank.reproduction"],
    # the command line: the sub-commands (judged mode's select and judge among them) and their parser, the entry point
    ["weakrank.commands", "weakrank.cli"],
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    """The layer of the longest listed prefix of ``module`` (the package ``weakrank`` itself: its imports')."""
    best = max((prefix for row in LAYERS for prefix in row if module == prefix or module.startswith(prefix + ".")),
               key=len, default=None)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return next(i for i, row in enumerate(LAYERS) if best in row)


# a string that names a module to import: "weakrank.x.y", or an entry point "weakrank.x.y:attr"
MODULE_STRING = re.compile(r"(weakrank(?:\.\w+)+)(?::\w+)?")


def named_module(text: str) -> str | None:
    """The module a string names for importing (its longest prefix that is a module), None for other strings."""
    match = MODULE_STRING.fullmatch(text)
    parts = match.group(1).split(".") if match else []
    return next((".".join(parts[:n]) for n in range(len(parts), 1, -1) if ".".join(parts[:n]) in MODULES), None)


def imports(module: str) -> set[str]:
    """The ``weakrank`` modules ``module`` imports, anywhere in its file (functions and TYPE_CHECKING included),
    by statement or by a string it may import at run time (``importlib.import_module("weakrank.x")``, a
    registry's ``"weakrank.x:y"``)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # `from weakrank.x import y`: the module weakrank.x.y when there is one, else weakrank.x
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module for a in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and named_module(node.value):
            found.add(named_module(node.value))
    return {name for name in found if name in MODULES and name != module}


def test_string_imports_are_seen():
    planted = PACKAGE / "training" / "_planted_for_test.py"
    MODULES["weakrank.training._planted_for_test"] = planted
    try:
        planted.write_text('import importlib\n\nPLUGINS = {"acir": "weakrank.reproduction.acir.plugin:PLUGIN"}\n'
                           'importlib.import_module("weakrank.cli")\n')
        assert imports("weakrank.training._planted_for_test") == {"weakrank.reproduction.acir.plugin", "weakrank.cli"}
    finally:
        planted.unlink()
        del MODULES["weakrank.training._planted_for_test"]
    assert named_module("see weakrank.cli") is None and named_module("weakrank.no_such_module") is None


def test_every_import_points_down():
    upward = [
        f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
        for module in MODULES if module != "weakrank"
        for target in sorted(imports(module)) if layer(target) > layer(module)
    ]
    assert upward == []


# what the pipeline reads (its config, the run directory's layout, the stages): rankers are trained and scored
# from tables and a TrainConfig, never from a run directory
PIPELINE_SIDE = {"weakrank.config", "weakrank.sections", "weakrank.paths", "weakrank.pipeline", "weakrank.stages"}


def test_training_knows_nothing_of_run_directories_or_pipeline_configs():
    reads = {
        module: sorted(target for target in imports(module)
                       if any(target == side or target.startswith(side + ".") for side in PIPELINE_SIDE))
        for module in MODULES if module.startswith("weakrank.training")
    }
    assert {module: targets for module, targets in reads.items() if targets} == {}


# a stage is a module of stages/ that declares one (``@stage(...)``); what two stages share lives in a module of
# stages/ that is none (stage.py, systems.py)
STAGES = {module for module in MODULES
          if module.startswith("weakrank.stages.") and "\n@stage(" in MODULES[module].read_text()}


def test_no_stage_imports_another_stage():
    assert len(STAGES) >= 10  # ingest, label, aggregate, analyze, select, train, rerank, evaluate, index, corrupt
    assert {module: sorted(imports(module) & (STAGES - {module})) for module in STAGES
            if imports(module) & (STAGES - {module})} == {}


# judged mode plugs into training as the run's mode (weakrank.modes: its hooks, its hold-out a trainer callback)
def test_the_train_stage_and_training_import_nothing_of_judged_mode():
    reads = {module: sorted(target for target in imports(module) if target.startswith("weakrank.judged"))
             for module in MODULES if module == "weakrank.stages.train" or module.startswith("weakrank.training")}
    assert {module: targets for module, targets in reads.items() if targets} == {}


# the papers' reproduction is built on the product, never the other way round: only the command line may import it
REPRODUCTION = "weakrank.reproduction"
PRODUCT = [module for module in MODULES
           if not any(module == top or module.startswith(top + ".") for top in (REPRODUCTION, "weakrank.commands", "weakrank.cli"))]


def test_the_product_path_never_imports_the_reproduction():
    reads = {module: sorted(target for target in imports(module)
                            if target == REPRODUCTION or target.startswith(REPRODUCTION + "."))
             for module in PRODUCT}
    assert {module: targets for module, targets in reads.items() if targets} == {}
    assert "weakrank.pipeline" in PRODUCT and "weakrank.training.build" in PRODUCT  # what it guards


# optional trainer plug-ins plug in from above: the packaging names them (pyproject.toml's entry points), training
# finds them by the group's name (weakrank.training.plugins) and names none
PLUGIN_GROUP = "weakrank.trainer_plugins"


def test_trainer_plugins_are_named_by_the_packaging_and_sit_above_training():
    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]
    targets = {name: named_module(value) for name, value in project["entry-points"][PLUGIN_GROUP].items()}
    assert targets == {"acir": "weakrank.reproduction.acir.plugin"}
    assert all(layer(target) > layer("weakrank.training") for target in targets.values())
    code = ("from weakrank.training.plugins import plugins; from weakrank.training.config import SAMPLERS; "
            "print([p.name for p in plugins()], SAMPLERS[-2:])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['acir'] ('policy', 'random_policy')"  # installed: else `pip install -e .` again


def test_the_import_graph_has_no_cycle():
    graph = {module: imports(module) - {"weakrank"} for module in MODULES}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        assert module not in path, " → ".join(path[path.index(module):] + [module])
        if module in done:
            return
        for target in sorted(graph[module]):
            if not module.startswith(target + "."):  # a submodule reading its package's __init__ is no cycle
                visit(target, path + [module])
        done.add(module)

    for module in graph:
        visit(module, [])


def test_importing_the_trainer_leaves_the_matplotlib_backend_alone():
    code = ("import matplotlib; matplotlib.use('svg'); import weakrank.training, weakrank.reproduction.report, "
            "weakrank.cli; print(matplotlib.get_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "svg"


# what a loaded ranker may not drag along: the trainer, the pipeline and its config, the label models, the engines
NOT_FOR_INFERENCE = ["weakrank.training", "weakrank.config", "weakrank.sections", "weakrank.pipeline", "weakrank.engines",
                     "weakrank.reproduction", "weakrank.stages", "weakrank.label_models", "weakrank.commands",
                     "weakrank.cli"]


def test_loading_a_ranker_needs_nothing_of_the_weak_supervision_stack():
    """Every module reachable from ``weakrank.ranker`` (all of its modules, imports inside functions included) is
    one of the layers below it, but none of the label models, the engines or what trains and configures."""
    reachable, todo = set(), [m for m in MODULES if m == "weakrank.ranker" or m.startswith("weakrank.ranker.")]
    while todo:
        module = todo.pop()
        if module not in reachable:
            reachable.add(module)
            todo += imports(module)
    dragged = sorted(m for m in reachable for banned in NOT_FOR_INFERENCE if m == banned or m.startswith(banned + "."))
    assert dragged == []
    code = ("import sys, weakrank.ranker; from weakrank.ranker import load_ranker; "
            f"print(sorted(m for m in sys.modules if m.startswith({tuple(NOT_FOR_INFERENCE)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# what one stage saves and another reads is parsed by its one reader, typed and checked (a later stage reads no key of
# it by name); these modules parse JSON or Parquet metadata, each the reader of what it says, and no other module does
READERS = {
    "weakrank.io": "read_metadata itself",
    "weakrank.label_models.labels_file": "labels.parquet's metadata (LabelsInfo)",
    "weakrank.votes_file": "votes.parquet's metadata (VotesInfo: each score column's declaration)",
    "weakrank.ranker.teacher_state": "a model directory's weakrank_fusion.json (TeacherState; its notes kept as written)",
    "weakrank.ranker.manifest": "a model directory's weakrank_model.json (ModelManifest)",
    "weakrank.ranker.cross_encoder": "a cross-encoder student's own config",
    "weakrank.ranker.bi_encoder": "a bi-encoder student's own config",
    "weakrank.ranker.onnx_runtime": "the ONNX export's cache record",
    "weakrank.retrieval": "the Faiss index's cache record",
    "weakrank.training.start_check": "a training run's check of its student against its start (StartCheck)",
    "weakrank.labeling": "an LF score cache's fingerprint",
    "weakrank.reproduction.grid": "a grid cell's cache",
    "weakrank.reproduction.report": "a grid cell's cache",
    "weakrank.loaders.beir": "a BEIR dataset's JSON lines (input data)",
    "weakrank.estimates": "an encoder's own config.json (its layers, width and length, for the plan)",
}


def test_saved_records_are_parsed_by_their_readers_only():
    parsers = {module for module, path in MODULES.items()
               if any(call in path.read_text() for call in ("json.loads(", "json.load(", "read_metadata("))}
    assert parsers == set(READERS), (sorted(parsers - set(READERS)), sorted(set(READERS) - parsers))
