"""Data for the benchmarks: the half-million-rating MovieLens subset, and synthetic ratings shaped
like ML-20M.

The subset is ``../shared/data/ml-1m-partial`` (the first 487,650 lines of the ML-1M ratings
file: users 1-2,999, 3,615 items; *not* ML-1M), converted once to a CSV with the header
``user,item,rating,timestamp`` and loaded as a reader loads their own data
(``recmeta.data.load(path)``).

The synthetic generator (:func:`ml20m_like`) draws a ratings table with a given number of users,
items and ratings and ML-20M's long tails:

* user activity: a floor plus a lognormal part, ``n_u = m + LN(μ, 1.3)``, with the floor ``m``
  at ML-20M's ratio of the smallest to the mean activity (20 / 144) and ``μ`` set so that the
  activities sum to the target; capped at 35 % of the catalogue (ML-20M's heaviest user rated
  9,254 of 26,744 items);
* item popularity: Zipf-like weights ``(r + b)^-a`` over a random popularity rank ``r`` of the
  items, ``a = 2.308`` and ``b = 389 · items / 26,744``; at ML-20M's size these expected counts
  have ML-20M's median (18), mean (748) and largest (67,310) ratings per item;
* each user's items: drawn with replacement from the popularity weights, duplicates dropped, and
  topped up in three further such rounds; what the heaviest users still lack after that is
  drawn uniformly from the catalogue (the popularity weights' tail is too thin to fill a third
  of the catalogue quickly); then random rows are dropped to hit the target exactly. Every item first gets one rating from a random user, so the
  catalogue has exactly the target number of items, and every user at least one rating;
* ratings: 0.5 to 5 in half stars, drawn independently with ML-20M's shares of each value;
  no timestamps.

The same ``seed`` gives the same table.
"""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
PARTIAL = ROOT.parent / "shared" / "data" / "ml-1m-partial" / "ratings-PARTIAL-users0001-2999.dat.gz"

#: ML-20M's users, items and ratings (GroupLens, 2015 release)
ML20M_SHAPE: tuple[int, int, int] = (138_493, 26_744, 20_000_263)
#: Zipf-like popularity exponent and offset (at 26,744 items) fitted to ML-20M's item counts
ZIPF_EXPONENT, ZIPF_OFFSET = 2.308, 389.0
#: ML-20M's share of each half-star rating value, 0.5 to 5
RATING_VALUES = np.arange(1, 11) / 2
RATING_SHARES = np.array([0.0120, 0.0340, 0.0140, 0.0720, 0.0440,
                          0.2140, 0.1050, 0.2780, 0.0770, 0.1500])


def best(fn, repeat: int = 3) -> tuple[float, object]:
    """The shortest of ``repeat`` timings of ``fn()`` after a first, untimed call (numba's
    compilation, the allocator's warm-up), and the last result."""
    out = fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def half_million_csv(src: Path, folder: Path) -> Path:
    """The partial ratings file as ``user,item,rating,timestamp`` CSV (written once in ``folder``)."""
    out = folder / "ml-1m-partial-ratings.csv"
    if not out.exists():
        with gzip.open(src, "rt", encoding="latin-1") as fh:
            df = pd.read_csv(fh, sep="::", engine="python", header=None,
                             names=["user", "item", "rating", "timestamp"])
        df.to_csv(out, index=False)
    return out


def load(name: str, folder: Path, partial: Path = PARTIAL) -> tuple[str, pd.DataFrame]:
    """``(label, ratings)`` of a registry dataset, or of the subset for ``name == "half"``."""
    from recmeta import data

    if name == "half":
        return "half-million subset", data.load(half_million_csv(partial, folder))
    return name, data.load(name, download=False)


