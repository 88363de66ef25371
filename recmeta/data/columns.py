"""Ratings files and frames of one's own: columns recognised by their usual spellings or named
(``columns=``, the ``--columns`` option), the separator read from the first line, files without
a header row, MovieLens ``.dat`` and Parquet."""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypedDict, Unpack

import pandas as pd

from .validation import DataError, validate_ratings

# ----------------------------------------------------------------- columns of one's own data
ROLES = ("user", "item", "rating", "timestamp")


#: common spellings of each column, compared in lower case without ``_``, ``-`` and spaces
#: (``userId``, ``user_id`` and ``UserID`` are all ``userid``)
COLUMN_SPELLINGS: dict[str, tuple[str, ...]] = {
    "user": ("user", "userid"),
    "item": ("item", "itemid", "movieid", "movie"),
    "rating": ("rating", "score"),
    "timestamp": ("timestamp", "time"),
}


#: file suffixes read as ratings files (the separator is read from the first line)
FILE_SUFFIXES = {".csv", ".tsv", ".txt", ".dat", ".data", ".parquet", ".pq"}
#: compressed text files, read as the file inside them (``ratings.dat.gz`` as ``ratings.dat``)
COMPRESSED_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}


def file_suffix(path: str | os.PathLike) -> str:
    """The suffix that tells a ratings file's format: ``.dat`` for ``ratings.dat.gz`` (the
    suffix under a compression suffix of :data:`COMPRESSED_SUFFIXES`), lower case."""
    p = Path(path)
    if p.suffix.lower() in COMPRESSED_SUFFIXES:
        return Path(p.stem).suffix.lower()
    return p.suffix.lower()


def _open_text(p: Path) -> io.BufferedIOBase:
    """``p`` opened for reading bytes, decompressed if its suffix says it is compressed."""
    kind = COMPRESSED_SUFFIXES.get(p.suffix.lower())
    if kind == "gzip":
        import gzip

        return gzip.open(p, "rb")
    if kind == "bz2":
        import bz2

        return bz2.open(p, "rb")
    if kind == "xz":
        import lzma

        return lzma.open(p, "rb")
    return p.open("rb")


#: what ``columns=`` accepts: ``"user=userId,item=movieId"``, ``{"user": "userId"}``, or the
#: columns of a file without a header row in order, ``"user,item,rating,timestamp"``
Columns = str | Mapping[str, "str | None"] | Sequence[str] | None


class ColumnNames(TypedDict, total=False):
    """The columns named one by one (``user=``, ``item=``, ``rating=``, ``timestamp=``), as
    :func:`from_frame` takes them; ``rating=None`` or ``timestamp=None``: the data has none."""

    user: str
    item: str
    rating: str | None
    timestamp: str | None


_SKIP = {"-", "_"}


_AUTO = "auto"


class ColumnsRecognised(UserWarning):
    """A file's or frame's columns were taken by their common spellings (``userId`` → user)."""


def parse_columns(spec: Columns) -> dict[str, str | None] | list[str] | None:
    """The column mapping of ``--columns`` text or of Python's ``columns=``.

    ``"user=userId,item=movieId,rating=stars"`` (or a dict) maps each role to the file's column;
    ``rating=none`` reads the file as implicit feedback, ``timestamp=none`` drops the timestamps.
    Names without ``=``, ``"user,item,rating,timestamp"``, are the columns of a file without a
    header row, in order; ``-`` skips a column.
    """
    if spec is None:
        return None
    if isinstance(spec, str):
        parts = [p.strip() for p in spec.split(",")]
        if not any(parts):
            raise DataError("columns is empty; e.g. --columns user=userId,item=movieId")
        with_eq = ["=" in p for p in parts]
        if all(with_eq):
            spec = {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in parts)}
        elif any(with_eq):
            raise DataError(
                f"columns {spec!r} mixes role=name pairs and plain names; give either "
                "user=userId,item=movieId,... (a file with a header row) or user,item,rating,"
                "timestamp (the columns of a file without one, in order)"
            )
        else:
            spec = parts
    if isinstance(spec, Mapping):
        out: dict[str, str | None] = {}
        for role, col in spec.items():
            if role not in ROLES:
                raise DataError(
                    f"columns: unknown role {role!r}; the roles are {', '.join(ROLES)} "
                    "(e.g. user=userId,item=movieId,rating=score)"
                )
            empty = col is None or str(col).strip().lower() in ("", "none")
            if empty and role in ("user", "item"):
                raise DataError(f"columns: the {role} column cannot be left out ({role}={col!r})")
            out[role] = None if empty else str(col)
        taken = [c for c in out.values() if c is not None]
        if len(set(taken)) < len(taken):
            raise DataError(f"columns: one column is given two roles in {out}")
        return out
    order = [str(c).strip() for c in spec]
    roles = [c for c in order if c not in _SKIP]
    bad = [c for c in roles if c not in ROLES]
    if bad or len(set(roles)) < len(roles) or not {"user", "item"} <= set(roles):
        raise DataError(
            f"columns {order}: the columns of a file without a header row are named in order "
            f"with the roles {', '.join(ROLES)} (each once, user and item needed; '-' skips a "
            "column), e.g. user,item,rating,timestamp"
        )
    return order


