"""TREC files: qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Ids stay strings, as trec_eval treats them (its tie-break compares docnos as text). Readers
validate the column count, numeric fields and duplicates, and name the file and line on error;
writers are atomic (a temporary file in the same folder, then ``os.replace``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["TrecFormatError", "read_qrels", "write_qrels", "read_run", "read_runs", "write_run"]


class TrecFormatError(ValueError):
    """A malformed TREC file; the message names the file, the line and the fix."""


def _read_table(
    path: str | PathLike, ncols: int, what: str, layout: str, more: bool = False
) -> pd.DataFrame:
    """Whitespace-separated fields, ``ncols`` per line (at least ``ncols`` with ``more``: the
    extra fields are dropped, as trec_eval drops the fields after a run's tag). ``path`` "-" is
    the standard input."""
    if str(path) == "-":
        return _parse_lines(sys.stdin, "<stdin>", ncols, what, layout, more)
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} file not found: {path}")
    with open(path, encoding="utf-8") as fh:
        return _parse_lines(fh, path, ncols, what, layout, more)


def _parse_lines(lines, path, ncols: int, what: str, layout: str, more: bool) -> pd.DataFrame:
    rows = []
    for lineno, line in enumerate(lines, 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):  # blank and comment lines (trec_eval 10.0)
            continue
        if len(parts) != ncols and not (more and len(parts) > ncols):
            raise TrecFormatError(
                f"{path}:{lineno}: expected {ncols} whitespace-separated fields "
                f"({layout}), got {len(parts)}: {line.strip()!r}"
            )
        rows.append(parts[:ncols])
    if not rows:
        raise TrecFormatError(f"{path}: empty {what} file")
    return pd.DataFrame(rows)


def _numeric(col: pd.Series, path, name: str) -> np.ndarray:
    values = pd.to_numeric(col, errors="coerce")
    bad = values.isna()
    if bad.any():
        raise TrecFormatError(
            f"{path}: the {name} field must be numeric; first bad value {col[bad].iloc[0]!r} "
            f"on data row {int(np.flatnonzero(bad.to_numpy())[0]) + 1}"
        )
    return values.to_numpy(dtype=np.float64)


def read_qrels(path: str | PathLike) -> pd.DataFrame:
    """Read a qrels file into a frame (user, item, rating); ids are strings, ratings floats
    (trec_eval reads them as integers, truncating: :func:`recmeta.metrics.trec_eval` does)."""
    raw = _read_table(path, 4, "qrels", "qid iter docno rel")
    df = pd.DataFrame({"user": raw[0], "item": raw[2], "rating": _numeric(raw[3], path, "rel")})
    dup = df.duplicated(["user", "item"])
    if dup.any():
        first = df[dup].iloc[0]
        raise TrecFormatError(
            f"{path}: duplicate judgment for qid {first.user!r}, docno {first.item!r}; "
            "keep one line per pair"
        )
    return df


def read_run(path: str | PathLike) -> pd.DataFrame:
    """Read a run file into a frame (system, user, item, rank, score); ids are strings.

    Rows keep the file's order; fields after the tag are ignored, as trec_eval ignores them;
    ``path`` "-" reads the standard input.
    """
    raw = _read_table(path, 6, "run", "qid Q0 docno rank score tag", more=True)
    df = pd.DataFrame(
        {
            "system": raw[5],
            "user": raw[0],
            "item": raw[2],
            "rank": _numeric(raw[3], path, "rank"),
            "score": _numeric(raw[4], path, "score"),
        }
    )
    dup = df.duplicated(["system", "user", "item"])
    if dup.any():
        first = df[dup].iloc[0]
        raise TrecFormatError(
            f"{path}: docno {first.item!r} appears twice for qid {first.user!r}; "
            "trec_eval rejects such runs too"
        )
    return df


def read_runs(paths: Sequence[str | PathLike]) -> pd.DataFrame:
    """Read several run files; a file holding one tag gives one system.

    If two files use the same tag, their systems are named after the file stems instead.
    """
    frames = [read_run(p) for p in paths]
    tags = [tuple(pd.unique(f["system"])) for f in frames]
    flat = [t for ts in tags for t in ts]
    if len(set(flat)) != len(flat):
        stems = [Path(p).stem for p in paths]
        if len(set(stems)) != len(stems) or any(len(t) != 1 for t in tags):
            raise TrecFormatError(
                "two run files share a run tag and their file names cannot tell them apart; "
                "give each run a distinct tag (6th column)"
            )
        frames = [f.assign(system=s) for f, s in zip(frames, stems)]
    return pd.concat(frames, ignore_index=True)


def _atomic_write(path: str | PathLike, text: str) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_qrels(
    df: pd.DataFrame,
    path: str | PathLike,
    user_col: str = "user",
    item_col: str = "item",
    rating_col: str = "rating",
) -> None:
    """Write graded judgments as a qrels file. trec_eval reads integer grades only, so
    non-integer grades (e.g. half stars) raise: rescale them first (e.g. ``2 * rating``)."""
    for c in (user_col, item_col, rating_col):
        if c not in df.columns:
            raise KeyError(f"column {c!r} missing; frame has {list(df.columns)}")
    grades = df[rating_col].to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(grades)) or not np.all(grades == np.round(grades)):
        raise ValueError(
            "qrels grades must be finite integers (trec_eval parses them as integers); "
            "rescale non-integer ratings first, e.g. 2 * rating for half stars"
        )
    lines = [
        f"{u} 0 {i} {int(g)}\n"
        for u, i, g in zip(df[user_col].astype(str), df[item_col].astype(str), grades)
    ]
    _atomic_write(path, "".join(lines))


def write_run(
    df: pd.DataFrame,
    path: str | PathLike,
    system: str | None = None,
    user_col: str = "user",
    item_col: str = "item",
) -> None:
    """Write a run file from a frame with a ``score`` or a ``rank`` column.

    The run tag is the ``system`` column, or ``system=``. Without scores, ``-rank`` is written as
    the score, so that trec_eval (which orders by score) keeps the ranking.
    """
    if "system" in df.columns and system is None:
        tags = df["system"].astype(str).to_numpy()
    elif system is not None:
        tags = np.full(len(df), str(system), dtype=object)
    else:
        raise ValueError("name the run: a 'system' column or system='...'")
    if "score" in df.columns:
        scores = df["score"].to_numpy(dtype=np.float64)
        # ranks in the file are informative only (trec_eval orders by score and ignores them)
        ranks = (
            pd.Series(scores)
            .groupby([tags, df[user_col].astype(str).to_numpy()])
            .rank(method="first", ascending=False)
            .to_numpy()
        )
    elif "rank" in df.columns:
        ranks = df["rank"].to_numpy(dtype=np.float64)
        scores = -ranks
    else:
        raise ValueError("the run frame needs a 'score' or a 'rank' column")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite")
    lines = [
        f"{u} Q0 {i} {int(r)} {s!r} {t}\n"
        for u, i, r, s, t in zip(
            df[user_col].astype(str), df[item_col].astype(str), ranks, scores.tolist(), tags
        )
    ]
    _atomic_write(path, "".join(lines))
