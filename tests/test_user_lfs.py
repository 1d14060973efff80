"""A user's LF declarations and the votes their LFs leave, as a user meets them: a bad ``family`` or ``prior`` in
their own ``@ranking_lf(...)`` is reported at their file and line, and a score edited into ``votes.parquet`` that
is not a number names the file, the row and the LF's column."""

from __future__ import annotations

import re
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


def test_aggregate_refuses_votes_of_an_lf_the_config_no_longer_lists(tmp_path, capsys):
    config = own_config(tmp_path, qrels=True)
    run = tmp_path / "run"
    assert main(["run", str(config), "--run-dir", str(run), "--stages", "ingest,label", "--quiet"]) == 0
    text = config.read_text()
    config.write_text(text.replace('lfs = ["bm25", "tfidf", "word_overlap"]', 'lfs = ["bm25", "tfidf"]'))
    capsys.readouterr()
    assert main(["aggregate", str(config), "--run-dir", str(run), "--quiet"]) == 2  # was: word_overlap weighed
    assert (f"{RunPaths(run).votes}: vote_word_overlap: LF 'word_overlap' voted here, but [label] lfs does not list "
            "it (lists bm25, tfidf): the labels weigh the config's LFs only; label again, or list it"
            in capsys.readouterr().err)
    assert not RunPaths(run).labels.exists()
    config.write_text(text.replace('"word_overlap"]', '"word_overlap", "embedding_cosine"]'))
    assert main(["aggregate", str(config), "--run-dir", str(run), "--quiet"]) == 2
    assert (f"{RunPaths(run).votes}: vote_embedding_cosine: [label] lfs lists LF 'embedding_cosine', which has no "
            "votes here: label again" in capsys.readouterr().err)


def test_a_constant_lf_is_listed_at_weight_0_with_the_reason(tmp_path, capsys):
    (tmp_path / "my_lfs.py").write_text("from weakrank import ranking_lf\n\n\n@ranking_lf(prior=0.5)\n"
                                        "def always(query, passage):\n    return 1.0\n")
    config = own_config(tmp_path, qrels=True)
    config.write_text(config.read_text().replace('"word_overlap"]', '"my_lfs.py:always"]'))
    run = tmp_path / "run"
    assert main(["run", str(config), "--run-dir", str(run), "--stages", "ingest,label,aggregate,analyze"]) == 0
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if line.startswith("  always ")]
    assert line.endswith("0.00     0.00    0.0%  constant: ties within every list"), line  # was: not listed
    weights = (run / "analysis" / "lf_weights.md").read_text()
    assert re.search(r"\| always +\| — +\| — +\| +0.000 \| +0.000 \| +0.000 \| constant: ties within every list",
                     weights), weights
