"""Corrected sampled metrics M̂: a value per sampled rank 1..m+1 (Krichene & Rendle 2020, §5).

Write P for the n × (m+1) matrix p(r̃ | r), w for the prior p(r) over true ranks 1..n (uniform by
default), M for the exact metric M_n(r). The methods:

* ``"rank-estimate"`` (eq. 20): M̂(r̃) = M_n(⌊1 + (n − 1)(r̃ − 1)/m⌋), the metric at the
  (floored) unbiased estimate of the rank.
* ``"least-squares"`` (eqs. 21–23): minimise Σ_r w_r (E[M̂(r̃) | r] − M(r))² = ‖A M̂ − b‖² with
  A = diag(√w) P and b = √w ∘ M. (Eq. 23 as printed reads A_{r,r̃} = √(p(r) p(r̃)); the objective
  of eq. 21 needs √p(r) · p(r̃ | r).) P is a Bernstein-type basis and A is badly conditioned for
  m beyond a few tens; we return the SVD least-squares solution (minimum norm among the
  numerically equivalent ones), whose wild oscillations are what §5.3 warns about.
* ``"cls"`` (§5.2): the same objective under M̂_1 ≥ M̂_2 ≥ … ≥ M̂_{m+1}, solved exactly as a
  bounded least-squares problem in the increments (M̂_i = t + Σ_{j≥i} d_j, d ≥ 0, t free) with
  scipy's BVLS active-set solver.
* ``"bv"`` (eqs. 24–25): add γ Σ_r w_r Var[M̂(r̃) | r]; since Σ_r w_r Var = M̂ᵀ(diag(c) − AᵀA)M̂
  with c = Pᵀw, the minimiser solves ((1 − γ) AᵀA + γ diag(c)) M̂ = Aᵀb. γ = 1 gives the
  posterior mean M̂(r̃) = Σ_r p(r | r̃) M(r) (eq. 26); γ > 1 is allowed (the matrix stays
  positive definite) but leaves the paper's range.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg, optimize

from .rank_distribution import check_sampling, rank_pmf
from .rank_metrics import RankMetric, metric_value, parse_rank_metric

__all__ = ["correction", "apply_correction", "CORRECTION_METHODS", "correction_system"]

CORRECTION_METHODS = ("rank-estimate", "least-squares", "cls", "bv")


def _prior(prior: np.ndarray | None, n: int) -> np.ndarray:
    if prior is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(prior, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"prior must be a vector of length n = {n} (p(r) for r = 1..n), got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("prior must be finite and non-negative")
    if abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"prior must sum to 1 (it sums to {w.sum():.12g}); divide it by its sum")
    return w


def correction_system(
    metric: str | RankMetric, n: int, m: int, prior: np.ndarray | None = None, replace: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, w, M): the matrix p(r̃ | r) (n × (m+1)), the prior w over r = 1..n, and M_n(r)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    n = int(n)
    ranks = np.arange(1, n + 1)
    check_sampling(ranks, n, m, replace)
    w = _prior(prior, n)
    P = rank_pmf(ranks, n, m, replace)
    return P, w, metric_value(metric, ranks, n)


def _rank_estimate(spec: RankMetric, n: int, m: int) -> np.ndarray:
    sampled = np.arange(1, m + 2, dtype=np.int64)
    estimate = 1 + ((n - 1) * (sampled - 1)) // m  # exact integer floor of eq. 20
    return metric_value(spec, estimate, n)


def _reduce(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Square the system: with A = QR, ‖A x − b‖² = ‖R x − Qᵀb‖² + const."""
    Q, R = linalg.qr(A, mode="economic")
    return R, Q.T @ b


def _cls(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """argmin ‖A x − b‖ subject to x non-increasing (exact, via BVLS on the increments)."""
    k = A.shape[1]
    # x = T z with T upper-triangular ones: x_i = Σ_{j ≥ i} z_j; z_j = x_j − x_{j+1} ≥ 0 for j < k.
    T = np.triu(np.ones((k, k)))
    R, Qb = _reduce(A, b)
    lower = np.r_[np.zeros(k - 1), -np.inf]
    upper = np.full(k, np.inf)
    res = optimize.lsq_linear(R @ T, Qb, bounds=(lower, upper), method="bvls", tol=1e-14, max_iter=None)
    if res.status < 0:
        raise RuntimeError(f"constrained least squares failed: {res.message}")
    return T @ res.x


def correction(
    metric: str | RankMetric,
    n: int,
    m: int,
    method: str,
    gamma: float | None = None,
    prior: np.ndarray | None = None,
    replace: bool = True,
) -> np.ndarray:
    """The corrected metric M̂ as a vector over sampled ranks 1..m+1 (Krichene & Rendle 2020, §5).

    ``method``: ``"rank-estimate"`` (eq. 20), ``"least-squares"`` (eqs. 21–23), ``"cls"``
    (monotone constrained least squares, §5.2), ``"bv"`` (bias² + γ·variance, eqs. 24–25; needs
    ``gamma`` > 0). ``prior`` is p(r) over true ranks 1..n (default uniform 1/n). ``replace``
    selects the sampling law the correction is fitted for. Score a user by
    ``M̂[r̃ − 1]`` (see :func:`apply_correction`).
    """
    spec = parse_rank_metric(metric)
    if method not in CORRECTION_METHODS:
        raise ValueError(f"unknown correction method {method!r}: use one of {', '.join(CORRECTION_METHODS)}")
    if method == "bv":
        if gamma is None or not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"method 'bv' needs gamma > 0 (the paper uses 1, 0.1, 0.01, 0.001), got {gamma!r}")
    elif gamma is not None:
        raise ValueError(f"gamma only applies to method 'bv', not {method!r}")
    if method == "rank-estimate":
        if prior is not None:
            raise ValueError("the rank-estimate correction does not use a prior; leave prior=None")
        check_sampling(1, n, m, replace)
        return _rank_estimate(spec, int(n), m)
    P, w, M = correction_system(spec, n, m, prior, replace)
    sw = np.sqrt(w)
    A = sw[:, None] * P
    b = sw * M
    if method == "least-squares":
        x, *_ = linalg.lstsq(*_reduce(A, b), lapack_driver="gelsd")
        return x
    if method == "cls":
        return _cls(A, b)
    c = P.T @ w
    lhs = (1.0 - gamma) * (A.T @ A) + gamma * np.diag(c)
    return linalg.solve(lhs, A.T @ b, assume_a="sym")


def apply_correction(values: np.ndarray, sampled_ranks: np.ndarray) -> np.ndarray:
    """Score each observed sampled rank r̃ by ``values[r̃ − 1]`` (values over ranks 1..m+1)."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size < 2:
        raise ValueError("values must be a vector over sampled ranks 1..m+1 (length m + 1 ≥ 2)")
    s = np.asarray(sampled_ranks)
    if s.size and not np.issubdtype(s.dtype, np.integer):
        raise ValueError(f"sampled ranks must be integers, got dtype {s.dtype}")
    if s.size and (s.min() < 1 or s.max() > v.size):
        raise ValueError(
            f"sampled ranks must lie in 1..{v.size} (m + 1 for the correction given); "
            f"got {s.min()}..{s.max()}: was the correction built for the same m?"
        )
    return v[s.astype(np.int64) - 1]