def _spelling(name: object) -> str:
    return re.sub(r"[\s_\-]", "", str(name)).lower()


def _resolve(
    found: list, given: dict[str, str | None], source: str
) -> tuple[dict[str, str], list[str]]:
    """Role of each column to take: ``{file column: role}``, and the ones read by spelling."""
    mapping: dict[str, str] = {}
    guessed: list[str] = []
    for role in ROLES:
        if role in given:
            col = given[role]
            if col is None:
                continue
            if col not in found:
                hint = (
                    "; for data without ratings pass rating=None (--columns rating=none)"
                    if role == "rating"
                    else ""
                )
                raise DataError(
                    f"{source}: missing column(s) [{col!r}] (named as the {role} column); found "
                    f"{[str(c) for c in found]}. Name the right column with --columns {role}=NAME "
                    f"({role}= in Python){hint}."
                )
            mapping[col] = role
            continue
        hits = [
            c
            for c in found
            if _spelling(c) in COLUMN_SPELLINGS[role]
            and c not in mapping
            and c not in given.values()
        ]
        if len(hits) > 1:
            raise DataError(
                f"{source}: columns {[str(c) for c in hits]} could each be the {role} column; say "
                f"which with --columns {role}={hits[0]} ({role}= in Python)."
            )
        if hits:
            mapping[hits[0]] = role
            if hits[0] != role:
                guessed.append(f"{hits[0]} → {role}")
        elif role in ("user", "item"):
            raise DataError(
                f"{source}: missing column(s) [{role!r}]; found {[str(c) for c in found]}. Name "
                f"the columns with --columns user=...,item=...,rating=...,timestamp=... "
                f"(columns= in Python); a file without a header row needs its columns in order, "
                "e.g. --columns user,item,rating,timestamp."
            )
    return mapping, guessed


def usual_names(df: pd.DataFrame, roles: Sequence[str] = ROLES) -> pd.DataFrame:
    """``df`` with the usual spelling of each role renamed to the role (``user_id`` → user).

    A role already present, or with several candidate columns, is left as it is; nothing is
    validated (for lists of recommendations, which carry scores and ranks).
    """
    names = {}
    for role in roles:
        hits = [c for c in df.columns if _spelling(c) in COLUMN_SPELLINGS[role]]
        if role not in df.columns and len(hits) == 1:
            names[hits[0]] = role
    return df.rename(columns=names)


