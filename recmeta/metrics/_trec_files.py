"""TREC files: qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Ids stay strings, as trec_eval treats them (its tie-break compares docnos as text). Readers
validate the column count, numeric fields and duplicates, and name the file and line on error;
writers are atomic (:func:`recmeta.files.write_text_atomic`). :func:`qrels_columns` and
:func:`run_columns` (what ``recmeta evaluate`` reads) give numpy columns, ids as codes into
their distinct names, with pyarrow's CSV reader and numpy alone; the readers that give frames
import pandas when called.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "TrecFormatError",
    "Ids",
    "TrecColumns",
    "qrels_columns",
    "run_columns",
    "read_qrels",
    "write_qrels",
    "read_run",
    "read_runs",
    "write_run",
]


class TrecFormatError(ValueError):
    """A malformed TREC file; the message names the file, the line and the fix."""


#: pyarrow's CSV reader parses blocks on every core when true; on one thread it takes about
#: two thirds of the CPU time and half the memory (measured on 600,000-line runs, 2 cores)
_THREADS = False

_LAYOUTS = {
    "qrels": (4, "qid iter docno rel", {3: "rel"}),
    "run": (6, "qid Q0 docno rank score tag", {3: "rank", 4: "score"}),
}


class Ids(NamedTuple):
    """An id column: line i holds ``names[codes[i]]`` (``names`` distinct, in no set order)."""

    codes: np.ndarray  # int32
    names: np.ndarray  # object array of str


class TrecColumns(NamedTuple):
    """A qrels or run file as trec_eval reads it: each line's topic and document, and its
    grade (qrels) or score (run); a run's ``tag`` is its last line's (trec_eval's run id)."""

    topics: Ids
    docs: Ids
    values: np.ndarray  # float64
    tag: str | None = None


_Columns = dict[int, "Ids | np.ndarray"]


def _read_lines(path: str | PathLike, what: str) -> _Columns:
    """Whitespace-separated fields, checked line by line; errors name the file and line.

    Blank lines and lines starting with ``#`` are skipped (trec_eval 10.0 skips comments); a
    run line may carry fields after its tag (dropped, as trec_eval drops them). ``path`` "-" is
    the standard input.
    """
    ncols, layout, numeric = _LAYOUTS[what]
    if str(path) == "-":
        return _parse_lines(sys.stdin, "<stdin>", ncols, what, layout, numeric)
    with open(_existing(path, what), encoding="utf-8") as fh:
        return _parse_lines(fh, path, ncols, what, layout, numeric)


def _existing(path: str | PathLike, what: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} file not found: {path}")
    return path


def _number(text: str) -> float:
    """A numeric field: what ``float`` reads, less NaN, ``_`` separators and non-ASCII digits."""
    value = float(text) if text.isascii() and "_" not in text else math.nan
    if math.isnan(value):
        raise ValueError(text)
    return value


def _parse_lines(
    lines: Iterable[str],
    path: str | PathLike,
    ncols: int,
    what: str,
    layout: str,
    numeric: Mapping[int, str],
) -> _Columns:
    rows = []
    numbers = []
    more = what == "run"
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
        numbers.append(lineno)
    if not rows:
        raise TrecFormatError(f"{path}: empty {what} file")
    out: _Columns = {}
    for col, field in enumerate(zip(*rows, strict=True)):
        if col in numeric:
            try:
                out[col] = np.fromiter(map(_number, field), np.float64, len(field))
            except ValueError:
                first = next(i for i, text in enumerate(field) if not _is_number(text))
                raise TrecFormatError(
                    f"{path}:{numbers[first]}: the {numeric[col]} field ({layout}) must be a "
                    f"number, got {field[first]!r}"
                ) from None
        elif col != 1:
            names, codes = np.unique(np.asarray(field, dtype=object), return_inverse=True)
            out[col] = Ids(codes.astype(np.int32), names)
    return out


def _is_number(text: str) -> bool:
    try:
        _number(text)
    except ValueError:
        return False
    return True


def _read_fast(path: str | PathLike, what: str, skip: Sequence[int] = ()) -> _Columns | None:
    """pyarrow's CSV reader on a file of single-space (or single-tab) separated fields, ids
    dictionary-encoded; None when the file needs :func:`_read_lines` (comments, runs of blanks,
    extra fields, a field that is not a number), which also names the offending line.
    Columns in ``skip`` (and the iteration column) are not read."""
    if str(path) == "-":
        return None
    import mmap

    import pyarrow as pa
    from pyarrow import csv

    ncols, _, numeric = _LAYOUTS[what]
    path = _existing(path, what)
    with open(path, "rb") as fh:
        if path.stat().st_size == 0:
            return None
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[:1] == b"#" or data.find(b"\n#") >= 0:
                return None
            head = data[: data.find(b"\n")] if data.find(b"\n") >= 0 else data[:]
    delimiter = "\t" if b"\t" in head else " "
    ids = pa.dictionary(pa.int32(), pa.string())
    names = [str(i) for i in range(ncols)]
    types = {
        n: (pa.float64() if i in numeric else ids)
        for i, n in enumerate(names)
        if i != 1 and i not in skip
    }
    pool = pa.system_memory_pool()  # malloc's: returns what it frees (mimalloc keeps ~50 MB)
    with pa.memory_map(str(path)) as source:  # parsed in place: the file is not copied
        try:
            table = csv.read_csv(
                source,
                read_options=csv.ReadOptions(
                    column_names=names, block_size=1 << 22, use_threads=_THREADS
                ),
                parse_options=csv.ParseOptions(
                    delimiter=delimiter, quote_char=False, escape_char=False
                ),
                convert_options=csv.ConvertOptions(
                    column_types=types,
                    include_columns=list(types),
                    null_values=[],
                    strings_can_be_null=False,
                ),
                memory_pool=pool,
            )
        except (pa.ArrowInvalid, UnicodeDecodeError):
            return None
        if table.num_rows == 0 or any(table.column(n).null_count for n in types):
            return None
        table = table.unify_dictionaries(pool)  # one dictionary per column, for every chunk
        out: _Columns = {}
        for n in types:
            column = table.column(n)
            if int(n) in numeric:
                out[int(n)] = np.concatenate([_values(c, np.float64) for c in column.chunks])
                if np.isnan(out[int(n)]).any():
                    return None
            else:
                codes = np.concatenate([_values(c.indices, np.int32) for c in column.chunks])
                labels = np.asarray(column.chunk(0).dictionary.to_pylist(), dtype=object)
                out[int(n)] = Ids(codes, labels)
    return out  # copies: nothing refers to the map


def _values(array: pa.Array, dtype: type) -> np.ndarray:
    """A primitive arrow array without nulls as numpy's (``to_numpy`` would import pandas)."""
    size = np.dtype(dtype).itemsize
    return np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * size)


