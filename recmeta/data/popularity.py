"""Item popularity: statistics of real data and the shifted power-law simulation.

Bellogín, Castells & Cantador (2017) — "Statistical biases in Information Retrieval metrics for
recommender systems", Information Retrieval Journal 20(6) — show that precision rewards
recommending popular items, and that how much it does so is set by the skew of the popularity
distribution. This module holds what their §5–§6 need:

* popularity counts |R(i)|, popularity ranks, and the partition of items into ``m`` popularity
  percentiles used by P1R (§6.1);
* the 10 % most popular items, removed from the test data in the "−10 % head" protocol
  (after Cremonesi et al. 2010);
* the ratio |PR(i)| / |R(i)| of positive ratings against popularity rank (their Fig. 7);
* synthetic ratings whose item popularity follows the shifted power law
  |R(i_k)| = c1 + β (c2 + k)^(−α) (their §5.2 and Fig. 5), with rating values drawn from a
  prior, so that any preference pattern is absent by construction.

Ranks start at 1 for the most popular item; ties in popularity are broken by the smaller item id,
so every function here is deterministic given its input.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import optimize

__all__ = [
    "item_counts",
    "popularity_ranks",
    "percentile_strata",
    "head_items",
    "positive_ratio_by_rank",
    "cumulative_share",
    "rating_prior",
    "PowerLawFit",
    "fit_shifted_power_law",
    "shifted_power_law_counts",
    "simulate_ratings",
    "simulate_like",
]


def _require(df: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"{what} needs the columns {columns}; {missing} missing. Pass a tidy ratings frame "
            "(user, item, rating), e.g. from recmeta.data.load()."
        )
    if len(df) == 0:
        raise ValueError(f"{what} got an empty ratings frame.")


def item_counts(ratings: pd.DataFrame, items: np.ndarray | None = None) -> pd.Series:
    """|R(i)|: the number of ratings of each item, sorted by popularity rank.

    ``items`` adds items with no rating (count 0). The order is decreasing count, then increasing
    item id, i.e. position k−1 holds the item of popularity rank k.
    """
    _require(ratings, ("item",), "item_counts")
    counts = ratings["item"].value_counts()
    if items is not None:
        extra = np.setdiff1d(np.asarray(items), counts.index.to_numpy())
        counts = pd.concat([counts, pd.Series(0, index=extra, dtype=counts.dtype)])
    order = np.lexsort((counts.index.to_numpy(), -counts.to_numpy()))
    out = counts.iloc[order]
    out.index.name = "item"
    out.name = "count"
    return out


def popularity_ranks(ratings: pd.DataFrame, items: np.ndarray | None = None) -> pd.Series:
    """Popularity rank k of every item (1 = most rated), indexed by item."""
    counts = item_counts(ratings, items)
    return pd.Series(np.arange(1, len(counts) + 1), index=counts.index, name="rank")


def percentile_strata(ratings: pd.DataFrame, m: int, items: np.ndarray | None = None) -> pd.Series:
    """Partition items into ``m`` popularity percentiles ℐ_1..ℐ_m of (nearly) equal size.

    Stratum 0 holds the most popular items. Items are cut by popularity rank, so each stratum has
    ⌊|ℐ|/m⌋ or ⌈|ℐ|/m⌉ items (Bellogín et al. 2017, §6.1: P1R).
    """
    counts = item_counts(ratings, items)
    if not 1 <= m <= len(counts):
        raise ValueError(f"m must lie between 1 and the number of items ({len(counts)}), got {m}")
    stratum = (np.arange(len(counts)) * m) // len(counts)
    return pd.Series(stratum, index=counts.index, name="stratum")


def head_items(ratings: pd.DataFrame, fraction: float = 0.1) -> np.ndarray:
    """The ⌈fraction·|ℐ|⌉ most popular items (the "short head", Cremonesi et al. 2010)."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    counts = item_counts(ratings)
    k = int(np.ceil(fraction * len(counts)))
    return counts.index.to_numpy()[:k]


def positive_ratio_by_rank(
    ratings: pd.DataFrame, threshold: float, segments: int | None = 100
) -> pd.DataFrame:
    """|PR(i)| / |R(i)| against popularity rank (Bellogín et al. 2017, Fig. 7).

    A rating is positive when ``rating >= threshold``. With ``segments`` the items (in rank order)
    are cut into that many equal groups and the ratio is averaged within each group, as the paper
    does for a smoothed view; ``segments=None`` returns one row per item.
    Columns: ``rank`` (first rank of the group), ``ratio``, ``count`` (mean |R(i)|).
    """
    _require(ratings, ("item", "rating"), "positive_ratio_by_rank")
    counts = item_counts(ratings)
    pos = ratings.loc[ratings["rating"] >= threshold, "item"].value_counts()
    pos = pos.reindex(counts.index, fill_value=0).to_numpy()
    per_item = pd.DataFrame(
        {
            "rank": np.arange(1, len(counts) + 1),
            "ratio": pos / counts.to_numpy(),
            "count": counts.to_numpy(),
        }
    )
    if segments is None:
        return per_item
    if not 1 <= segments <= len(counts):
        raise ValueError(f"segments must lie between 1 and the number of items ({len(counts)})")
    group = (np.arange(len(counts)) * segments) // len(counts)
    return per_item.groupby(group).agg(
        rank=("rank", "min"), ratio=("ratio", "mean"), count=("count", "mean")
    )


