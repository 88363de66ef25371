"""Paired significance tests over all system pairs, p-value curves and discriminative power.

Valcarce et al. (2018, Sec. 4) measure the discriminative power of a metric, after Sakai (2006),
by testing every pair of systems on the per-user scores of that metric: the permutation test
(Fisher's randomisation test) with the difference of means as statistic, two-sided, estimated by
Monte Carlo with 100,000 random permutations (Efron & Tibshirani 1993; Smucker et al. 2007). The
p-values of all pairs sorted in decreasing order form the *p-value curve*, and their sum, an
approximation of the area under that curve, is *DP* (lower means more discriminative).

The input everywhere is a score matrix ``scores`` of shape (systems × users): the per-user value
of one metric for each system, users aligned across systems.

*The paired permutation test.* For a pair ``(a, b)`` with per-user differences
``d_u = s_{a,u} - s_{b,u}``, under the null hypothesis the two labels of each user are
exchangeable, so each ``d_u`` keeps or flips its sign with probability 1/2. With
``T(d) = |Σ_u d_u|`` (equivalent to the absolute difference of means) the exact two-sided
p-value is ``#{ε ∈ {±1}^n : T(ε ⊙ d) ≥ T(d)} / 2^n``. We draw ``B`` random sign vectors ``ε``
and report

.. math:: \\hat p = \\frac{1 + \\#\\{b \\le B : T(\\varepsilon_b \\odot d) \\ge T(d)\\}}{1 + B},

which counts the observed labelling as one of the permutations: it is never zero and never
anti-conservative (Phipson & Smyth 2010), and it differs from ``#/B`` by less than ``1/B`` (1e-5
at the default ``B``), far below the Monte-Carlo standard error ``√(p(1-p)/B)`` (7e-4 at p=0.05).
All pairs share the same ``B`` sign vectors, so the whole test is one matrix product per chunk
of sign vectors: (chunk × users) @ (users × pairs), or, when the pairs outnumber their systems,
(chunk × users) @ (users × systems) with each pair's sum the difference of its two systems'
(the pairs the rounding could decide otherwise counted by pair: the same p-values,
:mod:`recmeta.metaeval.permutation_counts`). Sharing flips across pairs leaves every pair's
p-value exact in distribution; only the Monte-Carlo errors of different pairs become correlated.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special, stats
from tqdm import tqdm

from ..arrays import threaded_map, threaded_rows
from . import permutation_counts as counts

__all__ = [
    "system_pairs",
    "permutation_test",
    "paired_t_test",
    "wilcoxon_test",
    "holm",
    "monte_carlo_se",
    "normal_sign_pvalues",
    "t_sign_pvalues",
    "p_value_curve",
    "discriminative_power",
    "count_significant",
    "pairwise_tests",
    "evaluated_users",
    "pvalue_table",
    "permutation_tests",
    "exact_permutation_p",
    "bootstrap_t_pvalues",
    "bootstrap_dp_t",
]

Seed = int | np.random.Generator
Pairs = tuple[np.ndarray, np.ndarray]

#: Relative tolerance for "as extreme as observed": flipped sums within ``TIE_TOLERANCE · Σ|d|``
#: of the observed one count as ties (rounding of the sums is about ``n · 2.2e-16 · Σ|d|``).
TIE_TOLERANCE = 1e-9

#: Sign flips (float64) held at once by :func:`permutation_test` when no chunk size is given.
CHUNK_ELEMENTS = 4_000_000


def system_pairs(n_systems: int) -> Pairs:
    """All unordered pairs ``(a, b)`` with ``a < b``, in row-major order (``np.triu_indices``)."""
    if n_systems < 2:
        raise ValueError(f"need at least two systems to form a pair, got {n_systems}")
    a, b = np.triu_indices(n_systems, 1)
    return a, b


def permutation_test(
    scores: ArrayLike,
    *,
    seed: Seed,
    n_permutations: int = 100_000,
    pairs: Pairs | None = None,
    chunk_size: int | None = None,
    progress: bool = False,
) -> np.ndarray:
    """Two-sided paired permutation (randomisation) test for every pair of systems.

    Statistic: difference of means; Monte Carlo over ``n_permutations`` random sign flips shared
    by all pairs; p-value ``(1 + b) / (1 + B)`` (see the module docstring). Returns one p-value
    per pair, in the order of ``pairs`` (default :func:`system_pairs`). The same ``seed`` gives
    the same p-values, whatever ``chunk_size`` (permutations per matrix product; by default
    about 32 MB of sign flips per chunk).
    """
    a = _check_scores(scores)
    ia, ib = _pairs(pairs, a.shape[0])
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    n_users = a.shape[1]
    if chunk_size is None:
        chunk_size = max(256, CHUNK_ELEMENTS // n_users)
    elif chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    rng = np.random.default_rng(seed)
    diff_t = np.ascontiguousarray((a[ia] - a[ib]).T)  # users × pairs
    total = diff_t.sum(axis=0)
    observed = np.abs(total)
    d_abs = np.abs(diff_t).sum(axis=0)
    threshold = observed - TIE_TOLERANCE * d_abs
    # the flipped sums from the systems' scores when they are fewer than the pairs, the pairs
    # whose count the rounding could change counted from their differences (.permutation_counts)
    used = np.unique(np.concatenate([ia, ib]))
    by_system = used.size < ia.size
    if by_system:
        scores_t = np.ascontiguousarray(a[used].T)  # users × used systems
        ja, jb = np.searchsorted(used, ia), np.searchsorted(used, ib)
        margin = counts.system_margin(scores_t, ja, jb, d_abs)
        chunk_counts = np.zeros(ia.size, dtype=np.int64)
        unsure = np.zeros(ia.size, dtype=np.bool_)
    n_words = (n_users + 63) // 64  # 64 random bits per word, whole words per permutation
    hits = np.zeros(ia.size, dtype=np.int64)

    def chunks() -> Iterator[np.ndarray]:
        """The sign flips, chunk by chunk, drawn in order from ``rng``."""
        done = 0
        while done < n_permutations:
            c = min(chunk_size, n_permutations - done)
            # one random bit per (permutation, user): bit 1 flips the sign of that user's d_u
            # (raw words, so the stream does not depend on chunk_size)
            words = rng.bit_generator.random_raw(c * n_words).astype("<u8").reshape(c, n_words)
            flips = np.unpackbits(words.view(np.uint8), axis=1, count=n_users)
            done += c
            yield flips.astype(np.float64)

    def flipped(flips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A chunk's flips and their sums Σ_u ε_u x_u (of the pairs' or the systems' x)."""
        return flips, flips @ (scores_t if by_system else diff_t)

    with tqdm(total=n_permutations, disable=not progress, desc="permutations") as bar:
        # the next chunks' products computed while this one's flips are counted (threaded_map)
        for flips, sums in threaded_map(flipped, chunks()):
            # Σ_u ε_u d_u = Σ_u d_u - 2 Σ_{u flipped} d_u
            if not by_system:
                counts.count_by_pair(sums, total, threshold, hits)
            else:
                counts.count_by_system(sums, ja, jb, total, threshold, margin, chunk_counts, unsure)
                redo = np.flatnonzero(unsure)
                if redo.size:
                    chunk_counts[redo] = 0
                    again = chunk_counts[redo]
                    counts.count_by_pair(
                        flips @ diff_t[:, redo], total[redo], threshold[redo], again
                    )
                    chunk_counts[redo] = again
                hits += chunk_counts
            bar.update(flips.shape[0])
    return (hits + 1) / (n_permutations + 1)


