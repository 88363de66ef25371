"""The distribution of the sampled rank r̃ of a relevant item at true rank r.

Rank the relevant item among itself and m sampled irrelevant items. Each of the n − 1 irrelevant
items lies above it with probability (r − 1)/(n − 1) (Krichene & Rendle 2020, eq. 15), so

* with replacement:    r̃ − 1 ~ Binomial(m, (r − 1)/(n − 1))              (§4.3)
* without replacement: r̃ − 1 ~ Hypergeometric(population n − 1, successes r − 1, draws m)  (§4.4)

The support of r̃ is 1..m+1. Probabilities come from scipy's binomial pmf (Boost, accurate to a few
ulps); the hypergeometric pmf is written as a ratio of three binomial pmfs with a common success
probability q = m/(n − 1),

    h(x) = Bin(x; r−1, q) · Bin(m−x; n−r, q) / Bin(m; n−1, q),

an identity (the powers of q cancel) that keeps full precision where log-gamma differences lose
it, and is orders of magnitude faster than ``scipy.stats.hypergeom.pmf``. Long rank vectors are
processed in chunks, each over the band of r̃ that carries all but 1e-30 of the mass.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy import stats

__all__ = ["rank_pmf", "sample_ranks", "simulate_item_sampling", "check_sampling"]

_TAIL = 1e-30  # probability mass left out on each side of a band
_CHUNK = 2_000_000  # pmf entries evaluated at once


def check_sampling(
    rank: np.ndarray | int, n: np.ndarray | int, m: int, replace: bool
) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate (rank, n, m); return int64 arrays broadcast to a common shape and m."""
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(
            f"m (the number of sampled negatives) must be an int, got {type(m).__name__}"
        )
    m = int(m)
    if m < 1:
        raise ValueError(f"m (the number of sampled negatives) must be at least 1, got {m}")
    r = np.asarray(rank)
    nn = np.asarray(n)
    for name, a in (("rank", r), ("n", nn)):
        if (
            a.size
            and not np.issubdtype(a.dtype, np.integer)
            and not (np.all(np.isfinite(a)) and np.all(a == np.round(a)))
        ):
            raise ValueError(
                f"{name} must hold integers; got non-integer values of dtype {a.dtype}"
            )
    r, nn = np.broadcast_arrays(r.astype(np.int64), nn.astype(np.int64))
    if np.any(nn < 2):
        raise ValueError("n (the number of items ranked) must be at least 2")
    if np.any(r < 1) or np.any(r > nn):
        raise ValueError("every true rank must lie in 1..n; ranks are 1-based")
    if not replace and np.any(m > nn - 1):
        raise ValueError(
            f"cannot sample m={m} negatives without replacement from n−1={int(nn.min()) - 1} "
            "items; lower m or pass replace=True"
        )
    return r, nn, m


