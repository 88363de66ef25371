"""Datasets: the GroupLens MovieLens registry, a verified download cache, and bring-your-own data.

Every loader returns a *tidy ratings frame*: one row per (user, item) pair with the columns
``user``, ``item``, ``rating`` (float64) and, where the source has one, ``timestamp`` (int64).
Data without ratings (implicit feedback: clicks, plays, purchases) load as an *interaction
frame*, the same without the ``rating`` column; every interaction counts as relevant, and
:func:`is_implicit` tells the two apart.

:func:`load` is the one loader of the package: it takes a registered release name, the path
of a ratings file of your own (CSV, TSV, MovieLens ``.dat``, Parquet; columns recognised by their
usual names or named with ``columns=``, the ``--columns`` option of every command), a pandas
frame or a LensKit ``Dataset`` / ``ItemListCollection``, so every command and chapter parameter
that names a dataset accepts any of them.

The cache directory is ``$RECMETA_DATA`` if set, else ``data/`` in the current directory. A
cache that already holds the extracted folder of a release (``<cache>/ml-100k/u.data``, ...) is
used as it is, after its ratings file is checked against the digest recorded here; otherwise the
official archive is downloaded with :mod:`pooch` and its checksum verified before extraction.

Reference for the data: F. Maxwell Harper and Joseph A. Konstan. 2015. The MovieLens Datasets:
History and Context. ACM TiiS 5(4), 19.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import tempfile
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

__all__ = [
    "DatasetInfo",
    "REGISTRY",
    "DataError",
    "DatasetNotAvailable",
    "cache_dir",
    "info",
    "fetch",
    "load",
    "is_implicit",
    "describe_source",
    "from_frame",
    "from_csv",
    "from_lenskit",
    "lenskit_frame",
    "usual_names",
    "is_lenskit",
    "parse_columns",
    "ColumnsRecognised",
    "COLUMN_SPELLINGS",
    "validate_ratings",
    "stats",
    "gini",
    "to_lenskit",
]

ENV_VAR = "RECMETA_DATA"
BASE_URL = "https://files.grouplens.org/datasets/movielens/"


class DataError(ValueError):
    """Raised when ratings data are malformed; the message names the problem and the fix."""


class DatasetNotAvailable(RuntimeError):
    """Raised when a registered dataset is neither cached nor downloadable."""


@dataclass(frozen=True)
class DatasetInfo:
    """One GroupLens release.

    ``archive_hash`` is the pooch-style digest (``sha256:...`` or ``md5:...``) of the official zip;
    ``None`` means the digest is taken from the ``.md5`` file GroupLens publishes beside the zip.
    ``file_digest`` checks an already extracted ratings file (``sha256:...`` or ``gitblob:...``).
    """

    name: str
    url: str
    archive_hash: str | None
    folder: str  # folder inside the zip, and inside the cache
    ratings_file: str
    file_format: Literal["tsv", "dat", "csv"]
    rating_scale: tuple[float, ...]
    n_ratings: int
    n_users: int
    n_items: int
    file_digest: str | None = None

    @property
    def ratings_path(self) -> str:
        return f"{self.folder}/{self.ratings_file}"


_FIVE = (1.0, 2.0, 3.0, 4.0, 5.0)
_HALF = tuple(float(x) for x in np.arange(0.5, 5.01, 0.5))

#: Digests: archive sha256 values as listed in TensorFlow Datasets' MovieLens checksum file;
#: md5 values as published by GroupLens beside each zip; extracted-file digests from the
#: official files (ml-1m: the git blob id of the official ratings.dat).
REGISTRY: dict[str, DatasetInfo] = {
    d.name: d
    for d in [
        DatasetInfo(
            "ml-100k", BASE_URL + "ml-100k.zip",
            "sha256:50d2a982c66986937beb9ffb3aa76efe955bf3d5c6b761f4e3a7cd717c6a3229",
            "ml-100k", "u.data", "tsv", _FIVE, 100_000, 943, 1_682,
            "sha256:06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
        ),
        DatasetInfo(
            "ml-1m", BASE_URL + "ml-1m.zip",
            "sha256:a6898adb50b9ca05aa231689da44c217cb524e7ebd39d264c56e2832f2c54e20",
            "ml-1m", "ratings.dat", "dat", _FIVE, 1_000_209, 6_040, 3_706,
            "gitblob:77a7c4b150f588c23bb9e1f068aa996c0b413695",
        ),
        DatasetInfo(
            "ml-10m", BASE_URL + "ml-10m.zip", "md5:ce571fd55effeba0271552578f2648bd",
            "ml-10M100K", "ratings.dat", "dat", _HALF, 10_000_054, 69_878, 10_677,
        ),
        DatasetInfo(
            "ml-20m", BASE_URL + "ml-20m.zip",
            "sha256:96f243c338a8665f6bcc89c53edf6ee39162a846940de6b7c8c48aeada765ff3",
            "ml-20m", "ratings.csv", "csv", _HALF, 20_000_263, 138_493, 26_744,
        ),
        DatasetInfo(
            "ml-25m", BASE_URL + "ml-25m.zip",
            "sha256:8b21cfb7eb1706b4ec0aac894368d90acf26ebdfb6aced3ebd4ad5bd1eb9c6aa",
            "ml-25m", "ratings.csv", "csv", _HALF, 25_000_095, 162_541, 59_047,
        ),
        DatasetInfo(
            "ml-32m", BASE_URL + "ml-32m.zip", None,
            "ml-32m", "ratings.csv", "csv", _HALF, 32_000_204, 200_948, 84_432,
        ),
        DatasetInfo(
            "ml-latest-small", BASE_URL + "ml-latest-small.zip",
            "sha256:696d65a3dfceac7c45750ad32df2c259311949efec81f0f144fdfb91ebc9e436",
            "ml-latest-small", "ratings.csv", "csv", _HALF, 100_836, 610, 9_724,
            "sha256:aa289ca83157595d0df6aea1be6a4ded676ddc4385472e8313a8ed9805352646",
        ),
    ]
}


def project_root(start: str | os.PathLike | None = None) -> Path:
    """The recmeta project folder holding ``start`` (default: the current folder), else ``start``.

    The project folder is the nearest ancestor with both ``_toc.yml`` and ``recmeta/``; the
    defaults of the caches hang off it, so a notebook executed from ``notebooks/`` and a command
    run from the project folder share one data cache and one run cache.
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file() and (folder / "recmeta").is_dir():
            return folder
    return here


