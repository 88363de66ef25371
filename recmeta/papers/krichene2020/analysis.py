"""Direct transcriptions of Krichene & Rendle's (2020) formulas, set against the package.

Each function transcribes a numbered equation of the paper as printed (sums and indicators, no
closed form of ours) and returns the largest gap to :mod:`recmeta.sampled` or the quantity a
statement of the paper is about:

- :func:`general_metrics`: eqs. 2–6 for a set R of relevant ranks, and :func:`metric_gaps`
  their |R| = 1 forms (eqs. 7–13) against :func:`recmeta.sampled.metric_value`;
- :func:`enumerated_law`: the sampled rank by enumerating every draw (eqs. 15–16);
- :func:`recall_cdf_gap` (eq. 18), :func:`rank_estimate_gaps` (eq. 20),
  :func:`least_squares_checks` (eqs. 21–23), :func:`bv_checks` (eqs. 24–25);
- :func:`weighted_bias` (§5.5, Fig. 3), :func:`linearity` (Fig. 3, §4.4.4),
  :func:`decay_share` (Fig. 1), :func:`metric_spread` (the abstract's collapse).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import combinations, permutations, product

import numpy as np
from scipy import stats

from ... import sampled

__all__ = [
    "bv_checks",
    "decay_share",
    "enumerated_law",
    "general_metrics",
    "law_gaps",
    "least_squares_checks",
    "linearity",
    "metric_gaps",
    "metric_spread",
    "rank_estimate_gaps",
    "recall_cdf_gap",
    "weighted_bias",
]


def general_metrics(R: Sequence[int], n: int, k: int) -> dict[str, float]:
    """Eqs. 2–6 for the set R of relevant ranks among n items, cut-off k, as printed: AUC by the
    double sum of indicators (eq. 2, first line), Prec@k, Recall@k, AP@k (mean precision at the
    relevant ranks up to k over min(|R|, k)) and NDCG@k (its ideal DCG over min(|R|, k))."""
    rel = np.unique(np.asarray(R, dtype=np.int64))
    if rel.size == 0 or rel.min() < 1 or rel.max() > n:
        raise ValueError(f"R must be non-empty ranks in 1..n = {n}, got {list(R)}")
    others = np.setdiff1d(np.arange(1, n + 1), rel)
    auc = (rel[:, None] < others[None, :]).sum() / (rel.size * (n - rel.size))
    i = np.arange(1, k + 1)
    hit = np.isin(i, rel)
    prec_i = np.cumsum(hit) / i
    disc = 1.0 / np.log2(i + 1.0)
    return {
        "AUC": float(auc),
        f"Precision@{k}": hit.sum() / k,
        f"Recall@{k}": hit.sum() / rel.size,
        f"AP@{k}": float((hit * prec_i).sum() / min(rel.size, k)),
        f"NDCG@{k}": float((hit * disc).sum() / disc[: min(rel.size, k)].sum()),
    }


def _simplified(family: str, r: np.ndarray, n: int, k: int) -> np.ndarray:
    """Eqs. 7–13 as printed, for one relevant item at ranks ``r`` (k = n: untruncated)."""
    within = r <= k
    return {
        "AUC": (n - r) / (n - 1.0),  # eq. 7
        "Precision": within / k,  # eq. 8
        "Recall": within * 1.0,  # eq. 9
        "AP": within / r,  # eqs. 10, 12
        "NDCG": within / np.log2(r + 1.0),  # eqs. 11, 13
    }[family]


def metric_gaps(ranks: Sequence[int], n: int, k: int) -> dict[str, float]:
    """Largest gaps over ``ranks``: eqs. 2–6 on R = {r} against eqs. 7–11, and eqs. 7–13
    against :func:`recmeta.sampled.metric_value` (also under the names RR, HR@k, and P@1 for
    Recall@1, which §3.1 says coincide)."""
    r = np.asarray(ranks, dtype=np.int64)
    fams = ("AUC", "Precision", "Recall", "AP", "NDCG")
    names = {f: f if f == "AUC" else f"{f}@{k}" for f in fams}
    general = [general_metrics([int(x)], n, k) for x in r]
    simple = {f: _simplified(f, r, n, k) for f in fams}
    set_gap = max(float(np.max(np.abs([g[names[f]] for g in general] - simple[f]))) for f in fams)
    pkg = {f: sampled.metric_value(names[f], r, n) for f in fams}
    pkg |= {"AP@n": sampled.metric_value("AP", r, n), "NDCG@n": sampled.metric_value("NDCG", r, n)}
    own = dict(simple) | {
        "AP@n": _simplified("AP", r, n, n),
        "NDCG@n": _simplified("NDCG", r, n, n),
    }
    pkg_gap = max(float(np.max(np.abs(pkg[f] - own[f]))) for f in own)
    alias = max(
        float(np.max(np.abs(sampled.metric_value(a, r, n) - sampled.metric_value(b, r, n))))
        for a, b in (("RR", "AP"), (f"HR@{k}", f"Recall@{k}"), ("P@1", "Recall@1"))
    )
    return {"eqs. 2–6 vs 7–11": set_gap, "eqs. 7–13 vs package": pkg_gap, "aliases": alias}


def enumerated_law(r: int, n: int, m: int, replace: bool) -> np.ndarray:
    """p(r̃ = i | r), i = 1..m+1, by enumerating every draw of m of the n − 1 other items
    (with replacement, or without), each ordered draw equally likely: the protocol itself,
    for small n and m."""
    others = [j for j in range(1, n + 1) if j != r]
    draws = product(others, repeat=m) if replace else permutations(others, m)
    counts = np.zeros(m + 1)
    for d in draws:  # every ordered draw is equally likely under both laws
        counts[sum(x < r for x in d)] += 1
    return counts / counts.sum()


def law_gaps(n: int, m: int, ranks: Sequence[int], toy_n: int, toy_m: int) -> dict[str, float]:
    """Eqs. 15–16: the enumerated law against :func:`recmeta.sampled.rank_pmf` at a small n, m
    (both laws, every r), and ``rank_pmf`` against scipy's binomial and hypergeometric laws with
    p = (r − 1)/(n − 1) at the example's n and m for ``ranks``."""
    small = max(
        float(
            np.max(
                np.abs(enumerated_law(r, n, m, rep) - sampled.rank_pmf(np.array([r]), n, m, rep)[0])
            )
        )
        for rep in (True, False)
        for r in range(1, n + 1)
    )
    r = np.asarray(ranks, dtype=np.int64)[:, None]
    x = np.arange(toy_m + 1)[None, :]
    binom = stats.binom.pmf(x, toy_m, (r - 1) / (toy_n - 1))
    hyper = stats.hypergeom.pmf(x, toy_n - 1, r - 1, toy_m)
    big = max(
        float(np.max(np.abs(sampled.rank_pmf(r[:, 0], toy_n, toy_m, True) - binom))),
        float(np.max(np.abs(sampled.rank_pmf(r[:, 0], toy_n, toy_m, False) - hyper))),
    )
    return {"enumerated": small, "scipy": big}


