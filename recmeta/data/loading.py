"""The one loader: a registered release, a file of one's own, a frame or a LensKit object."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeGuard, Unpack

import pandas as pd

from .columns import FILE_SUFFIXES, ColumnNames, Columns, file_suffix, from_csv, from_frame
from .lenskit_objects import from_lenskit, is_lenskit
from .registry import REGISTRY, load_release


def is_path(dataset: object) -> TypeGuard[str | os.PathLike]:
    """Whether ``dataset`` names a file of one's own rather than a registered release."""
    if not isinstance(dataset, (str, os.PathLike)):
        return False
    text = os.fspath(dataset)
    return text not in REGISTRY and (
        file_suffix(text) in FILE_SUFFIXES or os.sep in text or Path(text).exists()
    )


def load(
    dataset: object,
    *,
    columns: Columns = None,
    download: bool = True,
    **named: Unpack[ColumnNames],
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
        return from_frame(dataset, columns, **named)
    if is_lenskit(dataset):
        if columns or named:
            raise ValueError("LensKit objects name their own columns: drop columns=")
        return from_lenskit(dataset)
    if isinstance(dataset, str) and dataset in REGISTRY:
        if columns or named:
            raise ValueError(f"column mappings apply to files, not to the release {dataset!r}")
        return load_release(dataset, download=download)
    if is_path(dataset):
        path = Path(os.fspath(dataset))
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
