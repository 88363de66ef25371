"""Sampled metrics for a user with several relevant items.

A user has R relevant items at true ranks r_1 < … < r_R among n items. The sampled evaluation
ranks them among m negatives drawn uniformly from the n − R non-relevant items (with or without
replacement), one draw shared by all R items. Relevant item j has g_j = r_j − j non-relevant
items above it; let X_j count the sampled negatives among those g_j. Its sampled rank, in a list
of m + R items, is

    s_j = j + X_j,     X_1 ≤ X_2 ≤ … ≤ X_R,

so the relevant items keep their order and item j is the j-th relevant item of the sampled list.

Marginals (exact): X_j ~ Binomial(m, g_j / (n − R)) with replacement and
X_j ~ Hypergeometric(population n − R, successes g_j, draws m) without — the single-item law of
Krichene & Rendle (2020, eq. 15, §4.3–4.4) with n − R negatives in place of n − 1.

Joint law (exact): the counts in the R + 1 gaps between relevant items are multinomial (with
replacement) or multivariate hypergeometric (without); X_j are their cumulative sums.

The independence approximation (Krichene & Rendle 2020, §8: "the general case may be treated by
making the approximation that observed ranks are independent") replaces the joint law by the
product of the marginals. Metrics on the sampled list of L = m + R items:

* ``Recall@k``     (1/R) Σ_j δ(s_j ≤ k)
* ``Precision@k``  (1/k) Σ_j δ(s_j ≤ k)
* ``AP``           (1/R) Σ_j j / s_j                       (precision at each relevant item)
* ``NDCG``, ``NDCG@k``  Σ_j δ(s_j ≤ k) / log2(s_j + 1) / Σ_{i ≤ min(R, k)} 1 / log2(i + 1)
* ``AUC``          (1/(R m)) Σ_j (m − X_j)                  (eq. 2: pairs of a relevant and a
  sampled negative in the right order; m is the number of negatives in the list)
* ``AP@k``         (1/min(R, k)) Σ_j δ(s_j ≤ k) j / s_j     (eq. 5)
* ``Hit@k``        δ(s_1 ≤ k) = 1 − Π_j δ(s_j > k)         (any relevant item in the top k)

The same formulas on the full list of n items, with X_j replaced by g_j and m by n − R, give the
exact metrics. Every metric but Hit@k is a sum of one function per item, so their expectation
under the approximation is exact (linearity); their variance is not (the X_j are positively
correlated). ``Hit@k`` written as 1 − Π_j P(s_j > k) is biased upwards by the approximation; its
exact expectation is P(X_1 ≤ k − 1), which :func:`expected_multi_metric` returns with
``method="exact"``.

Corrections (:func:`item_corrections`; Krichene & Rendle 2020, §8: "similar correction methods
can be applied"). Item j's contribution to the exact metric is a function of g_j alone, and its
sampled count X_j has the single-item law with N = n − R negatives, i.e. that of a relevant item
at rank g_j + 1 among N + 1 items. So each item gets a single-item correction (§5) of its own
target, the function g ↦ f_j(g) on the full list; the user's corrected metric is the sum over
items. For the additive metrics its expectation is the sum of the items' expectations whatever
the joint law, so the correction's bias is exactly that of the single-item fits; only its
variance depends on the dependence between items.
"""

from __future__ import annotations

import re

import numpy as np

from ..metrics import MetricNameError, parse_metric
from .corrections import correction_for_target
from .rank_distribution import check_sampling, rank_pmf

__all__ = [
    "MULTI_METRIC_NAMES",
    "multi_rank_pmf",
    "simulate_multi_ranks",
    "multi_metric_values",
    "expected_multi_metric",
    "multi_metric_moments",
    "item_targets",
    "item_corrections",
]

MULTI_METRIC_NAMES = ("Recall@k", "Precision@k", "AP", "AP@k", "NDCG", "NDCG@k", "AUC", "Hit@k")

#: the metric engine's measures defined here for several relevant items, and their family
_FAMILIES = {
    "R": "Recall",
    "P": "Precision",
    "AP": "AP",
    "nDCG": "NDCG",
    "Success": "Hit",
    "AUC": "AUC",
}


