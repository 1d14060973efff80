"""A user's LF declarations and the votes their LFs leave, as a user meets them: a bad ``family`` or ``prior`` in
their own ``@ranking_lf(...)`` is reported at their file and line, and a score edited into ``votes.parquet`` that
is not a number names the file, the row and the LF's column."""

from __future__ import annotations

import runpy

import numpy as np
import pytest
from test_no_qrels import own_config

from weakrank.cli import main
from weakrank.errors import LFError
from weakrank.io import read_parquet, write_parquet
from weakrank.paths import RunPaths

LF_FILE = '''from weakrank import ranking_lf


@ranking_lf({declaration})
def shared_words(query, passage):
    return float(len(set(query.split()) & set(passage.split())))
'''


@pytest.mark.parametrize(("declaration", "said"), [
    ("prior=2.0", "prior must be a number in (0, 1) (a loading on relevance), got 2.0"),
    ("prior=0", "prior must be a number in (0, 1) (a loading on relevance), got 0"),
    ("family='', prior=0.5", "family must be a non-empty string, got ''"),
    ("family=3", "family must be a non-empty string, got 3"),
    ("'words', prior='high'", "prior must be a number in (0, 1) (a loading on relevance), got 'high'"),
])
def test_a_bad_declaration_is_reported_at_the_user_s_decorator_line(tmp_path, capsys, declaration, said):
    mine = tmp_path / "my_lfs.py"
    mine.write_text(LF_FILE.format(declaration=declaration))
    name = "words" if declaration.startswith("'words'") else "shared_words"
    config = own_config(tmp_path, qrels=True)
    config.write_text(config.read_text().replace('"word_overlap"]', '"my_lfs.py:shared_words"]'))
    assert main(["label", str(config), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{mine}:4: labeling function {name!r}: {said}" in err  # line 4: the @ranking_lf(...) line
    assert "weakrank/lf.py" not in err and err.count("\n") == 1
    with pytest.raises(LFError) as raised:  # the user's own script: the same place
        runpy.run_path(str(mine))
    assert str(raised.value) == f"{mine}:4: labeling function {name!r}: {said}"


def test_a_bare_decorator_with_a_good_declaration_still_works(tmp_path):
    mine = tmp_path / "my_lfs.py"
    mine.write_text(LF_FILE.replace("@ranking_lf({declaration})", "@ranking_lf"))
    assert runpy.run_path(str(mine))["shared_words"]("a b", "b c") == 1.0


def test_a_score_that_is_no_number_in_the_votes_names_the_file_row_and_lf(tmp_path, capsys):
    config = str(own_config(tmp_path, qrels=True))
    run = tmp_path / "run"
    assert main(["run", config, "--run-dir", str(run), "--stages", "ingest,label", "--quiet"]) == 0
    votes_path = RunPaths(run).votes
    votes = read_parquet(votes_path)
    votes.loc[3, "score_tfidf"] = np.nan
    write_parquet(votes, votes_path)
    capsys.readouterr()
    assert main(["aggregate", config, "--run-dir", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert (f"{votes_path}: row 3: score_tfidf: LF 'tfidf' scores query_id {votes['query_id'][3]!r}, passage_id "
            f"{votes['passage_id'][3]!r} nan: LF scores must be finite (label again to recompute them)") in err