def _pmf(x: np.ndarray, r: np.ndarray, n: np.ndarray, m: int, replace: bool) -> np.ndarray:
    """P(r̃ − 1 = x | r) elementwise (x, r, n broadcast; x outside the support gives 0)."""
    if replace:
        p = (r - 1) / (n - 1.0)
        return stats.binom.pmf(x, m, p)
    q = m / (n - 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = (
            stats.binom.pmf(x, r - 1, q)
            * stats.binom.pmf(m - x, n - r, q)
            / stats.binom.pmf(m, n - 1, q)
        )
    return np.where((x >= 0) & (x <= m), h, 0.0)


def _band(r: np.ndarray, n: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Per rank, [lo, hi] of r̃ − 1 outside which the binomial mass is below 1e-30 per side.

    Chernoff bounds on binomial tails hold for the hypergeometric law with the same mean too
    (Hoeffding 1963, Thm. 4), so the same band serves sampling without replacement up to a
    negligible slack (tests check the mass kept); a margin of 2 absorbs quantile rounding.
    """
    p = (r - 1) / (n - 1.0)
    lo = stats.binom.ppf(_TAIL, m, p)
    hi = m - stats.binom.ppf(_TAIL, m, 1.0 - p)  # isf is unreliable below 1e-16
    lo = np.clip(np.nan_to_num(lo, nan=0.0) - 2, 0, m).astype(np.int64)
    hi = np.clip(np.nan_to_num(hi, nan=float(m)) + 2, 0, m).astype(np.int64)
    return lo, hi


def _banded(
    r: np.ndarray, n: np.ndarray, m: int, replace: bool, top: int | None = None
) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
    """Yield (slice of the flat ranks, index matrix x = r̃ − 1, pmf matrix) chunk by chunk.

    Rows are padded to a common width; padding entries have pmf 0 and may have x > m. ``top``
    (0-based) caps the band: entries above it are not needed by the caller.
    """
    r = r.ravel()
    n = n.ravel()
    lo, hi = _band(r, n, m)
    if top is not None:
        hi = np.minimum(hi, top)
        lo = np.minimum(lo, hi)
    width = int((hi - lo).max()) + 1 if r.size else 1
    step = max(1, _CHUNK // width)
    for start in range(0, r.size, step):
        sl = slice(start, min(start + step, r.size))
        w = int((hi[sl] - lo[sl]).max()) + 1
        x = lo[sl, None] + np.arange(w)[None, :]
        inside = x <= hi[sl, None]
        pmf = np.where(inside, _pmf(x, r[sl, None], n[sl, None], m, replace), 0.0)
        yield sl, x, pmf


def rank_pmf(
    rank: np.ndarray | int, n: np.ndarray | int, m: int, replace: bool = True
) -> np.ndarray:
    """p(r̃ = i | r) for i = 1..m+1: shape ``rank.shape + (m + 1,)``.

    r̃ − 1 ~ Binomial(m, (r−1)/(n−1)) with replacement, Hypergeometric(n−1, r−1, m) without
    (Krichene & Rendle 2020, §4.3–4.4). ``rank`` and ``n`` broadcast. Dense output: for many
    ranks and a large m prefer :func:`recmeta.sampled.expected_value`, which works in bands.
    """
    r, nn, m = check_sampling(rank, n, m, replace)
    out = np.zeros((r.size, m + 1))
    for sl, x, pmf in _banded(r, nn, m, replace):
        rows = np.broadcast_to(np.arange(sl.start, sl.stop)[:, None], x.shape)
        keep = x <= m
        out[rows[keep], x[keep]] = pmf[keep]
    return out.reshape(r.shape + (m + 1,))


def sample_ranks(
    rank: np.ndarray,
    n: np.ndarray | int,
    m: int,
    *,
    repetitions: int = 1,
    seed: int | np.random.Generator = 0,
    replace: bool = True,
) -> np.ndarray:
    """Draw sampled ranks r̃ for each true rank: shape ``(repetitions,) + rank.shape``.

    Equivalent in distribution to sampling m negatives per user (uniformly from the n − 1 other
    items) and counting those ranked above the relevant item; draws are independent across
    users, repetitions and (if called per system) systems.
    """
    if (
        isinstance(repetitions, bool)
        or not isinstance(repetitions, (int, np.integer))
        or repetitions < 1
    ):
        raise ValueError(f"repetitions must be a positive int, got {repetitions!r}")
    r, nn, m = check_sampling(rank, n, m, replace)
    rng = np.random.default_rng(seed)
    size = (int(repetitions),) + r.shape
    if replace:
        above = rng.binomial(m, (r - 1) / (nn - 1.0), size=size)
    else:
        above = rng.hypergeometric(r - 1, nn - r, m, size=size)
    return (above + 1).astype(np.int64)


def simulate_item_sampling(
    rank: int,
    n: int,
    m: int,
    draws: int,
    *,
    seed: int | np.random.Generator = 0,
    replace: bool = True,
) -> np.ndarray:
    """Simulate the sampling protocol itself: ``draws`` sampled ranks of an item at true rank r.

    Each draw picks m of the n − 1 other items (uniformly, with or without replacement) and
    counts those ranked above the relevant item. A brute-force check of :func:`rank_pmf`; it
    costs O(draws · m) with replacement and O(draws · n) without.
    """
    r, nn, m = check_sampling(rank, n, m, replace)
    if r.ndim != 0:
        raise ValueError("simulate_item_sampling takes one true rank; call it once per rank")
    r1, n1 = int(r), int(nn)
    rng = np.random.default_rng(seed)
    # the n − 1 irrelevant items indexed 0..n−2 in ranking order: index j lies above r iff j < r − 1
    if replace:
        picked = rng.integers(0, n1 - 1, size=(draws, m))
    elif m == n1 - 1:
        picked = np.broadcast_to(np.arange(n1 - 1), (draws, m))
    else:
        picked = np.argpartition(rng.random((draws, n1 - 1)), m - 1, axis=1)[:, :m]
    return 1 + (picked < r1 - 1).sum(axis=1)
