"""Corrected sampled metrics M̂: a value per sampled rank 1..m+1 (Krichene & Rendle 2020, §5).

Write P for the n × (m+1) matrix p(r̃ | r), w for the prior p(r) over true ranks 1..n (uniform by
default), M for the exact metric M_n(r) (or any target vector over r,
:func:`correction_for_target`). The methods:

* ``"rank-estimate"`` (eq. 20): M̂(r̃) = M_n(⌊1 + (n − 1)(r̃ − 1)/m⌋), the metric at the
  (floored) unbiased estimate of the rank.
* ``"least-squares"`` (eqs. 21–22): minimise Σ_r w_r (E[M̂(r̃) | r] − M(r))² = ‖A M̂ − b‖² with
  A = diag(√w) P and b = √w ∘ M, i.e. A_{r,r̃} = √p(r) · p(r̃ | r), which is what the objective
  of eq. 21 needs (the text extraction of eq. 23 we work from reads √(p(r) p(r̃)); its layout
  could not be checked). P is a Bernstein-type basis and A is badly conditioned once m
  exceeds a few tens: at the paper's size (n = 3,706, m = 100) its condition number is of the
  order of 1e15 and the solution's entries reach ±1e12. We return the SVD least-squares
  solution (minimum norm among the numerically equivalent ones) and emit an
  :class:`IllConditionedWarning` when the condition number exceeds :data:`COND_WARN`.
* ``"ridge"`` (ours): the regularised variant, Σ_r w_r bias_r² + λ Σ_r w_r E[M̂(r̃)² | r], i.e.
  ‖A M̂ − b‖² + λ M̂ᵀ diag(c) M̂ with c = Pᵀw, solved as a stacked least-squares problem.
* ``"cls"`` (§5.2): the least-squares objective under M̂_1 ≥ M̂_2 ≥ … ≥ M̂_{m+1} (a non-increasing
  correction; §5.2 prints the inequality the other way round, §6.3 the right way), solved
  exactly as a bounded least-squares problem in the increments (M̂_i = t + Σ_{j≥i} d_j, d ≥ 0,
  t free) with scipy's BVLS active-set solver.
* ``"bv"`` (eqs. 24–25): add γ Σ_r w_r Var[M̂(r̃) | r]; since Σ_r w_r Var = M̂ᵀ(diag(c) − AᵀA)M̂,
  the minimiser solves ((1 − γ) AᵀA + γ diag(c)) M̂ = Aᵀb. γ = 1 gives the posterior mean
  M̂(r̃) = Σ_r p(r | r̃) M(r) (eq. 26; §5.3 calls it "the least squares estimator"). For
  0 < γ < 1 the BV solution is the ridge solution with λ = γ/(1 − γ), scaled by 1/(1 − γ): BV is
  a regularised least squares too. γ > 1 is allowed (the matrix stays positive definite) but
  leaves the paper's range.

Every matrix that depends only on (n, m, law) under the uniform prior is cached, so fitting
several metrics and estimators for the same n and m builds P once.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from scipy import linalg, optimize

from .rank_distribution import check_sampling, rank_pmf
from .rank_metrics import RankMetric, metric_value, parse_rank_metric

__all__ = [
    "correction",
    "correction_for_target",
    "apply_correction",
    "CORRECTION_METHODS",
    "correction_system",
    "condition_number",
    "IllConditionedWarning",
    "COND_WARN",
]

CORRECTION_METHODS = ("rank-estimate", "least-squares", "ridge", "cls", "bv")
#: condition number of A above which the least-squares correction warns (10 digits lost)
COND_WARN = 1e10


class IllConditionedWarning(UserWarning):
    """The least-squares correction is numerically meaningless at this n and m."""


def _prior(prior: np.ndarray | None, n: int) -> np.ndarray:
    if prior is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(prior, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(
            f"prior must be a vector of length n = {n} (p(r) for r = 1..n), got shape {w.shape}"
        )
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("prior must be finite and non-negative")
    if abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"prior must sum to 1 (it sums to {w.sum():.12g}); divide it by its sum")
    return w


def _check_n(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    return int(n)


class _System:
    """P, w, A = diag(√w) P and the derived matrices, built once per (n, m, law, prior)."""

    def __init__(self, n: int, m: int, replace: bool, prior: np.ndarray | None) -> None:
        ranks = np.arange(1, n + 1)
        check_sampling(ranks, n, m, replace)
        self.n, self.m = n, m
        self.w = _prior(prior, n)
        self.P = rank_pmf(ranks, n, m, replace)
        self.A = np.sqrt(self.w)[:, None] * self.P
        self.c = self.P.T @ self.w
        for a in (self.w, self.P, self.A, self.c):
            a.flags.writeable = False
        self._gram: np.ndarray | None = None
        self._qr: tuple[np.ndarray, np.ndarray] | None = None
        self._cond: float | None = None
        self._bv: dict[float, tuple] = {}

    def bv_factor(self, gamma: float) -> tuple:
        """Cholesky factor of (1 − γ) AᵀA + γ diag(c), shared by every target (LU when γ > 1)."""
        if gamma not in self._bv:
            lhs = (1.0 - gamma) * self.gram + gamma * np.diag(self.c)
            try:
                self._bv[gamma] = ("cho", linalg.cho_factor(lhs))
            except linalg.LinAlgError:
                self._bv[gamma] = ("lu", linalg.lu_factor(lhs))
        return self._bv[gamma]

    @property
    def gram(self) -> np.ndarray:
        if self._gram is None:
            self._gram = self.A.T @ self.A
        return self._gram

    @property
    def qr(self) -> tuple[np.ndarray, np.ndarray]:
        """A = QR (economic); ‖A x − b‖² = ‖R x − Qᵀb‖² + const."""
        if self._qr is None:
            self._qr = linalg.qr(self.A, mode="economic")
        return self._qr

    @property
    def cond(self) -> float:
        if self._cond is None:
            s = linalg.svdvals(self.qr[1])
            self._cond = float(np.inf if s[-1] == 0 else s[0] / s[-1])
        return self._cond


@functools.lru_cache(maxsize=3)
def _uniform(n: int, m: int, replace: bool) -> _System:
    return _System(n, m, replace, None)


def _system(n: int, m: int, replace: bool, prior: np.ndarray | None) -> _System:
    return (
        _uniform(n, int(m), bool(replace)) if prior is None else _System(n, int(m), replace, prior)
    )


def correction_system(
    metric: str | RankMetric, n: int, m: int, prior: np.ndarray | None = None, replace: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, w, M): the matrix p(r̃ | r) (n × (m+1)), the prior w over r = 1..n, and M_n(r)."""
    n = _check_n(n)
    sys_ = _system(n, m, replace, prior)
    return sys_.P, sys_.w, metric_value(metric, np.arange(1, n + 1), n)


