"""Tidy frames for the chapter's figures: metrics against rank, against m, and order probabilities.

* :func:`rank_curves` — E[M(r̃) | r] against the true rank r for several m (Krichene & Rendle
  2020, Figs. 1 and 3; m = None gives the exact metric).
* :func:`m_curves` — the expected mean of each estimator against m for a set of runs (Figs. 2, 6).
* :func:`order_probability` — the probability that one repetition orders two systems as their
  exact metric does, by a normal approximation to the difference of the two means (ours).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from .evaluation import (
    Estimator,
    _score_table,
    exact_metrics,
    expected_evaluation,
    fit_n as _fit_n,
    parse_estimator,
)
from .expected import expected_metric, expected_value
from .rank_distribution import check_sampling
from .rank_metrics import metric_value, parse_rank_metric

__all__ = [
    "rank_curves",
    "m_curves",
    "estimator_moments",
    "order_probability",
    "order_probabilities",
    "smallest_reliable_m",
    "reliable_m",
]


def rank_curves(
    metrics: Sequence[str],
    ranks: np.ndarray,
    n: int,
    ms: Iterable[int | None],
    replace: bool = True,
) -> pd.DataFrame:
    """E[M(r̃) | r] for each metric, true rank and m: columns metric, m, rank, value.

    ``m = None`` gives the exact metric M_n(r), labelled ``"exact"`` in the (string) column m.
    """
    r = np.asarray(ranks)
    parts = []
    for metric in metrics:
        name = parse_rank_metric(metric).name
        for m in ms:
            value = (
                metric_value(name, r, n)
                if m is None
                else expected_metric(name, r, n, int(m), replace)
            )
            parts.append(
                pd.DataFrame(
                    {
                        "metric": name,
                        "m": "exact" if m is None else str(m),
                        "rank": r,
                        "value": value,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def m_curves(
    ranks: Mapping[str, np.ndarray],
    n: np.ndarray | int,
    ms: Iterable[int],
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator] = ("sampled",),
    *,
    replace: bool = True,
    fit_n: int | None = None,
) -> pd.DataFrame:
    """Expected mean of each estimator for each m: columns m, system, metric, estimator, value."""
    parts = []
    for m in ms:
        frame = expected_evaluation(
            ranks, n, int(m), metrics, estimators, replace=replace, fit_n=fit_n
        )
        parts.append(frame.assign(m=int(m)))
    return pd.concat(parts, ignore_index=True)[["m", "system", "metric", "estimator", "value"]]


def estimator_moments(
    ranks: np.ndarray,
    n: np.ndarray | int,
    m: int,
    metric: str,
    estimator: str | Estimator,
    *,
    replace: bool = True,
    fit_n: int | None = None,
    table: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per user, the mean and variance of the estimator's score of r̃ given the true rank.

    ``table`` reuses an already built estimator vector; otherwise it is built for one n
    (:func:`~recmeta.sampled.evaluation.fit_n`).
    """
    est = parse_estimator(estimator)
    r, nn, m = check_sampling(ranks, n, m, replace)
    if table is not None:
        tab = np.asarray(table, dtype=np.float64)
    else:
        tab = _score_table(metric, est, nn, m, _fit_n(nn, fit_n), replace, None)
    mean = expected_value(tab, r, nn, m, replace)
    second = expected_value(tab**2, r, nn, m, replace)
    return mean, np.maximum(second - mean**2, 0.0)


def order_probability(
    a: np.ndarray,
    b: np.ndarray,
    n: np.ndarray | int,
    m: int,
    metric: str,
    estimator: str | Estimator = "sampled",
    *,
    replace: bool = True,
    fit_n: int | None = None,
) -> float:
    """P(one repetition orders systems a and b as the exact metric does), normal approximation.

    With independent draws per user and system, the difference D of the two user-means has mean
    μ = mean_u E_a − mean_u E_b and variance (Σ_u Var_a + Σ_u Var_b)/U²; the order is right with
    probability Φ(s μ / sd(D)) where s is the sign of the exact difference (NaN if the exact
    metrics tie). Good when users are many; the chapter checks it against simulation.
    """
    ra, rb = np.asarray(a), np.asarray(b)
    exact = exact_metrics({"a": ra, "b": rb}, n, [metric]).set_index("system")["value"]
    sign = np.sign(exact["a"] - exact["b"])
    if sign == 0:
        return float("nan")
    ma, va = estimator_moments(ra, n, m, metric, estimator, replace=replace, fit_n=fit_n)
    mb, vb = estimator_moments(rb, n, m, metric, estimator, replace=replace, fit_n=fit_n)
    mu = ma.mean() - mb.mean()
    sd = np.sqrt(va.sum() / ra.size**2 + vb.sum() / rb.size**2)
    if sd == 0:
        return float(np.sign(mu) == sign)
    return float(stats.norm.cdf(sign * mu / sd))