def recall_cdf_gap(n: int, m: int, ks: Sequence[int]) -> float:
    """Eq. 18: largest |E[Recall@k(r̃)] − CDF(k − 1; m, (r − 1)/(n − 1))| over every r and k,
    with the hypergeometric CDF for sampling without replacement."""
    r = np.arange(1, n + 1)
    gaps = []
    for k in ks:
        for rep in (True, False):
            ours = sampled.expected_metric(f"Recall@{k}", r, n, m, rep)
            cdf = (
                stats.binom.cdf(k - 1, m, (r - 1) / (n - 1))
                if rep
                else stats.hypergeom.cdf(k - 1, n - 1, r - 1, m)
            )
            gaps.append(float(np.max(np.abs(ours - cdf))))
    return max(gaps)


def rank_estimate_gaps(metric: str, n: int, m: int) -> dict[str, float]:
    """Eq. 20: the package's rank-estimate correction against M(⌊1 + (n − 1)(r̃ − 1)/m⌋), and
    the largest |E[r̂ | r] − r| of the unrounded estimate r̂ = 1 + (n − 1)(r̃ − 1)/m over every r
    (binomial law, scipy)."""
    i = np.arange(1, m + 2)
    est = np.floor(1 + (n - 1) * (i - 1) / m).astype(np.int64)
    direct = sampled.metric_value(metric, est, n)
    pkg = sampled.correction(metric, n, m, "rank-estimate")
    r = np.arange(1, n + 1)[:, None]
    pmf = stats.binom.pmf(i[None, :] - 1, m, (r - 1) / (n - 1))
    mean = pmf @ (1 + (n - 1) * (i - 1) / m)
    return {
        "vector": float(np.max(np.abs(pkg - direct))),
        "unbiased": float(np.max(np.abs(mean - r[:, 0]))),
    }


