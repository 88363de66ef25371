r"""The bootstrap over users (Efron & Tibshirani 1993), the one implementation in the package.

Users are the unit of resampling, as in the papers' significance and uncertainty analyses
(Sakai 2006; Valcarce et al. 2018, 2020): a replicate draws the ``n`` users with replacement,
which :func:`resample_counts` records as how often each user is drawn (multinomial counts, one
row per replicate, summing to ``n``). A statistic built from per-user sums (a mean, a ratio of
sums, Pearson's r, a protocol mean) is then a function of ``counts @ sums``:

- :func:`weighted_means`: the NaN-skipping mean of per-user values in every replicate;
- :func:`bootstrap_sums`: any statistic of per-user sums, on all users and on every replicate,
  in batches (the resampled users are never materialised);
- :func:`replicate_interval`: the interval read off the replicates of a statistic, bias-corrected
  percentile (BC, Efron 1981/1987), BCa with an acceleration (:func:`jackknife_acceleration`,
  :func:`jackknife_sums`); the plain percentile only for a band of the replicates' own spread;
  :func:`replicate_ends` says besides which end the replicates are too few to resolve;
- :func:`sign_pvalues`: one-sided p-values of "the statistic is above / below 0" from the
  replicates, the tests that invert the BC interval (for conjunctions corrected with Holm,
  :func:`recmeta.ledger.every`);
- :func:`scipy_interval`: the percentile, basic or BCa interval (Efron 1987) of a statistic of
  raw per-user values, through :func:`scipy.stats.bootstrap` (used where BCa is wanted: a mean).

Every caller draws its replicates from :func:`resample_counts` (or from scipy, for BCa), so the
same seed gives the same users in every analysis that shares it.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

#: the interval methods of :func:`scipy.stats.bootstrap`
IntervalMethod = Literal["percentile", "basic", "BCa"]

__all__ = [
    "sign_pvalues",
    "IntervalMethod",
    "resample_counts",
    "resampled_ranks",
    "weighted_means",
    "bootstrap_sums",
    "replicate_interval",
    "replicate_ends",
    "Ends",
    "jackknife_acceleration",
    "jackknife_sums",
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


def resampled_ranks(values: ArrayLike, idx: ArrayLike) -> np.ndarray:
    """The average ranks within each row of ``values[idx]`` (``idx``: resamples × n positions),
    as :func:`scipy.stats.rankdata` (method ``average``) along the rows, by counting.

    A value v of a row ranks ``less + (equal + 1) / 2``, with ``less`` and ``equal`` the row's
    draws below and equal to v: one count per distinct value and row, and no sort of the rows.
    Every rank is a whole number or a half, so the result equals scipy's exactly (rows with a
    NaN are scipy's own).
    """
    x = np.asarray(values)
    draws = np.asarray(idx)
    if x.ndim != 1 or draws.ndim != 2:
        raise ValueError(f"need values (n,) and idx (resamples × n); got {x.shape}, {draws.shape}")
    if x.dtype.kind == "f" and np.isnan(x).any():  # scipy's rule: a row with NaN ranks NaN
        return stats.rankdata(x[draws], axis=1)
    distinct, code = np.unique(x, return_inverse=True)
    k, rows = len(distinct), draws.shape[0]
    codes = code.astype(np.int64)[draws]  # distinct value of each draw
    codes += (np.arange(rows, dtype=np.int64) * k)[:, None]
    equal = np.bincount(codes.ravel(), minlength=rows * k)
    less = np.cumsum(equal.reshape(rows, k), axis=1).ravel() - equal
    return less[codes] + (equal[codes] + 1) / 2


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
    if isinstance(seed, np.random.Generator):
        batches = _count_batches(s.shape[0], int(n_resamples), seed, int(batch))
    else:
        batches = _memo_count_batches(s.shape[0], int(n_resamples), int(seed), int(batch))
    parts = []
    for counts in batches:
        with np.errstate(invalid="ignore", divide="ignore"):
            parts.append(np.asarray(statistic(counts @ s), dtype=np.float64))
    return value, np.concatenate(parts)


def _count_batches(
    n_users: int, n_resamples: int, seed: int | np.random.Generator, batch: int
) -> tuple[np.ndarray, ...]:
    """The counts of :func:`bootstrap_sums`, as float64 batches of ``batch`` replicates drawn in
    turn from one generator made of ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for done in range(0, n_resamples, batch):
        counts = resample_counts(n_users, min(batch, n_resamples - done), rng).astype(np.float64)
        counts.flags.writeable = False
        out.append(counts)
    return tuple(out)


#: the draws of an int seed, kept for the next call with the same users, resamples and seed
#: (a chapter bootstraps many statistics of one table with one seed; drawing the multinomial
#: counts was most of the time); 8 entries of at most B × users float64 each
_memo_count_batches = functools.lru_cache(maxsize=8)(_count_batches)