def order_probabilities(
    ranks: Mapping[str, np.ndarray],
    n: np.ndarray | int,
    ms: Iterable[int],
    metrics: Sequence[str],
    estimators: Sequence[str | Estimator] = ("sampled",),
    *,
    replace: bool = True,
    fit_n: int | None = None,
) -> pd.DataFrame:
    """:func:`order_probability` for every pair of systems, metric, estimator and m.

    Columns m, pair ("a vs b" in the mapping's order), metric, estimator, probability. Each
    correction is fitted once per (m, metric, estimator).
    """
    names = list(ranks)
    rs = {k: np.asarray(v) for k, v in ranks.items()}
    exact = exact_metrics(rs, n, metrics).set_index(["system", "metric"])["value"]
    rows = []
    for m in ms:
        for metric in metrics:
            name = parse_rank_metric(metric).name
            for e in estimators:
                est = parse_estimator(e)
                first = next(iter(rs.values()))
                _, nn, _ = check_sampling(first, n, int(m), replace)
                table = _score_table(name, est, nn, int(m), _fit_n(nn, fit_n), replace, None)
                mom = {
                    k: estimator_moments(r, n, int(m), name, est, replace=replace, table=table)
                    for k, r in rs.items()
                }
                for a, b in combinations(names, 2):
                    sign = np.sign(exact[(a, name)] - exact[(b, name)])
                    mu = mom[a][0].mean() - mom[b][0].mean()
                    sd = np.sqrt(
                        mom[a][1].sum() / rs[a].size ** 2 + mom[b][1].sum() / rs[b].size ** 2
                    )
                    if sign == 0:
                        prob = float("nan")
                    elif sd == 0:
                        prob = float(np.sign(mu) == sign)
                    else:
                        prob = float(stats.norm.cdf(sign * mu / sd))
                    rows.append((int(m), f"{a} vs {b}", name, est.label, prob))
    return pd.DataFrame(rows, columns=["m", "pair", "metric", "estimator", "probability"])


def smallest_reliable_m(
    a: np.ndarray,
    b: np.ndarray,
    n: int,
    ms: Sequence[int],
    metric: str,
    estimator: str | Estimator = "sampled",
    *,
    level: float = 0.95,
    replace: bool = True,
) -> int | None:
    """The smallest m in ``ms`` (sorted) from which on every larger m in ``ms`` the order
    probability stays at least ``level``; None if the last m falls short."""
    probs = np.array(
        [order_probability(a, b, n, int(m), metric, estimator, replace=replace) for m in ms]
    )
    ok = probs >= level
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(ms[0] if bad.size == 0 else ms[bad[-1] + 1])


def reliable_m(probabilities: pd.DataFrame, level: float = 0.95) -> pd.Series:
    """From an :func:`order_probabilities` frame: per (pair, metric, estimator), the smallest m of
    the grid from which the probability stays at least ``level``; NaN if the largest m falls
    short."""

    def first(group: pd.DataFrame) -> float:
        g = group.sort_values("m")
        ok = (g["probability"] >= level).to_numpy()
        if not ok[-1]:
            return float("nan")
        bad = np.flatnonzero(~ok)
        return float(g["m"].iloc[0 if bad.size == 0 else bad[-1] + 1])

    keys = ["pair", "metric", "estimator"]
    return (
        probabilities.groupby(keys, sort=False)[["m", "probability"]]
        .apply(first)
        .rename("smallest m")
    )