def condition_number(n: int, m: int, replace: bool = True) -> float:
    """Condition number of A = diag(√w) P (uniform prior): how ill-posed least squares is."""
    return _system(_check_n(n), m, replace, None).cond


def _warn_ill_conditioned(s: _System, stacklevel: int) -> None:
    if s.cond > COND_WARN:
        warnings.warn(
            f"least squares at n={s.n}, m={s.m} is ill-conditioned (condition number "
            f"{s.cond:.1e}): its values are dominated by rounding; use method='ridge', 'bv' "
            "(a small gamma) or 'cls'",
            IllConditionedWarning,
            stacklevel=stacklevel + 1,
        )


def _cls(R: np.ndarray, Qb: np.ndarray) -> np.ndarray:
    """argmin ‖R x − Qᵀb‖ subject to x non-increasing (exact, via BVLS on the increments)."""
    k = R.shape[1]
    # x = T z with T upper-triangular ones: x_i = Σ_{j ≥ i} z_j; z_j = x_j − x_{j+1} ≥ 0 for j < k.
    T = np.triu(np.ones((k, k)))
    lower = np.r_[np.zeros(k - 1), -np.inf]
    upper = np.full(k, np.inf)
    res = optimize.lsq_linear(
        R @ T, Qb, bounds=(lower, upper), method="bvls", tol=1e-14, max_iter=None
    )
    if res.status < 0:
        raise RuntimeError(f"constrained least squares failed: {res.message}")
    return T @ res.x


def _check_method(method: str, gamma: float | None) -> None:
    if method not in CORRECTION_METHODS:
        raise ValueError(
            f"unknown correction method {method!r}: use one of {', '.join(CORRECTION_METHODS)}"
        )
    if method in ("bv", "ridge"):
        if gamma is None or not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(
                f"method {method!r} needs gamma > 0 (the weight of its penalty; the paper's BV "
                f"uses 1, 0.1, 0.01, 0.001), got {gamma!r}"
            )
    elif gamma is not None:
        raise ValueError(f"gamma only applies to methods 'bv' and 'ridge', not {method!r}")


