"""Atomic writes, the one way the package writes a file others may read at the same time.

A file is written to a temporary name in its destination's folder (``.<name>.<pid>.<random>.tmp``),
flushed to disk, then renamed over the destination with :func:`os.replace`, which is atomic on
one file system: a reader sees the old file or the new one, never half of one, and a write that
fails removes its temporary file. A folder is copied the same way (:func:`copytree_atomic`).
Two processes that would make the same file hold :func:`lock` while making it, so the second
finds it made.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["write_atomic", "write_text_atomic", "copytree_atomic", "lock"]


def write_atomic(path: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Write ``path`` atomically: ``write(tmp)`` fills a temporary file, which replaces ``path``.

    The parent folder is created if needed. Returns ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`write_atomic` of a UTF-8 text."""
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def copytree_atomic(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> Path:
    """Copy the folder ``src`` to ``dst`` atomically (a temporary folder beside ``dst``, renamed).

    The copy is made readable by everyone (folders 755, files 644), whatever ``src``'s modes.
    """
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dst.name}-", dir=dst.parent))
    try:
        shutil.copytree(src, tmp, dirs_exist_ok=True)
        for p in tmp.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        tmp.chmod(0o755)
        os.replace(tmp, dst)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dst


@contextmanager
def lock(final: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on the file to be made at ``final`` while making it.

    Two processes making the same file at once (a recommender run, a compiled module) would
    otherwise both do the work, and a run's blocks would be written twice. The lock is an
    ``flock`` on ``<final>.lock``, released by the kernel even if the holder dies; where
    ``fcntl`` is missing (Windows), files are made without a lock.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = Path(str(final) + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