def _read_table(path: str | PathLike, what: str, skip: Sequence[int] = ()) -> _Columns:
    """Columns 0, 2, ... of a qrels or run file (the fast reader, else line by line)."""
    columns = _read_fast(path, what, skip)
    return _read_lines(path, what) if columns is None else columns


def qrels_columns(path: str | PathLike) -> TrecColumns:
    """A qrels file as trec_eval reads it (topics, docnos, grades); no duplicate check."""
    raw = _read_table(path, "qrels")
    return TrecColumns(raw[0], raw[2], raw[3])  # type: ignore[arg-type]


def run_columns(path: str | PathLike) -> TrecColumns:
    """A run file as trec_eval reads it (topics, docnos, scores, and the last line's tag; the
    ranks are not read); no duplicate check."""
    raw = _read_table(path, "run", (3, 5))
    tags = raw.get(5)  # read by the line-by-line reader only
    tag = str(tags.names[tags.codes[-1]]) if isinstance(tags, Ids) else last_tag(path)
    return TrecColumns(raw[0], raw[2], raw[4], tag)  # type: ignore[arg-type]


def _frame_column(column: Ids | np.ndarray) -> object:
    import pandas as pd

    if isinstance(column, Ids):
        return pd.Categorical.from_codes(column.codes, categories=column.names)
    return column


def _ids(col: pd.Series) -> Ids:
    """An id column of a frame as :class:`Ids` (categorical or not: hash-factorised)."""
    import pandas as pd

    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = np.asarray(col.cat.categories.astype(str), dtype=object)
        return Ids(col.cat.codes.to_numpy().astype(np.int32, copy=False), cats)
    codes, cats = pd.factorize(col.astype(str), use_na_sentinel=False)
    return Ids(codes.astype(np.int32), np.asarray(cats, dtype=object))