def correction_for_target(
    target: np.ndarray,
    n: int,
    m: int,
    method: str,
    gamma: float | None = None,
    prior: np.ndarray | None = None,
    replace: bool = True,
    *,
    warn: bool = True,
) -> np.ndarray:
    """Corrections for any target function of the true rank: ``target`` (n,) or (n, J) over
    r = 1..n.

    Returns (m+1,) or (m+1, J): for each column, the vector M̂ over sampled ranks that
    ``method`` fits so that E[M̂(r̃) | r] tracks the target (see the module docstring). Several
    columns share one factorisation (used for several relevant items per user).
    """
    n = _check_n(n)
    _check_method(method, gamma)
    y = np.asarray(target, dtype=np.float64)
    if y.shape[0] != n or y.ndim not in (1, 2):
        raise ValueError(f"target must have shape (n,) or (n, J) with n = {n}, got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("target must be finite")
    if method == "rank-estimate":
        if prior is not None:
            raise ValueError("the rank-estimate correction does not use a prior; leave prior=None")
        check_sampling(1, n, m, replace)
        sampled = np.arange(1, m + 2, dtype=np.int64)
        estimate = 1 + ((n - 1) * (sampled - 1)) // m  # exact integer floor of eq. 20
        return y[estimate - 1]
    s = _system(n, m, replace, prior)
    b = np.sqrt(s.w)[:, None] * (y if y.ndim == 2 else y[:, None])
    if method == "least-squares":
        if warn:
            _warn_ill_conditioned(s, stacklevel=3)
        Q, R = s.qr
        x, *_ = linalg.lstsq(R, Q.T @ b, lapack_driver="gelsd")
    elif method == "cls":
        Q, R = s.qr
        Qb = Q.T @ b
        x = np.column_stack([_cls(R, Qb[:, j]) for j in range(b.shape[1])])
    elif method == "ridge":
        k = m + 1
        stacked = np.vstack([s.A, np.diag(np.sqrt(gamma * s.c))])
        rhs = np.vstack([b, np.zeros((k, b.shape[1]))])
        x, *_ = linalg.lstsq(stacked, rhs, lapack_driver="gelsd")
    else:
        assert gamma is not None  # _check_method requires gamma for 'bv' and 'ridge'
        kind, factor = s.bv_factor(float(gamma))
        rhs = s.A.T @ b
        x = linalg.cho_solve(factor, rhs) if kind == "cho" else linalg.lu_solve(factor, rhs)
    return x if y.ndim == 2 else x[:, 0]


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

    ``method``: ``"rank-estimate"`` (eq. 20), ``"least-squares"`` (eqs. 21–22, warns when
    ill-conditioned), ``"ridge"`` (least squares with penalty ``gamma`` on the prior-weighted
    second moment, ours), ``"cls"`` (monotone constrained least squares, §5.2), ``"bv"``
    (bias² + γ·variance, eqs. 24–25; needs ``gamma`` > 0). ``prior`` is p(r) over true ranks 1..n
    (default uniform 1/n). ``replace`` selects the sampling law the correction is fitted for.
    Score a user by ``M̂[r̃ − 1]`` (see :func:`apply_correction`).
    """
    spec = parse_rank_metric(metric)
    n = _check_n(n)
    _check_method(method, gamma)
    if prior is None:
        if method == "least-squares":
            _warn_ill_conditioned(_system(n, m, replace, None), stacklevel=2)
        return _uniform_correction(
            spec.name, n, int(m), method, None if gamma is None else float(gamma), bool(replace)
        ).copy()
    return correction_for_target(
        metric_value(spec, np.arange(1, n + 1), n),
        n,
        m,
        method,
        gamma=gamma,
        prior=prior,
        replace=replace,
    )


@functools.lru_cache(maxsize=256)
def _uniform_correction(
    metric: str, n: int, m: int, method: str, gamma: float | None, replace: bool
) -> np.ndarray:
    """:func:`correction` with the uniform prior, computed once per argument set."""
    values = correction_for_target(
        metric_value(metric, np.arange(1, n + 1), n),
        n,
        m,
        method,
        gamma=gamma,
        replace=replace,
        warn=False,
    )
    values.flags.writeable = False
    return values


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
