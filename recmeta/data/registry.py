"""The GroupLens MovieLens registry and its verified download cache.

The cache directory is ``$RECMETA_DATA`` if set, else ``data/`` in the project folder. A cache
that already holds the extracted folder of a release is used as it is, after its ratings file is
checked against the digest recorded here; otherwise the official archive is downloaded with
:mod:`pooch` and its checksum verified before extraction."""

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

from ..files import copytree_atomic
from .validation import DataError, validate_ratings

ENV_VAR = "RECMETA_DATA"


BASE_URL = "https://files.grouplens.org/datasets/movielens/"


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
            "ml-100k",
            BASE_URL + "ml-100k.zip",
            "sha256:50d2a982c66986937beb9ffb3aa76efe955bf3d5c6b761f4e3a7cd717c6a3229",
            "ml-100k",
            "u.data",
            "tsv",
            _FIVE,
            100_000,
            943,
            1_682,
            "sha256:06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
        ),
        DatasetInfo(
            "ml-1m",
            BASE_URL + "ml-1m.zip",
            "sha256:a6898adb50b9ca05aa231689da44c217cb524e7ebd39d264c56e2832f2c54e20",
            "ml-1m",
            "ratings.dat",
            "dat",
            _FIVE,
            1_000_209,
            6_040,
            3_706,
            "gitblob:77a7c4b150f588c23bb9e1f068aa996c0b413695",
        ),
        DatasetInfo(
            "ml-10m",
            BASE_URL + "ml-10m.zip",
            "md5:ce571fd55effeba0271552578f2648bd",
            "ml-10M100K",
            "ratings.dat",
            "dat",
            _HALF,
            10_000_054,
            69_878,
            10_677,
        ),
        DatasetInfo(
            "ml-20m",
            BASE_URL + "ml-20m.zip",
            "sha256:96f243c338a8665f6bcc89c53edf6ee39162a846940de6b7c8c48aeada765ff3",
            "ml-20m",
            "ratings.csv",
            "csv",
            _HALF,
            20_000_263,
            138_493,
            26_744,
        ),
        DatasetInfo(
            "ml-25m",
            BASE_URL + "ml-25m.zip",
            "sha256:8b21cfb7eb1706b4ec0aac894368d90acf26ebdfb6aced3ebd4ad5bd1eb9c6aa",
            "ml-25m",
            "ratings.csv",
            "csv",
            _HALF,
            25_000_095,
            162_541,
            59_047,
        ),
        DatasetInfo(
            "ml-32m",
            BASE_URL + "ml-32m.zip",
            None,
            "ml-32m",
            "ratings.csv",
            "csv",
            _HALF,
            32_000_204,
            200_948,
            84_432,
        ),
        DatasetInfo(
            "ml-latest-small",
            BASE_URL + "ml-latest-small.zip",
            "sha256:696d65a3dfceac7c45750ad32df2c259311949efec81f0f144fdfb91ebc9e436",
            "ml-latest-small",
            "ratings.csv",
            "csv",
            _HALF,
            100_836,
            610,
            9_724,
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
            copytree_atomic(src, root / d.folder)
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


def load_release(name: str, *, download: bool = True) -> pd.DataFrame:
    d = info(name)
    path = fetch(name, download=download)
    df = validate_ratings(
        _read_ratings(d, path), source=str(path), first_line=2 if d.file_format == "csv" else 1
    )
    got = (len(df), df["user"].nunique(), df["item"].nunique())
    if got != (d.n_ratings, d.n_users, d.n_items):
        raise DataError(
            f"{path} has {got[0]} ratings, {got[1]} users and {got[2]} items; the official "
            f"{d.name} has {d.n_ratings}, {d.n_users} and {d.n_items}. The file is incomplete "
            f"or another release: delete {path.parent} and fetch it again."
        )
    return df


def describe_source(dataset: str | os.PathLike) -> str:
    """How a dataset parameter reads in prose: the release name, or the file name of a path."""
    if isinstance(dataset, str) and dataset in REGISTRY:
        return dataset
    return Path(dataset).name
