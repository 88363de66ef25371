"""Valcarce et al. (2018): the quantities the chapter and the ledger read off the study's results.

Robustness curves (Figs. 2–3, 6–7) and the mean τ over shares with its interval; DP (Figs. 4
and 8, Table 3) with a bootstrap spread; τ among measures (Figs. 1 and 5) with a bootstrap over
users; and :func:`summary`, one row per metric at the deepest cut-off. Every interval is either
a Student-t interval over the random masks or a percentile interval over bootstrap resamples of
the evaluated users (the resamples :func:`recmeta.papers.valcarce2018.study.analyse` drew).
A minimum or maximum over many measures gets the *basic* bootstrap interval
(:func:`basic_estimate`): the percentile interval of a minimum is biased low. A conjunction
("every metric ...") reads one-sided p-values per part from the same samples or replicates
(:func:`sign_pvalues_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from ...ledger import Estimate
from ...metaeval import agreement
from ...metaeval.bootstrap import percentile_interval, sign_pvalues
from .values import LABELS, PAPER_PAIRS, PAPER_TABLE3

__all__ = [
    "Draws",
    "basic_estimate",
    "boot_estimate",
    "dp_draws",
    "dp_estimate",
    "draws_estimate",
    "popularity_curves",
    "robustness_draws",
    "robustness_estimate",
    "sign_pvalues_of",
    "sparsity_curves",
    "summary",
    "tau_estimates",
    "tau_matrices",
    "tau_stat_estimate",
]


def sparsity_curves(results: Mapping[str, Any], level: float = 0.95) -> pd.DataFrame:
    """Mean τ over the random masks of each share, with its Student-t band (Figs. 2 and 6)."""
    f = results["sparsity"]
    rows = []
    for (measure, share), part in f.groupby(["measure", "share"], sort=False):
        centre, low, high = agreement.mean_band(part["tau"].to_numpy(), level)
        rows.append(
            {
                "measure": measure,
                "share": share,
                "tau": float(centre),
                "low": float(low),
                "high": float(high),
                "samples": len(part),
            }
        )
    return pd.DataFrame(rows)


def popularity_curves(results: Mapping[str, Any], level: float = 0.95) -> pd.DataFrame:
    """τ of each popularity mask, with a percentile band over the bootstrap resamples of users
    (Figs. 3 and 7)."""
    f = results["popularity"]
    boot = results["popularity_boot"]
    measures = list(results["measures"])
    shares = f.drop_duplicates("mask").set_index("mask")
    rows = []
    for r in f.itertuples(index=False):
        reps = boot[:, r.mask, measures.index(r.measure)]
        finite = np.isfinite(reps).any()
        low, high = percentile_interval(reps, level) if finite else (np.nan, np.nan)
        rows.append(
            {
                "measure": r.measure,
                "share": r.share,
                "kept_rows": shares.at[r.mask, "kept_rows"],
                "tau": r.tau,
                "low": low,
                "high": high,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Draws:
    """A quantity's value with the draws its uncertainty comes from.

    ``kind="samples"``: independent random masks (the value is their mean; a Student-t interval
    and one-sample t-tests); ``kind="bootstrap"``: replicates over bootstrap resamples of users
    (percentile interval, :func:`recmeta.metaeval.bootstrap.sign_pvalues`).
    """

    value: float
    draws: np.ndarray
    kind: Literal["samples", "bootstrap"]
    what: str
    #: the range the quantity cannot leave (τ: [−1, 1]); a t interval is clipped to it
    bounds: tuple[float, float] | None = None


def sign_pvalues_of(d: Draws, shift: float = 0.0) -> tuple[float, float]:
    """One-sided p-values of ``value − shift > 0`` and ``< 0`` from the draws.

    Random masks: one-sample t-tests of the per-mask values against ``shift``
    (``scipy.stats.ttest_1samp``; identical values give 0 or 1 by their side); bootstrap
    replicates: :func:`recmeta.metaeval.bootstrap.sign_pvalues` of ``replicates − shift``.
    """
    x = np.asarray(d.draws, dtype=float) - shift
    x = x[np.isfinite(x)]
    if x.size == 0:
        raise ValueError(f"no finite draw of {d.what} to test its sign")
    if d.kind == "bootstrap":
        return sign_pvalues(x)
    if x.size < 2 or np.ptp(x) == 0:
        m = float(x.mean())
        return (0.0 if m > 0 else 1.0), (0.0 if m < 0 else 1.0)
    up = stats.ttest_1samp(x, 0.0, alternative="greater").pvalue
    down = stats.ttest_1samp(x, 0.0, alternative="less").pvalue
    return float(up), float(down)


def _samples_estimate(
    values: np.ndarray, what: str, bounds: tuple[float, float] | None = None
) -> Estimate:
    """Mean of per-sample values with a t interval, clipped to ``bounds`` (τ cannot leave
    [−1, 1])."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return Estimate.point(float(values.mean()), f"{what}; one random sample, no interval")
    est = Estimate.mean_se(
        values,
        method=f"{what}; t interval over {values.size} random samples, 95 %"
        + (", clipped to τ's range" if bounds else ""),
    )
    if bounds is None:
        return est
    assert est.low is not None and est.high is not None  # mean_se always gives an interval
    return Estimate(
        est.value, float(np.clip(est.low, *bounds)), float(np.clip(est.high, *bounds)), est.method
    )