def from_frame(
    df: pd.DataFrame,
    columns: Columns = None,
    *,
    user: str = _AUTO,
    item: str = _AUTO,
    rating: str | None = _AUTO,
    timestamp: str | None = _AUTO,
    source: str = "DataFrame",
    first_line: int | None = None,
) -> pd.DataFrame:
    """Tidy ratings frame from your own table, its columns named or recognised; validated.

    ``columns`` (:func:`parse_columns`) or the keywords ``user=``, ``item=``, ``rating=``,
    ``timestamp=`` name the table's columns. A role not named is looked up among the common
    spellings (:data:`COLUMN_SPELLINGS`: ``userId``, ``movieId``, ``score``, ``time``, ...), and
    a :class:`ColumnsRecognised` warning says which were taken. A table without a rating column
    is read as implicit feedback (every interaction relevant, no ``rating`` column in the result;
    see :func:`is_implicit`); ``rating=None`` asks for it explicitly, ``timestamp=None`` drops the
    timestamps. ``first_line`` is the file line of the first row, for messages.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
    spec = parse_columns(columns)
    if isinstance(spec, list):
        if len(spec) != df.shape[1]:
            raise DataError(
                f"{source}: columns names {len(spec)} columns, the table has "
                f"{df.shape[1]} ({list(df.columns)})"
            )
        df = df.set_axis([f"-{k}" if c in _SKIP else c for k, c in enumerate(spec)], axis=1)
        spec = None
    given = dict(spec or {})
    for role, value in (
        ("user", user),
        ("item", item),
        ("rating", rating),
        ("timestamp", timestamp),
    ):
        if value is _AUTO:
            continue
        if role in given and given[role] != value:
            raise DataError(
                f"{source}: the {role} column is named twice ({given[role]!r} in "
                f"columns, {value!r} as {role}=)"
            )
        given[role] = value
    mapping, guessed = _resolve(list(df.columns), given, source)
    if guessed:
        warnings.warn(
            f"{source}: columns read by their names: {', '.join(guessed)} (--columns or "
            "columns= names others)",
            ColumnsRecognised,
            stacklevel=3,
        )
    taken = df[list(mapping)].rename(columns=mapping)
    labels = {role: str(col) for col, role in mapping.items()}
    return validate_ratings(
        taken, source=source, implicit="rating" not in labels, first_line=first_line, labels=labels
    )


def _first_line(p: Path) -> str:
    try:
        with _open_text(p) as f:
            raw = f.readline()
    except (OSError, EOFError, ValueError) as exc:  # gzip/bz2/lzma refuse a damaged file
        if p.suffix.lower() not in COMPRESSED_SUFFIXES:
            raise
        raise DataError(
            f"{p} could not be decompressed ({exc}); its name ends in {p.suffix}, so it is read "
            f"as {COMPRESSED_SUFFIXES[p.suffix.lower()]}: give the file as it was downloaded, or "
            "decompress it and pass the plain file."
        ) from None
    return raw.decode("utf-8", errors="replace").rstrip("\r\n")


def _separator(line: str) -> str:
    """The field separator of a ratings file, read from its first line."""
    for sep in ("::", "\t", ",", ";", "|"):
        if sep in line:
            return sep
    return r"\s+" if line.strip().count(" ") else ","


def _is_number(text: str) -> bool:
    try:
        float(text.strip().strip('"'))
    except ValueError:
        return False
    return True


def from_csv(
    path: str | os.PathLike,
    *,
    columns: Columns = None,
    sep: str | None = None,
    **named: Unpack[ColumnNames],
) -> pd.DataFrame:
    """Tidy ratings frame of a ratings file: CSV, TSV, MovieLens ``.dat`` (``::``) or Parquet;
    a text file compressed with gzip, bzip2 or xz (``ratings.dat.gz``) reads as the file inside.

    The separator is read from the first line (``::``, tab, comma, semicolon, ``|``, spaces)
    unless ``sep`` is given. A file with a header row has its columns named or recognised as in
    :func:`from_frame`; a file without one (the first line holds only numbers) needs its columns
    in order, ``columns="user,item,rating,timestamp"``, except a ``::`` file of three or four
    fields, read in MovieLens's order (UserID::MovieID::Rating[::Timestamp]). Messages name the
    file, the line, the column and the bad value.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such ratings file: {p}")
    if p.is_dir():
        raise DataError(f"{p} is a folder; give the path of the ratings file inside it.")
    if p.stat().st_size == 0:
        raise DataError(
            f"{p} is empty (0 bytes): a ratings file needs a header row (e.g. "
            "user,item,rating,timestamp) and one line per rating."
        )
    spec = parse_columns(columns)
    if file_suffix(p) in (".parquet", ".pq"):
        table = pd.read_parquet(p)
        return from_frame(table, spec, source=str(p), **named)
    line = _first_line(p)
    if not line.strip():
        raise DataError(
            f"{p}, line 1: the line is blank; the first line is the header row "
            "(e.g. user,item,rating,timestamp) or the first rating."
        )
    sep = sep or _separator(line)
    fields = line.split() if sep == r"\s+" else line.split(sep)
    header = not all(_is_number(f) for f in fields) and not (
        isinstance(spec, list) and any(_is_number(f) for f in fields)
    )
    names = None
    if isinstance(spec, list):
        if len(spec) != len(fields):
            raise DataError(
                f"{p}, line 1: {len(fields)} fields, and columns names {len(spec)} "
                f"({','.join(spec)}); name every column in order, '-' for one to skip."
            )
        names = [f"-{k}" if c in _SKIP else c for k, c in enumerate(spec)]
        spec = None
    elif not header:
        if sep == "::" and len(fields) in (3, 4) and not spec and not named:
            names = list(ROLES[: len(fields)])
            warnings.warn(
                f"{p}: no header row; read in MovieLens's order "
                f"{'::'.join(names)} (--columns names others)",
                ColumnsRecognised,
                stacklevel=2,
            )
        else:
            shown = line if len(line) <= 60 else line[:57] + "..."
            order = ",".join(ROLES[: len(fields)]) if len(fields) <= 4 else "user,item,rating,-"
            raise DataError(
                f"{p}: line 1 ({shown!r}) is data, not a header row, so the columns have no "
                f"names; name them in order: --columns {order} (columns={order!r} in Python; "
                "'-' skips a column)."
            )
    text: str | io.BytesIO = str(p)
    compression = COMPRESSED_SUFFIXES.get(p.suffix.lower())
    if sep == "::":
        with _open_text(p) as f:
            text, sep = io.BytesIO(f.read().replace(b"::", b"\t")), "\t"
    try:
        df = pd.read_csv(
            text,
            sep=sep,
            header=0 if header else None,
            names=names,
            skip_blank_lines=False,
            engine="python" if sep == r"\s+" else "c",
            compression=compression if isinstance(text, str) else None,
        )
    except pd.errors.EmptyDataError:
        raise DataError(
            f"{p} has no data: a ratings file needs a header row and one line per rating."
        ) from None
    except pd.errors.ParserError as exc:
        raise DataError(
            f"{p}: {str(exc).strip()}; every line needs as many fields as line 1 "
            f"({len(fields)}, separated by {sep!r})."
        ) from None
    first = 2 if header else 1
    return from_frame(df, spec, source=str(p), first_line=first, **named)
