"""Expected sampled metrics E[M(r̃) | r] (Krichene & Rendle 2020, eq. 16 and §4.4).

The sampled metric is the metric of the list of m + 1 items, so M_{m+1} is applied to r̃:

    E[M(r̃) | r] = Σ_{i=1}^{m+1} p(r̃ = i | r) M_{m+1}(i)                        (eq. 16)

Closed forms (p = (r − 1)/(n − 1)):

* AUC: E = (n − r)/(n − 1) = AUC_n(r), with or without replacement, since E[r̃] = 1 + m p (§4.4.1).
* Recall@k: E = P(r̃ ≤ k) = CDF(k − 1) of the binomial or hypergeometric law (eq. 18);
  Precision@k is Recall@k / k.
* AP (= RR) with replacement: E = (1 − (1 − p)^{m+1}) / ((m + 1) p) for r > 1, and 1 for r = 1
  (eq. 19), evaluated as −expm1((m+1) log1p(−p)) / ((m+1) p) for accuracy.
* AP without replacement (ours, not in the paper): from C(K, x)/(x + 1) = C(K + 1, x + 1)/(K + 1)
  and Vandermonde's identity, E[1/(1 + X)] for X ~ Hypergeometric(n − 1, r − 1, m) is

      E = n / (r (m + 1)) · (1 − C(n − r, m + 1) / C(n, m + 1)),

  where the bracket is P(Y ≥ 1) for Y ~ Hypergeometric(n, r, m + 1).

NDCG and the truncated AP@k, NDCG@k have no closed form and are summed (eq. 16).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .rank_distribution import _banded, check_sampling
from .rank_metrics import RankMetric, metric_value, parse_rank_metric

__all__ = ["expected_value", "expected_metric", "sampled_metric_values"]


def sampled_metric_values(metric: str | RankMetric, m: int) -> np.ndarray:
    """The vector M_{m+1}(i), i = 1..m+1: the uncorrected sampled metric per sampled rank."""
    return metric_value(metric, np.arange(1, m + 2), m + 1)


def expected_value(
    values: np.ndarray, rank: np.ndarray | int, n: np.ndarray | int, m: int, replace: bool = True
) -> np.ndarray:
    """E[values[r̃ − 1] | r] for a vector ``values`` over sampled ranks 1..m+1 (eq. 16).

    Use it for a corrected metric M̂ (the expectation of M̂(r̃) given the true rank). Vectorised
    over ``rank`` (broadcast with ``n``); works in chunks over the band of likely r̃, so
    n = 10,000 ranks with m = 10,000 stay in memory and take seconds.
    """
    r, nn, m = check_sampling(rank, n, m, replace)
    v = np.asarray(values, dtype=np.float64)
    if v.shape != (m + 1,):
        raise ValueError(f"values must have shape (m + 1,) = ({m + 1},), got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite")
    nonzero = np.flatnonzero(v)
    out = np.zeros(r.size)
    if nonzero.size == 0:
        return out.reshape(r.shape)
    for sl, x, pmf in _banded(r, nn, m, replace, top=int(nonzero[-1])):
        out[sl] = (pmf * v[np.minimum(x, m)]).sum(axis=1)
    return out.reshape(r.shape)


def expected_metric(
    metric: str | RankMetric,
    rank: np.ndarray | int,
    n: np.ndarray | int,
    m: int,
    replace: bool = True,
    *,
    closed_form: bool = True,
) -> np.ndarray:
    """E[M_{m+1}(r̃) | r] for ``metric`` in AUC, AP, NDCG, Recall@k, Precision@k, NDCG@k, AP@k.

    Closed forms for AUC, Recall@k, Precision@k and AP (see the module docstring); the rest by
    summation (eq. 16). ``closed_form=False`` forces the summation (used to test the closed
    forms). Vectorised over ``rank`` (broadcast with ``n``).
    """
    spec = parse_rank_metric(metric)
    r, nn, m = check_sampling(rank, n, m, replace)
    if not closed_form:
        return expected_value(sampled_metric_values(spec, m), r, nn, m, replace)
    k = spec.k
    family = spec.family
    if family in ("AP", "NDCG", "Recall", "Precision") and k is not None and k >= m + 1:
        k = None  # the cut-off does not bite on a list of m + 1 items
    if family == "AUC":
        return (nn - r) / (nn - 1.0)
    if family in ("Recall", "Precision"):
        if k is None:
            hit = np.ones(r.shape)
        elif replace:
            hit = stats.binom.cdf(k - 1, m, (r - 1) / (nn - 1.0))
        else:
            hit = stats.hypergeom.cdf(k - 1, nn - 1, r - 1, m)
        if family == "Recall":
            return hit
        if spec.k is None:
            raise ValueError(f"{spec.name} needs a cut-off: write e.g. 'Precision@10'")
        return hit / float(spec.k)
    if family == "AP" and k is None:
        rf = r.astype(np.float64)
        if replace:
            p = (rf - 1.0) / (nn - 1.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                e = -np.expm1((m + 1) * np.log1p(-p)) / ((m + 1) * p)
        else:
            e = nn / (rf * (m + 1)) * stats.hypergeom.sf(0, nn, r, m + 1)
        return np.where(r == 1, 1.0, e)
    return expected_value(sampled_metric_values(spec, m), r, nn, m, replace)
