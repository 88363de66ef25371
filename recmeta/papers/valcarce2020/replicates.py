"""Bootstraps over users for the ledger of Valcarce et al. (2020): τ among metrics and DP.

The users are resampled with replacement; every (fold, user) topic of a user carries the user's
count, so a user's topics stay together (a cluster bootstrap, :func:`cluster_means`).

* :func:`tau_replicates` — Kendall's τ among the metrics' system orderings and between each
  metric's arithmetic and geometric orderings, with replicates.
* :func:`dp_replicates`, :func:`dp_mc_halfwidth` and :func:`dp_estimate` — discriminative power
  (DP, the sum of p-values over all system pairs) with its interval.

Geometric means floor zeros at :data:`recmeta.metrics.GMEAN_FLOOR` (1e-5, trec_eval's
``gm_map``): ``GM = exp(mean(log(max(x, 1e-5))))`` over the evaluated topics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...ledger import Estimate
from ...metaeval import agreement, bootstrap
from ...metaeval.significance import bootstrap_dp_t, evaluated_users, monte_carlo_se
from ...metrics import GMEAN_FLOOR
from .folds import AGGREGATES

__all__ = [
    "TauReplicates",
    "cluster_means",
    "dp_replicates",
    "dp_estimate",
    "dp_mc_halfwidth",
    "tau_replicates",
]


def cluster_means(
    matrix: ArrayLike, unit_of_topic: ArrayLike, counts: ArrayLike, how: str = "mean"
) -> np.ndarray:
    """System means of a (systems × topics) matrix in bootstrap resamples of units: (B × systems).

    ``counts`` (B × units) says how often each unit (user) is drawn in each resample
    (:func:`recmeta.metaeval.bootstrap.resample_counts`); every topic of a unit carries the
    unit's count, so resampling users keeps all of a user's (fold, user) topics together (a
    cluster bootstrap), and :func:`recmeta.metaeval.bootstrap.weighted_means` does the rest.
    NaN topics drop out as in :func:`recmeta.metrics.aggregate`; ``how="gmean"`` averages
    ``log(max(x, GMEAN_FLOOR))`` and exponentiates.
    """
    x = np.asarray(matrix, dtype=np.float64)
    if how == "gmean":
        x = np.log(np.maximum(x, GMEAN_FLOOR))  # NaN stays NaN
    elif how != "mean":
        raise ValueError(f"how must be one of {AGGREGATES}, got {how!r}")
    per_topic = np.asarray(counts, dtype=np.float64)[:, np.asarray(unit_of_topic)]
    out = bootstrap.weighted_means(x, per_topic)
    return np.exp(out) if how == "gmean" else out


@dataclass(frozen=True)
class TauReplicates:
    """Kendall τ among the metrics' system orderings, with replicates of a bootstrap over users.

    ``point[agg]`` and ``reps[agg]`` are (metrics × metrics) and (resamples × metrics × metrics)
    for ``agg`` in mean/gmean; ``arith_geo`` and ``arith_geo_reps`` hold τ between each metric's
    arithmetic and geometric orderings. ``metrics`` are the short names (P, R, ...).
    """

    metrics: tuple[str, ...]
    point: dict[str, np.ndarray]
    reps: dict[str, np.ndarray]
    arith_geo: np.ndarray
    arith_geo_reps: np.ndarray

    @property
    def n_boot(self) -> int:
        return int(self.arith_geo_reps.shape[0])


def tau_replicates(
    matrices: Mapping[str, np.ndarray], topics: pd.DataFrame, *, n_boot: int, seed: int
) -> TauReplicates:
    """τ among metrics and τ(arithmetic, geometric) with a cluster bootstrap over users.

    ``matrices`` maps engine names (``"P@100"``) to (systems × topics) scores; ``topics`` gives
    each topic's user (:attr:`Study.topics`). Each replicate resamples users with replacement
    (:func:`recmeta.metaeval.bootstrap.resample_counts`), recomputes every system mean
    (:func:`cluster_means`) and the τ matrices (:func:`recmeta.metaeval.agreement.kendall_tau`).
    """
    names = list(matrices)
    short = tuple(n.split("@", 1)[0] for n in names)
    codes, users = pd.factorize(topics["user"])
    counts = bootstrap.resample_counts(len(users), n_boot, seed)
    ones = np.ones((1, len(users)))
    point, reps, means = {}, {}, {}
    for agg in AGGREGATES:
        full = np.stack([cluster_means(matrices[n], codes, ones, agg)[0] for n in names])  # M × S
        boot = np.stack(
            [cluster_means(matrices[n], codes, counts, agg) for n in names], axis=1
        )  # B × M × S
        means[agg] = (full, boot)
        point[agg] = agreement.kendall_tau(full[:, None, :], full[None, :, :])
        reps[agg] = agreement.kendall_tau(boot[:, :, None, :], boot[:, None, :, :])
    ag = agreement.kendall_tau(means["mean"][0], means["gmean"][0])
    ag_reps = agreement.kendall_tau(means["mean"][1], means["gmean"][1])
    return TauReplicates(short, point, reps, ag, ag_reps)


def dp_replicates(
    user_matrices: Mapping[str, np.ndarray], *, n_boot: int, seed: int
) -> tuple[pd.DataFrame, pd.Series]:
    """DP in bootstrap resamples of the users: (replicates (B × metrics), base (metrics,)).

    Each resample draws the users with replacement
    (:func:`recmeta.metaeval.bootstrap.resample_counts`; the same draws for every metric, so the
    replicates are paired across metrics) and sums the paired t-test p-values of all system
    pairs (:func:`recmeta.metaeval.significance.bootstrap_dp_t`, a stand-in for the permutation
    test, close to it with hundreds of users). ``base`` is that
    t-test DP on the users as they are: :func:`dp_estimate` places the replicates' spread
    around the permutation DP by ``value + (replicate − base)``. Short metric names.
    """
    names = list(user_matrices)
    first = evaluated_users(user_matrices[names[0]])
    counts = bootstrap.resample_counts(first.shape[1], n_boot, seed)
    ones = np.ones((1, first.shape[1]))
    reps, base = {}, {}
    for n in names:
        a = evaluated_users(user_matrices[n])
        if a.shape != first.shape:
            raise ValueError(f"{n}: {a.shape} per-user scores, {first.shape} for {names[0]}")
        short = n.split("@", 1)[0]
        reps[short] = bootstrap_dp_t(a, counts)
        base[short] = float(bootstrap_dp_t(a, ones)[0])
    return pd.DataFrame(reps), pd.Series(base)


def dp_mc_halfwidth(pvalues: pd.DataFrame, n_permutations: int, z: float = 1.96) -> pd.Series:
    r"""Monte-Carlo half-width of DP per metric: :math:`z\sum_{pairs}\sqrt{p(1-p)/B}`.

    An upper bound: the p-values of one metric share their sign flips, so their errors may be
    correlated; summing the standard errors assumes the worst (perfect) correlation.
    """
    p = pvalues["p"].to_numpy()
    se = monte_carlo_se(p, n_permutations)
    return (
        pd.Series(z * se, index=pvalues["metric"].to_numpy())
        .groupby(level=0, sort=False)
        .sum()
        .rename(index=lambda n: n.split("@", 1)[0])
    )


def dp_estimate(
    dp: pd.Series,
    reps: pd.DataFrame,
    base: pd.Series,
    mc: pd.Series,
    metric: str,
    minus: str | None = None,
    level: float = 0.95,
) -> Estimate:
    """DP of ``metric`` (or DP(metric) − DP(minus)) with its interval.

    The value is the permutation-test DP. The interval is the BC interval of the
    bootstrap replicates over users (:func:`dp_replicates`, paired across metrics) placed around
    the value, ``value + (replicate − base)`` (resampling adds noise to a difference near zero,
    which biases replicate p-values low; shifting by the replicates' own base keeps their
    spread and drops that bias), widened by the Monte-Carlo half-width of the permutation
    p-values (:func:`dp_mc_halfwidth`; both metrics' for a difference). A DP is clipped at 0.
    """
    r = reps[metric] - (reps[minus] if minus else 0.0)
    b = float(base[metric] - (base[minus] if minus else 0.0))
    value = float(dp[metric] - (dp[minus] if minus else 0.0))
    r = value + (r[np.isfinite(r)].to_numpy() - b)
    widen = float(mc[metric] + (mc[minus] if minus else 0.0))
    ends = (
        bootstrap.replicate_ends(r, level, point=value) if r.size else bootstrap.Ends(value, value)
    )
    lo, hi = ends.low - widen, ends.high + widen
    low_open = ends.low_open
    if minus is None:
        # a DP is at least 0: an end clipped there is placed, whatever the replicates
        low_open = low_open and lo > 0.0
        lo, hi = max(lo, 0.0), max(hi, 0.0)
    return Estimate(
        value,
        lo,
        hi,
        f"BC interval of {r.size} bootstrap replicates over users (paired "
        f"t-test p-values, centred on the permutation DP), widened by the Monte-Carlo "
        f"error of the p-values, {level:.0%}",
        low_open,
        ends.high_open,
    )
