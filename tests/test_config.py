"""Every config section is checked: a misspelt or mistyped section or key stops with the file, the section,
the key and the closest known name."""

import re
import tomllib
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pytest

from weakrank.commands.train import options_table
from weakrank.config import load_config
from weakrank.errors import ConfigError
from weakrank.label_models import GenerativeModel, MajorityVote
from weakrank.reproduction.grid import grid_cells
from weakrank.sections import AggregateConfig
from weakrank.stages.stage import train_config

BASE = '[dataset]\nloader = "trec"\npath = "data"\n[label]\nlfs = ["bm25", "tfidf"]\n'


def config(tmp_path, text: str):
    path = tmp_path / "pipe.toml"
    path.write_text(text)
    return path


def fails(path, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}: "), err.value
    assert re.search(message, str(err.value)), err.value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BASE.replace("path =", "pth = 'x'\npath ="), r"\[dataset\] unknown key 'pth' \(did you mean 'path'\?\)"),
        (BASE + "engin = 'dask'\n", r"\[label\] unknown key 'engin' \(did you mean 'engine'\?\)"),
        (BASE.replace('["bm25", "tfidf"]', '"bm25"'), r"\[label\] lfs must be list\[str\], got 'bm25'"),
        (BASE + "[aggregate]\nmodle = 'majority'\n", r"\[aggregate\] unknown key 'modle' \(did you mean 'model'\?\)"),
        (BASE + "[aggregate]\nmodel = 'generativ'\n", r"\[aggregate\] model: unknown label model 'generativ' "
                                                       r"\(did you mean 'generative'\?\)"),
        (BASE + "[aggregate]\nmodel = 'generative'\noptions = {priorr = 0.2}\n",
         r"\[aggregate\] options of label model 'generative': unknown key 'priorr' \(did you mean 'prior'\?\)"),
        (BASE + "[aggregate]\nmodel = 'generative'\noptions = {prior = 'high'}\n",
         r"\[aggregate\] options of label model 'generative': prior must be float \| None, got 'high'"),
        (BASE + "[aggregate]\nmodel = 'majority'\noptions = {prior = 0.2}\n",
         r"options of label model 'majority': unknown key 'prior'"),
        (BASE + "[analyze]\nsplit = ['test']\n", r"\[analyze\] unknown key 'split' \(did you mean 'splits'\?\)"),
        (BASE + "[evaluate]\nsplits = 'dev'\n", r"\[evaluate\] unknown key 'splits' \(did you mean 'split'\?\)"),
        (BASE + "[experiment]\nepsilon = [0.1]\n", r"\[experiment\] unknown key 'epsilon' \(did you mean 'epsilons'\?\)"),
        (BASE + "[experiment]\nseeds = 3\n", r"\[experiment\] seeds must be list\[int\], got 3"),
        (BASE + "[experiment]\nrequire = 'any'\n", r"\[experiment\] require = 'any'; choose one of"),
        (BASE + "[experiment]\nlabel_models = ['majorty']\n", r"\[experiment\] label_models: unknown label model "
                                                             r"'majorty' \(did you mean 'majority'\?\)"),
        (BASE + "[experiment_noise]\nnoise_ratio = [0.1]\n",
         r"\[experiment_noise\] unknown key 'noise_ratio' \(did you mean 'noise_ratios'\?\)"),
        (BASE + "[trian]\nmax_steps = 2\n", r"unknown section or key 'trian' \(did you mean 'train'\?\)"),
        ("run_dir = 3\n" + BASE, r"run_dir must be a string, got 3"),
    ],
)
def test_a_misspelt_or_mistyped_key_or_section_names_file_section_and_key(tmp_path, text, message):
    fails(config(tmp_path, text), message)


