r"""The bootstrap over users (Efron & Tibshirani 1993), the one implementation in the package.

Users are the unit of resampling, as in the papers' significance and uncertainty analyses
(Sakai 2006; Valcarce et al. 2018, 2020): a replicate draws the ``n`` users with replacement,
which :func:`resample_counts` records as how often each user is drawn (multinomial counts, one
row per replicate, summing to ``n``). A statistic built from per-user sums (a mean, a ratio of
sums, Pearson's r, a protocol mean) is then a function of ``counts @ sums``:

- :func:`weighted_means`: the NaN-skipping mean of per-user values in every replicate;
- :func:`bootstrap_sums`: any statistic of per-user sums, on all users and on every replicate,
  in batches (the resampled users are never materialised);
- :func:`percentile_interval`: the ``(1 ± level)/2`` quantiles of the replicates;
- :func:`sign_pvalues`: one-sided p-values of "the statistic is above / below 0" from the
  replicates (for conjunctions corrected with Holm, :func:`recmeta.ledger.every`);
- :func:`scipy_interval`: the percentile, basic or BCa interval (Efron 1987) of a statistic of
  raw per-user values, through :func:`scipy.stats.bootstrap` (used where BCa is wanted: a mean).

Every caller draws its replicates from :func:`resample_counts` (or from scipy, for BCa), so the
same seed gives the same users in every analysis that shares it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

#: the interval methods of :func:`scipy.stats.bootstrap`
IntervalMethod = Literal["percentile", "basic", "BCa"]

__all__ = [
    "sign_pvalues",
    "IntervalMethod",
    "resample_counts",
    "weighted_means",
    "bootstrap_sums",
    "percentile_interval",
    "scipy_interval",
]


def resample_counts(n_users: int, n_resamples: int, seed: int | np.random.Generator) -> np.ndarray:
    """How often each user is drawn in each of ``n_resamples`` bootstrap resamples of the users.

    Resample ``b`` draws ``n_users`` users uniformly with replacement (Efron & Tibshirani 1993);
    row ``b`` of the result counts the draws of every user, so a statistic that is a mean over
    users becomes a weighted mean (:func:`weighted_means`) and never materialises the resample.
    Returns an int64 array (n_resamples × n_users) whose rows sum to ``n_users``.
    """
    if int(n_users) != n_users or n_users < 1:
        raise ValueError(f"n_users must be a positive integer, got {n_users!r}")
    if int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    rng = np.random.default_rng(seed)
    n = int(n_users)
    return rng.multinomial(n, np.full(n, 1.0 / n_users), size=int(n_resamples))


def weighted_means(per_user: ArrayLike, counts: ArrayLike) -> np.ndarray:
    """Means over users of ``per_user`` (..., users) in every resample of ``counts`` (B × users).

    ``mean_b = Σ_u c_bu x_u / Σ_u c_bu [x_u not NaN]``: the NaN-skipping mean of the resampled
    users, as :func:`recmeta.metrics.aggregate` skips users without a relevant item. Returns
    (B, ...); NaN where a resample holds no scored user. One matrix product per call (two when
    the rows do not score the same users).
    """
    x = np.asarray(per_user, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 2 or x.shape[-1] != c.shape[1]:
        raise ValueError(
            f"need counts (resamples × users) and per-user values (..., users) over the same "
            f"users; got {c.shape} and {x.shape}"
        )
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    seen = np.isfinite(flat)
    num = c @ np.where(seen, flat, 0.0).T
    if seen.shape[0] and (seen == seen[0]).all():  # the same users scored in every row
        den = (c @ seen[0].astype(np.float64))[:, None]  # counts of 0/1 flags: exact sums
    else:
        den = c @ seen.T.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out.reshape(c.shape[0], *lead)


def bootstrap_sums(
    sums: ArrayLike,
    statistic: Callable[[NDArray[np.float64]], ArrayLike],
    *,
    n_resamples: int,
    seed: int | np.random.Generator,
    batch: int = 256,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A statistic of per-user sums on all users and on ``n_resamples`` bootstrap replicates.

    ``sums`` is (users × k): each user's contribution to ``k`` sums. ``statistic`` maps an
    array (m × k) of summed columns to ``m`` values (or m × … values). Returns ``(value,
    replicates)``: the statistic of ``sums.sum(axis=0)`` and of ``counts_b @ sums`` for every
    replicate ``b`` (counts from :func:`resample_counts`, drawn ``batch`` replicates at a time
    from one generator, so the draws do not depend on ``batch``; the matrix product may sum in
    another order, to the last bit).
    """
    s = np.asarray(sums, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] < 2:
        raise ValueError(f"sums must be (users × columns) with at least two users, got {s.shape}")
    if int(batch) != batch or batch < 1:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    value = np.asarray(statistic(s.sum(axis=0)[None, :]), dtype=np.float64)[0]
    rng = np.random.default_rng(seed)
    parts = []
    done = 0
    while done < n_resamples:
        b = min(int(batch), int(n_resamples) - done)
        counts = resample_counts(s.shape[0], b, rng).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(np.asarray(statistic(counts @ s), dtype=np.float64))
        done += b
    return value, np.concatenate(parts)


