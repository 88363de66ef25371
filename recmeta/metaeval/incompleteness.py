"""Incompleteness masks over the judged (user, item) entries of a test set.

Valcarce et al. (2018, Sec. 4) measure how robust a metric is by re-evaluating the same runs on
smaller and smaller subsets of the test judgments and correlating each system ordering with the
one obtained on the full test set. Valcarce et al. (2020, Sec. 4.2) add item- and user-level
schemes. Every scheme here returns a :class:`Masks`: a boolean matrix ``keep`` with one row per
incomplete test set and one column per test row (judged entry), so the runs never have to be
recomputed; the metric engine evaluates the same runs on the rows ``keep[k]`` leaves
(:class:`recmeta.metrics.Subsets`, :func:`score_masks`).

Schemes (the *share* is the share of *units* kept; the unit is recorded in ``Masks.unit``):

- :func:`random_ratings` (unit: rating): ``round(p·N)`` test ratings drawn uniformly
  (Valcarce et al. 2018, Sec. 4, sparsity bias; 2020, Sec. 4.2.1).
- :func:`random_items` (unit: item): all ratings of ``round(p·I)`` random test items (2020).
- :func:`random_users` (unit: user): all ratings of ``round(p·U)`` random test users (2020).
- :func:`popular_items_removed` (unit: item): ratings of the ``round(p·I)`` least popular test
  items (2018, Sec. 4, popularity bias; 2020, Sec. 4.2.2).
- :func:`largest_users_removed` (unit: user): ratings of the ``round(p·U)`` users with the
  smallest profiles (2020, Sec. 4.2.3).

Popularity is the number of *test* ratings of an item (Valcarce et al. 2020, Sec. 4.2.2: "by
decreasing order of their number of test ratings"); the profile size of a user is likewise its
number of test ratings. Both can be replaced by any other count (e.g. training popularity).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..metrics import Subsets

if TYPE_CHECKING:
    from ..metrics import Judgments, Runs

__all__ = [
    "Masks",
    "sparsity_shares",
    "popularity_shares",
    "random_ratings",
    "random_items",
    "random_users",
    "popular_items_removed",
    "largest_users_removed",
    "score_masks",
]

Seed = int | np.random.Generator


@dataclass(frozen=True)
class Masks:
    """A stack of incomplete test sets, one per row of ``keep``.

    Attributes
    ----------
    keep:
        Boolean array (k × n_rows); ``keep[j, r]`` is true when test row ``r`` stays judged in
        incomplete test set ``j``.
    share:
        Float array (k,): the requested share of units kept by test set ``j``.
    sample:
        Int array (k,): the sample number of test set ``j`` within its share (0 for the
        deterministic schemes).
    unit:
        ``"rating"``, ``"item"`` or ``"user"``: what the share counts.
    n_units:
        Number of distinct units in the full test set.
    """

    keep: np.ndarray
    share: np.ndarray
    sample: np.ndarray
    unit: str
    n_units: int

    def __len__(self) -> int:
        return self.keep.shape[0]

    @property
    def n_rows(self) -> int:
        """Number of test rows (judged entries) the masks are defined over."""
        return self.keep.shape[1]

    @property
    def kept_rows(self) -> np.ndarray:
        """Share of test rows kept by each mask (differs from ``share`` unless unit is rating)."""
        return self.keep.mean(axis=1)

    def frame(self) -> pd.DataFrame:
        """One row per mask: share, sample and share of ratings kept."""
        return pd.DataFrame(
            {"share": self.share, "sample": self.sample, "kept_rows": self.kept_rows}
        )


def sparsity_shares(low: float = 0.05, step: float = 0.05) -> np.ndarray:
    """Shares 1.00, 0.95, ..., 0.05 of Valcarce et al. (2018, Sec. 5), largest first."""
    return _share_grid(low, step)


def popularity_shares(low: float = 0.80, step: float = 0.01) -> np.ndarray:
    """Shares of items kept 1.00, 0.99, ..., 0.80 of Valcarce et al. (2018, Sec. 5)."""
    return _share_grid(low, step)


def random_ratings(
    test: pd.DataFrame | ArrayLike | int,
    shares: ArrayLike,
    n_samples: int = 50,
    *,
    seed: Seed,
    nested: bool = False,
) -> Masks:
    """Keep exactly ``round(p·N)`` test ratings drawn uniformly without replacement.

    The sparsity-bias scheme of Valcarce et al. (2018, Sec. 4; 50 samples per size in Sec. 5).

    Parameters
    ----------
    test:
        The test rows: a DataFrame, any array with one entry per row, or the row count ``N``.
    shares:
        Shares ``p`` in (0, 1] to keep.
    n_samples:
        Random samples per share.
    seed:
        Seed or ``numpy.random.Generator``; the same seed gives the same masks.
    nested:
        If false (default, as in the paper) every (share, sample) is drawn independently. If
        true, sample ``s`` of a smaller share is a subset of sample ``s`` of every larger share
        (one random order per sample, truncated); this uses common random numbers across sizes
        and gives smoother curves.
    """
    n = _n_rows(test)
    codes = np.arange(n)
    return _random_units(codes, n, shares, n_samples, seed, nested, "rating")


def random_items(
    test: pd.DataFrame | ArrayLike,
    shares: ArrayLike,
    n_samples: int = 50,
    *,
    seed: Seed,
    nested: bool = False,
) -> Masks:
    """Keep all ratings of exactly ``round(p·I)`` test items drawn uniformly.

    Random-item incompleteness of Valcarce et al. (2020, Sec. 4.2.2); ``I`` counts the distinct
    items of the test set. ``test`` is a DataFrame with an ``item`` column or the item of every
    test row. See :func:`random_ratings` for ``nested``.
    """
    codes, n_units = _codes(test, "item")
    return _random_units(codes, n_units, shares, n_samples, seed, nested, "item")


def random_users(
    test: pd.DataFrame | ArrayLike,
    shares: ArrayLike,
    n_samples: int = 50,
    *,
    seed: Seed,
    nested: bool = False,
) -> Masks:
    """Keep all ratings of exactly ``round(p·U)`` test users drawn uniformly.

    Random-user incompleteness of Valcarce et al. (2020, Sec. 4.2.3). ``test`` is a DataFrame
    with a ``user`` column or the user of every test row. A user whose ratings are all masked
    has no judgments left; how the metric engine averages over such users decides whether this
    scheme shrinks the user set (as in the paper) or scores them zero.
    """
    codes, n_units = _codes(test, "user")
    return _random_units(codes, n_units, shares, n_samples, seed, nested, "user")


def popular_items_removed(
    test: pd.DataFrame | ArrayLike,
    shares: ArrayLike,
    *,
    popularity: pd.Series | None = None,
) -> Masks:
    """Keep the ratings of the ``round(p·I)`` least popular test items.

    Popularity-bias scheme of Valcarce et al. (2018, Sec. 4 and 5; 2020, Sec. 4.2.2): items are
    removed in decreasing order of popularity, by default their number of test ratings.
    ``popularity`` (a Series indexed by item) replaces that count, e.g. training popularity; it
    must cover every test item. Ties are broken by item id: among equally popular items the
    larger id is removed first. The masks are nested and deterministic (``sample`` is 0).
    """
    return _largest_removed(test, shares, "item", popularity)


def largest_users_removed(
    test: pd.DataFrame | ArrayLike,
    shares: ArrayLike,
    *,
    profile_sizes: pd.Series | None = None,
) -> Masks:
    """Keep the ratings of the ``round(p·U)`` test users with the smallest profiles.

    Large-user incompleteness of Valcarce et al. (2020, Sec. 4.2.3). The profile size is the
    user's number of test ratings unless ``profile_sizes`` (a Series indexed by user, e.g.
    training profile sizes) is given. Ties are broken by user id (larger id removed first).
    """
    return _largest_removed(test, shares, "user", profile_sizes)


def score_masks(
    judgments: Judgments,
    runs: Runs,
    masks: Masks | np.ndarray,
    metrics: Sequence[str],
    *,
    aggregate: str = "mean",
    **options: Any,
) -> np.ndarray:
    """System scores of every metric on every incomplete test set: (masks × metrics × systems).

    The masks must be defined over ``judgments.to_frame()`` (build them from that frame, so the
    row order matches). The runs are never recomputed: :class:`recmeta.metrics.Subsets` finds
    the judged positions of the lists once, and each mask is one compiled pass that switches
    judgments off. Averages follow :func:`recmeta.metrics.aggregate` (``"mean"`` or
    ``"gmean"``): users left without a relevant item are excluded from the mean, as everywhere
    in the engine. ``options`` (``infap=``, ``gain=``, ``ties=``, ``users=``) go to the engine.
    """

    keep = masks.keep if isinstance(masks, Masks) else np.asarray(masks)
    if keep.ndim != 2 or keep.dtype != bool:
        raise ValueError("masks must be a Masks or a boolean (masks × judged entries) array")
    if keep.shape[1] != judgments.n_entries:
        raise ValueError(
            f"the masks cover {keep.shape[1]} test rows but the judgments hold "
            f"{judgments.n_entries}; build the masks from judgments.to_frame()"
        )
    if aggregate not in ("mean", "gmean"):
        raise ValueError(f"aggregate must be 'mean' or 'gmean', got {aggregate!r}")
    return Subsets(judgments, runs, list(metrics), **options).means(keep, (aggregate,))[aggregate]


# --------------------------------------------------------------------------------------------
# helpers


def _share_grid(low: float, step: float) -> np.ndarray:
    if not 0 < step <= 1 or not 0 < low <= 1:
        raise ValueError(f"need 0 < low <= 1 and 0 < step <= 1, got low={low}, step={step}")
    count = int(np.floor((1 - low) / step + 1e-9)) + 1
    return np.round(1 - step * np.arange(count), 10)


def _check_shares(shares: ArrayLike) -> np.ndarray:
    p = np.atleast_1d(np.asarray(shares, dtype=np.float64))
    if p.ndim != 1 or p.size == 0:
        raise ValueError("shares must be a non-empty 1-d sequence of numbers in (0, 1]")
    if not np.all(np.isfinite(p)) or np.any(p <= 0) or np.any(p > 1):
        raise ValueError(
            f"every share must lie in (0, 1]; got {p[(p <= 0) | (p > 1) | ~np.isfinite(p)]}"
        )
    return p


def _n_kept(shares: np.ndarray, n_units: int) -> np.ndarray:
    """round(p·n), halves rounded up (not to even); refuses shares that keep no unit."""
    k = np.floor(shares * n_units + 0.5 + 1e-9).astype(np.int64)
    if np.any(k < 1):
        raise ValueError(
            f"share {shares[k < 1].min():g} keeps no unit out of {n_units}; "
            f"use shares of at least {0.5 / n_units:.2g}"
        )
    return np.minimum(k, n_units)


def _n_rows(test: pd.DataFrame | ArrayLike | int) -> int:
    if isinstance(test, (int, np.integer)):
        n = int(test)
    elif isinstance(test, pd.DataFrame):
        n = len(test)
    else:
        n = len(np.asarray(test))
    if n <= 0:
        raise ValueError("the test set is empty: there is nothing to mask")
    return n


def _codes(test: pd.DataFrame | ArrayLike, column: str) -> tuple[np.ndarray, int]:
    """Dense codes 0..n_units-1 of the ``column`` of every test row (codes follow sorted ids)."""
    values = _column(test, column)
    _, codes = np.unique(values, return_inverse=True)
    return codes.ravel(), int(codes.max()) + 1


def _column(test: pd.DataFrame | ArrayLike, column: str) -> np.ndarray:
    if isinstance(test, pd.DataFrame):
        if column not in test.columns:
            raise KeyError(
                f"the test frame has no {column!r} column (columns: {list(test.columns)}); "
                f"pass a frame with user and item columns or the {column} of every row"
            )
        values = test[column].to_numpy()
    else:
        values = np.asarray(test)
    if values.ndim != 1:
        raise ValueError(f"expected one {column} per test row (1-d), got shape {values.shape}")
    if values.size == 0:
        raise ValueError("the test set is empty: there is nothing to mask")
    if pd.isna(values).any():
        raise ValueError(f"the {column} column has missing values; drop or fill them first")
    return values


def _random_units(
    codes: np.ndarray,
    n_units: int,
    shares: ArrayLike,
    n_samples: int,
    seed: Seed,
    nested: bool,
    unit: str,
) -> Masks:
    p = _check_shares(shares)
    if int(n_samples) != n_samples or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    rng = np.random.default_rng(seed)
    kept = _n_kept(p, n_units)
    unit_keep = np.empty((p.size, n_samples, n_units), dtype=bool)
    if nested:
        # one uniformly random order of the units per sample; keep its first k entries
        order = rng.permuted(np.tile(np.arange(n_units), (n_samples, 1)), axis=1)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(n_units)[None, :], axis=1)
        np.less(rank[None, :, :], kept[:, None, None], out=unit_keep)
    else:
        for j, k in enumerate(kept):  # loop over sizes only; rows are handled in bulk
            keys = rng.random((n_samples, n_units))
            chosen = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < n_units else None
            if chosen is None:
                unit_keep[j] = True
            else:
                unit_keep[j] = False
                np.put_along_axis(unit_keep[j], chosen, True, axis=1)
    keep = unit_keep.reshape(p.size * n_samples, n_units)[:, codes]
    return Masks(
        keep=keep,
        share=np.repeat(p, n_samples),
        sample=np.tile(np.arange(n_samples), p.size),
        unit=unit,
        n_units=n_units,
    )


def _largest_removed(
    test: pd.DataFrame | ArrayLike,
    shares: ArrayLike,
    column: str,
    sizes: pd.Series | None,
) -> Masks:
    p = _check_shares(shares)
    values = _column(test, column)
    ids, codes = np.unique(values, return_inverse=True)
    codes = codes.ravel()
    n_units = ids.size
    if sizes is None:
        count = np.bincount(codes, minlength=n_units).astype(np.float64)
    else:
        if not isinstance(sizes, pd.Series):
            raise TypeError(f"the {column} sizes must be a pandas Series indexed by {column}")
        missing = pd.Index(ids).difference(sizes.index)
        if len(missing):
            raise ValueError(
                f"{len(missing)} test {column}s have no size (e.g. {list(missing[:5])}); "
                f"give a size for every {column} of the test set"
            )
        count = sizes.reindex(ids).to_numpy(dtype=np.float64)
        if np.isnan(count).any():
            raise ValueError(f"the {column} sizes contain NaN; give a number for every {column}")
    # rank 0 = removed first: largest count, then largest id (ids are sorted ascending)
    order = np.lexsort((-np.arange(n_units), -count))
    rank = np.empty(n_units, dtype=np.int64)
    rank[order] = np.arange(n_units)
    removed = n_units - _n_kept(p, n_units)
    unit_keep = rank[None, :] >= removed[:, None]
    return Masks(
        keep=unit_keep[:, codes],
        share=p,
        sample=np.zeros(p.size, dtype=np.int64),
        unit=column,
        n_units=n_units,
    )
