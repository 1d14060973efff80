import textwrap

import pytest

from weakrank.cli import main
from weakrank.errors import ConfigError
from weakrank.registry import resolve_lf


def _module(tmp_path, marker):
    (tmp_path / "evil_lfs.py").write_text(
        textwrap.dedent(
            f'''
            from pathlib import Path
            from weakrank import lf_factory, ranking_lf

            def touch(**options):
                Path({str(marker)!r}).write_text("ran")

            @ranking_lf()
            def overlap(query: str, passage: str) -> float:
                return float(len(set(query.split()) & set(passage.split())))

            @lf_factory
            def make_overlap(name: str = "overlap2"):
                return ranking_lf(name)(lambda q, p: 0.0)
            '''
        )
    )
    return tmp_path / "evil_lfs.py"


def test_config_cannot_call_an_unmarked_callable(tmp_path, capsys):
    marker = tmp_path / "marker"
    module = _module(tmp_path, marker)
    with pytest.raises(ConfigError, match="neither a @ranking_lf function nor an @lf_factory"):
        resolve_lf(f"{module}:touch", {"args": ["x"]})
    with pytest.raises(ConfigError, match="neither a @ranking_lf"):
        resolve_lf("subprocess:run", {"args": ["touch", str(marker)]})
    assert not marker.exists()
    cfg = tmp_path / "evil.toml"
    cfg.write_text(
        f'run_dir = "{tmp_path / "run"}"\n[dataset]\nloader = "trec"\npath = "{tmp_path}"\n'
        f'[label]\nlfs = ["subprocess:run"]\n[label.options."subprocess:run"]\nargs = ["touch", "{marker}"]\n'
    )
    (tmp_path / "collection.tsv").write_text("d1\tred apples\nd2\tblue sea\n")
    (tmp_path / "queries.tsv").write_text("q1\tapples\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n")
    assert main(["ingest", str(cfg), "--quiet"]) == 2  # refused when the config is read, before any stage
    assert "'subprocess:run' is neither a @ranking_lf" in capsys.readouterr().err
    assert not marker.exists() and not (tmp_path / "run").exists()


def test_options_go_only_to_marked_factories(tmp_path):
    module = _module(tmp_path, tmp_path / "marker")
    assert resolve_lf(f"{module}:overlap", {"top_k": 2}).rule.top_k == 2
    with pytest.raises(ConfigError, match="takes only"):
        resolve_lf(f"{module}:overlap", {"weight": 2})
    assert resolve_lf(f"{module}:make_overlap", {"name": "mine"}).name == "mine"
    with pytest.raises(ConfigError, match="bad options"):
        resolve_lf(f"{module}:make_overlap", {"nope": 1})
    with pytest.raises(ConfigError, match="bad options"):
        resolve_lf("word_overlap", {"nope": 1})
    with pytest.raises(ConfigError, match="top_k must be an integer"):
        resolve_lf("bm25", {"top_k": "x"})


def test_a_folder_named_weakrank_in_the_current_folder_does_not_shadow_the_package(tmp_path):
    import subprocess
    import sys

    (tmp_path / "weakrank").mkdir()  # e.g. standing beside a clone: Python may take it for a namespace package
    (tmp_path / "lfs.py").write_text("from weakrank import ranking_lf\n\n@ranking_lf()\n"
                                     "def shared(query, passage):\n    return float(len(set(query.split()) & set(passage.split())))\n")
    code = "from weakrank.registry import resolve_lf; print(resolve_lf('lfs.py:shared')('a b', 'b c'))"
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1.0"
