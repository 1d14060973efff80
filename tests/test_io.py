"""Atomic writers give their files and directories the modes a plain write would: the umask's; gzipped inputs
read as the plain files."""

import gzip
import os
import stat

import pandas as pd
import pytest

from weakrank.errors import DataError
from weakrank.files import atomic_dir
from weakrank.io import FILE, read_qrels, read_run, write_parquet, write_text


@pytest.fixture
def umask():
    """Set the process umask for a test, and put the previous one back."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize(("mask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700),
                                                              (0o002, 0o664, 0o775)])
def test_atomic_files_and_directories_honour_the_umask(tmp_path, umask, mask, file_mode, dir_mode):
    umask(mask)
    assert mode(write_text("x\n", tmp_path / "a.txt")) == file_mode
    assert mode(write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "a.parquet")) == file_mode
    with atomic_dir(tmp_path / "d") as tmp:
        write_text("y\n", tmp / "inside.txt")
    assert (mode(tmp_path / "d"), mode(tmp_path / "d" / "inside.txt")) == (dir_mode, file_mode)
    write_text("z\n", tmp_path / "a.txt")  # a rewrite too
    assert mode(tmp_path / "a.txt") == file_mode and (tmp_path / "a.txt").read_text() == "z\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet", "a.txt", "d"]  # no temp file left


RUN = "q1 Q0 d2 1 3.5 bm25\nq1 Q0 d1 2 2.25 bm25\n\nq2 Q0 d1 1 -1.0 bm25\n"
QRELS = "\ufeffq1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"  # with a byte-order mark, as some editors write


def gzipped(path, text: str):
    path.write_text(text, encoding="utf-8")
    with gzip.open(path.with_name(path.name + ".gz"), "wt", encoding="utf-8") as f:
        f.write(text)
    return path, path.with_name(path.name + ".gz")


def test_a_gzipped_run_and_qrels_read_as_the_plain_files(tmp_path):
    for text, reader in ((RUN, read_run), (QRELS, read_qrels)):
        plain, packed = gzipped(tmp_path / "file", text)
        pd.testing.assert_frame_equal(reader(packed), reader(plain))
        located = reader(packed, lines=True)
        assert set(located[FILE]) == {str(packed)}  # rows name the file as given
        pd.testing.assert_frame_equal(located.drop(columns=FILE), reader(plain, lines=True).drop(columns=FILE))
    assert read_run(gzipped(tmp_path / "r", RUN)[1])["passage_id"].tolist() == ["d2", "d1", "d1"]


def test_errors_in_a_gzipped_file_name_it_and_the_line(tmp_path):
    _, packed = gzipped(tmp_path / "bad.qrels", "q1 0 d1 1\nq1 0 d2 yes\n")
    with pytest.raises(DataError, match=r"bad\.qrels\.gz:2: relevance: relevance 'yes' is not an integer"):
        read_qrels(packed)
    packed = tmp_path / "bad.run.gz"
    packed.write_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 x\n\xff\n"))
    with pytest.raises(DataError, match=r"bad\.run\.gz:2: not UTF-8 \(byte 0xff\)"):
        read_run(packed)
    (tmp_path / "plain.run.gz").write_text(RUN)  # named .gz but not gzipped
    with pytest.raises(DataError, match=r"plain\.run\.gz: not a readable gzip file"):
        read_run(tmp_path / "plain.run.gz")
    packed.write_bytes(gzip.compress(RUN.encode())[:-12])  # truncated
    with pytest.raises(DataError, match=r"bad\.run\.gz: not a readable gzip file"):
        read_run(packed)
