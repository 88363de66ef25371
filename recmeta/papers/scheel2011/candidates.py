"""The candidate items of the virtual users (Scheel, Lommatzsch & Albayrak 2011, sec. 2.2).

Drawn here, below both experiments on real data: the scales' experiment
(:func:`.scales.scale_experiment`) has each model it trains score them too, so that the
virtual-user experiment (:func:`.virtual.virtual_experiment`) reads its scores from the run cache
instead of training every model a second time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...data import splits
from .settings import Settings

__all__ = ["candidate_items", "virtual_candidates"]


def candidate_items(
    train: pd.DataFrame, n_items: int, *, users: Sequence | None = None, seed: int = 0
) -> pd.DataFrame:
    """``n_items`` items per user, drawn uniformly without replacement from the training items
    the user has not rated: the candidates every system ranks for a virtual user.

    ``users`` defaults to every training user. Returns a frame (user, item) sorted by user.
    Vectorised: one random key per (user, item), the user's rated items pushed to the end.
    """
    missing = [c for c in ("user", "item") if c not in train.columns]
    if missing:
        raise KeyError(f"the training frame lacks column(s) {missing}")
    items: np.ndarray = np.sort(pd.unique(train["item"]))
    ids: np.ndarray = np.sort(pd.unique(train["user"])) if users is None else np.asarray(users)
    unknown = ~np.isin(ids, train["user"].to_numpy())
    if unknown.any():
        raise ValueError(
            f"{int(unknown.sum())} users have no training ratings, e.g. {ids[unknown][:3].tolist()}"
        )
    rated = np.zeros((ids.size, items.size), dtype=np.bool_)
    sub = train[train["user"].isin(ids)]
    rows = pd.Index(ids).get_indexer(sub["user"])
    rated[rows, np.searchsorted(items, sub["item"].to_numpy())] = True
    free = items.size - rated.sum(axis=1)
    if n_items < 1 or (free < n_items).any():
        raise ValueError(
            f"n_items must be between 1 and the fewest unrated items of a user "
            f"({free.min()}), got {n_items}"
        )
    keys = np.random.default_rng(seed).random(rated.shape)
    keys[rated] = np.inf
    pick = np.sort(np.argpartition(keys, n_items - 1, axis=1)[:, :n_items], axis=1)
    return pd.DataFrame({"user": np.repeat(ids, n_items), "item": items[pick.ravel()]})


def virtual_candidates(split: splits.Split, settings: Settings) -> pd.DataFrame:
    """The chapter's candidates: ``settings.n_candidates`` per test user of ``split``
    (:func:`candidate_items` with the settings' seed)."""
    test_users = np.sort(split.test["user"].unique())
    return candidate_items(split.train, settings.n_candidates, users=test_users, seed=settings.seed)