def paired_t_test(scores: ArrayLike, pairs: Pairs | None = None) -> np.ndarray:
    """Two-sided paired Student t-test for every pair (``scipy.stats.ttest_rel``).

    A pair whose differences are all equal (e.g. identical runs) has an undefined statistic and
    gets NaN, as in scipy.
    """
    a = _check_scores(scores)
    ia, ib = _pairs(pairs, a.shape[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(stats.ttest_rel(a[ia], a[ib], axis=1).pvalue, dtype=np.float64)


def wilcoxon_test(scores: ArrayLike, pairs: Pairs | None = None) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank test for every pair (``scipy.stats.wilcoxon``).

    Zero differences are dropped (``zero_method="wilcox"``, scipy's default) and scipy picks the
    exact or normal-approximation p-value (``method="auto"``). Pairs with no non-zero difference
    get NaN.
    """
    a = _check_scores(scores)
    ia, ib = _pairs(pairs, a.shape[0])
    d = a[ia] - a[ib]
    p = np.full(ia.size, np.nan)
    live = (d != 0).any(axis=1)
    if live.any():
        p[live] = stats.wilcoxon(d[live], axis=1).pvalue
    return p


def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979), in the input order.

    With ascending p-values ``p_(1) ≤ … ≤ p_(m)``:
    ``p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j))``. Rejecting ``p̃ ≤ α`` controls the
    family-wise error rate at ``α`` over the ``m`` pairs.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p-values must be 1-d, got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p-values must lie in [0, 1] with no NaN; drop undefined tests first")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def monte_carlo_se(p: ArrayLike, n_permutations: int, *, doubled: bool = False) -> np.ndarray:
    """Standard error of a Monte-Carlo p-value from ``B`` random permutations (Efron &
    Tibshirani 1993, §15): ``√(p(1 − p)/B)`` for the share of permutations at least as extreme;
    with ``doubled``, for a two-sided p taken as twice a one-sided share,
    ``2·√((p/2)(1 − p/2)/B) = √(p(2 − p)/B)``."""
    x = np.asarray(p, dtype=float)
    if n_permutations < 1 or ((x < 0) | (x > 1)).any():
        raise ValueError(f"need B >= 1 and p in [0, 1], got B = {n_permutations}")
    return np.sqrt(x * ((2.0 if doubled else 1.0) - x) / n_permutations)


def normal_sign_pvalues(value: float, se: float) -> tuple[float, float]:
    """One-sided p-values of the sign of ``value`` from its normal interval (standard error
    ``se``): ``(P(Z ≥ value/se), P(Z ≤ value/se))`` under "no effect", i.e. against "θ ≤ 0" and
    against "θ ≥ 0"; with ``se == 0`` the sign is exact (p 0 or 1)."""
    if not (np.isfinite(value) and np.isfinite(se) and se >= 0):
        raise ValueError(f"need a finite value and a finite se >= 0, got {value!r}, {se!r}")
    if se == 0:
        return (0.0 if value > 0 else 1.0), (0.0 if value < 0 else 1.0)
    z = value / se
    return float(stats.norm.sf(z)), float(stats.norm.cdf(z))


def t_sign_pvalues(values: ArrayLike) -> tuple[float, float]:
    """One-sided p-values of the sign of a mean over R repetitions, Student's t with R − 1
    degrees of freedom: ``(P(T ≥ t), P(T ≤ t))``, t = mean / (sd/√R). Repetitions that are all
    equal decide the sign outright (p = 0 on its side, 1 on the other); fewer than two decide
    nothing."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return 1.0, 1.0
    mean, sd = float(v.mean()), float(v.std(ddof=1))
    if sd == 0:
        return (0.0 if mean > 0 else 1.0), (0.0 if mean < 0 else 1.0)
    t = mean / (sd / np.sqrt(v.size))
    return float(stats.t.sf(t, v.size - 1)), float(stats.t.cdf(t, v.size - 1))


def p_value_curve(p_values: ArrayLike) -> np.ndarray:
    """The p-values sorted in decreasing order (Valcarce et al. 2018, Sec. 4; Sakai 2006)."""
    p = np.asarray(p_values, dtype=np.float64)
    if np.isnan(p).any():
        raise ValueError("p-values contain NaN; a curve over undefined tests is meaningless")
    return np.sort(p)[::-1]


def discriminative_power(p_values: ArrayLike) -> float:
    """DP: the sum of the p-values of all system pairs; lower is more discriminative.

    Valcarce et al. (2018, Sec. 4): an approximation of the area under the p-value curve.
    Comparable only between metrics evaluated on the same systems and data.
    """
    return float(p_value_curve(p_values).sum())


def count_significant(
    p_values: ArrayLike, alpha: float = 0.05, *, adjust: str | None = "holm"
) -> int:
    """Number of pairs significant at level ``alpha``, Holm-adjusted by default (``adjust=None``
    counts raw p-values)."""
    p = np.asarray(p_values, dtype=np.float64)
    if adjust == "holm":
        p = holm(p)
    elif adjust is not None:
        raise ValueError(f"adjust must be 'holm' or None, got {adjust!r}")
    return int((p <= alpha).sum())


def pairwise_tests(
    scores: ArrayLike,
    systems: Sequence[str] | None = None,
    *,
    seed: Seed,
    n_permutations: int = 100_000,
    progress: bool = False,
) -> pd.DataFrame:
    """All pairs with their mean difference and permutation, t-test and Wilcoxon p-values,
    plus the Holm-adjusted permutation p-value."""
    a = _check_scores(scores)
    names = list(systems) if systems is not None else [str(k) for k in range(a.shape[0])]
    if len(names) != a.shape[0]:
        raise ValueError(f"{len(names)} system names for {a.shape[0]} rows of scores")
    ia, ib = system_pairs(a.shape[0])
    perm = permutation_test(a, seed=seed, n_permutations=n_permutations, progress=progress)
    return pd.DataFrame(
        {
            "a": [names[k] for k in ia],
            "b": [names[k] for k in ib],
            "mean_diff": a[ia].mean(axis=1) - a[ib].mean(axis=1),
            "p_permutation": perm,
            "p_holm": holm(perm),
            "p_t": paired_t_test(a),
            "p_wilcoxon": wilcoxon_test(a),
        }
    )


def evaluated_users(scores: ArrayLike) -> np.ndarray:
    """Drop the users no system is scored on (all-NaN columns) from a systems × users matrix.

    The metric engine marks users without a relevant test item with NaN for every system
    (:func:`recmeta.metrics.score_matrix`); a paired test compares systems on the other users.
    A user scored for some systems but not others is an error, not something to drop.
    """
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"scores must be a (systems × users) matrix, got shape {a.shape}")
    missing = np.isnan(a)
    partial = missing.any(axis=0) & ~missing.all(axis=0)
    if partial.any():
        raise ValueError(
            f"{int(partial.sum())} users are scored for some systems but not others "
            f"(e.g. column {int(np.flatnonzero(partial)[0])}); a paired test needs every system "
            "scored on the same users"
        )
    return a[:, ~missing.all(axis=0)]


def exact_permutation_p(differences: ArrayLike) -> float:
    """Exact two-sided p-value of the paired permutation test by enumerating all ``2^n`` signs.

    ``p = #{ε ∈ {±1}^n : |Σ ε_u d_u| ≥ |Σ d_u|} / 2^n`` with the tie tolerance of
    :func:`permutation_test`; feasible for ``n ≤ 20`` users. The reference that the Monte-Carlo
    estimate of :func:`permutation_test` approximates (Efron & Tibshirani 1993, Ch. 15).
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or d.size < 1:
        raise ValueError(f"differences must be a non-empty 1-d array, got shape {d.shape}")
    if d.size > 20:
        raise ValueError(
            f"exact enumeration of 2^{d.size} sign vectors is too large; use permutation_test"
        )
    if not np.isfinite(d).all():
        raise ValueError("differences contain NaN or infinity")
    signs = 1.0 - 2.0 * ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1)
    threshold = abs(d.sum()) - TIE_TOLERANCE * np.abs(d).sum()
    return float(np.mean(np.abs(signs @ d) >= threshold))


def bootstrap_t_pvalues(
    scores: ArrayLike, counts: ArrayLike, pairs: Pairs | None = None
) -> np.ndarray:
    """Paired t-test p-value of every pair in every bootstrap resample of the users: (B × pairs).

    ``scores`` is systems × users, ``counts`` (B × users) the draws of each user in each
    resample (:func:`recmeta.metaeval.bootstrap.resample_counts`). For a pair with differences
    ``d_u`` the resample's mean ``m = Σ c_u d_u / n`` and variance
    ``s² = (Σ c_u d_u² / n − m²) · n/(n−1)`` give ``t = m / (s/√n)`` and the two-sided
    p-value of Student's t with ``n − 1`` degrees of freedom — ``scipy.stats.ttest_rel`` on the
    resampled users, without building them (two matrix products for all pairs and resamples).
    A pair with no spread in a resample gets p = 1 when its mean difference is 0 and p = 0
    otherwise (scipy returns NaN there).
    """
    a = _check_scores(scores)
    ia, ib = _pairs(pairs, a.shape[0])
    c = np.asarray(counts, dtype=np.float64)
    n = a.shape[1]
    if c.ndim != 2 or c.shape[1] != n:
        raise ValueError(f"counts must be (resamples × {n} users), got shape {c.shape}")
    if n < 2:
        raise ValueError("a paired t-test needs at least two users")
    d_t = np.ascontiguousarray((a[ia] - a[ib]).T)  # users × pairs
    total = c.sum(axis=1, keepdims=True)
    # the two products side by side, and Student's t by blocks of resamples (threaded_map)
    sums, squares = threaded_map(lambda x: c @ x, [d_t, d_t * d_t])
    mean = sums / total
    var = np.maximum(squares / total - mean**2, 0.0) * total / (total - 1.0)
    scale = np.maximum(np.abs(d_t).max(axis=0, initial=0.0), 1e-300)
    flat = var <= (1e-12 * scale) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(mean) / np.sqrt(np.where(flat, 1.0, var) / total)
    p = threaded_rows(lambda df, x: 2.0 * special.stdtr(df - 1.0, -x), total, t)
    return np.where(flat, np.where(np.abs(mean) <= 1e-12 * scale, 1.0, 0.0), p)


def bootstrap_dp_t(scores: ArrayLike, counts: ArrayLike, pairs: Pairs | None = None) -> np.ndarray:
    """DP (sum over pairs of paired t-test p-values) in every bootstrap resample of the users.

    The sum over pairs of :func:`bootstrap_t_pvalues`; a float array of length B. The t-test
    stands in for the permutation test, whose resampling inside a bootstrap would cost ``B``
    permutation tests; with hundreds of users the two p-values are close (Smucker et al. 2007).
    """
    return bootstrap_t_pvalues(scores, counts, pairs).sum(axis=1)


_TESTS = {"permutation", "t", "wilcoxon"}


def pvalue_table(
    matrices: Mapping[str, ArrayLike],
    systems: Sequence[str],
    *,
    seed: Seed,
    n_permutations: int = 100_000,
    tests: Sequence[str] = ("permutation",),
    progress: bool = False,
) -> pd.DataFrame:
    """p-values of every system pair for every metric, as a tidy frame.

    ``matrices`` maps a metric name to its systems × users score matrix (e.g. the output of
    :func:`recmeta.metrics.score_matrices`); users without any score are dropped with
    :func:`evaluated_users`. ``tests`` picks among ``"permutation"``, ``"t"`` (paired t-test)
    and ``"wilcoxon"``. Columns: metric, test, a, b, p. The permutation test of every metric
    uses the same ``seed``.
    """
    unknown = set(tests) - _TESTS
    if unknown:
        raise ValueError(f"unknown test(s) {sorted(unknown)}; choose from {sorted(_TESTS)}")
    names = list(systems)
    ia, ib = system_pairs(len(names))
    kept: dict[str, np.ndarray] = {}
    for metric, matrix in matrices.items():
        a = evaluated_users(matrix)
        if a.shape[0] != len(names):
            raise ValueError(f"{metric}: {a.shape[0]} rows of scores for {len(names)} systems")
        kept[metric] = a
    perm = (
        permutation_tests(kept, seed=seed, n_permutations=n_permutations, progress=progress)
        if "permutation" in tests
        else {}
    )
    frames = []
    for metric, a in kept.items():
        for test in tests:
            if test == "permutation":
                p = perm[metric]
            elif test == "t":
                p = paired_t_test(a)
            else:
                p = wilcoxon_test(a)
            frames.append(
                pd.DataFrame(
                    {
                        "metric": metric,
                        "test": test,
                        "a": [names[k] for k in ia],
                        "b": [names[k] for k in ib],
                        "p": p,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def permutation_tests(
    matrices: Mapping[str, ArrayLike],
    *,
    seed: Seed,
    n_permutations: int = 100_000,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """:func:`permutation_test` of every pair of systems of each (systems × users) matrix, with
    one ``seed``: {name: p-values in the order of :func:`system_pairs`}.

    The matrices with as many users are stacked into one call, their pairs kept within each
    matrix: the sign flips of user ``u`` are those a call per matrix draws with the same
    ``seed``, so the p-values are the same, and the flips are drawn once instead of once per
    matrix.
    """
    checked = {name: _check_scores(a) for name, a in matrices.items()}
    out: dict[str, np.ndarray] = {}
    by_shape: dict[tuple[int, ...], list[str]] = {}
    for metric, a in checked.items():
        by_shape.setdefault(a.shape, []).append(metric)
    for group in tqdm(by_shape.values(), disable=not progress, desc="permutation tests"):
        n_sys = checked[group[0]].shape[0]
        ia, ib = system_pairs(n_sys)
        offset = np.repeat(np.arange(len(group)) * n_sys, ia.size)
        stacked = np.concatenate([checked[m] for m in group])
        pairs = (np.tile(ia, len(group)) + offset, np.tile(ib, len(group)) + offset)
        p = permutation_test(stacked, seed=seed, n_permutations=n_permutations, pairs=pairs)
        out.update(zip(group, p.reshape(len(group), ia.size), strict=True))
    return {name: out[name] for name in checked}  # in the order given


def _check_scores(scores: ArrayLike) -> np.ndarray:
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"scores must be a (systems × users) matrix, got shape {a.shape}")
    if a.shape[0] < 2 or a.shape[1] < 1:
        raise ValueError(f"need at least two systems and one user, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(
            "scores contain NaN or infinity; a paired test needs every system scored on the same "
            "users: keep the users every system is scored on, e.g. "
            "scores[:, np.isfinite(scores).all(axis=0)]"
        )
    return a


def _pairs(pairs: Pairs | None, n_systems: int) -> Pairs:
    if pairs is None:
        return system_pairs(n_systems)
    ia, ib = (np.asarray(x, dtype=np.int64) for x in pairs)
    if ia.shape != ib.shape or ia.ndim != 1:
        raise ValueError("pairs must be two 1-d index arrays of the same length")
    if ia.size and (min(ia.min(), ib.min()) < 0 or max(ia.max(), ib.max()) >= n_systems):
        raise ValueError(f"pair indices must lie in [0, {n_systems})")
    return ia, ib
