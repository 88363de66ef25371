"""Datasets: the GroupLens MovieLens registry, a verified download cache, and bring-your-own data.

Every loader returns a *tidy ratings frame*: one row per (user, item) pair with the columns
``user``, ``item``, ``rating`` (float64) and, where the source has one, ``timestamp`` (int64).
Data without ratings (implicit feedback: clicks, plays, purchases) load as an *interaction
frame*, the same without the ``rating`` column; every interaction counts as relevant, and
:func:`is_implicit` tells the two apart.

:func:`load` is the one loader of the package: it takes a registered release name or the path
of a CSV/TSV file of your own, so every command and chapter parameter that names a dataset
accepts either.

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
import shutil
import tempfile
import zipfile
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
    df = validate_ratings(_read_ratings(d, path), source=str(path))
    got = (len(df), df["user"].nunique(), df["item"].nunique())
    if got != (d.n_ratings, d.n_users, d.n_items):
        raise DataError(
            f"{path} has {got[0]} ratings, {got[1]} users and {got[2]} items; the official "
            f"{d.name} has {d.n_ratings}, {d.n_users} and {d.n_items}. The file is incomplete "
            f"or another release: delete {path.parent} and fetch it again."
        )
    return df


def is_path(dataset: str | os.PathLike) -> bool:
    """Whether ``dataset`` names a file of one's own rather than a registered release."""
    if not isinstance(dataset, (str, os.PathLike)):
        return False
    text = os.fspath(dataset)
    return text not in REGISTRY and (
        Path(text).suffix.lower() in {".csv", ".tsv", ".txt"} or os.sep in text or Path(text).exists()
    )


def load(dataset: str | os.PathLike, *, download: bool = True, **columns: str | None) -> pd.DataFrame:
    """Tidy ratings frame of a registered release or of a ratings file of your own.

    A registered name (``ml-100k``, ``ml-latest-small``, ...) loads that release, fetched on
    first use, validated (:func:`validate_ratings`) and checked against its documented numbers
    of ratings, users and items. Any other value is read as the path of a CSV file (a ``.tsv``
    file is tab-separated) through :func:`from_csv`; ``columns`` maps its column names there.
    """
    if isinstance(dataset, str) and dataset in REGISTRY:
        if columns:
            raise ValueError(f"column mappings apply to files, not to the release {dataset!r}")
        return _load_release(dataset, download=download)
    if is_path(dataset):
        p = Path(dataset)
        return from_csv(p, sep="\t" if p.suffix.lower() == ".tsv" else ",", **columns)
    known = ", ".join(sorted(REGISTRY))
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


def validate_ratings(df: pd.DataFrame, *, source: str = "ratings", implicit: bool = False) -> pd.DataFrame:
    """Check a tidy ratings frame and return it with canonical dtypes.

    Rejected, each with a message that names the problem: an empty table, a missing ``user``,
    ``item`` or ``rating`` column, missing values, non-numeric ratings, duplicate (user, item)
    pairs. Nothing is dropped or coerced silently: ratings must already be numeric. With
    ``implicit=True`` the frame has no ``rating`` column (implicit feedback) and none is asked for.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
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
        raise DataError(f"{source}: the ratings table is empty; at least one rating is needed.")
    cols = list(required) + (["timestamp"] if "timestamp" in df.columns else [])
    nulls = df[cols].isna().sum()
    if nulls.any():
        bad = {c: int(n) for c, n in nulls.items() if n}
        first = df.index[df[cols].isna().any(axis=1)][:5].tolist()
        raise DataError(
            f"{source}: missing values {bad} (first rows {first}); remove or fill them "
            "before loading, recmeta does not guess."
        )
    for col in [c for c in ("rating", "timestamp") if c in cols]:
        s = df[col]
        if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            raise DataError(
                f"{source}: column {col!r} must be numeric, found dtype {s.dtype} "
                f"(e.g. {s.iloc[0]!r}); convert it explicitly, e.g. with pd.to_numeric."
            )
    dup = df.duplicated(["user", "item"], keep=False)
    if dup.any():
        ex = df.loc[dup, ["user", "item"]].drop_duplicates().head(3).to_records(index=False)
        what = "interaction" if implicit else "rating"
        raise DataError(
            f"{source}: {int(dup.sum())} rows share a (user, item) pair, e.g. "
            f"{[tuple(r) for r in ex]}; keep one {what} per pair (e.g. the latest) before loading."
        )
    out = df[cols].reset_index(drop=True)
    if not implicit:
        out = out.astype({"rating": "float64"})
    if "timestamp" in cols:
        ts = out["timestamp"]
        if pd.api.types.is_float_dtype(ts) and not np.all(np.mod(ts, 1) == 0):
            raise DataError(f"{source}: timestamps must be whole numbers (seconds).")
        out["timestamp"] = ts.astype("int64")
    return out


_AUTO = "auto"


def from_frame(
    df: pd.DataFrame,
    *,
    user: str = "user",
    item: str = "item",
    rating: str | None = _AUTO,
    timestamp: str | None = _AUTO,
    source: str = "DataFrame",
) -> pd.DataFrame:
    """Tidy ratings frame from your own table, with a column mapping; validated.

    ``rating`` names the rating column; by default a column ``rating`` is used when there is
    one, and a table without it is read as implicit feedback (every interaction relevant, no
    ``rating`` column in the result; see :func:`is_implicit`). ``rating=None`` asks for implicit
    feedback explicitly; a named column that is absent is an error. ``timestamp`` likewise: a
    ``timestamp`` column is kept when present, ``timestamp=None`` drops it.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
    if rating == _AUTO:
        rating = "rating" if "rating" in df.columns else None
    if timestamp == _AUTO:
        timestamp = "timestamp" if "timestamp" in df.columns else None
    mapping = {user: "user", item: "item"}
    if rating is not None:
        mapping[rating] = "rating"
    if timestamp is not None:
        mapping[timestamp] = "timestamp"
    missing = [c for c in mapping if c not in df.columns]
    if missing:
        raise DataError(
            f"{source}: missing column(s) {missing}; found {list(df.columns)}. "
            "Pass the right names as user=, item=, rating=, timestamp= (rating=None for data "
            "without ratings)."
        )
    taken = df[list(mapping)].rename(columns=mapping)
    return validate_ratings(taken, source=source, implicit=rating is None)


def from_csv(path: str | os.PathLike, *, sep: str = ",", **columns: str | None) -> pd.DataFrame:
    """Tidy ratings frame from a CSV file with a header row; ``columns`` as in :func:`from_frame`.

    A ``timestamp`` column is kept when present; a file without a ``rating`` column loads as
    implicit feedback.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such ratings file: {p}")
    if p.is_dir():
        raise DataError(f"{p} is a folder; give the path of the ratings file inside it.")
    df = pd.read_csv(p, sep=sep)
    return from_frame(df, source=str(p), **columns)  # type: ignore[arg-type]


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
