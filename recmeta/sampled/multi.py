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
* ``Hit@k``        δ(s_1 ≤ k) = 1 − Π_j δ(s_j > k)         (any relevant item in the top k)

The first four are sums of one function per item, so their expectation under the approximation
is exact (linearity); their variance is not (the X_j are positively correlated). ``Hit@k``
written as 1 − Π_j P(s_j > k) is biased upwards by the approximation; its exact expectation is
P(X_1 ≤ k − 1), which :func:`expected_multi_metric` returns with ``method="exact"``.
"""

from __future__ import annotations

import re

import numpy as np

from .rank_distribution import check_sampling, rank_pmf

__all__ = [
    "MULTI_METRIC_NAMES",
    "multi_rank_pmf",
    "simulate_multi_ranks",
    "multi_metric_values",
    "expected_multi_metric",
    "multi_metric_moments",
]

MULTI_METRIC_NAMES = ("Recall@k", "Precision@k", "AP", "NDCG", "NDCG@k", "Hit@k")
_PATTERN = re.compile(r"^(Recall|Precision|AP|NDCG|Hit)(?:@(\d+))?$")


def _parse(metric: str) -> tuple[str, int | None]:
    text = str(metric).strip()
    if re.match(r"^HR(@\d+)?$", text):
        raise ValueError(
            f"metric {metric!r} is ambiguous with several relevant items: write 'Recall@k' "
            "(share of relevant items in the top k) or 'Hit@k' (any relevant item in the top k)"
        )
    match = _PATTERN.match(text)
    if match is None:
        raise ValueError(f"unknown metric {metric!r}: use one of {', '.join(MULTI_METRIC_NAMES)} (e.g. 'Recall@10')")
    family, k = match.group(1), match.group(2)
    if family in ("Recall", "Precision", "Hit") and k is None:
        raise ValueError(f"metric {metric!r} needs a cut-off: write e.g. '{family}@10'")
    if family == "AP" and k is not None:
        raise ValueError(f"metric {metric!r}: only untruncated AP is supported here, write 'AP'")
    k_int = None if k is None else int(k)
    if k_int is not None and k_int < 1:
        raise ValueError(f"metric {metric!r}: the cut-off k must be at least 1")
    return family, k_int


def _check_relevant(ranks: np.ndarray, n: int, m: int, replace: bool) -> tuple[np.ndarray, int, int]:
    """Validate one user's true ranks; return them sorted (int64), n and m."""
    r = np.asarray(ranks)
    if r.ndim != 1 or r.size == 0:
        raise ValueError("ranks must be a non-empty 1-d array of one user's relevant true ranks")
    if not np.issubdtype(r.dtype, np.integer):
        if not (np.all(np.isfinite(r)) and np.all(r == np.round(r))):
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
        raise ValueError(f"n={n} leaves no non-relevant item to sample for R={r.size} relevant items")
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
    if isinstance(repetitions, bool) or not isinstance(repetitions, (int, np.integer)) or repetitions < 1:
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


def _item_values(family: str, k: int | None, R: int, m: int) -> np.ndarray:
    """f_j(x): contribution of relevant item j when X_j = x, shape (R, m + 1) (Hit@k excluded)."""
    j = np.arange(1, R + 1)[:, None]
    s = (j + np.arange(m + 1)[None, :]).astype(np.float64)
    top = np.ones(s.shape, dtype=bool) if k is None else (s <= k)
    if family == "Recall":
        return top / R
    if family == "Precision":
        return top / float(k)
    if family == "AP":
        return j / s / R
    ideal = np.sum(1.0 / np.log2(np.arange(1, min(R, k or R) + 1) + 1.0))
    return np.where(top, 1.0 / np.log2(s + 1.0), 0.0) / ideal  # NDCG


def multi_metric_values(metric: str, sampled_ranks: np.ndarray) -> np.ndarray:
    """The metric of sampled lists given sampled ranks s (…, R) of the R relevant items, sorted.

    Uses the formulas of the module docstring on the list of m + R items; returns shape (…).
    """
    family, k = _parse(metric)
    s = np.asarray(sampled_ranks)
    if s.ndim < 1 or s.shape[-1] == 0:
        raise ValueError("sampled_ranks must have the relevant items on its last axis")
    R = s.shape[-1]
    j = np.arange(1, R + 1)
    if np.any(np.diff(s, axis=-1) <= 0) or np.any(s[..., 0] < 1):
        raise ValueError("sampled ranks must be 1-based and strictly increasing along the last axis")
    top = np.ones(s.shape, dtype=bool) if k is None else (s <= k)
    if family == "Hit":
        return top[..., 0].astype(np.float64)
    if family == "Recall":
        return top.sum(axis=-1) / R
    if family == "Precision":
        return top.sum(axis=-1) / float(k)
    if family == "AP":
        return (j / s).sum(axis=-1) / R
    ideal = np.sum(1.0 / np.log2(np.arange(1, min(R, k or R) + 1) + 1.0))
    return np.where(top, 1.0 / np.log2(s + 1.0), 0.0).sum(axis=-1) / ideal


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
        s = np.arange(1, R + 1)[:, None] + np.arange(m + 1)[None, :]
        miss = (pmf * (s > k)).sum(axis=1)
        p = 1.0 - float(np.prod(miss))
        return p, p * (1.0 - p)
    f = _item_values(family, k, R, m)
    mean_j = (pmf * f).sum(axis=1)
    var_j = (pmf * f**2).sum(axis=1) - mean_j**2
    return float(mean_j.sum()), float(np.maximum(var_j, 0.0).sum())


def expected_multi_metric(
    metric: str, ranks: np.ndarray, n: int, m: int, replace: bool = True, *, method: str = "independent"
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
        pmf = multi_rank_pmf(ranks, n, m, replace)
        return float(min(1.0, pmf[0, : min(k, m + 1)].sum()))
    return multi_metric_moments(metric, ranks, n, m, replace)[0]