def test_train_keys_are_checked_with_the_file_and_a_suggestion(tmp_path):
    cfg = load_config(config(tmp_path, BASE + "[train]\nlearning_rate = 1e-5\n"))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(cfg.source))}: unknown \[train\] key 'learning_rate'"):
        train_config(cfg)
    cfg = load_config(config(tmp_path, BASE + "[train]\nbatch_size = 'big'\n"))
    with pytest.raises(ConfigError, match=r"\[train\] batch_size must be int, got 'big'"):
        train_config(cfg)
    cfg = load_config(config(tmp_path, BASE + "[train]\nloss = 'hinge'\ntarget = 'ls'\n"))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(cfg.source))}: hinge loss"):
        train_config(cfg)
    cfg = load_config(config(tmp_path, BASE + "[train]\nmode = 'pairwise'\nloss = 'hinge'\nmargin = -1.0\n"))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(cfg.source))}: \[train\] margin = -1.0 must be >= 0"):
        train_config(cfg)
    cfg = load_config(config(tmp_path, BASE + "[train]\npolicy_reward = 'dif'\n"))  # choices: the field's metadata
    with pytest.raises(ConfigError, match=r"\[train\] policy_reward = 'dif'; choose one of \('diff', "):
        train_config(cfg)


def test_grid_variants_samplers_and_train_keys_are_checked(tmp_path):
    for grid, message in (("variants = ['wsl']", r"unknown variant 'wsl' \(did you mean 'wsls'\?\)"),
                          ("samplers = ['bm26']", r"unknown sampler 'bm26' \(did you mean 'bm25'\?\)"),
                          ("[experiment.train]\nmax_step = 3", r"\[train\] unknown key 'max_step' \(did you mean "
                                                               r"'max_steps'\?\)")):
        cfg = load_config(config(tmp_path, BASE + f"[experiment]\n{grid}\n"))
        with pytest.raises(ConfigError, match=rf"{re.escape(str(cfg.source))}: experiment grid 'pipe': {message}"):
            grid_cells(cfg, pd.DataFrame(columns=["query_id"]))


def test_one_place_makes_the_label_model_with_the_configured_options(tmp_path):
    cfg = load_config(config(tmp_path, BASE + "[aggregate]\nmodel = 'generative'\noptions = {prior = 0.3}\n"))
    assert cfg.aggregate == AggregateConfig("generative", {"prior": 0.3})
    model = cfg.aggregate.label_model()
    assert isinstance(model, GenerativeModel) and model.prior == 0.3
    assert isinstance(cfg.aggregate.label_model("majority"), MajorityVote)  # other models: their defaults
    assert cfg.aggregate.options_for("majority") == {}


@pytest.mark.parametrize("name", sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "pipelines").glob("*.toml")))
def test_the_shipped_pipelines_load_from_any_working_directory(name, tmp_path, monkeypatch):
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)  # relative paths resolve against the config file's folder, not here
    cfg = load_config(root / "pipelines" / f"{name}.toml")
    train_config(cfg)
    assert cfg.train is not None
    assert cfg.run_dir == (root / "data" / name).resolve()
    assert cfg.dataset.path.parent == (root.parent / "shared" / "datasets").resolve()


def test_relative_train_files_resolve_against_the_config_folder(tmp_path):
    cfg = load_config(config(tmp_path, BASE + "[train]\nlabels = 'x/labels.parquet'\npolicy_path = ''\n"))
    assert cfg.train == {"labels": str(tmp_path / "x" / "labels.parquet"), "policy_path": ""}
    assert cfg.dataset.path == (tmp_path / "data").resolve() and cfg.run_dir == (tmp_path / "data" / "pipe").resolve()


def test_a_bare_train_section_trains_with_the_defaults_the_guide_lists(tmp_path):
    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    assert options_table() in readme, "docs/guide.md's [train] table is not options_table()'s: paste it in again"
    table = readme[readme.index("| `[train]` key |"):].split("\n\n")[0].splitlines()[2:]
    listed = {}
    for row in (line for line in table if line.startswith("|")):
        key, _, default = (cell.strip().strip("`") for cell in row.strip("|").split("|")[:3])
        listed[key] = tomllib.loads(f"v = {default}")["v"]
    tc = asdict(train_config(load_config(config(tmp_path, BASE + "[train]\n"))))
    assert listed == {k: list(v) if isinstance(v, tuple) else v for k, v in tc.items()}
    assert (tc["mode"], tc["loss"], tc["batch_size"], tc["max_steps"], tc["fuse_lfs"]) == ("listwise", "kl", 4, 200, True)
    assert (tc["architecture"], tc["interpolate"], tc["scale_free"]) == ("bi-encoder", "auto", True)