def _bias_z0(replicates: np.ndarray, point: float) -> float:
    """Efron's bias-correction ``z0 = Φ⁻¹(share of replicates < point)``, ties counted half
    (as :func:`scipy.stats.bootstrap` counts them); ±inf when no replicate lies on one side of
    the point or at it. A replicate within ``1e-12`` of the larger of ``|point|`` and the
    replicates' magnitude is a tie: a replicate summed as ``counts @ sums`` and the point summed
    directly differ by rounding alone when every resample gives the same value."""
    tie = np.abs(replicates - point) <= 1e-12 * max(abs(point), float(np.abs(replicates).max()))
    below = (replicates < point) & ~tie
    share = (below.sum() + 0.5 * tie.sum()) / replicates.size
    return float(special.ndtri(share))


def _finite(replicates: ArrayLike, point: float | None) -> np.ndarray:
    r = np.asarray(replicates, dtype=np.float64).ravel()
    if point is not None and not math.isfinite(point):
        raise ValueError(f"the point estimate must be finite, got {point!r}")
    return r[np.isfinite(r)]


def sign_pvalues(replicates: ArrayLike, *, point: float) -> tuple[float, float]:
    """One-sided bootstrap p-values of the sign of a statistic whose value on the data is
    ``point``, from its ``B`` replicates: the tests that invert the bias-corrected percentile
    interval of :func:`replicate_interval` (Efron 1987; Efron & Tibshirani 1993, §14.3, §16.4).

    With ``G = #{θ* ≤ 0} / B`` and ``z0`` as in :func:`replicate_interval`, the BC lower bound
    at confidence ``1 − α`` lies above 0 exactly when ``α > Φ(Φ⁻¹(G) − 2 z0)`` (Efron &
    Tibshirani 1993, §15.4, with ``a = 0``); that tail ``t`` is counted as a Monte-Carlo
    p-value, ``p_positive = (1 + B t) / (B + 1)`` against "θ ≤ 0", never below ``1/(B + 1)``.
    ``p_negative`` likewise from ``G' = #{θ* ≥ 0} / B`` and ``Φ(Φ⁻¹(G') + 2 z0)``. With
    ``z0 = 0`` (replicates centred on the point) these are the percentile tests
    ``(1 + #{θ* ≤ 0}) / (B + 1)`` and ``(1 + #{θ* ≥ 0}) / (B + 1)``. When no replicate lies on
    one side of the point (``z0`` infinite) the interval is the hull of the point and the
    replicates at every level, and so are the tests: ``1/(B + 1)`` on a side the hull excludes,
    1 otherwise.
    """
    x = _finite(replicates, point)
    if x.size == 0 or x.size != np.asarray(replicates).size:
        raise ValueError("sign_pvalues needs finite replicates (none given or some NaN)")
    b = x.size
    z0 = _bias_z0(x, float(point))
    if not math.isfinite(z0):
        low, high = min(float(point), float(x.min())), max(float(point), float(x.max()))
        floor = 1.0 / (b + 1)
        return (floor if low > 0 else 1.0), (floor if high < 0 else 1.0)
    up = special.ndtr(special.ndtri((x <= 0).sum() / b) - 2 * z0)
    down = special.ndtr(special.ndtri((x >= 0).sum() / b) + 2 * z0)
    return float((1 + b * up) / (b + 1)), float((1 + b * down) / (b + 1))


def jackknife_acceleration(jackknife: ArrayLike) -> float:
    """The acceleration of a BCa interval from the jackknife values ``θ_(i)`` of the statistic
    (``i``-th unit left out): ``a = Σ d_i³ / (6 (Σ d_i²)^{3/2})``, ``d_i = mean(θ_(·)) − θ_(i)``
    (Efron 1987, eq. 6.6; Efron & Tibshirani 1993, eq. 14.15). 0 when every ``θ_(i)`` is equal.
    """
    t = np.asarray(jackknife, dtype=np.float64).ravel()
    if t.size < 2 or not np.isfinite(t).all():
        raise ValueError(
            f"the jackknife needs at least two finite leave-one-out values, got {t.size} "
            f"({int((~np.isfinite(t)).sum())} not finite)"
        )
    d = t.mean() - t
    den = float((d**2).sum())
    return 0.0 if den == 0 else float((d**3).sum() / (6.0 * den**1.5))


def jackknife_sums(
    sums: ArrayLike, statistic: Callable[[NDArray[np.float64]], ArrayLike]
) -> NDArray[np.float64]:
    """``statistic`` (as in :func:`bootstrap_sums`) with each user left out in turn: the
    jackknife values ``θ_(u)`` of the summed columns minus user ``u``'s row, in one call
    (users × ...); their :func:`jackknife_acceleration` is the BCa acceleration."""
    s = np.asarray(sums, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] < 2:
        raise ValueError(f"sums must be (users × columns) with at least two users, got {s.shape}")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(statistic(s.sum(axis=0)[None, :] - s), dtype=np.float64)


