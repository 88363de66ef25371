"""Train/test splits of a tidy ratings frame, seeded and reproducible.

Each function returns :class:`Split` objects whose ``train`` and ``test`` frames partition the
input rows (every rating lands in exactly one part). The papers' protocols:

* :func:`holdout_per_user` — a fraction of each user's ratings goes to test (Valcarce et al.
  2018: 80 % train / 20 % test).
* :func:`coin_flip` — every rating goes to test independently with probability σ (Bellogín et
  al. 2017, §3).
* :func:`kfold` — k-fold cross-validation over ratings (Valcarce et al. 2020: 5 folds).
* :func:`leave_last_out` — each user's latest rating is the test item (Krichene & Rendle 2020).

LensKit's ``crossfold_records`` / ``sample_records`` do the same partitioning but return LensKit
item lists; these return plain frames, which every chapter and the metric engine consume, and
their randomness is a single ``numpy.random.Generator`` seeded by ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .lenskit_objects import is_lenskit
from .loading import load
from .validation import DataError

__all__ = ["Split", "holdout_per_user", "coin_flip", "kfold", "leave_last_out"]


@dataclass(frozen=True)
class Split:
    """A train/test partition of a ratings frame."""

    train: pd.DataFrame
    test: pd.DataFrame

    def __repr__(self) -> str:
        return f"Split(train={len(self.train)} ratings, test={len(self.test)} ratings)"


def _check(df: pd.DataFrame) -> pd.DataFrame:
    """The frame to split: ``df``, or the tidy frame of a LensKit object (a ``Dataset``, an
    ``ItemListCollection``) as :func:`recmeta.data.load` reads it."""
    if not isinstance(df, pd.DataFrame):
        if not is_lenskit(df):
            raise DataError(
                f"split input must be a ratings frame or a LensKit Dataset, got {type(df).__name__}"
            )
        df = load(df)
    for c in ("user", "item"):  # ratings are optional: implicit feedback splits the same way
        if c not in df.columns:
            raise DataError(f"split input lacks column {c!r}; load it with recmeta.data first.")
    if len(df) == 0:
        raise DataError("cannot split an empty ratings table.")
    return df


def _parts(df: pd.DataFrame, is_test: np.ndarray) -> Split:
    return Split(df.loc[~is_test].reset_index(drop=True), df.loc[is_test].reset_index(drop=True))


def holdout_per_user(
    df: pd.DataFrame, test_fraction: float = 0.2, *, seed: int = 0, min_train: int = 1
) -> Split:
    """Per-user random holdout: round(f·n_u) of each user's n_u ratings go to test.

    At least ``min_train`` ratings of every user stay in train, so every test user is known to
    the recommenders (the test count is capped at n_u − min_train).
    """
    df = _check(df)
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction}")
    rng = np.random.default_rng(seed)
    users = df["user"].to_numpy()
    codes, uniq = pd.factorize(users)
    n_u = np.bincount(codes)
    n_test = np.minimum(
        np.rint(test_fraction * n_u).astype(np.int64), np.maximum(n_u - min_train, 0)
    )
    # random order within user: sort by (user, random key); rank within user < n_test -> test
    order = np.lexsort((rng.random(len(df)), codes))
    start = np.concatenate([[0], np.cumsum(n_u)[:-1]])
    rank_sorted = np.arange(len(df)) - np.repeat(start, n_u)
    is_test = np.empty(len(df), dtype=bool)
    is_test[order] = rank_sorted < np.repeat(n_test, n_u)
    return _parts(df, is_test)


def coin_flip(df: pd.DataFrame, test_probability: float, *, seed: int = 0) -> Split:
    """Each rating goes to test independently with probability σ (Bellogín et al. 2017)."""
    df = _check(df)
    if not 0 < test_probability < 1:
        raise ValueError(f"test_probability must lie in (0, 1), got {test_probability}")
    rng = np.random.default_rng(seed)
    return _parts(df, rng.random(len(df)) < test_probability)


def kfold(df: pd.DataFrame, k: int = 5, *, seed: int = 0) -> list[Split]:
    """k-fold cross-validation over ratings: a random permutation cut into k near-equal folds."""
    df = _check(df)
    if not 2 <= k <= len(df):
        raise ValueError(f"k must lie between 2 and the number of ratings ({len(df)}), got {k}")
    rng = np.random.default_rng(seed)
    fold = np.empty(len(df), dtype=np.int64)
    fold[rng.permutation(len(df))] = np.arange(len(df)) % k
    return [_parts(df, fold == f) for f in range(k)]


def leave_last_out(df: pd.DataFrame, *, min_ratings: int = 2) -> Split:
    """Each user's latest rating (by timestamp) is held out; ties broken by the larger item id.

    Users with fewer than ``min_ratings`` ratings keep all of them in train.
    """
    df = _check(df)
    if "timestamp" not in df.columns:
        raise DataError(
            "leave_last_out needs a 'timestamp' column; load the data with timestamps "
            "(from_frame(..., timestamp='col'))."
        )
    order = np.lexsort((df["item"].to_numpy(), df["timestamp"].to_numpy(), df["user"].to_numpy()))
    users = df["user"].to_numpy()[order]
    last = np.ones(len(df), dtype=bool)
    last[:-1] = users[:-1] != users[1:]
    counts = df.groupby("user", sort=False)["user"].transform("size").to_numpy()[order]
    is_test = np.zeros(len(df), dtype=bool)
    is_test[order] = last & (counts >= min_ratings)
    return _parts(df, is_test)