def _activities(n_users: int, n_items: int, n_ratings: int, rng: np.random.Generator) -> np.ndarray:
    """Per-user rating counts: floor + lognormal(σ = 1.3), capped, summing to about ``n_ratings``."""
    mean = n_ratings / n_users
    floor = max(1.0, round(mean * 20 / 144))
    cap = max(floor, 0.35 * n_items)
    z = rng.lognormal(0.0, 1.3, n_users)
    scale = (n_ratings - floor * n_users) / z.sum()
    for _ in range(20):  # rescale until the capped counts sum to the target
        n = np.minimum(floor + scale * z, cap)
        short = n_ratings - n.sum()
        if abs(short) < 0.5:
            break
        free = z[n < cap].sum()
        if free == 0:
            break
        scale += short / free
    counts = np.maximum(np.rint(n), 1).astype(np.int64)
    short = n_ratings - int(counts.sum())  # rounding: one rating more or less for a few users
    if short:
        room = np.flatnonzero(counts + 1 <= cap) if short > 0 else np.flatnonzero(counts > floor)
        counts[rng.choice(room, min(abs(short), room.size), replace=False)] += np.sign(short)
    return counts


def ml20m_like(n_users: int, n_items: int, n_ratings: int, *, seed: int = 0) -> pd.DataFrame:
    """A ``user, item, rating`` table with ML-20M's long tails (see the module docstring).

    Users are numbered 1..n_users and items 1..n_items; (user, item) pairs are distinct.
    """
    if n_items > n_ratings or n_users > n_ratings:
        raise ValueError(f"need at least as many ratings ({n_ratings}) as users ({n_users}) and "
                         f"items ({n_items}); lower the users or items, or raise the ratings")
    if n_ratings > 0.3 * n_users * n_items:
        raise ValueError(f"{n_ratings} ratings fill more than 30 % of {n_users} x {n_items} "
                         "cells: too dense for a MovieLens-like table; add users or items")
    rng = np.random.default_rng(seed)
    offset = ZIPF_OFFSET * n_items / ML20M_SHAPE[1]
    weights = (np.arange(1, n_items + 1) + offset) ** -ZIPF_EXPONENT
    cdf = np.cumsum(weights / weights.sum())
    item_of_rank = rng.permutation(n_items)  # popularity rank -> item number
    target = _activities(n_users, n_items, n_ratings, rng)

    # every item once, from a random user; these rows are never dropped
    keys = np.arange(n_items, dtype=np.int64) + rng.integers(0, n_users, n_items) * n_items
    reserved = keys.copy()
    have = np.zeros(n_users, dtype=np.int64)
    np.add.at(have, keys // n_items, 1)
    for round_ in range(40):
        need = np.maximum(target - have, 0)
        if need.sum() == 0 or keys.size >= n_ratings:
            break
        draws = np.ceil(need * 1.1).astype(np.int64)
        users = np.repeat(np.arange(n_users, dtype=np.int64), draws)
        if round_ < 4:
            items = item_of_rank[np.minimum(np.searchsorted(cdf, rng.random(users.size)),
                                            n_items - 1)]
        else:  # what heavy users still lack comes from the whole catalogue, uniformly
            items = rng.integers(0, n_items, users.size)
        keys = np.unique(np.concatenate([keys, users * n_items + items]))
        have = np.bincount(keys // n_items, minlength=n_users)
    extra = keys.size - n_ratings
    if extra > 0:  # drop random rows that are not reserved, from users above their target
        over = np.repeat(have - target > 0, have)  # keys are sorted by user
        candidates = np.flatnonzero(over & ~np.isin(keys, reserved))
        if candidates.size < extra:
            candidates = np.flatnonzero(~np.isin(keys, reserved))
        keys = np.delete(keys, rng.choice(candidates, extra, replace=False))
    rating = rng.choice(RATING_VALUES, size=keys.size, p=RATING_SHARES / RATING_SHARES.sum())
    return pd.DataFrame({"user": (keys // n_items + 1).astype(np.int64),
                         "item": (keys % n_items + 1).astype(np.int64),
                         "rating": rating})