def cumulative_share(counts: np.ndarray | pd.Series) -> np.ndarray:
    """Cumulative share of ratings held by the k most popular items, k = 1..|ℐ| (Fig. 5)."""
    c = np.sort(np.asarray(counts, dtype=float))[::-1]
    if len(c) == 0 or c.sum() <= 0:
        raise ValueError("cumulative_share needs at least one positive count")
    return np.cumsum(c) / c.sum()


def rating_prior(ratings: pd.DataFrame) -> pd.Series:
    """The empirical distribution of rating values, P(r = v), indexed by value."""
    _require(ratings, ("rating",), "rating_prior")
    return ratings["rating"].value_counts(normalize=True).sort_index()


class PowerLawFit(tuple):
    """Parameters (c1, c2, beta, alpha) of |R(i_k)| = c1 + β (c2 + k)^(−α)."""

    __slots__ = ()

    def __new__(cls, c1: float, c2: float, beta: float, alpha: float) -> PowerLawFit:
        return super().__new__(cls, (c1, c2, beta, alpha))

    def __getnewargs__(self) -> tuple[float, float, float, float]:  # pickling and copying
        return tuple(self)

    c1 = property(lambda self: self[0])
    c2 = property(lambda self: self[1])
    beta = property(lambda self: self[2])
    alpha = property(lambda self: self[3])

    def __repr__(self) -> str:
        return (
            f"PowerLawFit(c1={self[0]:.4g}, c2={self[1]:.4g}, beta={self[2]:.4g}, "
            f"alpha={self[3]:.4g})"
        )


def _law(k: np.ndarray, c1: float, c2: float, beta: float, alpha: float) -> np.ndarray:
    return c1 + beta * (c2 + k) ** (-alpha)


def fit_shifted_power_law(counts: np.ndarray | pd.Series) -> PowerLawFit:
    """Least-squares fit of |R(i_k)| = c1 + β (c2 + k)^(−α) to popularity counts.

    ``counts`` are the items' rating counts in any order; they are sorted decreasingly and k runs
    from 1. The fit is done on the counts themselves (not their logarithm) so the head and the
    tail weigh as they do in the total number of ratings, which is what the simulation preserves.
    c1 is kept non-negative (a count floor) and c2 > −1, so the law stays positive for every α the
    simulation sweeps.
    """
    c = np.sort(np.asarray(counts, dtype=float))[::-1]
    if len(c) < 4:
        raise ValueError("fit_shifted_power_law needs at least 4 items")
    k = np.arange(1, len(c) + 1, dtype=float)
    p0 = (max(c[-1], 0.0), 10.0, c[0] * 11.0, 1.0)
    bounds = ([0.0, -1 + 1e-9, 0.0, 0.0], [np.inf, np.inf, np.inf, 10.0])
    params, _ = optimize.curve_fit(_law, k, c, p0=p0, bounds=bounds, maxfev=20000)
    return PowerLawFit(*map(float, params))