def boot_estimate(
    value: float, replicates: np.ndarray, what: str, *, floor: float | None = None
) -> Estimate:
    """``value`` with the percentile interval of its bootstrap replicates over users."""
    reps = np.asarray(replicates, dtype=float)
    reps = reps[np.isfinite(reps)]
    if floor is not None:
        reps = np.maximum(reps, floor)
    if reps.size < 2:
        return Estimate.point(value, f"{what}; no bootstrap interval")
    return Estimate.from_samples(
        reps,
        value=value,
        method=f"{what}; percentile interval over {reps.size} bootstrap resamples of users, 95 %",
    )


def basic_estimate(
    value: float,
    replicates: np.ndarray,
    what: str,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """``value`` (a minimum or maximum over several quantities) with the *basic* bootstrap
    interval ``[2θ̂ − q_0.975, 2θ̂ − q_0.025]`` (Davison & Hinkley 1997, eq. 5.6), clipped to
    ``bounds``.

    The replicates of a minimum lie below the minimum they estimate (a minimum of noisy values
    is biased low, and resampling repeats the bias), so their percentile interval is shifted
    low; the basic interval reflects the quantiles about ``θ̂``, which removes that shift to
    first order. It is therefore not biased towards "below a threshold" (nor "above").
    """
    reps = np.asarray(replicates, dtype=float)
    reps = reps[np.isfinite(reps)]
    if reps.size < 2:
        return Estimate.point(value, f"{what}; no bootstrap interval")
    q_low, q_high = percentile_interval(reps)
    low, high = 2 * value - q_high, 2 * value - q_low
    if bounds is not None:
        low, high = float(np.clip(low, *bounds)), float(np.clip(high, *bounds))
    return Estimate(
        value,
        low,
        high,
        f"{what}; basic (bias-corrected) interval over {reps.size} bootstrap resamples of "
        "users, 95 %",
    )


def robustness_draws(
    results: Mapping[str, Any], bias: str, measure: str | Callable, share: float | None = None
) -> Draws:
    """The draws behind :func:`robustness_estimate`: the per-mask values (sparsity: each random
    sample's τ averaged over the shares, or at ``share``) or the bootstrap replicates over users
    (popularity: τ averaged over the deterministic masks)."""
    fn = measure if callable(measure) else (lambda v, m=measure: v[m])
    label = "mean τ over shares" if share is None else f"τ at {share:.0%} of the ratings"
    if bias == "sparsity":
        f = results["sparsity"]
        if share is not None:
            f = f[np.isclose(f["share"], share)]
            if f.empty:
                raise KeyError(f"share {share:g} is not in the sparsity grid")
        per = f.groupby(["sample", "measure"])["tau"].mean().unstack("measure")
        values = np.array([fn(row) for _, row in per.iterrows()], dtype=float)
        bounds = (-1.0, 1.0) if isinstance(measure, str) else None
        what = f"{label} (random ratings removed)"
        return Draws(float(values.mean()), values, "samples", what, bounds)
    if bias == "popularity":
        if share is not None:
            raise ValueError("the popularity masks are deterministic: use the mean over shares")
        f = results["popularity"]
        value = fn(f.groupby("measure")["tau"].mean())
        boot = np.nanmean(results["popularity_boot"], axis=1)  # B × measures
        cols = list(results["measures"])
        if isinstance(measure, str):
            reps = boot[:, cols.index(measure)]
        else:
            reps = np.array([fn(dict(zip(cols, row, strict=True))) for row in boot])
        return Draws(float(value), reps, "bootstrap", f"{label} (popular items removed)")
    raise ValueError(f"bias must be 'sparsity' or 'popularity', got {bias!r}")


def robustness_estimate(
    results: Mapping[str, Any], bias: str, measure: str | Callable, share: float | None = None
) -> Estimate:
    """Robustness of a measure to a bias: the mean τ over the shares (the area under the curve
    divided by its width), or τ at one ``share`` (sparsity only).

    ``bias="sparsity"``: a Student-t interval over the random samples (each sample's τ averaged
    over the shares); ``bias="popularity"``: a percentile interval over bootstrap resamples of
    users. ``measure`` may be a function of a mapping measure → value, e.g. a difference
    ``lambda v: v["nDCG@100"] - v["nDCG@5"]``, evaluated per sample or per resample.
    """
    return draws_estimate(robustness_draws(results, bias, measure, share))


def draws_estimate(d: Draws) -> Estimate:
    """The estimate of :class:`Draws`: a t interval over random masks (clipped to ``bounds``),
    or the percentile interval of bootstrap replicates."""
    if d.kind == "samples":
        return _samples_estimate(d.draws, d.what, d.bounds)
    return boot_estimate(d.value, d.draws, d.what)


def tau_estimates(
    results: Mapping[str, Any], pairs: Sequence[tuple[str, str]], what: str
) -> list[Estimate]:
    """τ between measure pairs with bootstrap intervals, vectorised over resamples and pairs."""
    cols = list(results["measures"])
    ia = [cols.index(a) for a, _ in pairs]
    ib = [cols.index(b) for _, b in pairs]
    means = results["system_means"].to_numpy().T  # measures × systems
    value = agreement.kendall_tau(means[ia], means[ib])
    boot = results["boot_means"]
    reps = agreement.nan_kendall_tau(boot[:, ia], boot[:, ib])  # B × pairs
    return [boot_estimate(float(value[k]), reps[:, k], what) for k in range(len(pairs))]


_TAU_CACHE: dict[tuple[int, tuple[str, ...]], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def tau_matrices(
    results: Mapping[str, Any], measures: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """τ matrix among ``measures`` on the system means (n × n) and in every resample (B × n × n).

    Several claims read the same matrices; they are kept for the last few result sets (keyed by
    the resamples' array, which the cache holds so that its id stays unique).
    """
    boot = results["boot_means"]
    key = (id(boot), tuple(measures))
    hit = _TAU_CACHE.get(key)
    if hit is not None and hit[0] is boot:
        return hit[1], hit[2]
    value, reps = _tau_matrices_uncached(results, measures)
    if len(_TAU_CACHE) > 64:
        _TAU_CACHE.clear()
    _TAU_CACHE[key] = (boot, value, reps)
    return value, reps


def _tau_matrices_uncached(
    results: Mapping[str, Any], measures: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    cols = list(results["measures"])
    idx = np.array([cols.index(m) for m in measures])
    means = results["system_means"].to_numpy().T[idx]
    return agreement.tau_matrices(means), agreement.tau_matrices(results["boot_means"][:, idx])


def mean_with_others_at(i: int, tau: np.ndarray) -> float:
    """Row ``i``'s mean τ with the other rows of the τ matrix ``tau``
    (:func:`recmeta.metaeval.agreement.mean_with_others`)."""
    return agreement.mean_with_others(tau)[i]


def tau_stat_estimate(
    results: Mapping[str, Any],
    fn: Callable[[np.ndarray], float],
    measures: Sequence[str],
    what: str,
    matrices: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    extreme: bool = False,
) -> Estimate:
    """``fn`` of the τ matrix (among ``measures``) with a bootstrap interval over users: the
    percentile interval, or the basic interval (:func:`basic_estimate`) when ``fn`` is a
    minimum or maximum (``extreme=True``)."""
    value, reps = matrices if matrices is not None else tau_matrices(results, measures)
    draws = np.array([fn(t) if np.isfinite(t).all() else np.nan for t in reps])
    if extreme:
        return basic_estimate(float(fn(value)), draws, what, bounds=(-1.0, 1.0))
    return boot_estimate(float(fn(value)), draws, what)


def dp_draws(
    results: Mapping[str, Any],
    fn: Callable[[pd.Series], float] | str,
    what: str | None = None,
    *,
    scale: float = 1.0,
) -> Draws:
    """A statistic of the DP values (``fn`` of a Series measure → DP, or a measure name) and
    its bootstrap replicates over users.

    The value uses the permutation test's DP. The replicates are the spread of the same
    statistic over bootstrap resamples of users, whose p-values come from the paired t-test
    (:func:`recmeta.metaeval.significance.bootstrap_dp_t`), placed around the value: replicate
    ``b`` is ``value + fn(DP_t*_b) − fn(DP_t)``. ``scale`` multiplies everything (e.g. to 210
    pairs).
    """
    name = None
    if isinstance(fn, str):
        name = fn
        fn = itemgetter(name)
        what = what or f"DP of {name}"
    value = float(fn(results["dp"])) * scale
    base = float(fn(results["dp_t"])) * scale
    boot = results["dp_t_boot"]
    if name is not None:
        reps = boot[name].to_numpy() * scale
    else:
        cols = list(boot.columns)
        reps = np.array([fn(dict(zip(cols, row, strict=True))) for row in boot.to_numpy()]) * scale
    return Draws(
        value,
        value + reps - base,
        "bootstrap",
        f"{what} (permutation test; bootstrap spread by paired t-test)",
    )


def dp_estimate(
    results: Mapping[str, Any],
    fn: Callable[[pd.Series], float] | str,
    what: str | None = None,
    *,
    scale: float = 1.0,
    floor: float | None = None,
) -> Estimate:
    """:func:`dp_draws` as an estimate with the percentile interval of the replicates (each
    replicate raised to ``floor`` first, e.g. 0: a DP is never negative)."""
    d = dp_draws(results, fn, what, scale=scale)
    return boot_estimate(d.value, d.draws, d.what, floor=floor)


def summary(results: Mapping[str, Any]) -> pd.DataFrame:
    """One row per metric at the deepest cut-off: robustness to both biases and DP, with intervals.

    Columns: ``sparsity``, ``popularity`` (mean τ over shares), ``tau_half`` (τ at 50 % of the
    ratings when the grid has it), ``dp`` and ``dp_210`` (DP rescaled to the paper's 210 pairs),
    ``significant`` (pairs significant after Holm's correction), ``paper_dp`` (Table 3, ML-1M);
    and ``*_low``/``*_high`` for the intervals.
    """
    d = results["deep"]
    has_half = bool(np.isclose(results["sparsity"]["share"], 0.5).any())
    rows = {}
    for m in results["metrics"]:
        ms = f"{m}@{d}"
        row: dict[str, Any] = {}
        ests = {
            "sparsity": robustness_estimate(results, "sparsity", ms),
            "popularity": robustness_estimate(results, "popularity", ms),
            "dp": dp_estimate(results, ms, floor=0.0),
        }
        if has_half:
            ests["tau_half"] = robustness_estimate(results, "sparsity", ms, share=0.5)
        for k, e in ests.items():
            row[k], row[f"{k}_low"], row[f"{k}_high"] = e.value, e.low, e.high
        row["dp_210"] = row["dp"] * PAPER_PAIRS / results["n_pairs"]
        row["significant"] = int(results["significant"][ms])
        row["paper_dp"] = float(PAPER_TABLE3.at["ML-1M", m])
        rows[LABELS[m]] = row
    return pd.DataFrame(rows).T