def _parse(metric: str) -> tuple[str, int | None]:
    """Family and cut-off of a metric named as the engine's measure registry names it."""
    text = str(metric).strip()
    if re.match(r"^HR(@\d+)?$", text, re.IGNORECASE):
        raise ValueError(
            f"metric {metric!r} is ambiguous with several relevant items: write 'Recall@k' "
            "(share of relevant items in the top k) or 'Hit@k' (any relevant item in the top k)"
        )
    try:
        spec = parse_metric(text)
    except MetricNameError:
        spec = None
    family = None if spec is None else _FAMILIES.get(spec.name)
    if spec is None or family is None or spec.params != parse_metric(spec.name).params:
        raise ValueError(
            f"unknown metric {metric!r}: use one of {', '.join(MULTI_METRIC_NAMES)} "
            "(e.g. 'Recall@10'; the engine's names such as 'R@10' or 'nDCG@10' are read too)"
        )
    if family in ("Recall", "Precision", "Hit") and spec.k is None:
        raise ValueError(f"metric {metric!r} needs a cut-off: write e.g. '{family}@10'")
    if family == "AUC" and spec.k is not None:
        raise ValueError(f"metric {metric!r}: AUC takes no cut-off, write 'AUC'")
    if spec.k is not None and spec.k < 1:
        raise ValueError(f"metric {metric!r}: the cut-off k must be at least 1")
    return family, spec.k


def _check_relevant(
    ranks: np.ndarray, n: int, m: int, replace: bool
) -> tuple[np.ndarray, int, int]:
    """Validate one user's true ranks; return them sorted (int64), n and m."""
    r = np.asarray(ranks)
    if r.ndim != 1 or r.size == 0:
        raise ValueError("ranks must be a non-empty 1-d array of one user's relevant true ranks")
    if not np.issubdtype(r.dtype, np.integer) and not (
        np.all(np.isfinite(r)) and np.all(r == np.round(r))
    ):
        raise ValueError(f"ranks must hold integers; got non-integer values of dtype {r.dtype}")
    r = np.sort(r.astype(np.int64))
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    n = int(n)
    if np.any(r < 1) or np.any(r > n):
        raise ValueError("every true rank must lie in 1..n; ranks are 1-based")
    if np.any(np.diff(r) == 0):
        raise ValueError("true ranks must be distinct: two relevant items cannot share a rank")
    if n - r.size < 1:
        raise ValueError(
            f"n={n} leaves no non-relevant item to sample for R={r.size} relevant items"
        )
    # the single-item checks on the equivalent problem: n − R negatives, g_j + 1 as the rank
    check_sampling(r - np.arange(r.size), n - r.size + 1, m, replace)
    return r, n, int(m)


def multi_rank_pmf(ranks: np.ndarray, n: int, m: int, replace: bool = True) -> np.ndarray:
    """Marginal laws P(X_j = x), x = 0..m, of the negatives above each relevant item: (R, m + 1).

    X_j ~ Binomial(m, (r_j − j)/(n − R)) with replacement, Hypergeometric(n − R, r_j − j, m)
    without; the sampled rank is s_j = j + X_j (Krichene & Rendle 2020, eq. 15 with n − R
    negatives). Rows follow the ranks sorted ascending.
    """
    r, n, m = _check_relevant(ranks, n, m, replace)
    j = np.arange(1, r.size + 1)
    return rank_pmf(r - j + 1, n - r.size + 1, m, replace)


def simulate_multi_ranks(
    ranks: np.ndarray,
    n: int,
    m: int,
    *,
    repetitions: int = 1,
    seed: int | np.random.Generator = 0,
    replace: bool = True,
) -> np.ndarray:
    """Exact joint draws of the sampled ranks s_1 < … < s_R: shape ``(repetitions, R)``.

    The m shared negatives fall into the R + 1 gaps between relevant items (sizes
    g_1, g_2 − g_1, …, n − R − g_R); the gap counts are multinomial with replacement and
    multivariate hypergeometric without, and s_j = j + (counts in the first j gaps).
    """
    if (
        isinstance(repetitions, bool)
        or not isinstance(repetitions, (int, np.integer))
        or repetitions < 1
    ):
        raise ValueError(f"repetitions must be a positive int, got {repetitions!r}")
    r, n, m = _check_relevant(ranks, n, m, replace)
    R = r.size
    g = r - np.arange(1, R + 1)
    gaps = np.diff(np.concatenate([[0], g, [n - R]]))
    rng = np.random.default_rng(seed)
    if replace:
        counts = rng.multinomial(m, gaps / float(n - R), size=int(repetitions))
    else:
        counts = rng.multivariate_hypergeometric(gaps, m, size=int(repetitions))
    return np.arange(1, R + 1) + np.cumsum(counts[:, :R], axis=1)