def test_lf_files_and_the_beir_run_resolve_against_the_config_folder(tmp_path, monkeypatch):
    from tests.test_cli import beir_folder
    from weakrank import pipeline
    from weakrank.registry import resolve_lf

    folder = tmp_path / "project"
    beir_folder(folder / "beir")
    (folder / "lfs").mkdir()
    (folder / "lfs" / "mine.py").write_text("from weakrank import ranking_lf\n\n@ranking_lf()\n"
                                            "def shared_words(query, passage):\n"
                                            "    return float(len(set(query.split()) & set(passage.split())))\n")
    (folder / "first.trec").write_text("q1 Q0 d4 1 2.0 mine\nq1 Q0 d0 2 1.0 mine\nq2 Q0 d5 1 1.0 mine\n")
    (folder / "pipe.toml").write_text('[dataset]\nloader = "beir"\npath = "beir"\n'
                                      'options = { run = "first.trec", splits = ["test"] }\n'
                                      '[label]\nlfs = ["lfs/mine.py:shared_words"]\n'
                                      '[label.options."lfs/mine.py:shared_words"]\ntop_k = 1\n')
    monkeypatch.chdir(tmp_path)  # not the config's folder
    cfg = load_config("project/pipe.toml")
    [spec] = cfg.label.lfs
    assert spec == f"{folder.resolve() / 'lfs' / 'mine.py'}:shared_words" and cfg.label.lf_options[spec] == {"top_k": 1}
    assert resolve_lf(spec, cfg.label.lf_options[spec]).name == "shared_words"
    candidates = pipeline.ingest(cfg).candidates
    assert sorted(zip(candidates["query_id"], candidates["passage_id"])) == [("q1", "d0"), ("q1", "d4"), ("q2", "d5")]


def test_load_config_takes_the_command_line_s_overrides_from_python(tmp_path, monkeypatch):
    path = config(tmp_path, BASE + "[train]\nmax_steps = 400\n[evaluate]\nsplit = 'test'\n")
    monkeypatch.chdir(tmp_path)
    cfg = load_config(path, run_dir="small", max_queries=5, train={"lr": 1e-4}, evaluate={"split": "dev"})
    assert cfg.run_dir == tmp_path / "small" and cfg.dataset.max_queries == 5 and cfg.evaluate.split == "dev"
    assert (train_config(cfg).max_steps, train_config(cfg).lr) == (400, 1e-4)  # merged into the file's [train]
    assert load_config(path).run_dir == (tmp_path / "data" / "pipe").resolve()  # the file untouched
    with pytest.raises(ConfigError, match=r"unknown section or key 'trian' \(did you mean 'train'\?\)"):
        load_config(path, trian={"lr": 1e-4})
    with pytest.raises(ConfigError, match=r"\[evaluate\] unknown key 'splt' \(did you mean 'split'\?\)"):
        load_config(path, evaluate={"splt": "dev"})
    with pytest.raises(ConfigError, match="max_queries must be a positive integer"):
        load_config(path, max_queries=0)


def test_a_grid_scores_the_queries_evaluate_does_unless_it_says_otherwise(tmp_path):
    text = BASE + "[evaluate]\nrequire = 'relevant'\n\n[experiment]\nseeds = [0]\n\n[experiment_all]\nrequire = 'all'\n"
    cfg = load_config(config(tmp_path, text))
    assert cfg.experiment.require == "relevant"
    assert cfg.grids["all"].require == "all"
    assert load_config(config(tmp_path, BASE + "[experiment]\nseeds = [0]\n")).experiment.require == "both"


def test_an_lf_listed_twice_is_refused_naming_it(tmp_path):
    (tmp_path / "mine.py").write_text("")
    fails(config(tmp_path, BASE.replace('["bm25", "tfidf"]', '["bm25", "tfidf", "bm25"]')),
          r"^\S+: \[label\] lfs lists LF 'bm25' twice; give each LF once$")
    fails(config(tmp_path, BASE.replace('["bm25", "tfidf"]', '["mine.py:f", "bm25", "./mine.py:f"]')),
          r"\[label\] lfs lists LF './mine.py:f' twice \(as 'mine.py:f' and './mine.py:f'\)")