def cache_dir() -> Path:
    """The data cache: ``$RECMETA_DATA`` if set, else ``data/`` in the project folder."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else project_root() / "data"


def info(name: str) -> DatasetInfo:
    """Registry entry of ``name``; unknown names fail with the list of known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise KeyError(
            f"unknown dataset {name!r}; known datasets: {known}. "
            "For your own data use recmeta.data.from_csv or from_frame."
        ) from None


def _digest_ok(path: Path, digest: str) -> bool:
    kind, _, value = digest.partition(":")
    data = path.read_bytes()
    if kind == "gitblob":
        got = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    else:
        got = hashlib.new(kind, data).hexdigest()
    return got == value


def _published_md5(d: DatasetInfo, where: Path) -> str:
    import pooch

    md5_file = pooch.retrieve(d.url + ".md5", known_hash=None, path=where, progressbar=False)
    text = Path(md5_file).read_text().strip()
    value = text.split()[-1] if "=" in text else text.split()[0]
    return "md5:" + value


def fetch(name: str, *, seed: str | os.PathLike | None = None, download: bool = True) -> Path:
    """Make sure release ``name`` is extracted in the cache and return its ratings file.

    ``seed``: a folder that already holds extracted releases (e.g. a shared read-only copy); the
    release is verified and copied from there into the cache, atomically, without a download.
    """
    d = info(name)
    root = cache_dir()
    target = root / d.ratings_path
    if target.exists():
        _verify_extracted(d, target)
        return target
    if seed is not None:
        src = Path(seed) / d.folder
        if (src / d.ratings_file).exists():
            _verify_extracted(d, src / d.ratings_file)
            _atomic_copytree(src, root / d.folder)
            return target
    if not download:
        raise DatasetNotAvailable(_missing_message(d, root))
    return _download(d, root)


def _missing_message(d: DatasetInfo, root: Path) -> str:
    return (
        f"dataset {d.name!r} is not in the cache {root.resolve()} and could not be downloaded. "
        f"Download {d.url} (checksum {d.archive_hash or 'published at ' + d.url + '.md5'}) and "
        f"extract it so that {root / d.ratings_path} exists, or point {ENV_VAR} at a folder "
        f"that holds {d.ratings_path}."
    )


