"""TREC files: qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Ids stay strings, as trec_eval treats them (its tie-break compares docnos as text). Readers
validate the column count, numeric fields and duplicates, and name the file and line on error;
writers are atomic (:func:`recmeta.files.write_text_atomic`). Every reader parses the file's
bytes with one compiled pass (:func:`._te_parse.parse_trec`, built ahead of time with
trec_eval's pass): :func:`qrels_columns` and :func:`run_columns` (what ``recmeta evaluate``
reads) give numpy columns, ids as codes into their distinct names, with numpy alone; the
readers that give frames import pandas when called.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

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


def _existing(path: str | PathLike, what: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} file not found: {path}")
    return path


def _bytes(path: str | PathLike, what: str) -> np.ndarray:
    """The file's bytes: a (copy-on-write) memory map, or the standard input for "-"."""
    if str(path) == "-":
        stdin = sys.stdin  # a text stream without a buffer (a StringIO) is read as text
        raw = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode("utf-8")
        return np.frombuffer(bytearray(raw), np.uint8)
    path = _existing(path, what)
    if path.stat().st_size == 0:
        return np.zeros(0, np.uint8)
    return np.memmap(path, np.uint8, mode="c").view(np.ndarray)


def _text(data: np.ndarray, start: np.ndarray, end: np.ndarray) -> str:
    """``data[start[i]:end[i]]`` for every i, each followed by a newline, decoded at once."""
    lengths = end - start + 1
    stops = np.cumsum(lengths)
    at = np.arange(int(stops[-1]) if len(stops) else 0) + np.repeat(
        start - stops + lengths, lengths
    )
    blob = data[np.minimum(at, len(data) - 1)]
    blob[stops - 1] = 10
    return blob.tobytes().decode("utf-8")


def _line_of(data: np.ndarray, offset: int) -> int:
    return int(np.count_nonzero(data[:offset] == 10)) + 1


def _decoded(data: np.ndarray, start: np.ndarray, end: np.ndarray, path: object) -> list[str]:
    """The fields as text; a field that is not UTF-8 names its line."""
    try:
        return _text(data, start, end).split("\n")[:-1]
    except UnicodeDecodeError:
        for a, b in zip(start.tolist(), end.tolist(), strict=True):
            field = data[a:b].tobytes()
            try:
                field.decode("utf-8")
            except UnicodeDecodeError:
                raise TrecFormatError(
                    f"{path}:{_line_of(data, a)}: the field {field!r} is not UTF-8 text; "
                    "write ids as UTF-8"
                ) from None
        raise


def _read_table(path: str | PathLike, what: str, skip: Sequence[int] = ()) -> _Table:
    """Columns 0, 2, ... of a qrels or run file, and the last line's fields (the compiled
    reader, :func:`recmeta.metrics._te_parse.parse_trec`); errors name the file and line.

    Blank lines and lines starting with ``#`` are skipped (trec_eval 10.0 skips comments);
    fields are separated by ASCII whitespace, as trec_eval splits them; a run line may carry
    fields after its tag (dropped, as trec_eval drops them). ``path`` "-" is the standard
    input. Columns in ``skip`` (and the iteration column) are neither read nor checked.
    """
    from . import _te_codes as P
    from ._te_compiled import kernel

    ncols, layout, numeric = _LAYOUTS[what]
    kinds = [
        P.SKIP if c == 1 or c in skip else P.NUMBER if c in numeric else P.ID for c in range(ncols)
    ]
    data = _bytes(path, what)
    name = "<stdin>" if str(path) == "-" else path
    status, codes, values, key_start, key_end, key_column, last, slow = kernel().parse_trec(
        data, np.asarray(kinds, dtype=np.int64), what == "run"
    )
    error, line = int(status[P.S_ERROR]), int(status[P.S_LINE])
    where = slice(int(status[P.S_START]), int(status[P.S_END]))
    if error == P.FIELD_COUNT:
        text = data[where].tobytes().decode("utf-8", errors="replace").strip()
        raise TrecFormatError(
            f"{name}:{line}: expected {ncols} whitespace-separated fields "
            f"({layout}), got {status[P.S_GOT]}: {text!r}"
        )
    if error == P.EMPTY:
        raise TrecFormatError(f"{name}: empty {what} file")
    if error == P.NOT_A_NUMBER:
        field = data[where].tobytes().decode("utf-8", errors="replace")
        raise TrecFormatError(
            f"{name}:{line}: the {numeric[int(status[P.S_COLUMN])]} field ({layout}) must be "
            f"a number, got {field!r}"
        )
    rows = int(status[P.S_ROWS])
    if len(slow):  # numbers one rounding cannot convert exactly: Python's float does
        exact = np.fromiter(
            map(float, _text(data, slow[:, 2], slow[:, 3]).split("\n")[:-1]), np.float64, len(slow)
        )
        values[slow[:, 0], slow[:, 1]] = exact
    names = np.asarray(_decoded(data, key_start, key_end, name), dtype=object)
    out: _Columns = {}
    ids = numbers = 0
    for c, kind in enumerate(kinds):
        if kind == P.ID:
            out[c] = Ids(codes[ids, :rows], names[key_column == ids])
            ids += 1
        elif kind == P.NUMBER:
            out[c] = values[numbers, :rows]
            numbers += 1
    tag = _decoded(data, last[-1:, 0], last[-1:, 1], name)[0] if what == "run" else None
    return _Table(out, tag)


class _Table(NamedTuple):
    columns: _Columns
    tag: str | None  # a run's last tag


def qrels_columns(path: str | PathLike) -> TrecColumns:
    """A qrels file as trec_eval reads it (topics, docnos, grades); no duplicate check."""
    raw = _read_table(path, "qrels").columns
    return TrecColumns(raw[0], raw[2], raw[3])  # type: ignore[arg-type]


def run_columns(path: str | PathLike) -> TrecColumns:
    """A run file as trec_eval reads it (topics, docnos, scores, and the last line's tag; the
    ranks are not read); no duplicate check."""
    table = _read_table(path, "run", (3, 5))
    raw = table.columns
    return TrecColumns(raw[0], raw[2], raw[4], table.tag)  # type: ignore[arg-type]


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

    raw = _read_table(path, "qrels").columns
    return pd.DataFrame(
        {"user": _frame_column(raw[0]), "item": _frame_column(raw[2]), "rating": raw[3]}
    )


def run_frame(path: str | PathLike, rank: bool = True, tags: bool = True) -> pd.DataFrame:
    """A run file as system, user, item (categoricals), rank, score; without ``rank`` the
    rank field is neither read nor checked (trec_eval skips it); without ``tags`` the tags are
    left out (:func:`run_columns` gives trec_eval's run id, the last line's tag)."""
    import pandas as pd

    skip = (() if rank else (3,)) + (() if tags else (5,))
    raw = _read_table(path, "run", skip).columns
    cols = {"system": 5, "user": 0, "item": 2, "rank": 3, "score": 4}
    return pd.DataFrame({k: _frame_column(raw[c]) for k, c in cols.items() if c in raw})


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
