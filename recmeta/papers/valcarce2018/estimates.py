"""Valcarce et al. (2018): the quantities the chapter and the ledger read off the study's results.

Robustness curves (Figs. 2–3, 6–7) and the mean τ over shares with its interval; DP (Figs. 4
and 8, Table 3) with a bootstrap spread; τ among measures (Figs. 1 and 5) with a bootstrap over
users; and :func:`summary`, one row per metric at the deepest cut-off. Every interval is the
bias-corrected percentile (BC) interval of bootstrap replicates
(:func:`recmeta.metaeval.bootstrap.replicate_interval`; the replicates
:func:`recmeta.papers.valcarce2018.study.analyse` drew): resamples of the evaluated users, and
for the random sparsity masks the two-level bootstrap over users and masks
(:class:`recmeta.metaeval.two_level.TwoLevel`). A statement about a minimum or maximum over
several parts ("every τ at least 0.9", "some below 0.8") is tested part by part
(:func:`sign_part`, :func:`recmeta.ledger.every_sign`, :func:`recmeta.ledger.some`), never
through a bootstrap interval of the minimum.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from ...ledger import Estimate, SignPart
from ...metaeval import agreement
from ...metaeval.bootstrap import replicate_interval
from .values import LABELS, PAPER_PAIRS, PAPER_TABLE3

__all__ = [
    "Draws",
    "boot_estimate",
    "dp_draws",
    "dp_estimate",
    "draws_estimate",
    "popularity_curves",
    "robustness_draws",
    "robustness_estimate",
    "sign_part",
    "sparsity_curves",
    "summary",
    "tau_estimates",
    "tau_matrices",
    "tau_pair_parts",
    "tau_stat_estimate",
]


def sparsity_curves(results: Mapping[str, Any], level: float = 0.95) -> pd.DataFrame:
    """Mean τ over the random masks of each share, with the BC band of its two-level
    bootstrap over users and masks (Figs. 2 and 6; ``sparsity_boot``)."""
    f = results["sparsity"]
    boot = results["sparsity_boot"]  # B × shares × measures
    shares = list(pd.unique(f["share"]))
    measures = list(results["measures"])
    rows = []
    for (measure, share), part in f.groupby(["measure", "share"], sort=False):
        reps = boot[:, shares.index(share), measures.index(measure)]
        tau = float(part["tau"].mean())
        finite = np.isfinite(reps).any()
        low, high = replicate_interval(reps, level, point=tau) if finite else (np.nan, np.nan)
        rows.append(
            {
                "measure": measure,
                "share": share,
                "tau": tau,
                "low": low,
                "high": high,
                "samples": len(part),
            }
        )
    return pd.DataFrame(rows)


def popularity_curves(results: Mapping[str, Any], level: float = 0.95) -> pd.DataFrame:
    """τ of each popularity mask, with a BC band over the bootstrap resamples of users
    (Figs. 3 and 7)."""
    f = results["popularity"]
    boot = results["popularity_boot"]
    measures = list(results["measures"])
    shares = f.drop_duplicates("mask").set_index("mask")
    rows = []
    for r in f.itertuples(index=False):
        reps = boot[:, r.mask, measures.index(r.measure)]
        finite = np.isfinite(reps).any()
        low, high = replicate_interval(reps, level, point=r.tau) if finite else (np.nan, np.nan)
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
    """A quantity's value with its bootstrap replicates (over users; for the random sparsity
    masks, over users and masks): a BC interval (:func:`draws_estimate`) and one-sided
    p-values (:func:`sign_part`)."""

    value: float
    draws: np.ndarray
    what: str


def sign_part(d: Draws, shift: float = 0.0) -> SignPart:
    """``d`` as a part of :func:`recmeta.ledger.every_sign`: "value − shift" against 0, with
    p-values from the replicates (:meth:`recmeta.ledger.SignPart.from_replicates`)."""
    return SignPart.from_replicates(draws_estimate(d), d.draws, shift)


def boot_estimate(
    value: float, replicates: np.ndarray, what: str, *, floor: float | None = None
) -> Estimate:
    """``value`` with the BC interval of its bootstrap replicates over users."""
    reps = np.asarray(replicates, dtype=float)
    reps = reps[np.isfinite(reps)]
    if floor is not None:
        reps = np.maximum(reps, floor)
    if reps.size < 2:
        return Estimate.point(value, f"{what}; no bootstrap interval")
    return Estimate.from_replicates(
        value,
        reps,
        method=f"{what}; BC interval over {reps.size} bootstrap resamples of users, 95 %",
    )


def robustness_draws(
    results: Mapping[str, Any], bias: str, measure: str | Callable, share: float | None = None
) -> Draws:
    """The draws behind :func:`robustness_estimate`: the value (the mean τ over the masks,
    averaged over the shares, or at ``share``) and its replicates (sparsity: the two-level
    bootstrap over users and random masks, ``sparsity_boot``; popularity: resamples of the users
    over the deterministic masks, ``popularity_boot``)."""
    fn = measure if callable(measure) else (lambda v, m=measure: v[m])
    label = "mean τ over shares" if share is None else f"τ at {share:.0%} of the ratings"
    cols = list(results["measures"])
    if bias == "sparsity":
        f = results["sparsity"]
        boot = results["sparsity_boot"]  # B × shares × measures
        if share is not None:
            grid = np.asarray(pd.unique(f["share"]), dtype=float)
            hit = np.flatnonzero(np.isclose(grid, share))
            if hit.size == 0:
                raise KeyError(f"share {share:g} is not in the sparsity grid")
            f = f[np.isclose(f["share"], share)]
            boot = boot[:, hit[0], :]
        else:
            boot = boot.mean(axis=1)  # each replicate's mean over the shares
        per = f.groupby(["sample", "measure"])["tau"].mean().unstack("measure")
        value = float(np.mean([fn(row) for _, row in per.iterrows()]))
        what = f"{label} (random ratings removed; two-level bootstrap over users and masks)"
    elif bias == "popularity":
        if share is not None:
            raise ValueError("the popularity masks are deterministic: use the mean over shares")
        value = float(fn(results["popularity"].groupby("measure")["tau"].mean()))
        boot = np.nanmean(results["popularity_boot"], axis=1)  # B × measures
        what = f"{label} (popular items removed)"
    else:
        raise ValueError(f"bias must be 'sparsity' or 'popularity', got {bias!r}")
    if isinstance(measure, str):
        reps = boot[:, cols.index(measure)]
    else:
        reps = np.array([fn(dict(zip(cols, row, strict=True))) for row in boot])
    return Draws(value, reps, what)


def robustness_estimate(
    results: Mapping[str, Any], bias: str, measure: str | Callable, share: float | None = None
) -> Estimate:
    """Robustness of a measure to a bias: the mean τ over the shares (the area under the curve
    divided by its width), or τ at one ``share`` (sparsity only).

    ``bias="sparsity"``: a BC interval over the two-level bootstrap of users and random
    masks; ``bias="popularity"``: a BC interval over bootstrap resamples of users.
    ``measure`` may be a function of a mapping measure → value, e.g. a difference
    ``lambda v: v["nDCG@100"] - v["nDCG@5"]``, evaluated per sample and per replicate.
    """
    return draws_estimate(robustness_draws(results, bias, measure, share))


def draws_estimate(d: Draws) -> Estimate:
    """The estimate of :class:`Draws`: its value with the BC interval of its replicates."""
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
) -> Estimate:
    """``fn`` of the τ matrix (among ``measures``) with the BC interval of its bootstrap
    replicates over users. Not for a minimum or maximum over the matrix: test such a statement
    part by part (:func:`tau_pair_parts`)."""
    value, reps = matrices if matrices is not None else tau_matrices(results, measures)
    draws = np.array([fn(t) if np.isfinite(t).all() else np.nan for t in reps])
    return boot_estimate(float(fn(value)), draws, what)


def tau_pair_parts(
    results: Mapping[str, Any], measures: Sequence[str], labels: Sequence[str], what: str
) -> dict[str, Draws]:
    """τ of every pair of ``measures`` (named ``"a–b"`` from ``labels``) with its bootstrap
    replicates over users: the parts of "every τ is at least …" or "some τ is below …"."""
    value, reps = tau_matrices(results, measures)
    n = len(measures)
    return {
        f"{labels[i]}–{labels[j]}": Draws(float(value[i, j]), reps[:, i, j], what)
        for i in range(n)
        for j in range(i + 1, n)
    }


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
    """:func:`dp_draws` as an estimate with the BC interval of the replicates (each
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
