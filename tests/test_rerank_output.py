"""``rerank --output`` overwrites no user file: never one of its inputs, nor a folder, nor (without --force) a file
that weakrank did not write or that changed since it did."""

import pytest

from weakrank.cli import main
from weakrank.errors import DataError
from weakrank.files import check_output, mark_written
from weakrank.io import write_run, write_text


def _inputs(tmp_path):
    (tmp_path / "queries.tsv").write_text("n1\twhat is the capital of spain\n")
    (tmp_path / "collection.tsv").write_text("a\tMadrid is the capital of Spain.\nb\tSpain is in Europe.\n")
    (tmp_path / "new.run").write_text("n1 Q0 a 1 3 bm25\nn1 Q0 b 2 2 bm25\n")
    return {flag: tmp_path / name for flag, name in (("--run", "new.run"), ("--queries", "queries.tsv"),
                                                     ("--collection", "collection.tsv"))}


def _rerank(inputs, output, *flags):
    return main(["rerank", "--model-dir", str(output.parent / "no_model"), *(a for flag, path in inputs.items()
                 for a in (flag, str(path))), "--output", str(output), "--quiet", *flags])


@pytest.mark.parametrize("flag", ["--run", "--queries", "--collection"])
def test_an_input_is_never_the_output_even_with_force(tmp_path, capsys, flag):
    inputs = _inputs(tmp_path)
    before = {path: path.read_bytes() for path in inputs.values()}
    assert _rerank(inputs, tmp_path / ".." / tmp_path.name / inputs[flag].name, "--force") == 2
    assert capsys.readouterr().err.endswith(f"{inputs[flag].name}: is the {flag} file this command reads; write "
                                            "the output elsewhere\n")
    assert {path: path.read_bytes() for path in inputs.values()} == before


def test_a_folder_is_named_as_a_folder(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    assert _rerank(_inputs(tmp_path), tmp_path / "out") == 2
    assert capsys.readouterr().err == f"weakrank: error: {tmp_path / 'out'}: is a folder; expected the file to write\n"
    with pytest.raises(DataError, match=rf"^{tmp_path / 'out'}: is a folder; expected a file to write$"):
        write_text("x\n", tmp_path / "out")  # any atomic write
    assert list(tmp_path.glob(".out.*")) == []


def test_a_file_weakrank_did_not_write_is_kept_unless_force(tmp_path, capsys):
    import pandas as pd

    mine = tmp_path / "mine.trec"
    mine.write_text("my own run\n")
    assert _rerank(_inputs(tmp_path), mine) == 2
    assert capsys.readouterr().err == (f"weakrank: error: {mine}: exists and weakrank did not write it (or it "
                                       "changed since); give --force to replace it, or write elsewhere\n")
    assert mine.read_text() == "my own run\n"
    check_output(mine, {}, force=True)
    scored = pd.DataFrame({"query_id": ["n1"], "passage_id": ["a"], "score": [1.0]})
    check_output(mark_written(write_run(scored, mine, "x")), {})  # weakrank's own: replaced without --force
    mine.write_text(mine.read_text() + "a line of the user's\n")
    with pytest.raises(DataError, match="changed since"):
        check_output(mine, {})