def shifted_power_law_counts(
    n_items: int, n_ratings: int, alpha: float, *, c1: float, c2: float, max_count: int
) -> np.ndarray:
    """Integer item counts following |R(i_k)| = c1 + β (c2 + k)^(−α), k = 1..n_items.

    β is solved so the counts sum to ``n_ratings`` (Bellogín et al. 2017, §5.2: "enforcing these
    constraints by adjusting β"). Each count is clipped to [0, max_count] — an item cannot have
    more raters than there are users — and β is solved on the clipped curve by bisection. The
    real-valued counts are then rounded by largest remainder, so the total is exact and the
    counts stay non-increasing in k. α = 0 gives (nearly) equal counts.
    """
    if not alpha >= 0:
        raise ValueError(f"alpha must be non-negative, got {alpha}")
    if n_items < 1 or n_ratings < 0:
        raise ValueError("n_items must be positive and n_ratings non-negative")
    if n_ratings > n_items * max_count:
        raise ValueError(
            f"{n_ratings} ratings do not fit in {n_items} items with at most {max_count} "
            "raters each"
        )
    if c2 <= -1:
        raise ValueError(f"c2 must exceed -1 so that c2 + k > 0 for k >= 1, got {c2}")
    k = np.arange(1, n_items + 1, dtype=float)
    w = (c2 + k) ** (-alpha)
    w = w / w[0]  # scale-free shape; β absorbs the scale

    def total(beta: float) -> float:
        return float(np.clip(c1 + beta * w, 0, max_count).sum())

    if total(0.0) > n_ratings:
        raise ValueError(
            f"c1 = {c1:.4g} alone gives more than {n_ratings} ratings; lower c1 (fit it to a "
            "dataset with fit_shifted_power_law)."
        )
    hi = 1.0
    while total(hi) < n_ratings:
        hi *= 2.0
        if hi > 1e15:
            raise ValueError("cannot reach the requested number of ratings; check max_count")
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if total(mid) < n_ratings:
            lo = mid
        else:
            hi = mid
    real = np.clip(c1 + hi * w, 0, max_count)
    base = np.floor(real).astype(np.int64)
    short = n_ratings - int(base.sum())
    if short < 0:  # the bisection overshot by less than one rating per item
        real = real * (n_ratings / real.sum())
        base = np.floor(real).astype(np.int64)
        short = n_ratings - int(base.sum())
    frac = real - base
    frac[base >= max_count] = -1.0  # never push a capped item over the cap
    # largest remainder; ties go to the more popular item, which keeps the counts non-increasing
    order = np.lexsort((np.arange(n_items), -frac))
    base[order[:short]] += 1
    return base


def simulate_ratings(
    n_users: int,
    n_items: int,
    n_ratings: int,
    alpha: float,
    rating_prior: Mapping[float, float] | pd.Series,
    *,
    c1: float,
    c2: float,
    seed: int = 0,
) -> pd.DataFrame:
    """Random ratings with shifted power-law item popularity (Bellogín et al. 2017, §5.2).

    Item k (id k, rank k) receives |R(i_k)| ratings from :func:`shifted_power_law_counts`; its
    raters are drawn uniformly without replacement among the ``n_users`` users (ids 1..n_users),
    and each rating value is drawn independently from ``rating_prior`` (value → probability).
    Ratings carry no preference pattern: any difference between recommenders on these data is a
    statistical effect of popularity alone. The paper does not say how users are chosen; we take
    them uniformly. ``timestamp`` is a random permutation of 0..n_ratings−1, so time-based splits
    work but mean nothing.
    """
    prior = pd.Series(rating_prior, dtype=float)
    if len(prior) == 0 or (prior < 0).any() or not np.isclose(prior.sum(), 1.0):
        raise ValueError(
            "rating_prior must map rating values to non-negative probabilities summing to 1"
        )
    counts = shifted_power_law_counts(n_items, n_ratings, alpha, c1=c1, c2=c2, max_count=n_users)
    rng = np.random.default_rng(seed)
    users = np.empty(n_ratings, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    chunk = max(1, int(2e7 // max(n_users, 1)))
    # random keys; the c smallest per row are a uniform c-subset
    for lo in range(0, n_items, chunk):
        hi = min(n_items, lo + chunk)
        keys = rng.random((hi - lo, n_users))
        order = np.argsort(keys, axis=1)
        take = np.arange(n_users)[None, :] < counts[lo:hi, None]
        users[starts[lo] : starts[hi]] = order[take] + 1
    items = np.repeat(np.arange(1, n_items + 1, dtype=np.int64), counts)
    values = rng.choice(
        prior.index.to_numpy(dtype=float), size=n_ratings, p=prior.to_numpy() / prior.sum()
    )
    return pd.DataFrame(
        {
            "user": users,
            "item": items,
            "rating": values,
            "timestamp": rng.permutation(n_ratings).astype(np.int64),
        }
    )


def simulate_like(
    ratings: pd.DataFrame, alpha: float, *, seed: int = 0, fit: PowerLawFit | None = None
) -> pd.DataFrame:
    """Simulated ratings with the numbers of users, items and ratings and the rating-value prior
    of ``ratings``, and popularity skew ``alpha`` (Bellogín et al. 2017, §5.2, Fig. 5).

    c1 and c2 come from ``fit`` or from :func:`fit_shifted_power_law` on ``ratings``; β is solved
    for the total. The paper fits on ML-1M; we fit on whatever data is given.
    """
    _require(ratings, ("user", "item", "rating"), "simulate_like")
    fit = fit or fit_shifted_power_law(item_counts(ratings).to_numpy())
    return simulate_ratings(
        ratings["user"].nunique(),
        ratings["item"].nunique(),
        len(ratings),
        alpha,
        rating_prior(ratings),
        c1=fit.c1,
        c2=fit.c2,
        seed=seed,
    )