class Ends(NamedTuple):
    """An interval read off bootstrap replicates, and which of its ends lie beyond them.

    ``low_open`` (``high_open``) is true when the level the interval asks of its lower (upper)
    end lies below ``1/(B + 1)`` (above ``B/(B + 1)``): fewer than one of the ``B`` replicates
    would fall beyond that end, so the replicates cannot place it. The end given is then the
    smallest (largest) replicate, and the interval the replicates ask for reaches further out.
    """

    low: float
    high: float
    low_open: bool = False
    high_open: bool = False


def replicate_ends(
    replicates: ArrayLike,
    level: float = 0.95,
    *,
    point: float | None,
    acceleration: float = 0.0,
) -> Ends:
    r"""The interval read off the finite bootstrap ``replicates`` of a statistic whose value on
    the data is ``point``: bias-corrected percentile (BC; BCa with an ``acceleration``), with the
    ends the replicates cannot resolve marked (:class:`Ends`).

    Efron (1981, 1987; Efron & Tibshirani 1993, §14.3): ``z0 = Φ⁻¹(#{θ* < point} / B)``, ties
    with the point counted half; with ``z = Φ⁻¹((1 + level)/2)`` the ends are the replicates'
    quantiles (``numpy.quantile``, linear) at
    ``Φ(z0 + (z0 ∓ z) / (1 − a (z0 ∓ z)))``, which for ``a = 0`` (BC) is ``Φ(2 z0 ∓ z)``.
    Replicates centred on the point (``z0 = 0``, ``a = 0``) give the percentile interval; a
    statistic whose replicates sit off its value (near a bound: a τ near 1, a difference of
    them) gets its interval moved back, where the percentile interval would lean towards the
    replicates' side. With the same replicates and acceleration, the ends are those of
    ``scipy.stats.bootstrap(method="BCa")`` (``a`` from :func:`jackknife_acceleration`).

    A lower level below ``1/(B + 1)`` or an upper level above ``B/(B + 1)`` is beyond what
    ``B`` replicates resolve (Efron & Tibshirani 1993, §14.3, ask for the ``(B + 1)α``-th
    ordered replicate): that end is the extreme replicate and is marked open, since the
    interval asked for reaches further. A level beyond the other way (a lower end asked above
    every replicate) leaves a wider interval than asked, and is not marked.

    When no replicate lies on one side of the point (``z0`` infinite: the bias is beyond what
    ``B`` replicates resolve), the interval is the hull of the point and the replicates, with
    the end on the point's side open: never narrower than the evidence, and never read as
    resolved.

    ``point=None`` reads the plain percentile interval, the ``(1 ∓ level)/2`` quantiles: only
    for a band of the replicates' own spread where no point estimate exists (e.g. the spread of
    τ over random masks, whose value is the replicates' mean).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    if not math.isfinite(acceleration):
        raise ValueError(f"the acceleration must be finite, got {acceleration!r}")
    r = _finite(replicates, point)
    if r.size == 0:
        raise ValueError("no finite replicate to read an interval from")
    if point is None:
        if acceleration:
            raise ValueError("an acceleration needs the point estimate (point=...)")
        low, high = np.quantile(r, [(1 - level) / 2, (1 + level) / 2])
        return Ends(float(low), float(high))
    point = float(point)
    z0 = _bias_z0(r, point)
    if not math.isfinite(z0):
        low, high = min(point, float(r.min())), max(point, float(r.max()))
        return Ends(low, high, low_open=z0 < 0, high_open=z0 > 0)
    z = float(special.ndtri((1 + level) / 2))
    t = np.array([z0 - z, z0 + z])
    levels = special.ndtr(z0 + t / (1 - acceleration * t))
    low, high = np.quantile(r, levels)
    floor = 1.0 / (r.size + 1)
    low_open, high_open = bool(levels[0] < floor), bool(levels[1] > 1.0 - floor)
    return Ends(
        float(r.min()) if low_open else float(low),
        float(r.max()) if high_open else float(high),
        low_open,
        high_open,
    )


def replicate_interval(
    replicates: ArrayLike,
    level: float = 0.95,
    *,
    point: float | None,
    acceleration: float = 0.0,
) -> tuple[float, float]:
    """``(low, high)`` of :func:`replicate_ends` (whose docstring has the formula), for bands
    drawn in figures; a verdict reads :func:`replicate_ends`, which says which end is open."""
    ends = replicate_ends(replicates, level, point=point, acceleration=acceleration)
    return ends.low, ends.high


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