def _verify_extracted(d: DatasetInfo, path: Path) -> None:
    if d.file_digest is not None and not _digest_ok(path, d.file_digest):
        raise DataError(
            f"{path} does not match the official {d.name} ratings file ({d.file_digest}); "
            f"delete the folder {path.parent} and fetch it again."
        )


def _atomic_copytree(src: Path, dst: Path) -> None:
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


def _download(d: DatasetInfo, root: Path) -> Path:
    import pooch

    root.mkdir(parents=True, exist_ok=True)
    try:
        known = d.archive_hash or _published_md5(d, root)
        archive = pooch.retrieve(d.url, known_hash=known, path=root, progressbar=True)
    except Exception as exc:  # network errors come in many types
        if isinstance(exc, ValueError) and "hash" in str(exc).lower():
            raise DataError(f"download of {d.url} failed its checksum: {exc}") from exc
        raise DatasetNotAvailable(_missing_message(d, root) + f" (download error: {exc})") from exc
    tmp = Path(tempfile.mkdtemp(prefix=f".{d.folder}-", dir=root))
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
        os.replace(tmp / d.folder, root / d.folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    target = root / d.ratings_path
    _verify_extracted(d, target)
    return target


def _read_ratings(d: DatasetInfo, path: Path) -> pd.DataFrame:
    names = ["user", "item", "rating", "timestamp"]
    if d.file_format == "tsv":
        df = pd.read_csv(path, sep="\t", header=None, names=names, engine="c")
    elif d.file_format == "dat":
        raw = path.read_bytes().replace(b"::", b"\t")
        df = pd.read_csv(io.BytesIO(raw), sep="\t", header=None, names=names, engine="c")
    else:
        df = pd.read_csv(path)
        df = df.rename(columns={"userId": "user", "movieId": "item"})
    return df.astype({"user": "int64", "item": "int64", "rating": "float64", "timestamp": "int64"})


def _load_release(name: str, *, download: bool = True) -> pd.DataFrame:
    d = info(name)
    path = fetch(name, download=download)
    df = validate_ratings(_read_ratings(d, path), source=str(path),
                          first_line=2 if d.file_format == "csv" else 1)
    got = (len(df), df["user"].nunique(), df["item"].nunique())
    if got != (d.n_ratings, d.n_users, d.n_items):
        raise DataError(
            f"{path} has {got[0]} ratings, {got[1]} users and {got[2]} items; the official "
            f"{d.name} has {d.n_ratings}, {d.n_users} and {d.n_items}. The file is incomplete "
            f"or another release: delete {path.parent} and fetch it again."
        )
    return df


_AUTO = "auto"


def is_path(dataset: object) -> bool:
    """Whether ``dataset`` names a file of one's own rather than a registered release."""
    if not isinstance(dataset, (str, os.PathLike)):
        return False
    text = os.fspath(dataset)
    return text not in REGISTRY and (
        Path(text).suffix.lower() in FILE_SUFFIXES or os.sep in text or Path(text).exists()
    )


def load(
    dataset: object,
    *,
    columns: Columns = None,
    download: bool = True,
    **named: str | None,
) -> pd.DataFrame:
    """Tidy ratings frame of a registered release, a file, a frame or a LensKit object.

    A registered name (``ml-100k``, ``ml-latest-small``, ...) loads that release, fetched on
    first use, validated (:func:`validate_ratings`) and checked against its documented numbers
    of ratings, users and items. A path loads a file of your own (CSV, TSV, MovieLens ``.dat``,
    Parquet) through :func:`from_csv`; a pandas frame goes through :func:`from_frame`; a LensKit
    ``Dataset``, ``ItemListCollection`` or mapping user → ``ItemList`` through
    :func:`from_lenskit`. ``columns`` (or ``user=``, ``item=``, ``rating=``, ``timestamp=``)
    names the columns, see :func:`parse_columns`.
    """
    if isinstance(dataset, pd.DataFrame):
        return from_frame(dataset, columns, **named)  # type: ignore[arg-type]
    if is_lenskit(dataset):
        if columns or named:
            raise ValueError("LensKit objects name their own columns: drop columns=")
        return from_lenskit(dataset)
    if isinstance(dataset, str) and dataset in REGISTRY:
        if columns or named:
            raise ValueError(f"column mappings apply to files, not to the release {dataset!r}")
        return _load_release(dataset, download=download)
    if is_path(dataset):
        path = Path(os.fspath(dataset))  # type: ignore[arg-type]
        return from_csv(path, columns=columns, **named)
    known = ", ".join(sorted(REGISTRY))
    if not isinstance(dataset, (str, os.PathLike)):
        raise TypeError(
            f"a dataset is a release name, a file path, a pandas DataFrame or a LensKit Dataset / "
            f"ItemListCollection; got {type(dataset).__name__}"
        )
    raise KeyError(
        f"dataset {os.fspath(dataset)!r} is neither a registered release (known datasets: "
        f"{known}) nor a ratings file; give a release name or a file path (e.g. ./ratings.csv)."
    )


def is_implicit(df: pd.DataFrame) -> bool:
    """True for an interaction frame (no ``rating`` column): every pair in it is relevant."""
    return "rating" not in df.columns


def describe_source(dataset: str | os.PathLike) -> str:
    """How a dataset parameter reads in prose: the release name, or the file name of a path."""
    if isinstance(dataset, str) and dataset in REGISTRY:
        return dataset
    return Path(dataset).name


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

#: what ``columns=`` accepts: ``"user=userId,item=movieId"``, ``{"user": "userId"}``, or the
#: columns of a file without a header row in order, ``"user,item,rating,timestamp"``
Columns = str | Mapping[str, "str | None"] | Sequence[str] | None

_SKIP = {"-", "_"}


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
                hint = ("; for data without ratings pass rating=None (--columns rating=none)"
                        if role == "rating" else "")
                raise DataError(
                    f"{source}: missing column(s) [{col!r}] (named as the {role} column); found "
                    f"{[str(c) for c in found]}. Name the right column with --columns {role}=NAME "
                    f"({role}= in Python){hint}."
                )
            mapping[col] = role
            continue
        hits = [c for c in found if _spelling(c) in COLUMN_SPELLINGS[role]
                and c not in mapping and c not in given.values()]
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
            raise DataError(f"{source}: columns names {len(spec)} columns, the table has "
                            f"{df.shape[1]} ({list(df.columns)})")
        df = df.set_axis([f"-{k}" if c in _SKIP else c for k, c in enumerate(spec)], axis=1)
        spec = None
    given = dict(spec or {})
    for role, value in (("user", user), ("item", item), ("rating", rating),
                        ("timestamp", timestamp)):
        if value is _AUTO:
            continue
        if role in given and given[role] != value:
            raise DataError(f"{source}: the {role} column is named twice ({given[role]!r} in "
                            f"columns, {value!r} as {role}=)")
        given[role] = value
    mapping, guessed = _resolve(list(df.columns), given, source)
    if guessed:
        warnings.warn(
            f"{source}: columns read by their names: {', '.join(guessed)} (--columns or "
            "columns= names others)", ColumnsRecognised, stacklevel=3,
        )
    taken = df[list(mapping)].rename(columns=mapping)
    labels = {role: str(col) for col, role in mapping.items()}
    return validate_ratings(taken, source=source, implicit="rating" not in labels,
                            first_line=first_line, labels=labels)


def _first_line(p: Path) -> str:
    with p.open("rb") as f:
        raw = f.readline()
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
    **named: str | None,
) -> pd.DataFrame:
    """Tidy ratings frame of a ratings file: CSV, TSV, MovieLens ``.dat`` (``::``) or Parquet.

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
        raise DataError(f"{p} is empty (0 bytes): a ratings file needs a header row (e.g. "
                        "user,item,rating,timestamp) and one line per rating.")
    spec = parse_columns(columns)
    if p.suffix.lower() in (".parquet", ".pq"):
        table = pd.read_parquet(p)
        return from_frame(table, spec, source=str(p), **named)  # type: ignore[arg-type]
    line = _first_line(p)
    if not line.strip():
        raise DataError(f"{p}, line 1: the line is blank; the first line is the header row "
                        "(e.g. user,item,rating,timestamp) or the first rating.")
    sep = sep or _separator(line)
    fields = line.split() if sep == r"\s+" else line.split(sep)
    header = not all(_is_number(f) for f in fields) and not (
        isinstance(spec, list) and any(_is_number(f) for f in fields))
    names = None
    if isinstance(spec, list):
        if len(spec) != len(fields):
            raise DataError(f"{p}, line 1: {len(fields)} fields, and columns names {len(spec)} "
                            f"({','.join(spec)}); name every column in order, '-' for one to skip.")
        names = [f"-{k}" if c in _SKIP else c for k, c in enumerate(spec)]
        spec = None
    elif not header:
        if sep == "::" and len(fields) in (3, 4) and not spec and not named:
            names = list(ROLES[: len(fields)])
            warnings.warn(f"{p}: no header row; read in MovieLens's order "
                          f"{'::'.join(names)} (--columns names others)",
                          ColumnsRecognised, stacklevel=2)
        else:
            shown = line if len(line) <= 60 else line[:57] + "..."
            order = ",".join(ROLES[: len(fields)]) if len(fields) <= 4 else "user,item,rating,-"
            raise DataError(
                f"{p}: line 1 ({shown!r}) is data, not a header row, so the columns have no "
                f"names; name them in order: --columns {order} (columns={order!r} in Python; "
                "'-' skips a column)."
            )
    text: str | io.BytesIO = str(p)
    if sep == "::":
        text, sep = io.BytesIO(p.read_bytes().replace(b"::", b"\t")), "\t"
    try:
        df = pd.read_csv(text, sep=sep, header=0 if header else None, names=names,
                         skip_blank_lines=False, engine="python" if sep == r"\s+" else "c")
    except pd.errors.EmptyDataError:
        raise DataError(f"{p} has no data: a ratings file needs a header row and one line per "
                        "rating.") from None
    except pd.errors.ParserError as exc:
        raise DataError(f"{p}: {str(exc).strip()}; every line needs as many fields as line 1 "
                        f"({len(fields)}, separated by {sep!r}).") from None
    first = 2 if header else 1
    return from_frame(df, spec, source=str(p), first_line=first, **named)  # type: ignore[arg-type]


# ----------------------------------------------------------------- LensKit's objects
def is_lenskit(x: object) -> bool:
    """A LensKit ``Dataset``, ``ItemListCollection`` or ``ItemList``, or a mapping of lists."""
    if hasattr(x, "interaction_table") or (hasattr(x, "to_df") and hasattr(x, "key_fields")):
        return True
    if _is_item_list(x):
        return True
    return (isinstance(x, Mapping) and len(x) > 0
            and all(_is_item_list(v) for v in x.values()))


def _is_item_list(x: object) -> bool:
    return hasattr(x, "ids") and hasattr(x, "to_df") and not hasattr(x, "key_fields")


def lenskit_frame(x: object, what: str = "the data") -> pd.DataFrame:
    """Tidy frame (``user``, ``item`` and the other columns) of a LensKit object, not validated.

    A ``Dataset`` gives its interaction table with the original ids; an ``ItemListCollection``
    (e.g. ``lenskit.batch.recommend``'s output, or a split's ``test``) gives one row per
    (key, item), its first key field as ``user``; a mapping ``{user: ItemList}`` likewise. A
    single ``ItemList`` has no user: wrap it as ``{user: item_list}``.
    """
    if hasattr(x, "interaction_table"):
        df = x.interaction_table(format="pandas", original_ids=True)
        return df.rename(columns={"user_id": "user", "item_id": "item"})
    if hasattr(x, "to_df") and hasattr(x, "key_fields"):
        keys = list(x.key_fields)
        if len(keys) != 1:
            raise DataError(f"{what}: an ItemListCollection keyed by one field (the user) is "
                            f"needed; this one has keys {keys}")
        return x.to_df().rename(columns={keys[0]: "user", "item_id": "item"})
    if _is_item_list(x):
        raise DataError(f"{what}: a single ItemList does not say whose list it is; pass "
                        "{user: item_list} (several users: an ItemListCollection or a mapping)")
    if isinstance(x, Mapping) and x and all(_is_item_list(v) for v in x.values()):
        parts = [v.to_df().assign(user=k) for k, v in x.items()]
        return pd.concat(parts, ignore_index=True).rename(columns={"item_id": "item"})
    raise DataError(f"{what}: expected a LensKit Dataset, ItemListCollection or "
                    f"{{user: ItemList}}, got {type(x).__name__}")


def from_lenskit(x: object, *, source: str | None = None) -> pd.DataFrame:
    """Tidy ratings (or interaction) frame of a LensKit object (:func:`lenskit_frame`); validated.

    Timestamps that LensKit holds as dates become whole seconds since 1970-01-01 UTC; integer
    ids (LensKit's MovieLens loader keeps them as int32) become int64, as the releases load.
    """
    source = source or f"LensKit {type(x).__name__}"
    df = lenskit_frame(x, source)
    for col in ("user", "item"):
        if col in df.columns and pd.api.types.is_integer_dtype(df[col]):
            df[col] = df[col].astype("int64")
    keep = [c for c in ROLES if c in df.columns]
    return validate_ratings(df[keep], source=source, implicit="rating" not in keep)


# ----------------------------------------------------------------- validation
def _plain(x: object) -> object:
    """A numpy scalar as the Python value it holds (prints as ``1``, not ``np.int64(1)``)."""
    return x.item() if isinstance(x, np.generic) else x


def validate_ratings(
    df: pd.DataFrame,
    *,
    source: str = "ratings",
    implicit: bool = False,
    first_line: int | None = None,
    labels: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Check a tidy ratings frame and return it with canonical dtypes.

    Rejected, each with a message that names the source, the line (``first_line`` is the file
    line of the first row; rows by index label otherwise), the column (``labels``: its name in
    the source), the bad value and the fix: an empty table, a missing ``user``, ``item`` or
    ``rating`` column, missing values, non-numeric ratings or timestamps, duplicate (user, item)
    pairs. Nothing is dropped or coerced silently. With ``implicit=True`` the frame has no
    ``rating`` column (implicit feedback) and none is asked for. Timestamps held as dates become
    whole seconds since 1970-01-01 UTC.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
    labels = dict(labels or {})

    def where(pos: np.ndarray) -> str:
        if first_line is not None:
            return ", ".join(f"{first_line + int(k)}" for k in pos[:5])
        return ", ".join(repr(_plain(df.index[int(k)])) for k in pos[:5])

    unit = "line" if first_line is not None else "row"

    def column(role: str) -> str:
        name = labels.get(role, role)
        return f"column {name!r}" + (f" (the {role})" if name != role else "")

    required = ("user", "item") if implicit else ("user", "item", "rating")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise DataError(
            f"{source}: missing column(s) {missing}; found {list(df.columns)}. "
            "Map your columns with from_frame(df, user=..., item=..., rating=...)"
            + ("" if "rating" not in missing or len(missing) > 1 else
               "; for data without ratings (clicks, plays) pass rating=None")
            + "."
        )
    if len(df) == 0:
        raise DataError(f"{source}: no ratings in it (the table is empty); at least one rating "
                        "is needed.")
    cols = list(required) + (["timestamp"] if "timestamp" in df.columns else [])
    isna = df[cols].isna().to_numpy()
    if isna.any():
        rows = np.flatnonzero(isna.any(axis=1))
        first = cols[int(np.flatnonzero(isna[rows[0]])[0])]
        s = "s" if len(rows) > 1 else ""
        raise DataError(
            f"{source}, {unit} {where(rows[:1])}: {column(first)} is empty; {len(rows)} "
            f"{unit}{s} with a missing value ({unit}{s} {where(rows)}"
            f"{', ...' if len(rows) > 5 else ''}). Fill or remove them before loading: "
            "recmeta does not guess."
        )
    for col in [c for c in ("rating", "timestamp") if c in cols]:
        s = df[col]
        if col == "timestamp" and pd.api.types.is_datetime64_any_dtype(s):
            continue
        if pd.api.types.is_bool_dtype(s):
            raise DataError(f"{source}: {column(col)} holds True/False values, not numbers; "
                            f"convert it explicitly (e.g. 1 for True) if that is meant.")
        if not pd.api.types.is_numeric_dtype(s):
            number = pd.to_numeric(s, errors="coerce")
            bad = np.flatnonzero(number.isna().to_numpy())
            example = "4 or 3.5" if col == "rating" else "881250949 (seconds)"
            if len(bad):
                k = int(bad[0])
                raise DataError(
                    f"{source}, {unit} {where(bad[:1])}: {column(col)} holds "
                    f"{_plain(s.iloc[k])!r}, "
                    f"which is not a number{_others(bad, unit, where)}. A {col} must be a "
                    f"number (e.g. "
                    f"{example}): fix or remove those lines, or map the values to numbers first."
                )
            raise DataError(
                f"{source}: {column(col)} holds numbers written as text (e.g. "
                f"{_plain(s.iloc[0])!r}); convert the column explicitly, e.g. with pd.to_numeric."
            )
    dup = df.duplicated(["user", "item"], keep=False).to_numpy()
    if dup.any():
        pos = np.flatnonzero(dup)
        groups = df.iloc[pos].groupby(["user", "item"], sort=False).indices
        shown = []
        for pair, members in list(groups.items())[:3]:
            plain = tuple(_plain(v) for v in pair)
            shown.append(f"({', '.join(repr(v) for v in plain)}) at {unit}s "
                         f"{where(pos[members])}")
        what = "interaction" if implicit else "rating"
        raise DataError(
            f"{source}: {len(pos)} {unit}s share a (user, item) pair, e.g. "
            f"{'; '.join(shown)}; keep one {what} per pair (e.g. the latest) before loading."
        )
    out = df[cols].reset_index(drop=True)
    if not implicit:
        out = out.astype({"rating": "float64"})
    if "timestamp" in cols:
        out["timestamp"] = _seconds(out["timestamp"], source, unit, where, column("timestamp"))
    return out


def _others(bad: np.ndarray, unit: str, where) -> str:
    """``"; 3 such values (lines 4, 9, 12)"`` after the first bad value, or nothing."""
    if len(bad) < 2:
        return ""
    return f"; {len(bad)} such values ({unit}s {where(bad)}{', ...' if len(bad) > 5 else ''})"


def _seconds(ts: pd.Series, source: str, unit: str, where, label: str) -> pd.Series:
    """Timestamps as int64 seconds; dates are converted, fractions of a second refused."""
    if pd.api.types.is_datetime64_any_dtype(ts):
        if getattr(ts.dt, "tz", None) is not None:
            ts = ts.dt.tz_convert("UTC").dt.tz_localize(None)
        ns = ts.astype("datetime64[ns]").astype("int64")
        ts = pd.Series(ns // 10**9 + (ns % 10**9) / 1e9, index=ts.index)
    if pd.api.types.is_float_dtype(ts):
        frac = np.flatnonzero(np.mod(ts.to_numpy(), 1) != 0)
        if len(frac):
            raise DataError(
                f"{source}, {unit} {where(frac[:1])}: {label} holds {_plain(ts.iloc[frac[0]])!r}; "
                "timestamps must be whole numbers of seconds: round them explicitly if that is "
                "meant."
            )
    return ts.astype("int64")


def gini(counts: np.ndarray) -> float:
    """Gini index of non-negative counts: G = Σ_i (2i − n − 1) x_(i) / (n Σ x), x sorted ascending.

    0 when every entry is equal; (n − 1)/n when a single entry holds everything.
    """
    x = np.sort(np.asarray(counts, dtype=np.float64))
    n = x.size
    if n == 0 or x.sum() == 0:
        raise DataError("Gini index needs at least one positive count.")
    i = np.arange(1, n + 1)
    return float(np.sum((2 * i - n - 1) * x) / (n * x.sum()))


def stats(df: pd.DataFrame, name: str = "") -> dict[str, object]:
    """Summary in the spirit of Valcarce et al. (2018), Table 2.

    users, items, ratings, density = ratings / (users · items), Gini index of the item
    popularity (ratings per rated item) and of user activity, and the rating-value distribution
    (empty, with ``implicit`` true, for implicit feedback).
    """
    n_u, n_i, n_r = int(df["user"].nunique()), int(df["item"].nunique()), len(df)
    implicit = is_implicit(df)
    dist = {} if implicit else df["rating"].value_counts().sort_index()
    return {
        "dataset": name,
        "users": n_u,
        "items": n_i,
        "ratings": n_r,
        "density": n_r / (n_u * n_i),
        "item_gini": gini(df.groupby("item").size().to_numpy()),
        "user_gini": gini(df.groupby("user").size().to_numpy()),
        "implicit": implicit,
        "rating_distribution": {float(k): int(v) for k, v in dict(dist).items()},
    }


def to_lenskit(df: pd.DataFrame):
    """LensKit :class:`~lenskit.data.Dataset` of a tidy ratings or interaction frame."""
    from lenskit.data import from_interactions_df

    kw = {"timestamp_col": "timestamp"} if "timestamp" in df.columns else {}
    if not is_implicit(df):
        kw["rating_col"] = "rating"
    return from_interactions_df(df, user_col="user", item_col="item", **kw)
