"""Our estimates for the ledger of Valcarce et al. (2020), from the chapter's results.

Each function reads the named results of :meth:`~.study.Results.ledger_inputs` (``r``) and
returns :class:`~recmeta.ledger.Estimate` values with their intervals, keyed by the paper's
metric labels: areas under the robustness curves with the two-level bootstrap of
:mod:`.uncertainty` (:func:`areas`, :func:`area_diff`), τ among
metrics with a bootstrap over users (:func:`bulk_tau`, :func:`tau_stat`), DP (:func:`dp_of`),
the paper's Fig. 4 at half of the ratings (:func:`fig4`) and the judged share of the lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ...ledger import Estimate, Outcome, sign_rule
from ...metaeval.bootstrap import sign_pvalues
from .curves import robustness_summary
from .folds import LABELS
from .replicates import TauReplicates, dp_estimate

__all__ = [
    "LEVEL",
    "area_diff",
    "area_replicates",
    "boot_how",
    "areas",
    "boot_estimate",
    "bulk_tau",
    "dp_of",
    "fig4",
    "half_share",
    "judged_estimate",
    "metric_label",
    "offdiag",
    "signs",
    "tau_stat",
    "with_note",
]

#: the level of every interval of the ledger
LEVEL = 0.95


def metric_label(metric: str, aggregate: str = "mean") -> str:
    """The paper's name of a short metric name (``"RR"`` → ``"MRR"``, ``"GMRR"`` for gmean);
    a name the study does not know is kept as it is."""
    return ("G" if aggregate == "gmean" else "") + LABELS.get(metric, metric)


def judged_estimate(judged: Any) -> Estimate:
    """Mean over users of the judged share of their ranked positions
    (:func:`~.folds.judged_share`), with a BCa bootstrap interval over users."""
    return Estimate.bootstrap_mean(np.asarray(judged, dtype=float), LEVEL, seed=0, n_resamples=2000)


def with_note(out: Outcome, note: str) -> Outcome:
    """``out`` with ``note`` appended to its reason (its rule and margin kept)."""
    return replace(out, reason=f"{out.reason}; {note}")


def boot_estimate(point: float, reps: np.ndarray, what: str, how: str | None = None) -> Estimate:
    """The point value with the bias-corrected (BC) interval of its bootstrap replicates (over
    users, unless ``how`` says otherwise; :meth:`Estimate.from_replicates`)."""
    r = np.asarray(reps, dtype=np.float64)
    r = r[np.isfinite(r)]
    if r.size < 2:
        return Estimate.point(point, f"{what}: too few finite bootstrap replicates for an interval")
    how = how or f"BC interval of {r.size} bootstrap replicates over users, {LEVEL:.0%}"
    return Estimate.from_replicates(float(point), r, LEVEL, method=f"{what}: {how}")


_SUMMARY: list[tuple[Any, dict[tuple[str, str], dict[str, float]]]] = []  # the last few


def _points(r: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, float]]:
    """Area under each observed curve (mean τ over the masks, trapezoid rule over the shares),
    by (scheme, aggregate) and short metric name; computed once per curves frame."""
    curves = r["curves"]
    table = next((t for frame, t in _SUMMARY if frame is curves), None)
    if table is None:
        s = robustness_summary(curves)
        table = {
            key: dict(zip(part["metric"], part["mean_tau"].astype(float), strict=True))
            for key, part in s.groupby(["scheme", "aggregate"], sort=False)
        }
        _SUMMARY.insert(0, (curves, table))
        del _SUMMARY[4:]
    return table


def boot_how(r: Mapping[str, Any], *schemes: str) -> str:
    """How the replicates of ``schemes`` were drawn, in words."""
    cr = r["curve_reps"]
    random = [s for s in schemes if not cr.deterministic(s)]
    masks = f", and the masks of {', '.join(random)} at each share" if random else ""
    return f"BC interval of {cr.n_boot} bootstrap replicates (users resampled{masks}), {LEVEL:.0%}"


def area_replicates(
    r: Mapping[str, Any], scheme: str, aggregate: str = "mean", metric: str | None = None
) -> tuple[float, np.ndarray]:
    """The observed area under a curve and its bootstrap replicates
    (:class:`~.uncertainty.CurveReplicates`); ``metric=None`` averages the metrics."""
    cr = r["curve_reps"]
    point = _points(r).get((scheme, aggregate))
    if point is None:
        raise KeyError(f"no robustness curves for scheme {scheme!r}, aggregate {aggregate!r}")
    reps = cr.area(scheme, aggregate)  # B × metrics
    names = list(cr.metrics)
    if metric is None:
        return float(np.mean([point[m] for m in names])), reps.mean(axis=1)
    return float(point[metric]), reps[:, names.index(metric)]


def areas(r: Mapping[str, Any], scheme: str, aggregate: str = "mean") -> dict[str, Estimate]:
    """Area under each metric's τ curve with its bootstrap interval, keyed by the paper's label
    (:func:`area_replicates`)."""
    out = {}
    for m in r["metrics"]:
        point, reps = area_replicates(r, scheme, aggregate, m)
        lab = metric_label(m, aggregate)
        out[lab] = boot_estimate(point, reps, f"area of {lab} ({scheme})", boot_how(r, scheme))
    return out


def area_diff(
    r: Mapping[str, Any], a: Mapping[str, str | None], b: Mapping[str, str | None]
) -> tuple[Estimate, np.ndarray]:
    """Area of curve ``a`` minus area of curve ``b`` (keys scheme, aggregate, metric; ``b``'s
    missing keys are ``a``'s) with its interval, and the replicates of the difference. The
    replicates share their users, and their masks when both curves come from one scheme: the
    difference is paired."""
    scheme, aggregate = a["scheme"], a.get("aggregate", "mean")
    if scheme is None or aggregate is None:
        raise ValueError(f"curve a must name a scheme and an aggregate, got {dict(a)}")
    other = {"scheme": scheme, "aggregate": aggregate, "metric": a.get("metric"), **dict(b)}
    if other["scheme"] is None or other["aggregate"] is None:
        raise ValueError(f"curve b must name a scheme and an aggregate, got {dict(b)}")
    pa, ra = area_replicates(r, scheme, aggregate, a.get("metric"))
    pb, rb = area_replicates(r, other["scheme"], other["aggregate"], other["metric"])
    reps = ra - rb
    est = boot_estimate(pa - pb, reps, "difference of areas", boot_how(r, scheme, other["scheme"]))
    return est, reps


def signs(
    parts: Mapping[str, tuple[Estimate, np.ndarray]],
    expected: str,
    label: Callable[[str], str],
) -> tuple[dict[str, Outcome], dict[str, float], dict[str, float]]:
    """Sign rules and one-sided bootstrap p-values of several parts, for
    :func:`recmeta.ledger.every`: ``parts[k]`` is an estimate and its replicates; the p-values
    come from :func:`recmeta.metaeval.bootstrap.sign_pvalues`."""
    outs, p_exp, p_opp = {}, {}, {}
    for k, (est, reps) in parts.items():
        pos, neg = sign_pvalues(np.asarray(reps)[np.isfinite(reps)], point=est.value)
        outs[k] = sign_rule(est, expected, label=label(k))  # type: ignore[arg-type]
        p_exp[k], p_opp[k] = (pos, neg) if expected == "positive" else (neg, pos)
    return outs, p_exp, p_opp


def bulk_tau(tb: TauReplicates, aggregate: str, exclude: Iterable[str]) -> dict[str, Estimate]:
    """Per metric: mean τ with the metrics outside ``exclude`` (and itself), bootstrap band."""
    names = list(tb.metrics)
    ex = set(exclude)

    def mean_with_rest(t: np.ndarray) -> np.ndarray:
        out = []
        for i, m in enumerate(names):
            cols = [j for j, n in enumerate(names) if n not in ex and n != m]
            out.append(t[..., i, cols].mean(axis=-1))
        return np.stack(out, axis=-1)

    point = mean_with_rest(tb.point[aggregate])
    reps = mean_with_rest(tb.reps[aggregate])
    return {
        metric_label(m, aggregate): boot_estimate(
            point[i], reps[:, i], f"mean τ of {metric_label(m, aggregate)} with the others"
        )
        for i, m in enumerate(names)
    }


def tau_stat(
    tb: TauReplicates, aggregate: str, fn: Callable[[np.ndarray], np.ndarray], what: str
) -> Estimate:
    """``fn`` of the τ matrix among metrics (vectorised over leading axes) with the BC
    interval of its bootstrap replicates over users."""
    return boot_estimate(float(fn(tb.point[aggregate][None])[0]), fn(tb.reps[aggregate]), what)


def offdiag(t: np.ndarray) -> np.ndarray:
    """The (..., M(M−1)/2) upper off-diagonal τ of (..., M, M) matrices."""
    i, j = np.triu_indices(t.shape[-1], 1)
    return t[..., i, j]


def dp_of(r: Mapping[str, Any], metric: str, minus: str | None = None) -> Estimate:
    """DP of ``metric`` (or DP(metric) − DP(minus)) with its interval
    (:func:`~.bootstrap.dp_estimate`)."""
    return dp_estimate(r["dp"], r["dp_reps"], r["dp_base"], r["dp_mc"], metric, minus)


def half_share(r: Mapping[str, Any], target: float = 0.5) -> float | None:
    """The share of the ratings grid closest to ``target`` (excluding the full test set)."""
    a = r["absolute"]
    s = np.unique(a.loc[(a["scheme"] == "ratings") & (a["share"] < 1), "share"].to_numpy())
    if s.size == 0:
        return None
    return float(s[np.argmin(np.abs(s - target))])


def fig4(
    r: Mapping[str, Any], transform: Callable[..., Any], target: float = 0.5
) -> tuple[float, dict[str, Estimate]]:
    """Fig. 4 at the share nearest ``target`` (one half): per metric,
    ``|transform(value, full, share)|`` of its mean over the systems, with the BC
    interval of the same quantity in the two-level bootstrap of users and masks
    (:attr:`~.uncertainty.CurveReplicates.level`; the full test set's mean recomputed on each
    replicate's users)."""
    p = half_share(r, target)
    if p is None:
        raise ValueError("the ratings scheme has no share below 1")
    cr = r["curve_reps"]
    hit = np.flatnonzero(np.isclose(cr.shares["ratings"], p))
    if hit.size == 0 or ("ratings", "mean") not in cr.level:
        raise ValueError(f"the bootstrap of the curves holds no mean values at share {p:g}")
    a = r["absolute"]
    a = a[(a["scheme"] == "ratings") & (a["aggregate"] == "mean") & np.isclose(a["share"], p)]
    names = list(cr.metrics)
    out = {}
    for row in a.itertuples():
        k = names.index(row.metric)
        point = abs(transform(row.value, float(r["full_values"][row.metric]), p))
        reps = np.abs(
            transform(cr.level[("ratings", "mean")][:, hit[0], k], cr.full_level["mean"][:, k], p)
        )
        out[metric_label(row.metric)] = boot_estimate(
            float(point), reps, f"at share {p:g}", boot_how(r, "ratings")
        )
    return p, out
