r"""Statistics for comparing systems on per-user scores.

Everything takes a score matrix ``scores`` of shape (systems × users) — one metric, the users
every system is scored on — as :mod:`recmeta.metaeval.significance` does, and adds what a comparison
needs beyond the paired tests that module holds:

* multiple-comparison corrections: Holm (1979; :func:`recmeta.metaeval.significance.holm`) and
  Benjamini & Hochberg (1995; :func:`scipy.stats.false_discovery_control`), :func:`adjust`;
* confidence intervals of each system's mean and of each pair's mean difference: Student's t
  and the bootstrap over users (:func:`scipy.stats.bootstrap`, BCa by default; Efron &
  Tibshirani 1993), :func:`mean_intervals`, :func:`difference_intervals`;
* the standardised mean difference of a pair, :math:`d_z = \bar d / s_d`, with the exact
  interval of the noncentral t (Steiger & Fouladi 1997) and a bootstrap interval;
* the randomised Tukey HSD test (Carterette 2012; Sakai 2014), which controls the family-wise
  error over all pairs of systems at once, :func:`tukey_hsd`;
* a compact letter display of the significant pairs (Piepho 2004), :func:`compact_letters`;
* the sample size of a paired t-test, after Sakai's (2016) topic-set-size design:
  :func:`users_needed`, :func:`detectable_difference`, from the variance of the per-user
  differences, pooled over pairs by :func:`pooled_difference_sd`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import optimize, stats
from statsmodels.stats.power import TTestPower

from recmeta.metaeval import significance
from recmeta.metaeval.bootstrap import IntervalMethod, scipy_interval

__all__ = [
    "ADJUSTMENTS",
    "adjust",
    "mean_intervals",
    "difference_intervals",
    "smd_interval",
    "tukey_hsd",
    "compact_letters",
    "pooled_difference_sd",
    "users_needed",
    "detectable_difference",
]

#: multiple-comparison corrections known to :func:`adjust`
ADJUSTMENTS = ("holm", "bh", "none")

#: relative tolerance for "a shuffled range at least the observed difference" (rounding of means)
TIE_TOLERANCE = 1e-9

Seed = int | np.random.Generator


def adjust(p_values: ArrayLike, method: str = "holm") -> np.ndarray:
    """Adjusted p-values over one family of tests, in the input order; NaN stays NaN.

    ``"holm"``: Holm's step-down family-wise correction
    (:func:`recmeta.metaeval.significance.holm`);
    ``"bh"``: Benjamini & Hochberg's false discovery rate, ``p̃_(i) = min_{j ≥ i} m p_(j) / j``
    (:func:`scipy.stats.false_discovery_control`); ``"none"``: the raw p-values. Undefined tests
    (NaN, e.g. a t-test of two identical systems) are left out of the family.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p-values must be 1-d, got shape {p.shape}")
    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown correction {method!r}; choose from {ADJUSTMENTS}")
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if not ok.any():
        return out
    if method == "holm":
        out[ok] = significance.holm(p[ok])
    elif method == "bh":
        out[ok] = stats.false_discovery_control(p[ok], method="bh")
    else:
        out[ok] = p[ok]
    return out


def mean_intervals(
    scores: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: Seed = 0,
    method: IntervalMethod = "BCa",
) -> pd.DataFrame:
    """Each system's mean score with a Student-t and a bootstrap interval.

    t: ``x̄ ± t_{n−1, (1+c)/2} s/√n`` (``scipy.stats.ttest_1samp(...).confidence_interval``);
    bootstrap: ``scipy.stats.bootstrap`` of the mean over users (``method``, default BCa).
    Columns mean, sd, users, t_low, t_high, boot_low, boot_high; one row per system.
    """
    a = _matrix(scores)
    n = a.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant rows: scipy's precision note
        ci = stats.ttest_1samp(a, 0.0, axis=1).confidence_interval(confidence)
    low, high = scipy_interval(
        a, np.mean, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )
    sd = a.std(axis=1, ddof=1) if n > 1 else np.full(a.shape[0], np.nan)
    t_low, t_high = np.asarray(ci.low, dtype=float), np.asarray(ci.high, dtype=float)
    flat = sd == 0
    mean = a.mean(axis=1)
    return pd.DataFrame(
        {
            "mean": mean,
            "sd": sd,
            "users": n,
            "t_low": np.where(flat, mean, t_low),
            "t_high": np.where(flat, mean, t_high),
            "boot_low": low,
            "boot_high": high,
        }
    )


