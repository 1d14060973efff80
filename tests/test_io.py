"""Atomic writers give their files and directories the modes a plain write would: the umask's."""

import os
import stat

import pandas as pd
import pytest

from weakrank.io import atomic_dir, write_parquet, write_text


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