def frame_columns(table: pd.DataFrame | TrecColumns, value: str) -> TrecColumns:
    """A frame (user, item, ``value``) as :class:`TrecColumns` (columns are returned as given)."""
    if isinstance(table, TrecColumns):
        return table
    import pandas as pd

    values = pd.to_numeric(table[value]).to_numpy(dtype=np.float64)
    return TrecColumns(_ids(table["user"]), _ids(table["item"]), values)


def qrels_frame(path: str | PathLike) -> pd.DataFrame:
    """A qrels file as user, item (categoricals), rating; no duplicate check."""
    import pandas as pd

    raw = _read_table(path, "qrels")
    return pd.DataFrame(
        {"user": _frame_column(raw[0]), "item": _frame_column(raw[2]), "rating": raw[3]}
    )


def run_frame(path: str | PathLike, rank: bool = True, tags: bool = True) -> pd.DataFrame:
    """A run file as system, user, item (categoricals), rank, score; without ``rank`` the
    rank field is neither read nor checked (trec_eval skips it); without ``tags`` the tags are
    left out (:func:`last_tag` gives trec_eval's run id)."""
    import pandas as pd

    skip = (() if rank else (3,)) + (() if tags else (5,))
    raw = _read_table(path, "run", skip)
    cols = {"system": 5, "user": 0, "item": 2, "rank": 3, "score": 4}
    return pd.DataFrame({k: _frame_column(raw[c]) for k, c in cols.items() if c in raw})


def last_tag(path: str | PathLike) -> str | None:
    """The tag of a run file's last line (trec_eval's run id), read from the file's end."""
    if str(path) == "-":
        return None
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(size - (1 << 16), 0))
        tail = fh.read().decode("utf-8", errors="replace").splitlines()
    for line in reversed(tail[1:] if size > 1 << 16 else tail):
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            return parts[5] if len(parts) > 5 else None
    return None


def _as_text(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    return df.assign(**{c: df[c].astype(str) for c in columns})


def read_qrels(path: str | PathLike) -> pd.DataFrame:
    """Read a qrels file into a frame (user, item, rating); ids are strings, ratings floats
    (trec_eval reads them as integers, truncating: :func:`recmeta.metrics.trec_eval` does)."""
    df = _as_text(qrels_frame(path), ["user", "item"])
    dup = df.duplicated(["user", "item"])
    if dup.any():
        first = df[dup].iloc[0]
        raise TrecFormatError(
            f"{path}: duplicate judgment for qid {first['user']!r}, docno {first['item']!r}; "
            "keep one line per pair (a ratings table, user item rating timestamp, is not a "
            "qrels file: write it with recmeta.metrics.write_qrels)"
        )
    return df


def read_run(path: str | PathLike) -> pd.DataFrame:
    """Read a run file into a frame (system, user, item, rank, score); ids are strings.

    Rows keep the file's order; fields after the tag are ignored, as trec_eval ignores them;
    ``path`` "-" reads the standard input.
    """
    df = _as_text(run_frame(path), ["system", "user", "item"])
    dup = df.duplicated(["system", "user", "item"])
    if dup.any():
        first = df[dup].iloc[0]
        raise TrecFormatError(
            f"{path}: docno {first['item']!r} appears twice for qid {first['user']!r}; "
            "trec_eval rejects such runs too"
        )
    return df


def read_runs(paths: Sequence[str | PathLike]) -> pd.DataFrame:
    """Read several run files; a file holding one tag gives one system.

    If two files use the same tag, their systems are named after the file stems instead.
    """
    import pandas as pd

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
        frames = [f.assign(system=s) for f, s in zip(frames, stems, strict=True)]
    return pd.concat(frames, ignore_index=True)


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
        for u, i, g in zip(df[user_col].astype(str), df[item_col].astype(str), grades, strict=True)
    ]
    from ..files import write_text_atomic

    write_text_atomic(path, "".join(lines))


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
    import pandas as pd

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
            df[user_col].astype(str),
            df[item_col].astype(str),
            ranks,
            scores.tolist(),
            tags,
            strict=True,
        )
    ]
    from ..files import write_text_atomic

    write_text_atomic(path, "".join(lines))