def sign_pvalues(replicates: ArrayLike) -> tuple[float, float]:
    """One-sided bootstrap p-values of a statistic's sign from its ``B`` replicates:
    ``p_positive = (1 + #{θ* ≤ 0}) / (B + 1)`` against "θ ≤ 0", and
    ``p_negative = (1 + #{θ* ≥ 0}) / (B + 1)`` against "θ ≥ 0" (the percentile test read from
    the bootstrap distribution, Efron & Tibshirani 1993, §16; the +1 keeps p above 0)."""
    x = np.asarray(replicates, dtype=float).ravel()
    if x.size == 0 or not np.isfinite(x).all():
        raise ValueError("sign_pvalues needs finite replicates (none given or some NaN)")
    b = x.size
    return float((1 + (x <= 0).sum()) / (b + 1)), float((1 + (x >= 0).sum()) / (b + 1))


def percentile_interval(replicates: ArrayLike, level: float = 0.95) -> tuple[float, float]:
    """The ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the finite replicates
    (``numpy.quantile``, linear interpolation): a percentile bootstrap interval."""
    r = np.asarray(replicates, dtype=np.float64).ravel()
    r = r[np.isfinite(r)]
    if r.size == 0:
        raise ValueError("no finite replicate to read an interval from")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    low, high = np.quantile(r, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def scipy_interval(
    data: ArrayLike,
    statistic: Callable[..., ArrayLike],
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int | np.random.Generator = 0,
    method: IntervalMethod = "BCa",
    batch_elements: int = 4_000_000,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bootstrap interval over the last axis (users) of ``data`` by :func:`scipy.stats.bootstrap`.

    ``statistic(x, axis=-1)`` is vectorised (e.g. ``np.mean``); every row of ``data`` is
    resampled with the same users. Resamples are drawn in batches of about ``batch_elements``
    values, which bounds memory and does not change the result. Rows whose values are all equal
    (a degenerate bootstrap distribution) get the statistic itself as both ends; scipy's warning
    about them is expected and silenced here.
    """
    x = np.asarray(data, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.bootstrap(
            (x,),
            statistic,
            axis=-1,
            vectorized=True,
            n_resamples=int(n_resamples),
            confidence_level=confidence,
            method=method,
            rng=np.random.default_rng(seed),
            batch=max(1, int(batch_elements) // max(x.size, 1)),
        )
    low = np.asarray(res.confidence_interval.low, dtype=np.float64)
    high = np.asarray(res.confidence_interval.high, dtype=np.float64)
    point = np.asarray(statistic(x, axis=-1), dtype=np.float64)
    flat = np.ptp(x, axis=-1) == 0
    return np.where(flat, point, low), np.where(flat, point, high)
