r"""Robustness curves of Valcarce et al. (2020) summarised: areas, bands, points, and precision.

* :func:`robustness_summary` and :func:`area_estimate` — the area under a robustness curve (mean
  τ over the shares by the trapezoid rule, so an uneven grid of shares is weighted by the width
  each share stands for) with a Monte-Carlo band over the random masks, or ± one swapped system
  pair's τ step (:func:`tau_resolution`) for the deterministic ones.
* :func:`curve_point` — one point of a curve with its band.
* :func:`expected_precision_ratio` — what random rating removal does to mean P@k when topics
  left without a relevant item drop out of the mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats
from scipy.special import gammaln

from ...ledger import Estimate

__all__ = [
    "area_estimate",
    "curve_point",
    "expected_precision_ratio",
    "robustness_summary",
    "tau_resolution",
    "trapezoid_weights",
]


def trapezoid_weights(shares: ArrayLike) -> np.ndarray:
    r"""Weights :math:`w` with
    :math:`\sum_i w_i \tau_i = \frac{1}{s_{\max} - s_{\min}}\int \tau\,ds` by the trapezoid
    rule over the actual shares.

    With the shares sorted, :math:`s_{(0)} < \dots < s_{(m)}`:
    :math:`w_{(i)} = (s_{(i+1)} - s_{(i-1)}) / (2 (s_{(m)} - s_{(0)}))`, where
    :math:`s_{(-1)} = s_{(0)}` and :math:`s_{(m+1)} = s_{(m)}`; the weights sum to 1 and come
    back in the input order. An uneven grid (the paper's 100 %, 95 %, ..., 5 %, 1 %) gives each
    share the width it stands for; a single share gets weight 1.
    """
    s = np.asarray(shares, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not np.isfinite(s).all():
        raise ValueError(f"shares must be a non-empty 1-d array of finite numbers, got {s!r}")
    if np.unique(s).size != s.size:
        raise ValueError(f"shares must be distinct, got {s}")
    if s.size == 1:
        return np.ones(1)
    order = np.argsort(s)
    x = s[order]
    left = np.r_[x[0], x[:-1]]
    right = np.r_[x[1:], x[-1]]
    out = np.empty_like(x)
    out[order] = (right - left) / (2.0 * (x[-1] - x[0]))
    return out


def tau_resolution(n_systems: int) -> float:
    r"""Half the change of Kendall's τ when one pair of systems swaps: :math:`1/\binom{S}{2}`.

    The band given to the area of a curve from deterministic masks (popular items, largest
    users): two such areas closer than one swapped pair (:math:`2/\binom{S}{2}`) count as tied.
    """
    if n_systems < 2:
        raise ValueError(f"need at least two systems, got {n_systems}")
    return 2.0 / (n_systems * (n_systems - 1))


def _area_parts(share: np.ndarray, value: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, bool]:
    """Trapezoid area of per-mask values: (area, a_i = w_i² s_i²/n_i, n_i, deterministic)."""
    frame = pd.DataFrame({"share": share, "value": value})
    g = frame.groupby("share", sort=True)["value"]
    mean, sd, n = g.mean(), g.std(ddof=1), g.size()
    w = trapezoid_weights(mean.index.to_numpy())
    area = float(np.dot(w, mean.to_numpy()))
    deterministic = bool((n == 1).all())
    a = (w**2) * np.nan_to_num(sd.to_numpy() ** 2) / n.to_numpy()
    return area, a, n.to_numpy(), deterministic


def _area_estimate(
    parts: Sequence[tuple[float, np.ndarray, np.ndarray, bool]],
    signs: Sequence[float],
    resolution: float,
    level: float,
    what: str,
) -> Estimate:
    """Combine independent areas ``Σ sign · area`` into an Estimate (:func:`area_estimate`)."""
    value = float(sum(s * p[0] for s, p in zip(signs, parts, strict=True)))
    random = [p for p in parts if not p[3]]
    a = np.concatenate([p[1] for p in random]) if random else np.zeros(0)
    n = np.concatenate([p[2] for p in parts if not p[3]]) if a.size else np.zeros(0)
    half_det = sum(resolution for p in parts if p[3])
    var = float(a.sum())
    half_mc = 0.0
    if var > 0:
        live = (a > 0) & (n > 1)
        df = var**2 / float(np.sum(a[live] ** 2 / (n[live] - 1)))
        half_mc = float(stats.t.ppf(0.5 + level / 2, df)) * np.sqrt(var)
    masks = int(n.sum())
    if half_det and masks:
        method = (
            f"{what}: t interval over {masks} random masks plus ± {resolution:.3g} per "
            f"deterministic curve (one system pair's step of τ), {level:.0%}"
        )
    elif half_det:
        method = (
            f"{what}: deterministic masks, ± {half_det:.3g} (one system pair's step of τ "
            "counts as a tie)"
        )
    else:
        method = (
            f"{what}: t interval over {masks} random masks (Welch–Satterthwaite df), {level:.0%}"
        )
    half = half_mc + half_det
    return Estimate(value, value - half, value + half, method)


def _select(taus: pd.DataFrame, scheme: str, aggregate: str, metric: str | None) -> pd.DataFrame:
    t = taus[(taus["scheme"] == scheme) & (taus["aggregate"] == aggregate)]
    if metric is not None:
        t = t[t["metric"] == metric]
    if t.empty:
        raise KeyError(
            f"no τ values for scheme {scheme!r}, aggregate {aggregate!r}, metric {metric!r}"
        )
    # one value per mask: τ of the metric, or the mean over metrics
    return t.groupby(["share", "sample"], as_index=False)["tau"].mean()


def area_estimate(
    taus: pd.DataFrame,
    *,
    scheme: str,
    aggregate: str = "mean",
    metric: str | None = None,
    minus: Mapping[str, str | None] | None = None,
    n_systems: int,
    level: float = 0.95,
) -> Estimate:
    r"""Area under a robustness curve (mean τ over the shares, trapezoid rule), with its band.

    ``taus`` holds one τ per mask (columns scheme, aggregate, metric, share, sample, tau; see
    :func:`robustness`). ``metric=None`` averages the nine metrics on each mask first.
    ``minus`` (keys scheme, aggregate, metric; missing keys default to this call's) makes it
    the difference of two areas: *paired* by mask when both use the same scheme (same masks),
    independent otherwise.

    The area is :math:`A = \sum_i w_i \bar\tau_i` with :func:`trapezoid_weights`. For random
    masks its Monte-Carlo variance is :math:`\sum_i w_i^2 s_i^2 / n_i` (sample variance
    :math:`s_i^2` of the :math:`n_i` masks of share :math:`i`), with a Student-t interval on
    Welch–Satterthwaite degrees of freedom. Deterministic masks (one per share) have no
    Monte-Carlo error; their band is ± :func:`tau_resolution` per curve, so two areas closer
    than one swapped system pair never count as different.
    """
    res = tau_resolution(n_systems)
    a = _select(taus, scheme, aggregate, metric)
    what = f"area of {scheme}/{aggregate}"
    if minus is None:
        return _area_estimate(
            [_area_parts(a["share"].to_numpy(), a["tau"].to_numpy())], [1.0], res, level, what
        )
    other = {"scheme": scheme, "aggregate": aggregate, "metric": metric, **dict(minus)}
    b_scheme, b_aggregate = other["scheme"], other["aggregate"]
    if b_scheme is None or b_aggregate is None:
        raise ValueError(
            f"minus must name a scheme and an aggregate (or leave them out), got {minus}"
        )
    b = _select(taus, b_scheme, b_aggregate, other["metric"])
    what = "difference of areas"
    if other["scheme"] == scheme:
        both = a.merge(b, on=["share", "sample"], suffixes=("_a", "_b"), validate="one_to_one")
        if len(both) != len(a) or len(both) != len(b):
            raise ValueError("the two curves were not measured on the same masks")
        parts = _area_parts(both["share"].to_numpy(), (both["tau_a"] - both["tau_b"]).to_numpy())
        # a paired difference of deterministic curves: one pair's step in all
        return _area_estimate([parts], [1.0], 2 * res, level, f"paired {what} (same masks)")
    pa = _area_parts(a["share"].to_numpy(), a["tau"].to_numpy())
    pb = _area_parts(b["share"].to_numpy(), b["tau"].to_numpy())
    return _area_estimate([pa, pb], [1.0, -1.0], res, level, f"{what} (independent masks)")


def robustness_summary(
    curves: pd.DataFrame,
    by: Sequence[str] = ("scheme", "aggregate"),
    *,
    n_systems: int | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """Area under each robustness curve (mean τ by the trapezoid rule), its band and rank.

    ``curves`` stacks :func:`recmeta.metaeval.agreement.robustness_curves` frames (columns
    metric, share, tau, and sd and samples for the band) with extra columns ``by``. ``mean_tau`` is
    :math:`\\sum_i w_i \\bar\\tau_i` with :func:`trapezoid_weights` over the curve's actual
    shares, so an uneven grid is weighted by the width each share stands for (not a plain mean
    of the points). ``low``/``high`` come from :func:`area_estimate`'s rule when the curves carry
    ``sd`` and ``samples`` (and ``n_systems`` is given for deterministic curves); ``rank`` is 1
    for the most robust metric within each group of ``by``.
    """
    by = list(by)
    missing = [c for c in [*by, "metric", "share", "tau"] if c not in curves.columns]
    if missing:
        raise ValueError(f"curves lack column(s) {missing}")
    banded = {"sd", "samples"} <= set(curves.columns)
    rows = []
    for key, c in curves.groupby([*by, "metric"], sort=False):
        w = trapezoid_weights(c["share"].to_numpy())
        row = dict(zip([*by, "metric"], key if isinstance(key, tuple) else (key,), strict=True))
        row["mean_tau"] = float(np.dot(w, c["tau"].to_numpy()))
        if banded:
            n = c["samples"].to_numpy()
            if (n == 1).all():
                half = tau_resolution(n_systems) if n_systems else np.nan
                row["low"], row["high"] = row["mean_tau"] - half, row["mean_tau"] + half
            else:
                # per-share sd and count rebuild the same estimate as area_estimate
                var = w**2 * np.nan_to_num(c["sd"].to_numpy() ** 2) / n
                parts = (row["mean_tau"], var, n, False)
                est = _area_estimate([parts], [1.0], 0.0, level, "area")
                row["low"], row["high"] = est.low, est.high
        rows.append(row)
    area = pd.DataFrame(rows)
    area["rank"] = area.groupby(by, sort=False)["mean_tau"].rank(ascending=False, method="min")
    return area


def curve_point(
    curves: pd.DataFrame, share: float, *, scheme: str, aggregate: str = "mean", metric: str
) -> Estimate | None:
    """τ of one curve at ``share`` with its t band over the masks, or None if off the grid."""
    c = curves[
        (curves["scheme"] == scheme)
        & (curves["aggregate"] == aggregate)
        & (curves["metric"] == metric)
        & np.isclose(curves["share"], share)
    ]
    if c.empty:
        return None
    r = c.iloc[0]
    if not (np.isfinite(r["low"]) and np.isfinite(r["high"])):
        return Estimate.point(float(r["tau"]), f"one mask at share {share:g}, no interval")
    return Estimate(
        float(r["tau"]),
        float(r["low"]),
        float(r["high"]),
        f"t interval over {int(r['samples'])} masks at share {share:g}, 95 %",
    )


def expected_precision_ratio(
    n_relevant: ArrayLike, share: float, n_ratings: int | None = None
) -> float:
    r"""Expected mean P@k on the incomplete test sets over its full value, random ratings removed.

    A hit (relevant item in the top k) survives with probability :math:`q`, so a topic's
    expected precision is :math:`q` times its full value. But a topic whose :math:`R_t` relevant
    ratings are all removed has no relevant item left and drops out of the mean; it stays with
    probability :math:`\pi_t`. A hit implies the topic stays, so by the ratio of expectations
    (exact up to :math:`O(1/T)` in the number of topics :math:`T`)

    .. math::

        \frac{E[\bar P(p)]}{\bar P(1)} \approx \frac{q\,T}{\sum_t \pi_t} = \frac{q}{\bar\pi},

    the same for every system. Each rating kept independently with probability :math:`p`:
    :math:`q = p`, :math:`\pi_t = 1 - (1-p)^{R_t}`. Exactly :math:`K = \mathrm{round}(pN)` of
    :math:`N` ratings kept (``n_ratings=N``, as
    :func:`recmeta.metaeval.incompleteness.random_ratings` does): :math:`q = K/N`,
    :math:`\pi_t = 1 - \binom{N-R_t}{K}/\binom{N}{K}`. The naive
    :math:`p` ignores the topics that drop out and underestimates the ratio.
    ``n_relevant`` holds :math:`R_t` of the topics with at least one relevant item.
    """
    r = np.asarray(n_relevant, dtype=np.float64)
    if r.ndim != 1 or r.size == 0 or (r < 1).any():
        raise ValueError("n_relevant must be a non-empty 1-d array of counts >= 1")
    if not 0 < share <= 1:
        raise ValueError(f"share must lie in (0, 1], got {share!r}")
    if n_ratings is None:
        q = float(share)
        gone = (1.0 - q) ** r
    else:
        n = int(n_ratings)
        if n < r.max():
            raise ValueError(f"{n} ratings cannot hold a topic with {int(r.max())} relevant ones")
        k = int(np.floor(share * n + 0.5 + 1e-9))
        q = k / n
        # C(N - R, K) / C(N, K), zero when fewer than K ratings remain outside the topic
        ok = n - r >= k
        log = gammaln(n - r + 1) - gammaln(n - r - k + 1) - gammaln(n + 1) + gammaln(n - k + 1)
        gone = np.where(ok, np.exp(np.where(ok, log, 0.0)), 0.0)
    return float(q / np.mean(1.0 - gone))
