"""The one atomic write: a reader sees the old file or the new; a failed write leaves nothing."""

from __future__ import annotations

import pytest

from recmeta.files import copytree_atomic, write_atomic, write_text_atomic


def test_write_replaces_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    assert write_text_atomic(target, "first") == target
    write_text_atomic(target, "second")
    assert target.read_text() == "second"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")

    def half_then_fail(tmp):
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_atomic(target, half_then_fail)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_copytree_copies_whole_and_readable(tmp_path):
    src = tmp_path / "src"
    (src / "inner").mkdir(parents=True)
    (src / "inner" / "a.txt").write_text("a")
    (src / "inner" / "a.txt").chmod(0o600)
    dst = copytree_atomic(src, tmp_path / "cache" / "release")
    assert (dst / "inner" / "a.txt").read_text() == "a"
    assert (dst / "inner" / "a.txt").stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in dst.parent.iterdir()) == ["release"]