def _scale(family: str, k: int | None, R: np.ndarray | int) -> np.ndarray:
    """The per-user factor of f_j: 1/R, 1/k, 1/min(R, k) or 1/IDCG, by family."""
    R = np.asarray(R, dtype=np.int64)
    if family in ("Recall", "AUC") or (family == "AP" and k is None):
        return 1.0 / R
    if family == "Precision":
        assert k is not None  # _parse refuses Precision without a cut-off
        return np.full(R.shape, 1.0 / k)
    if family == "AP":
        assert k is not None  # AP without a cut-off returned above
        return 1.0 / np.minimum(R, k)
    top = int(R.max()) if R.size else 1
    cum = np.cumsum(1.0 / np.log2(np.arange(1, top + 1) + 1.0))
    return 1.0 / cum[np.minimum(R, k or top) - 1]  # NDCG


def _unscaled(
    family: str, k: int | None, j: np.ndarray, x: np.ndarray, negatives: np.ndarray | int
) -> np.ndarray:
    """u_j(x): item j's contribution before the per-user factor, x negatives above it, ``negatives``
    negatives in the list (j and x broadcast)."""
    s = (j + x).astype(np.float64)
    top = np.ones(s.shape, dtype=bool) if k is None else (s <= k)
    if family in ("Recall", "Precision"):
        return top.astype(np.float64)
    if family == "AP":
        return np.where(top, j / s, 0.0)
    if family == "AUC":
        return np.broadcast_to(
            (negatives - x) / np.asarray(negatives, dtype=np.float64), s.shape
        ).astype(np.float64)
    return np.where(top, 1.0 / np.log2(s + 1.0), 0.0)  # NDCG


def _item_values(family: str, k: int | None, R: int, m: int) -> np.ndarray:
    """f_j(x): contribution of relevant item j when X_j = x, shape (R, m + 1) (Hit@k excluded)."""
    j = np.arange(1, R + 1)[:, None]
    return _unscaled(family, k, j, np.arange(m + 1)[None, :], m) * _scale(family, k, R)


def multi_metric_values(metric: str, sampled_ranks: np.ndarray, m: int | None = None) -> np.ndarray:
    """The metric of sampled lists given sampled ranks s (…, R) of the R relevant items, sorted.

    Uses the formulas of the module docstring on the list of m + R items; returns shape (…).
    AUC needs ``m``, the number of negatives in the list.
    """
    family, k = _parse(metric)
    s = np.asarray(sampled_ranks)
    if s.ndim < 1 or s.shape[-1] == 0:
        raise ValueError("sampled_ranks must have the relevant items on its last axis")
    R = s.shape[-1]
    j = np.arange(1, R + 1)
    if np.any(np.diff(s, axis=-1) <= 0) or np.any(s[..., 0] < 1):
        raise ValueError(
            "sampled ranks must be 1-based and strictly increasing along the last axis"
        )
    if family == "Hit":
        return (s[..., 0] <= k).astype(np.float64)
    if family == "AUC":
        if m is None:
            raise ValueError("AUC needs m, the number of negatives in the sampled list")
        if np.any(s[..., -1] > m + R):
            raise ValueError(f"sampled ranks exceed the list length m + R = {m + R}")
    x = s - j
    return (_unscaled(family, k, j, x, m or 1) * _scale(family, k, R)).sum(axis=-1)