def _system(metric: str, n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """p(r̃ | r) from scipy's binomial (n × (m+1)), the uniform prior and M(r), transcribed."""
    r = np.arange(1, n + 1)
    P = stats.binom.pmf(np.arange(m + 1)[None, :], m, ((r - 1) / (n - 1))[:, None])
    return P, np.full(n, 1.0 / n), sampled.metric_value(metric, r, n)


def _objective(x: np.ndarray, P: np.ndarray, w: np.ndarray, M: np.ndarray, gamma: float) -> float:
    """Eq. 24 (eq. 21 at γ = 0): Σ_r p(r) ((E[x(r̃)|r] − M(r))² + γ Var[x(r̃)|r])."""
    mean = P @ x
    var = P @ x**2 - mean**2
    return float(np.sum(w * ((mean - M) ** 2 + gamma * var)))


def least_squares_checks(metric: str, n: int, m: int, seed: int = 0) -> dict[str, float]:
    """Eqs. 21–23 at a small, well-conditioned n and m: the objective of eq. 21 against
    ‖A M̂ − b‖² with A_{r,r̃} = √p(r) p(r̃|r), b_r = √p(r) M(r) (our reading of eq. 23) on random
    vectors (relative gap), the package's least-squares vector against (AᵀA)⁻¹Aᵀb (eq. 22),
    and the same check with eq. 23 as our copy of the text prints it, A_{r,r̃} = √(p(r) p(r̃))."""
    P, w, M = _system(metric, n, m)
    A = np.sqrt(w)[:, None] * P
    b = np.sqrt(w) * M
    xs = np.random.default_rng(seed).normal(size=(5, m + 1))
    rel = max(abs(_objective(x, P, w, M, 0.0) - np.sum((A @ x - b) ** 2)) for x in xs)
    scale = max(_objective(x, P, w, M, 0.0) for x in xs)
    solved = np.linalg.solve(A.T @ A, A.T @ b)
    pkg = sampled.correction(metric, n, m, "least-squares")
    printed = np.sqrt(w[:, None] * (P.T @ w)[None, :])
    rel_printed = max(abs(_objective(x, P, w, M, 0.0) - np.sum((printed @ x - b) ** 2)) for x in xs)
    return {
        "objective": rel / scale,
        "solution": float(np.max(np.abs(pkg - solved)) / np.max(np.abs(solved))),
        "as printed": rel_printed / scale,
        "condition": float(np.linalg.cond(A)),
    }


def least_squares_floor(metric: str, n: int, ms: Sequence[int]) -> dict[int, float]:
    """The minimum of eq. 21 (uniform prior) for each m: how much bias no correction removes."""
    out = {}
    for m in ms:
        P, w, M = _system(metric, n, m)
        x = np.linalg.lstsq(np.sqrt(w)[:, None] * P, np.sqrt(w) * M, rcond=None)[0]
        out[int(m)] = _objective(x, P, w, M, 0.0)
    return out


def bv_checks(metric: str, n: int, m: int, gamma: float, seed: int = 0) -> dict[str, float]:
    """Eqs. 24–25: the package's BV γ vector against ((1 − γ) AᵀA + γ diag(c))⁻¹ Aᵀb with
    c_r̃ = Σ_r p(r) p(r̃|r) (relative gap), and the smallest relative rise of eq. 24's objective
    when that solution is moved along random directions (positive: it is the minimum)."""
    P, w, M = _system(metric, n, m)
    A = np.sqrt(w)[:, None] * P
    b = np.sqrt(w) * M
    c = P.T @ w
    solved = np.linalg.solve((1 - gamma) * A.T @ A + gamma * np.diag(c), A.T @ b)
    pkg = sampled.correction(metric, n, m, "bv", gamma)
    best = _objective(solved, P, w, M, gamma)
    rng = np.random.default_rng(seed)
    rises = []
    for _ in range(8):
        d = rng.normal(size=m + 1)
        d *= 1e-3 * np.linalg.norm(solved) / np.linalg.norm(d)
        rises.append(
            min(_objective(solved + d, P, w, M, gamma), _objective(solved - d, P, w, M, gamma))
            - best
        )
    return {
        "solution": float(np.max(np.abs(pkg - solved)) / np.max(np.abs(solved))),
        "rise": float(min(rises) / best),
    }


@functools.lru_cache(maxsize=64)
def weighted_bias(metric: str, n: int, m: int, estimator: str = "sampled") -> float:
    """Σ_r p(r) (E[M̂(r̃) | r] − M(r))², uniform prior, binomial law: the squared bias of the
    uncorrected metric (``"sampled"``) or of a correction (``"BV 0.1"``...) at n and m."""
    r = np.arange(1, n + 1)
    if estimator == "sampled":
        values = sampled.sampled_metric_values(metric, m)
    else:
        spec = sampled.parse_estimator(estimator)
        if spec.method is None:
            raise ValueError(f"estimator {estimator!r}: write the uncorrected metric 'sampled'")
        values = sampled.correction(metric, n, m, spec.method, spec.gamma)
    mean = sampled.expected_value(values, r, n, m)
    return float(np.mean((mean - sampled.metric_value(metric, r, n)) ** 2))


@functools.lru_cache(maxsize=64)
def linearity(metric: str, n: int, m: int | None) -> float:
    """How far E[M(r̃) | r] over r = 1..n (the exact metric when ``m`` is None) is from a line in
    r: the largest residual of its least-squares line over the curve's own range (0: linear or
    constant)."""
    r = np.arange(1, n + 1)
    y = (
        sampled.metric_value(metric, r, n)
        if m is None
        else sampled.expected_metric(metric, r, n, m)
    )
    span = float(y.max() - y.min())
    if span <= 1e-12:
        return 0.0
    design = np.column_stack([np.ones(r.size), r])
    resid = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    return float(np.max(np.abs(resid)) / span)


def decay_share(metric: str, n: int, top: int) -> float:
    """Fig. 1: the share of the metric's whole decay M(1) − M(n) spent within the top ``top``
    ranks, (M(1) − M(top)) / (M(1) − M(n))."""
    v = sampled.metric_value(metric, np.array([1, top, n]), n)
    return float((v[0] - v[1]) / (v[0] - v[2]))


def metric_spread(metrics: Sequence[str], n: int, m: int, points: int = 400) -> float:
    """The abstract's "the smaller the sampling size, the less difference between metrics":
    the largest distance between two metrics' expected sampled curves over the true rank, each
    rescaled to run from 1 at r = 1 to 0 at r = n (constant curves, which rank nothing, are
    left out), on ``points`` ranks spread over 1..n."""
    r = np.unique(np.linspace(1, n, points).round().astype(np.int64))
    curves = []
    for metric in metrics:
        y = sampled.expected_metric(metric, r, n, m)
        span = y[0] - y[-1]
        if abs(span) > 1e-12:
            curves.append((y - y[-1]) / span)
    return max((float(np.max(np.abs(a - b))) for a, b in combinations(curves, 2)), default=0.0)