def _smd(d: np.ndarray, axis: int = -1) -> np.ndarray:
    """d_z = mean / sd (ddof 1) along ``axis``; 0 when every difference is 0, ±inf when constant."""
    m = d.mean(axis=axis)
    s = d.std(axis=axis, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            s > 0, m / np.where(s > 0, s, 1.0), np.where(m == 0, 0.0, np.sign(m) * np.inf)
        )


def smd_interval(smd: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact interval of the standardised mean difference d_z of ``n`` paired differences.

    Under normal differences ``t = d_z √n`` follows the noncentral t with ``n − 1`` degrees of
    freedom and noncentrality ``δ = √n μ/σ``; the interval inverts its distribution function,
    ``F(t; δ_low) = (1+c)/2`` and ``F(t; δ_high) = (1−c)/2``, and divides by √n (Steiger &
    Fouladi 1997; Cumming & Finch 2001).
    """
    if n < 2 or not np.isfinite(smd):
        return float("nan"), float("nan")
    t = smd * np.sqrt(n)
    df = n - 1
    # the bracket: a few standard deviations of t around δ = t (var t ≈ 1 + δ²/(2 df)); boost's
    # noncentral t gives NaN far in its tails, which are on the known side of the root
    width = (abs(stats.norm.ppf((1 - confidence) / 2)) + 2.0) * np.sqrt(1 + t * t / (2 * df))

    def cdf(delta: float) -> float:
        v = float(stats.nct.cdf(t, df, delta))
        return v if np.isfinite(v) else (0.0 if delta > t else 1.0)

    def root(level: float) -> float:
        lo, hi = t - width, t + width
        while cdf(lo) < level:
            lo -= width
        while cdf(hi) > level:
            hi += width
        return optimize.brentq(lambda delta: cdf(delta) - level, lo, hi, xtol=1e-10)

    with np.errstate(all="ignore"):
        low = root((1 + confidence) / 2)
        high = root((1 - confidence) / 2)
    return low / np.sqrt(n), high / np.sqrt(n)


def difference_intervals(
    scores: ArrayLike,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: Seed = 0,
    method: IntervalMethod = "BCa",
) -> pd.DataFrame:
    """Effect sizes of every pair ``(a, b)``, with their intervals; ``d_u = s_{a,u} − s_{b,u}``.

    * ``mean_diff`` = d̄, with the paired-t interval ``d̄ ± t_{n−1} s_d/√n``
      (``scipy.stats.ttest_rel(...).confidence_interval``) and a bootstrap interval
      (``scipy.stats.bootstrap`` of the mean of d);
    * ``smd`` = d_z = d̄ / s_d, Cohen's standardised mean difference of paired data, with the
      noncentral-t interval (:func:`smd_interval`) and a bootstrap interval;
    * ``sd_diff`` = s_d, the input of the sample-size design.
    """
    a = _matrix(scores)
    ia, ib = significance.system_pairs(a.shape[0]) if pairs is None else pairs
    d = a[ia] - a[ib]
    n = a.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # identical systems: scipy's precision note
        ci = stats.ttest_rel(a[ia], a[ib], axis=1).confidence_interval(confidence)
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1) if n > 1 else np.full(d.shape[0], np.nan)
    flat = sd == 0
    t_low = np.where(flat, mean, np.asarray(ci.low, dtype=float))
    t_high = np.where(flat, mean, np.asarray(ci.high, dtype=float))
    b_low, b_high = scipy_interval(
        d, np.mean, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )
    smd = _smd(d)
    s_low, s_high = np.array([smd_interval(s, n, confidence) for s in smd]).reshape(-1, 2).T
    live = ~flat
    sb_low = np.where(flat, smd, np.nan)
    sb_high = sb_low.copy()
    if live.any():
        lo, hi = scipy_interval(
            d[live], _smd, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
        )
        sb_low[live], sb_high[live] = lo, hi
    return pd.DataFrame(
        {
            "mean_diff": mean,
            "t_low": t_low,
            "t_high": t_high,
            "boot_low": b_low,
            "boot_high": b_high,
            "sd_diff": sd,
            "smd": smd,
            "smd_low": s_low,
            "smd_high": s_high,
            "smd_boot_low": sb_low,
            "smd_boot_high": sb_high,
        }
    )


def tukey_hsd(
    scores: ArrayLike,
    *,
    seed: Seed,
    n_permutations: int = 10_000,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    chunk_size: int | None = None,
) -> np.ndarray:
    r"""Randomised Tukey HSD: family-wise p-values of every pair of systems (Carterette 2012).

    Under the null hypothesis that the systems are interchangeable, each user's scores can be
    shuffled among the systems. For ``B`` random shuffles (one permutation per user) record the
    range of the system means, :math:`R_b = \max_s \bar x_s - \min_s \bar x_s`; a pair with
    observed difference :math:`|\bar x_a - \bar x_b|` gets

    .. math:: p_{ab} = \frac{1 + \#\{b : R_b \ge |\bar x_a - \bar x_b|\}}{1 + B}.

    Comparing every pair with the distribution of the *largest* difference controls the
    family-wise error over all pairs (Sakai 2014 recommends it for IR evaluations of many systems).
    """
    a = _matrix(scores)
    if a.shape[0] < 2:
        raise ValueError("the Tukey HSD test needs at least two systems")
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    ia, ib = significance.system_pairs(a.shape[0]) if pairs is None else pairs
    means = a.mean(axis=1)
    observed = np.abs(means[ia] - means[ib])
    threshold = observed - TIE_TOLERANCE * np.abs(a).max(initial=0.0)
    n_sys, n_users = a.shape
    if chunk_size is None:
        chunk_size = max(16, 2_000_000 // (n_sys * n_users))
    rng = np.random.default_rng(seed)
    base = np.ascontiguousarray(a.T)  # users × systems
    ranges = np.empty(n_permutations)
    done = 0
    while done < n_permutations:
        c = min(chunk_size, n_permutations - done)
        shuffled = rng.permuted(np.broadcast_to(base, (c, n_users, n_sys)), axis=2)
        m = shuffled.mean(axis=1)
        ranges[done : done + c] = m.max(axis=1) - m.min(axis=1)
        done += c
    ranges.sort()
    hits = n_permutations - np.searchsorted(ranges, threshold, side="left")
    return (hits + 1) / (n_permutations + 1)


def compact_letters(means: ArrayLike, significant: ArrayLike) -> list[str]:
    """Compact letter display: systems sharing a letter are not significantly different.

    ``significant`` is a symmetric boolean (systems × systems) matrix. Insert-and-absorb
    (Piepho 2004): start from one group holding every system; for each significant pair, split
    every group that holds both into the group without the one and the group without the other;
    drop groups contained in others. Letters go to the groups in order of their best mean
    ('a' to the group of the highest mean).
    """
    m = np.asarray(means, dtype=np.float64)
    sig = np.asarray(significant, dtype=bool)
    k = m.size
    if sig.shape != (k, k):
        raise ValueError(f"significant must be a {k} × {k} matrix, got shape {sig.shape}")
    groups: list[frozenset[int]] = [frozenset(range(k))]
    for i, j in zip(*np.nonzero(np.triu(sig | sig.T, 1)), strict=True):
        split: list[frozenset[int]] = []
        for g in groups:
            if i in g and j in g:
                split += [g - {i}, g - {j}]
            else:
                split.append(g)
        unique = list(dict.fromkeys(split))
        groups = [g for g in unique if g and not any(g < h for h in unique)]
    order = sorted(groups, key=lambda g: (-max(m[list(g)]), sorted(g)))
    names = [_letter(n) for n in range(len(order))]
    return ["".join(n for n, g in zip(names, order, strict=True) if s in g) for s in range(k)]


def _letter(n: int) -> str:
    """a, b, ..., z, aa, ab, ..."""
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def pooled_difference_sd(scores: ArrayLike) -> float:
    r"""The standard deviation of a paired difference, pooled over all pairs of systems.

    With residuals :math:`e_{su} = x_{su} - \bar x_{s\cdot} - \bar x_{\cdot u} + \bar x` of the
    two-way layout (systems × users, no replication), the residual variance is
    :math:`V_E = \sum e^2 / ((S-1)(n-1))` and the mean of the pairs' difference variances is
    exactly :math:`2 V_E` — the estimate Sakai (2016) plugs into the paired t-test's sample-size
    formula. Returns :math:`\sqrt{2 V_E}`.
    """
    a = _matrix(scores)
    s, n = a.shape
    if n < 2:
        raise ValueError("need at least two users to estimate a variance")
    e = a - a.mean(axis=1, keepdims=True) - a.mean(axis=0, keepdims=True) + a.mean()
    return float(np.sqrt(2.0 * (e**2).sum() / ((s - 1) * (n - 1))))


def _power(effect: float, n: float, alpha: float) -> float:
    """Power of the two-sided paired t-test (``statsmodels.stats.power.TTestPower.power``).

    Where the noncentral t underflows (NaN, tiny n with a huge effect) the normal approximation
    ``Φ(λ − c) + Φ(−λ − c)``, ``λ = √n · effect``, ``c = t_{n−1, 1−α/2}`` stands in.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(np.squeeze(TTestPower().power(effect, n, alpha, alternative="two-sided")))
    if np.isfinite(value):
        return value
    lam, c = np.sqrt(n) * effect, stats.t.ppf(1 - alpha / 2, n - 1)
    return float(stats.norm.cdf(lam - c) + stats.norm.cdf(-lam - c))


def users_needed(
    sd: ArrayLike, difference: float | ArrayLike, *, alpha: float = 0.05, power: float = 0.8
) -> np.ndarray:
    r"""Smallest number of users for a two-sided paired t-test to detect ``difference``.

    The per-user differences have standard deviation σ (``sd``); the test at level α detects a
    true mean difference Δ with probability at least ``power`` when ``n`` is at least the
    smallest integer with :math:`P(|T| > t_{n-1, 1-\alpha/2}) \ge 1 - \beta`, T noncentral t
    with ``n − 1`` degrees of freedom and noncentrality :math:`\sqrt n \, \Delta/\sigma` (the
    power of ``statsmodels.stats.power.TTestPower``, which grows with n: doubling, then
    bisection over the integers). This is Sakai's (2016) topic-set-size design for the paired
    t-test, with users in the place of topics. NaN where σ is 0 or not finite; ``inf`` where
    Δ is 0.
    """
    s, delta = np.broadcast_arrays(np.asarray(sd, dtype=float), np.asarray(difference, dtype=float))
    out = np.full(s.shape, np.nan)
    for idx in np.ndindex(s.shape):
        if not np.isfinite(s[idx]) or s[idx] <= 0 or not np.isfinite(delta[idx]):
            continue
        es = abs(delta[idx]) / s[idx]
        if es == 0:
            out[idx] = np.inf
            continue
        lo: float = 1  # power(lo) < target <= power(hi) once the loop ends
        hi: float = 2
        while _power(es, hi, alpha) < power:
            lo, hi = hi, 2 * hi
            if hi > 2**62:
                hi = np.inf
                break
        while np.isfinite(hi) and hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if _power(es, mid, alpha) >= power else (mid, hi)
        out[idx] = hi
    return out


def detectable_difference(
    sd: ArrayLike, n: int, *, alpha: float = 0.05, power: float = 0.8
) -> np.ndarray:
    """The smallest true mean difference a paired t-test on ``n`` users detects with ``power``.

    The inverse of :func:`users_needed`: Δ = σ · e, with e the effect size at which the power of
    the test on n users (``statsmodels.stats.power.TTestPower``) reaches ``power``.
    """
    if n < 2:
        raise ValueError(f"a paired t-test needs at least two users, got {n}")
    hi = 1.0
    while _power(hi, n, alpha) < power:
        hi *= 2
    es = optimize.brentq(lambda e: _power(e, n, alpha) - power, 0.0, hi, xtol=1e-12)
    return np.asarray(sd, dtype=float) * es


def _matrix(scores: ArrayLike) -> np.ndarray:
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"scores must be a (systems × users) matrix, got shape {a.shape}")
    if a.shape[1] < 1:
        raise ValueError("scores hold no user")
    if not np.isfinite(a).all():
        raise ValueError("scores contain NaN or infinity; keep the users every system is scored on")
    return a
