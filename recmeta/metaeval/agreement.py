"""Agreement between system orderings: Kendall's τ, robustness curves and τ matrices.

Valcarce et al. (2018, Sec. 4) call a metric robust when the ordering of systems it gives on an
incomplete test set agrees with the ordering it gives on the full one; agreement is Kendall's τ
(Kendall 1938), averaged over the random samples of each test-set size. We use τ-b, the variant
that accounts for ties (as ``scipy.stats.kendalltau`` does by default):

.. math::

    \\tau_b = \\frac{\\sum_{i<j} \\operatorname{sgn}(x_i - x_j)\\,\\operatorname{sgn}(y_i - y_j)}
                  {\\sqrt{\\sum_{i<j} \\operatorname{sgn}(x_i - x_j)^2
                          \\sum_{i<j} \\operatorname{sgn}(y_i - y_j)^2}}

All functions work on plain arrays of system scores (one score per system, e.g. the mean of a
metric over users as given by :func:`recmeta.metrics.aggregate`, arithmetic or geometric) and
are vectorised over any number of leading axes (samples, metrics, ...).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd
from numba import njit, prange
from numpy.typing import ArrayLike
from scipy import stats

__all__ = [
    "TauAgainst",
    "kendall_tau",
    "mean_band",
    "mean_with_others",
    "nan_kendall_tau",
    "offdiag",
    "pairs_ordered_alike",
    "robustness_curve",
    "robustness_curves",
    "tau_matrices",
    "tau_matrix",
]


def kendall_tau(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Kendall's τ-b between the last axes of ``x`` and ``y`` (broadcast over leading axes).

    ``x`` and ``y`` hold one score per system on their last axis; leading axes broadcast, so
    ``kendall_tau(samples × systems, reference)`` gives one τ per sample. Returns NaN where one
    side has all systems tied (τ-b is undefined there, as in scipy). Costs O(n²) in the number
    of systems ``n``, which is meant to be small (tens).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(
            f"x and y must score the same systems: last axes have {x.shape[-1]} and {y.shape[-1]}"
        )
    n = x.shape[-1]
    if n < 2:
        raise ValueError("Kendall's tau needs at least two systems")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("system scores contain NaN; score every system before correlating")
    i, j = np.triu_indices(n, 1)
    sx = np.sign(x[..., i] - x[..., j])
    sy = np.sign(y[..., i] - y[..., j])
    num = (sx * sy).sum(axis=-1)
    den = np.sqrt((sx * sx).sum(axis=-1) * (sy * sy).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return np.clip(tau, -1.0, 1.0)


def nan_kendall_tau(x: ArrayLike, y: ArrayLike) -> np.ndarray:
    """:func:`kendall_tau` along the last axis, NaN where either side misses a system's score.

    Bootstrap resamples of users can leave a system without a scored user (its mean is NaN);
    those orderings get τ = NaN instead of an error, every other one its τ-b. The leading axes
    broadcast. Compiled passes over the orderings (thousands of resamples × measures,
    :class:`TauAgainst`) count each one's signs in integers, so the values are those of
    :func:`kendall_tau` to the last digit.
    """
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    if x.ndim == 0 or x.shape[-1] < 2:
        raise ValueError("Kendall's tau needs at least two systems")
    return TauAgainst(y)(x)


class TauAgainst:
    """:func:`nan_kendall_tau` of many orderings against one ``reference`` (..., systems).

    The reference's sign of every pair of systems is found once, so each call compares only the
    orderings given (the bootstrap replicates of a mask against those of the full test set);
    the counts of signs are the same integers, so the values are :func:`nan_kendall_tau`'s.
    """

    def __init__(self, reference: ArrayLike) -> None:
        y = np.asarray(reference, dtype=np.float64)
        if y.ndim == 0 or y.shape[-1] < 2:
            raise ValueError("the reference must hold at least two systems on its last axis")
        self.shape = y.shape
        rows = np.ascontiguousarray(y.reshape(-1, y.shape[-1]))
        n = rows.shape[1]
        self._signs = np.empty((rows.shape[0], n * (n - 1) // 2), dtype=np.int8)
        self._ny = np.empty(rows.shape[0], dtype=np.int64)
        _pair_signs(rows, self._signs, self._ny)

    def __call__(self, x: ArrayLike) -> np.ndarray:
        """τ-b of each ordering of ``x`` (the reference's shape) with the reference's."""
        x = np.asarray(x, dtype=np.float64)
        if x.shape != self.shape:
            raise ValueError(f"x must have the reference's shape {self.shape}, got {x.shape}")
        out = np.empty(self._ny.size)
        _tau_against(np.ascontiguousarray(x.reshape(self._ny.size, -1)), self._signs, self._ny, out)
        return out.reshape(self.shape[:-1])


@njit(cache=True, nogil=True, parallel=True)
def _pair_signs(y: np.ndarray, signs: np.ndarray, ny: np.ndarray) -> None:  # pragma: no cover
    """Each row's sign of y_i − y_j for i < j (row-major pairs), and their count of non-ties;
    ny = −1 marks a row with a non-finite score."""
    m, n = y.shape
    for r in prange(m):
        finite = True
        for i in range(n):
            if not np.isfinite(y[r, i]):
                finite = False
        p = 0
        count = 0
        for i in range(n - 1):
            for j in range(i + 1, n):
                sy = np.sign(y[r, i] - y[r, j]) if finite else 0.0
                signs[r, p] = int(sy)
                count += int(sy * sy)
                p += 1
        ny[r] = count if finite else -1


@njit(cache=True, nogil=True, parallel=True)
def _tau_against(x, signs, ny, out):  # pragma: no cover - compiled
    """τ-b of each row of ``x`` against the reference row whose pair signs are ``signs``
    (Σ sign·sign over √(non-ties of x · non-ties of y)), NaN where either side is not finite
    or ties every system."""
    m, n = x.shape
    for r in prange(m):
        finite = ny[r] >= 0
        for i in range(n):
            if not np.isfinite(x[r, i]):
                finite = False
        if not finite:
            out[r] = np.nan
            continue
        num = 0
        nx = 0
        p = 0
        for i in range(n - 1):
            for j in range(i + 1, n):
                sx = int(np.sign(x[r, i] - x[r, j]))
                num += sx * signs[r, p]
                nx += sx * sx
                p += 1
        den = np.sqrt(float(nx) * float(ny[r]))
        out[r] = min(1.0, max(-1.0, num / den)) if den > 0 else np.nan


def tau_matrices(scores: ArrayLike) -> np.ndarray:
    """τ-b between every pair of rows of ``scores`` (..., k, systems): (..., k, k) matrices.

    The diagonal is 1; each pair is computed once (the upper triangle, mirrored) with
    :func:`nan_kendall_tau`, so a pair with a missing system score is NaN. Vectorised over the
    leading axes, e.g. (resamples × measures × systems) gives one matrix per bootstrap resample
    (Valcarce et al. 2018, Figs. 1 and 5; Valcarce et al. 2020, Fig. 1).
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim < 2:
        raise ValueError(f"scores must be (..., rows × systems), got shape {s.shape}")
    k = s.shape[-2]
    iu, ju = np.triu_indices(k, 1)
    out = np.broadcast_to(np.eye(k), (*s.shape[:-2], k, k)).copy()
    t = nan_kendall_tau(s[..., iu, :], s[..., ju, :])
    out[..., iu, ju] = t
    out[..., ju, iu] = t
    return out


def pairs_ordered_alike(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, int]:
    """How many pairs of systems ``y`` orders as ``x`` does, and how many pairs there are.

    A pair ``i < j`` counts when ``sgn(x_i − x_j) = sgn(y_i − y_j)``: both sides put the same
    system ahead, or both tie the two. Without ties it is the number of concordant pairs ``C``
    of Kendall's τ, ``τ = (2C − P) / P`` over ``P = n(n − 1)/2`` pairs. ``x`` and ``y`` hold one
    score per system on their last axis; leading axes broadcast (one count each).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape[-1:] != y.shape[-1:] or x.ndim == 0:
        raise ValueError(
            f"x and y must score the same systems on their last axis, got shapes {x.shape} "
            f"and {y.shape}"
        )
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("system scores contain NaN; score every system before comparing orders")
    i, j = np.triu_indices(x.shape[-1], 1)
    alike = np.sign(x[..., i] - x[..., j]) == np.sign(y[..., i] - y[..., j])
    return alike.sum(axis=-1), int(i.size)


def offdiag(matrices: ArrayLike) -> np.ndarray:
    """The k(k−1)/2 entries above the diagonal of (..., k, k) matrices, row by row."""
    t = np.asarray(matrices)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"need square matrices on the last two axes, got shape {t.shape}")
    i, j = np.triu_indices(t.shape[-1], 1)
    return t[..., i, j]


def mean_with_others(matrices: ArrayLike) -> np.ndarray:
    """Each row's mean τ with the other rows of (..., k, k) τ matrices: (..., k).

    ``(Σ_j t_ij − t_ii) / (k − 1)``: how closely one metric (or cut-off) orders the systems like
    the others; the lowest is the one furthest from the rest (Valcarce et al. 2018, Sec. 7).
    """
    t = np.asarray(matrices, dtype=np.float64)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2] or t.shape[-1] < 2:
        raise ValueError(
            f"need square matrices of at least 2 × 2 on the last two axes, got {t.shape}"
        )
    k = t.shape[-1]
    return (t.sum(axis=-1) - np.diagonal(t, axis1=-2, axis2=-1)) / (k - 1)


def tau_matrix(scores: ArrayLike, labels: Sequence[str] | None = None) -> pd.DataFrame:
    """Kendall τ-b between every pair of rows of ``scores`` (k × systems).

    Each row scores the same systems under one metric (or one cut-off): the result is the τ
    matrix among metrics of Valcarce et al. (2018, Fig. 5) or among cut-offs (Fig. 1).
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2:
        raise ValueError(f"scores must be 2-d (metrics × systems), got shape {s.shape}")
    names: list[Hashable] = list(labels) if labels is not None else list(range(s.shape[0]))
    if len(names) != s.shape[0]:
        raise ValueError(f"{len(names)} labels for {s.shape[0]} rows of scores")
    tau = kendall_tau(s[:, None, :], s[None, :, :])
    return pd.DataFrame(tau, index=names, columns=names)


def mean_band(values: ArrayLike, level: float = 0.95, axis: int = -1) -> tuple[np.ndarray, ...]:
    """Mean and Student-t confidence interval of the mean along ``axis``.

    ``mean ± t_{(1+level)/2, m-1} · s / √m`` for ``m`` samples with standard deviation ``s``
    (ddof=1). With one sample the half-width is NaN. Returns ``(mean, low, high)``.
    """
    v = np.asarray(values, dtype=np.float64)
    m = v.shape[axis]
    centre = v.mean(axis=axis)
    if m < 2:
        half = np.full_like(centre, np.nan)
    else:
        sd = v.std(axis=axis, ddof=1)
        half = stats.t.ppf(0.5 + level / 2, m - 1) * sd / np.sqrt(m)
    return centre, centre - half, centre + half


def robustness_curve(
    scores: ArrayLike,
    reference: ArrayLike,
    share: ArrayLike,
    *,
    level: float = 0.95,
) -> pd.DataFrame:
    """Kendall τ of each incomplete test set against the full one, averaged per share.

    ``scores`` is (k × systems): the system scores on each incomplete test set (row ``j`` made
    from mask ``j``); ``reference`` (systems,) the scores on the full test set; ``share`` (k,)
    the share of each mask. Returns one row per share with the mean τ over its samples, a
    Student-t confidence band (see :func:`mean_band`), the spread and the number of samples.
    Valcarce et al. (2018, Sec. 4): the higher the curve, the more robust the metric.
    """
    s = np.asarray(scores, dtype=np.float64)
    share = np.asarray(share, dtype=np.float64)
    if s.ndim != 2 or share.shape != (s.shape[0],):
        raise ValueError(
            f"scores must be (masks × systems) with one share per mask; got {s.shape} and "
            f"{share.shape}"
        )
    tau = kendall_tau(s, reference)
    rows = []
    for p in np.unique(share)[::-1]:
        t = tau[share == p]
        centre, low, high = mean_band(t, level)
        rows.append(
            {
                "share": p,
                "tau": centre,
                "low": low,
                "high": high,
                "sd": t.std(ddof=1) if t.size > 1 else np.nan,
                "min": t.min(),
                "samples": t.size,
            }
        )
    return pd.DataFrame(rows)


def robustness_curves(
    scores: ArrayLike,
    reference: ArrayLike,
    share: ArrayLike,
    labels: Sequence[str],
    *,
    level: float = 0.95,
) -> pd.DataFrame:
    """:func:`robustness_curve` for several metrics at once, stacked with a ``metric`` column.

    ``scores`` is (masks × metrics × systems), e.g. from
    :func:`recmeta.incompleteness.score_masks`; ``reference`` (metrics × systems) the scores on
    the full test set; ``labels`` one name per metric.
    """
    s = np.asarray(scores, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.float64)
    labels = list(labels)
    if s.ndim != 3 or ref.shape != s.shape[1:] or len(labels) != s.shape[1]:
        raise ValueError(
            f"need scores (masks × metrics × systems), reference (metrics × systems) and one "
            f"label per metric; got {s.shape}, {ref.shape} and {len(labels)} labels"
        )
    frames = [
        robustness_curve(s[:, m], ref[m], share, level=level).assign(metric=name)
        for m, name in enumerate(labels)
    ]
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", *[c for c in out.columns if c != "metric"]]]
