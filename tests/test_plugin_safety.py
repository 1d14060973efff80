"""An installed trainer plug-in cannot break the command line: each broken one (it raises on import, its module is
missing, its object is no plug-in, it redefines a product option) installed beside weakrank, as a package would be
(a ``*.dist-info`` folder naming the entry point), and the commands typed in a process of their own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_user_data import CONFIG

ROOT = Path(__file__).resolve().parents[1]
CLASH = """from dataclasses import dataclass, field
from weakrank.training.plugins import TrainerPlugin

@dataclass
class Options:
    lr: float = field(default=1.0, metadata={"group": "loop", "help": "a plug-in's own learning rate"})

PLUGIN = TrainerPlugin("clash", Options)
"""
BROKEN = {  # module source (None: no module), the entry point's object, what the refusal says
    "raises": ("raise RuntimeError('boom at import')\n", "PLUGIN", "does not load: RuntimeError: boom at import"),
    "missing": (None, "PLUGIN", "does not load: ModuleNotFoundError"),
    "wrong object": ("PLUGIN = 42\n", "PLUGIN", "is a int, not a TrainerPlugin"),
    "option clash": (CLASH, "PLUGIN", "redefines the [train] option 'lr'"),
    "no such object": ("OTHER = 1\n", "PLUGIN", "does not load: AttributeError"),
    "not python": ("def broken(:\n", "PLUGIN", "does not load: SyntaxError"),
    "missing dependency": ("import no_such_dependency_of_badplug\nPLUGIN = None\n", "PLUGIN",
                           "does not load: ModuleNotFoundError"),
}
# what a command that trains nothing can tell without running the plug-in's code, and says up front
SEEN_UNRUN = {"missing": "its module badplug_mod is not installed", "raises": "its module badplug_mod defines no PLUGIN",
              "no such object": "its module badplug_mod defines no PLUGIN", "not python": "its module badplug_mod (",
              "wrong object": "its module badplug_mod binds PLUGIN to a int, not a TrainerPlugin",
              "missing dependency": "imports no_such_dependency_of_badplug, which is not installed"}


def install(folder: Path, source: str | None, name: str) -> None:
    """A package ``badplug`` whose entry point ``bad`` (group weakrank.trainer_plugins) is ``badplug_mod:name``."""
    info = folder / "badplug-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: badplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[weakrank.trainer_plugins]\nbad = badplug_mod:{name}\n")
    if source is not None:
        (folder / "badplug_mod.py").write_text(source)


def weakrank(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``weakrank ARGS`` with the packages of ``folder`` installed."""
    return subprocess.run([sys.executable, "-m", "weakrank.cli", *args], capture_output=True, text=True, timeout=120,
                          cwd=folder, env={**os.environ, "PYTHONPATH": f"{folder}{os.pathsep}{ROOT}"})


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_plugin_breaks_no_command_but_training_which_names_it(tmp_path, case):
    source, name, said = BROKEN[case]
    install(tmp_path, source, name)
    for args in (["--help"], ["--version"], ["train", "--help"]):
        done = weakrank(tmp_path, *args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert " ".join(done.stdout.split()).count("trainer plug-in 'bad'") == 1  # train --help names it
    done = weakrank(tmp_path, "train", CONFIG, "--run-dir", str(tmp_path / "run"), "--quiet")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "trainer plug-in 'bad' (package badplug, entry point weakrank.trainer_plugins: bad = badplug_mod:PLUGIN)" \
        in done.stderr and said in done.stderr
    assert not (tmp_path / "run").exists()


def test_a_plugin_option_never_replaces_a_product_default(tmp_path):
    install(tmp_path, CLASH, "PLUGIN")
    done = weakrank(tmp_path, "train", "--help")
    assert "a plug-in's own learning rate" not in done.stdout and "--lr" in done.stdout
    help_text = " ".join(done.stdout.split())  # argparse wraps the section's text
    assert help_text.count("trainer plug-in 'bad' (package badplug") == 1  # named once, where the options are listed
    assert "redefines the [train] option 'lr'" in help_text and "trainer plug-ins left out" in help_text
    done = weakrank(tmp_path, "ingest", CONFIG, "--run-dir", str(tmp_path / "run"), "--quiet")
    assert done.returncode == 0 and (tmp_path / "run" / "dataset").is_dir()


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_command_that_trains_nothing_names_what_it_sees_broken_without_running_it(tmp_path, case):
    source, name, _ = BROKEN[case]
    install(tmp_path, source, name)
    done = weakrank(tmp_path, "ingest", CONFIG, "--run-dir", str(tmp_path / "run"), "--quiet")
    assert done.returncode == 0 and (tmp_path / "run" / "dataset").is_dir(), done.stderr  # it goes on
    named = [line for line in done.stderr.splitlines() if "trainer plug-in 'bad'" in line]
    if case in SEEN_UNRUN:  # once, with what is wrong and what training will do
        assert len(named) == 1 and SEEN_UNRUN[case] in named[0] and "training refuses to run" in named[0], named
    else:  # an option clash: seen only by running its code, which a command that trains nothing never does; it
        assert named == []  # breaks nothing but training, which names it


def test_plugins_load_only_for_the_commands_that_train(tmp_path):
    install(tmp_path, "import pathlib\npathlib.Path('imported').touch()\nPLUGIN = None\n", "PLUGIN")
    run = str(tmp_path / "run")
    for args in (["--help"], ["--version"], ["select", "--help"], ["ingest", CONFIG, "--run-dir", run, "--quiet"]):
        done = weakrank(tmp_path, *args)
        assert done.returncode == 0 and not (tmp_path / "imported").exists(), (args, done.stderr)
    done = weakrank(tmp_path, "train", "--help")
    assert done.returncode == 0 and (tmp_path / "imported").exists()