def multi_metric_moments(
    metric: str, ranks: np.ndarray, n: int, m: int, replace: bool = True
) -> tuple[float, float]:
    """(mean, variance) of the sampled metric under the independence approximation.

    For additive metrics M = Σ_j f_j(X_j): mean Σ_j E f_j, variance Σ_j Var f_j (the covariances
    dropped). For Hit@k: p = 1 − Π_j P(X_j > k − j), variance p (1 − p). Krichene & Rendle
    (2020, §8) suggest the approximation; the mean is exact for the additive metrics, the rest
    is not (see the module docstring).
    """
    family, k = _parse(metric)
    pmf = multi_rank_pmf(ranks, n, m, replace)
    R = pmf.shape[0]
    if family == "Hit":
        assert k is not None  # _parse refuses Hit without a cut-off
        s = np.arange(1, R + 1)[:, None] + np.arange(m + 1)[None, :]
        miss = (pmf * (s > k)).sum(axis=1)
        p = 1.0 - float(np.prod(miss))
        return p, p * (1.0 - p)
    f = _item_values(family, k, R, m)
    mean_j = (pmf * f).sum(axis=1)
    var_j = (pmf * f**2).sum(axis=1) - mean_j**2
    return float(mean_j.sum()), float(np.maximum(var_j, 0.0).sum())


def expected_multi_metric(
    metric: str,
    ranks: np.ndarray,
    n: int,
    m: int,
    replace: bool = True,
    *,
    method: str = "independent",
) -> float:
    """E[M(s_1, …, s_R)] for one user with relevant true ranks ``ranks`` among n items.

    ``method="independent"``: the product-of-marginals approximation (Krichene & Rendle 2020, §8),
    exact for Recall@k, Precision@k, AP, NDCG(@k) and biased upwards for Hit@k.
    ``method="exact"``: the exact expectation; it differs only for Hit@k, where it is
    P(X_1 ≤ k − 1) since s_1 is the smallest sampled rank.
    """
    if method not in ("independent", "exact"):
        raise ValueError(f"method must be 'independent' or 'exact', got {method!r}")
    family, k = _parse(metric)
    if method == "exact" and family == "Hit":
        assert k is not None  # _parse refuses Hit without a cut-off
        pmf = multi_rank_pmf(ranks, n, m, replace)
        return float(min(1.0, pmf[0, : min(k, m + 1)].sum()))
    return multi_metric_moments(metric, ranks, n, m, replace)[0]


def item_targets(metric: str, R_max: int, negatives: int) -> np.ndarray:
    """u_j(g) on the full list: (negatives + 1, R_max), row g = 0..negatives, column j = 1..R_max.

    Item j's exact contribution before the per-user factor (:func:`item_corrections`), as a
    function of the g negatives above it — the target its correction should track.
    """
    family, k = _parse(metric)
    if family == "Hit":
        raise ValueError("Hit@k is not a sum over items; it has no per-item correction")
    g = np.arange(negatives + 1)[:, None]
    j = np.arange(1, R_max + 1)[None, :]
    return _unscaled(family, k, j, g, negatives)


def item_corrections(
    metric: str,
    R: np.ndarray | int,
    negatives: int,
    m: int,
    method: str,
    gamma: float | None = None,
    replace: bool = True,
) -> np.ndarray:
    """Per-item corrected values for users with R relevant items: (len(R), R_max, m + 1).

    Entry [u, j − 1, x] is what relevant item j of a user with R[u] relevant items scores when x
    sampled negatives lie above it; summing over j ≤ R[u] gives the user's corrected metric
    (zero beyond R[u]). Each item's vector is the single-item correction
    (:func:`~recmeta.sampled.correction_for_target`, uniform prior) of its target
    :func:`item_targets`, fitted for ``negatives`` negatives (one N for every user), times the
    user's factor (1/R, 1/min(R, k), 1/IDCG).
    """

    family, k = _parse(metric)
    RR = np.atleast_1d(np.asarray(R, dtype=np.int64))
    if RR.size == 0 or RR.min() < 1:
        raise ValueError("R must hold positive numbers of relevant items")
    R_max = int(RR.max())
    target = item_targets(metric, R_max, int(negatives))
    unscaled = correction_for_target(
        target, int(negatives) + 1, m, method, gamma=gamma, replace=replace
    ).T
    out = unscaled[None, :, :] * _scale(family, k, RR)[:, None, None]
    out[np.arange(R_max)[None, :] >= RR[:, None]] = 0.0
    return out
