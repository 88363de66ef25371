r"""Valcarce, Parapar, Bellogín & Castells (2018): robustness and discriminative power of ranking metrics.

The chapter ``robustness`` re-runs the paper's two measurements on MovieLens with the book's
roster of LensKit recommenders; this module holds the study and the paper's claims.

*The study* (:func:`study`, :func:`analyse`): a per-user 80/20 holdout, top-``depth`` lists over
the items seen in training that the user has not rated in training, and seven metrics (P, Recall,
MAP, nDCG, MRR, bpref, infAP) at eleven cut-offs, all computed by the metric engine on the full
and on every incomplete test set (:class:`recmeta.metrics.Subsets`, one compiled pass per test
set), infAP with ``infap="pooled"``: the paper's eq. 8, every ranked item pooled and the unrated
ones pooled but unjudged (:mod:`recmeta.metrics._options`). On these scores:

- Kendall's τ among cut-offs (Fig. 1) and among metrics (Fig. 5), with a bootstrap over users;
- τ of every incomplete test set with the full one: random ratings removed (sparsity bias,
  Figs. 2 and 6; a Student-t band over the random masks) and the ratings of the most popular
  test items removed (popularity bias, Figs. 3 and 7; a bootstrap band over users);
- paired permutation tests of every pair of systems, p-value curves and DP, the sum of the
  p-values (Figs. 4 and 8, Table 3), with a bootstrap band over users whose resamples use the
  paired t-test (:func:`recmeta.metaeval.significance.bootstrap_dp_t`).

*The ledger* (:data:`LEDGER`): every figure, Table 3 and the conclusions of §§5–8, each with the
paper's printed value (module constants below, with their source) and a verdict rule. Values of
plots (Figs. 2–4 and 6–8) are not printed in the paper; their claims rest on its words.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..metaeval import agreement, incompleteness, significance
from . import register

if TYPE_CHECKING:
    from ..costs import Plan, Size
    from ..metrics import Judgments, Runs, Subsets
from ..ledger import (
    Estimate,
    Ledger,
    Outcome,
    Verdict,
    format_estimate,
    not_reproduced,
    order_rule,
    rank_rule,
    sign_rule,
    value_rule,
)

__all__ = [
    "cost_plan",
    "CHAPTER", "PAPER", "METRICS", "LABELS", "CUTOFFS",
    "PAPER_DATASETS", "PAPER_TABLE2", "PAPER_SYSTEMS", "PAPER_PAIRS", "PAPER_PERMUTATIONS",
    "PAPER_MC_ERROR", "PAPER_FIG1", "PAPER_FIG5", "PAPER_TABLE3", "PAPER_CUTOFF_LOWEST",
    "PAPER_CUTOFF_MOST", "PAPER_CUTOFF_DEEP", "PAPER_NDCG_CUTOFF_MIN", "PAPER_HALF_SPARSITY",
    "PAPER_FIG5_LOW", "PAPER_DEEP_DP", "PAPER_SAMPLES", "PAPER_SPARSITY_SHARES",
    "PAPER_POPULARITY_SHARES", "PAPER_EPSILON", "LEDGER", "study", "analyse", "sparsity_curves",
    "popularity_curves", "robustness_estimate", "dp_estimate", "tau_estimate", "summary",
    "plot_heatmaps", "plot_curves", "verdict", "reason", "tau_tolerance",
]

CHAPTER = "robustness"
PAPER = "valcarce2018robustness"

#: the seven metrics of the paper (engine names) and the paper's names for them
METRICS: tuple[str, ...] = ("P", "R", "AP", "nDCG", "RR", "bpref", "infAP")
LABELS: dict[str, str] = {"P": "P", "R": "Recall", "AP": "MAP", "nDCG": "nDCG", "RR": "MRR",
                          "bpref": "bpref", "infAP": "infAP"}
#: the cut-offs of §6
CUTOFFS: tuple[int, ...] = (5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)

# ---------------------------------------------------------------------------- the paper's values
#: the datasets of the paper (§5)
PAPER_DATASETS: tuple[str, ...] = ("ML-1M", "LibraryThing", "BeerAdvocate")
#: Table 2: users, items, ratings of each dataset
PAPER_TABLE2: dict[str, dict[str, int]] = {
    "ML-1M": {"users": 6040, "items": 3706, "ratings": 1_000_209},
    "LibraryThing": {"users": 7279, "items": 37_232, "ratings": 749_401},
    "BeerAdvocate": {"users": 33_388, "items": 66_055, "ratings": 1_571_808},
}
#: §5: 21 recommenders, hence 210 pairs of systems behind every DP of Table 3
PAPER_SYSTEMS = 21
PAPER_PAIRS = PAPER_SYSTEMS * (PAPER_SYSTEMS - 1) // 2
#: §4: Monte-Carlo permutations of the permutation test, and the error it quotes at two p-values
PAPER_PERMUTATIONS = 100_000
PAPER_MC_ERROR: dict[float, float] = {0.05: 0.001, 0.01: 0.00045}
#: §5: random samples per test-set size (sparsity), and the share grids of both biases
PAPER_SAMPLES = 50
PAPER_SPARSITY_SHARES = (1.0, 0.05, 0.05)  # from, to, step
PAPER_POPULARITY_SHARES = (1.0, 0.80, 0.01)
#: §3, eq. 8: ε of infAP
PAPER_EPSILON = 1e-5

_CUT = [f"@{k}" for k in CUTOFFS]
#: Fig. 1: Kendall's τ between the cut-offs of nDCG on ML-1M (the text prints the whole matrix)
PAPER_FIG1 = pd.DataFrame(
    [[1.00, 0.95, 0.93, 0.92, 0.92, 0.92, 0.92, 0.91, 0.90, 0.90, 0.90],
     [0.95, 1.00, 0.98, 0.97, 0.97, 0.97, 0.97, 0.96, 0.95, 0.95, 0.95],
     [0.93, 0.98, 1.00, 0.99, 0.99, 0.99, 0.99, 0.98, 0.97, 0.97, 0.97],
     [0.92, 0.97, 0.99, 1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.98, 0.98],
     [0.92, 0.97, 0.99, 1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.98, 0.98],
     [0.92, 0.97, 0.99, 1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.98, 0.98],
     [0.92, 0.97, 0.99, 1.00, 1.00, 1.00, 1.00, 0.99, 0.98, 0.98, 0.98],
     [0.91, 0.96, 0.98, 0.99, 0.99, 0.99, 0.99, 1.00, 0.99, 0.99, 0.99],
     [0.90, 0.95, 0.97, 0.98, 0.98, 0.98, 0.98, 0.99, 1.00, 1.00, 1.00],
     [0.90, 0.95, 0.97, 0.98, 0.98, 0.98, 0.98, 0.99, 1.00, 1.00, 1.00],
     [0.90, 0.95, 0.97, 0.98, 0.98, 0.98, 0.98, 0.99, 1.00, 1.00, 1.00]],
    index=_CUT, columns=_CUT)

_M = list(METRICS)
#: Fig. 5a–c: Kendall's τ between the metrics at @100 on each dataset
PAPER_FIG5: dict[str, pd.DataFrame] = {
    "ML-1M": pd.DataFrame(
        [[1.00, 0.89, 0.87, 0.89, 0.71, 0.89, 0.91], [0.89, 1.00, 0.87, 0.90, 0.72, 0.90, 0.92],
         [0.87, 0.87, 1.00, 0.96, 0.84, 0.92, 0.92], [0.89, 0.90, 0.96, 1.00, 0.82, 0.94, 0.96],
         [0.71, 0.72, 0.84, 0.82, 1.00, 0.80, 0.80], [0.89, 0.90, 0.92, 0.94, 0.80, 1.00, 0.96],
         [0.91, 0.92, 0.92, 0.96, 0.80, 0.96, 1.00]], index=_M, columns=_M),
    "LibraryThing": pd.DataFrame(
        [[1.00, 0.99, 0.96, 0.97, 0.91, 0.95, 0.96], [0.99, 1.00, 0.95, 0.96, 0.90, 0.96, 0.97],
         [0.96, 0.95, 1.00, 0.99, 0.95, 0.95, 0.96], [0.97, 0.96, 0.99, 1.00, 0.94, 0.96, 0.97],
         [0.91, 0.90, 0.95, 0.94, 1.00, 0.90, 0.90], [0.95, 0.96, 0.95, 0.96, 0.90, 1.00, 0.99],
         [0.96, 0.97, 0.96, 0.97, 0.90, 0.99, 1.00]], index=_M, columns=_M),
    "BeerAdvocate": pd.DataFrame(
        [[1.00, 0.85, 0.89, 0.90, 0.83, 0.76, 0.84], [0.85, 1.00, 0.85, 0.88, 0.83, 0.91, 0.95],
         [0.89, 0.85, 1.00, 0.97, 0.94, 0.78, 0.90], [0.90, 0.88, 0.97, 1.00, 0.90, 0.80, 0.93],
         [0.83, 0.83, 0.94, 0.90, 1.00, 0.80, 0.88], [0.76, 0.91, 0.78, 0.80, 0.80, 1.00, 0.87],
         [0.84, 0.95, 0.90, 0.93, 0.88, 0.87, 1.00]], index=_M, columns=_M),
}
#: Table 3: DP (sum of the permutation-test p-values over the 210 pairs) of each metric at @100
PAPER_TABLE3 = pd.DataFrame(
    [[2.6, 7.0, 2.8, 1.4, 15.5, 9.9, 8.4],
     [1.5, 5.9, 3.6, 0.2, 2.9, 5.4, 3.8],
     [1.9, 8.3, 10.7, 4.4, 5.8, 12.7, 4.8]],
    index=list(PAPER_DATASETS), columns=_M)
#: §6: the lowest τ among cut-offs on ML-1M, between P@5 and P@100 and between R@5 and R@100
PAPER_CUTOFF_LOWEST = 0.76
#: §6: on ML-1M "most of the correlations [among cut-offs] are above 0.85"
PAPER_CUTOFF_MOST = 0.85
#: §6: among cut-offs above 20, τ is "almost always higher than 0.9" (LibraryThing, BeerAdvocate)
PAPER_CUTOFF_DEEP = 0.9
#: §6 and Fig. 1: every τ among the cut-offs of nDCG on ML-1M is at least 0.9
PAPER_NDCG_CUTOFF_MIN = 0.90
#: §7 and Fig. 6: every metric keeps τ above 0.9 with half of the test set removed
PAPER_HALF_SPARSITY = 0.9
#: §7 and Fig. 5: on ML-1M and BeerAdvocate "some correlations below 0.8"
PAPER_FIG5_LOW = 0.8
#: §6 and Fig. 4: cut-offs above 50 discriminate better than shallower ones
PAPER_DEEP_DP = 50

#: half a unit of the last digit the paper prints for τ (two decimals) and DP (one decimal)
TAU_TOLERANCE = 0.005
DP_TOLERANCE = 0.05


def tau_tolerance(n_pairs: int) -> float:
    """Tolerance of a τ comparison: half a unit of the paper's last digit, or half the step of τ
    among our systems, whichever is larger. Without ties τ = (C − D)/N over the N pairs of
    systems, and swapping two adjacent systems moves C − D by 2, so τ moves in steps of 2/N."""
    return max(TAU_TOLERANCE, 1.0 / n_pairs)


# =============================================================================== the study
def study(
    ratings: pd.DataFrame,
    systems: Sequence[str] | None = None,
    *,
    threshold: float | None = 4,
    test_fraction: float = 0.2,
    split_seed: int = 0,
    depth: int = 100,
    metrics: Sequence[str] = METRICS,
    cutoffs: Sequence[int] = CUTOFFS,
    sparsity_shares: Sequence[float] | None = None,
    n_samples: int = PAPER_SAMPLES,
    popularity_shares: Sequence[float] | None = None,
    n_permutations: int = PAPER_PERMUTATIONS,
    n_bootstrap: int = 1000,
    seed: int = 20180702,
    dataset: str = "ratings",
) -> dict[str, Any]:
    """The whole study on one dataset: split, cached recommender runs, then :func:`analyse`.

    A per-user holdout of ``test_fraction`` (Sec. 5: 80/20 per user, ``split_seed``), the
    roster's ``systems`` (:mod:`recmeta.roster`; those that learn from rating values are left out
    on implicit feedback) trained on the training part, and top-``depth`` lists over the items
    seen in training that the user has not rated in training (``recommenders.make(candidates="all")``).
    A rating ``>= threshold`` is relevant; a lower one is judged non-relevant; on implicit
    feedback (no rating column) every test interaction is relevant. Returns the mapping of
    named results the chapter and :data:`LEDGER` read (see :func:`analyse`).
    """
    from .. import data, recommenders, splits
    from ..recommenders import roster
    from ..metrics import Judgments

    implicit = data.is_implicit(ratings)
    threshold = None if implicit else threshold
    names, left_out = roster.for_implicit(systems, implicit)
    if len(names) < 3:
        raise ValueError(f"the study needs at least three systems, got {names}")
    split = splits.holdout_per_user(ratings, test_fraction, seed=split_seed)
    judgments = Judgments.from_frame(split.test, threshold=threshold)
    run = recommenders.make_runs(roster.systems(names), split.train, judgments, dataset=str(dataset),
                         split=f"holdout-{test_fraction:g}", seed=split_seed, depth=depth)
    out = analyse(judgments, run, metrics=metrics, cutoffs=cutoffs,
                  sparsity_shares=sparsity_shares, n_samples=n_samples,
                  popularity_shares=popularity_shares, n_permutations=n_permutations,
                  n_bootstrap=n_bootstrap, seed=seed)
    train_items = pd.Index(split.train["item"].unique())
    test_items = pd.Index(split.test["item"].unique())
    out.update({
        "dataset": str(dataset),
        "implicit": implicit,
        "left_out": list(left_out),
        "data": {"users": int(ratings["user"].nunique()), "items": int(ratings["item"].nunique()),
                 "ratings": int(len(ratings)), "train_items": int(len(train_items)),
                 "test_only_items": int(len(test_items.difference(train_items))),
                 "test_only_ratings": int((~split.test["item"].isin(train_items)).sum())},
        "setup": {**out["setup"], "threshold": threshold, "test_fraction": test_fraction,
                  "split_seed": split_seed, "depth": depth},
    })
    return out


def _measures(metrics: Sequence[str], cutoffs: Sequence[int]) -> list[str]:
    return [f"{m}@{k}" for m in metrics for k in cutoffs]


def _per_user(subsets: Subsets, keep: np.ndarray | None) -> np.ndarray:
    """Per-user scores (measures × systems × users) on the test rows ``keep`` leaves, measures
    metric-major as :func:`_measures`."""
    return np.stack(list(subsets.score(keep).values()))


def _nanmean(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        seen = np.isfinite(x)
        n = seen.sum(axis=-1)
        return np.where(n > 0, np.where(seen, x, 0.0).sum(axis=-1) / np.maximum(n, 1), np.nan)


def cost_plan(
    size: Size,
    systems: Sequence[str],
    *,
    metrics: Sequence[str] = METRICS,
    cutoffs: Sequence[int] = CUTOFFS,
    sparsity_shares: Sequence[float],
    n_samples: int,
    popularity_shares: Sequence[float],
    n_permutations: int,
    **_: Any,
) -> Plan:
    """The expensive steps of :func:`study` on a dataset of ``size`` (:mod:`recmeta.costs`).

    The runs of ``systems``; one compiled pass per incomplete test set (``sparsity_shares`` ×
    ``n_samples`` random masks and one mask per popularity share) at every metric × cut-off;
    and the permutation tests of every system pair for every measure. Other settings of
    :func:`study` are accepted and do not change the estimate.
    """
    from ..costs import Plan

    n_sys, measures = len(systems), len(metrics) * len(cutoffs)
    return (Plan(size).runs(systems)
            .subsets(len(sparsity_shares) * n_samples + len(popularity_shares), n_sys, measures)
            .tests(n_sys * (n_sys - 1) // 2 * measures, n_permutations)
            .unmodelled("the bootstrap intervals and t-tests over resampled users"))


def analyse(
    judgments: Judgments,
    runs: Runs,
    *,
    metrics: Sequence[str] = METRICS,
    cutoffs: Sequence[int] = CUTOFFS,
    sparsity_shares: Sequence[float] | None = None,
    n_samples: int = PAPER_SAMPLES,
    popularity_shares: Sequence[float] | None = None,
    n_permutations: int = PAPER_PERMUTATIONS,
    n_bootstrap: int = 1000,
    seed: int = 20180702,
) -> dict[str, Any]:
    """Every measurement of the paper on given judgments and runs (no training).

    Returns a dict with, among others: ``system_means`` (systems × measures, full test set),
    ``boot_means`` (resamples × measures × systems: the same means over bootstrap resamples of
    the evaluated users), ``tau_cutoffs`` (metric → τ matrix among cut-offs), ``tau_metrics``
    (τ among metrics at the deepest cut-off), ``sparsity`` and ``popularity`` (tidy frames: τ of
    each incomplete test set with the full one, per measure), ``popularity_boot`` (resamples ×
    masks × measures), ``pvalues`` (permutation test of every pair for every measure; t-test
    and Wilcoxon at the deepest cut-off), ``dp``, ``dp_t`` and ``dp_t_boot`` (DP by permutation
    test, by t-test, and by t-test over the resamples), ``mc_check`` (a Monte-Carlo p-value
    against exact enumeration), ``infap`` (how the two readings of infAP relate to AP) and
    ``degenerate`` (the metrics that need judged non-relevant items, with the reason, when the
    test set has none: implicit feedback).
    """
    from ..metrics import Subsets, score_matrix

    metrics = list(metrics)
    cutoffs = sorted(int(k) for k in cutoffs)
    unknown = [m for m in metrics if m not in LABELS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; the study knows {list(METRICS)}")
    deep = max(cutoffs)
    measures = _measures(metrics, cutoffs)
    names = list(runs.systems)
    n_sys = len(names)
    sparsity_shares = (incompleteness.sparsity_shares() if sparsity_shares is None
                       else np.asarray(sparsity_shares, dtype=float))
    popularity_shares = (incompleteness.popularity_shares() if popularity_shares is None
                         else np.asarray(popularity_shares, dtype=float))

    subsets = Subsets(judgments, runs, measures, infap="pooled")
    full = _per_user(subsets, None)  # measures × systems × users
    evaluated = np.isfinite(full[0]).all(axis=0)
    full_e = full[:, :, evaluated]
    means = _nanmean(full)  # measures × systems
    system_means = pd.DataFrame(means.T, index=names, columns=measures)
    counts = agreement.resample_counts(int(evaluated.sum()), n_bootstrap, seed)
    boot_means = agreement.weighted_means(full_e, counts)  # B × measures × systems

    # infAP: the paper's eq. 8 (pooled) against trec_eval's reading, which is AP
    at = {m: i * len(cutoffs) + len(cutoffs) - 1 for i, m in enumerate(metrics)}
    infap = {}
    if "infAP" in at and "AP" in at:
        trec = score_matrix(judgments, runs, f"infAP@{deep}")[:, evaluated]  # trec_eval's
        ap = full_e[at["AP"]]
        pooled = full_e[at["infAP"]]
        infap = {"trec_gap_max": float(np.abs(trec - ap).max()),
                 "pooled_gap_mean": float(np.abs(pooled - ap).mean()),
                 "pooled_gap_max": float(np.abs(pooled - ap).max()),
                 "trec_mean": float(trec.mean()), "ap_mean": float(ap.mean()),
                 "pooled_mean": float(pooled.mean())}

    # τ among cut-offs and among metrics
    tau_cutoffs = {m: agreement.tau_matrix(means[i * len(cutoffs):(i + 1) * len(cutoffs)],
                                           [f"@{k}" for k in cutoffs])
                   for i, m in enumerate(metrics)}
    tau_metrics = agreement.tau_matrix(means[[at[m] for m in metrics]], metrics)

    # incompleteness: sparsity (random ratings) and popularity (most popular test items removed)
    test = judgments.to_frame()
    sparse = incompleteness.random_ratings(test, sparsity_shares, n_samples, seed=seed)
    popular = incompleteness.popular_items_removed(test, popularity_shares)
    # system means on every sparse test set, one compiled pass each (a mask that keeps every
    # row gives the full test set again: its means are the full ones)
    sparse_means = subsets.means(sparse.keep)["mean"]  # masks × measures × systems
    sparse_means[sparse.keep.all(axis=1)] = means
    rows = [agreement.kendall_tau(m_j, means) for m_j in sparse_means]
    sparsity = _tidy(np.array(rows), measures, sparse.frame())
    rows, boot_rows = [], []
    for j in range(len(popular)):
        if popular.keep[j].all():
            rows.append(agreement.kendall_tau(means, means))
            boot_rows.append(_tau_nan(boot_means, boot_means))
            continue
        pu = _per_user(subsets, popular.keep[j])
        rows.append(agreement.kendall_tau(_nanmean(pu), means))
        bm = agreement.weighted_means(pu[:, :, evaluated], counts)
        boot_rows.append(_tau_nan(bm, boot_means))
    popularity = _tidy(np.array(rows), measures, popular.frame())
    popularity_boot = np.stack(boot_rows, axis=1)  # B × masks × measures

    # discriminative power
    # all measures in one pass: their systems stacked, pairs only within a measure (the same
    # random signs as one test per measure, so the same p-values)
    matrices = {m: full_e[i] for i, m in enumerate(measures)}
    ia, ib = significance.system_pairs(n_sys)
    n_pairs = ia.size
    stacked = full_e.reshape(len(measures) * n_sys, -1)
    offset = np.repeat(np.arange(len(measures)) * n_sys, n_pairs)
    pairs = (np.tile(ia, len(measures)) + offset, np.tile(ib, len(measures)) + offset)
    p_perm = significance.permutation_test(stacked, seed=seed, n_permutations=n_permutations, pairs=pairs)
    perm = pd.DataFrame({"metric": np.repeat(measures, n_pairs), "test": "permutation",
                         "a": np.tile([names[k] for k in ia], len(measures)),
                         "b": np.tile([names[k] for k in ib], len(measures)), "p": p_perm})
    others = significance.pvalue_table({f"{m}@{deep}": matrices[f"{m}@{deep}"] for m in metrics},
                                       names, seed=seed, tests=("t", "wilcoxon"))
    pvalues = pd.concat([perm, others], ignore_index=True)
    dp = pd.Series(p_perm.reshape(len(measures), n_pairs).sum(axis=1), index=measures)
    ones = np.ones((1, stacked.shape[1]))
    dp_t = pd.Series(significance.bootstrap_t_pvalues(stacked, ones, pairs)
                     .reshape(len(measures), n_pairs).sum(axis=1), index=measures)
    group = max(1, 2_000_000 // (counts.shape[0] * n_pairs))  # measures per call, to bound memory
    dp_t_boot = pd.DataFrame(np.concatenate([
        significance.bootstrap_t_pvalues(stacked, counts, (pairs[0][g * n_pairs:(g + group) * n_pairs],
                                                           pairs[1][g * n_pairs:(g + group) * n_pairs]))
        .reshape(counts.shape[0], -1, n_pairs).sum(axis=2)
        for g in range(0, len(measures), group)], axis=1), columns=measures)
    significant = pd.Series({m: significance.count_significant(p_perm[i * n_pairs:(i + 1) * n_pairs])
                             for i, m in enumerate(measures)})

    # the Monte-Carlo p-value against exact enumeration, on 12 users of the closest pair
    probe = f"nDCG@{deep}" if "nDCG" in metrics else measures[-1]
    mc_check = _mc_check(matrices[probe], names, seed, n_permutations, probe)

    # metrics whose point needs judged non-relevant items: bpref counts them above each relevant
    # item (without any it is recall), infAP estimates precision from them (eq. 8; without any
    # the estimate above a relevant item is (a + ε)/(a + 2ε): 1/2 above the first, about 1 above
    # the others)
    degenerate = {}
    n_non = int((judgments.to_frame().iloc[:, 2].to_numpy() < judgments.threshold).sum())
    if n_non == 0 and "R" in at:
        for m in ("bpref", "infAP"):
            if m in at:
                gap = float(np.abs(full_e[at[m]] - full_e[at["R"]]).max())
                what = ("it reduces to recall" if m == "bpref" else
                        "eq. 8 estimates the precision above each relevant item from relevant items "
                        "only, so it measures recall with a discount on the first hit")
                degenerate[m] = (f"the test set judges no item non-relevant (implicit feedback): "
                                 f"{LABELS[m]} needs such items, and without them {what} (largest "
                                 f"per-user gap with recall at @{deep}: {gap:.2g})")
    return {
        "systems": names, "metrics": metrics, "cutoffs": cutoffs, "deep": deep,
        "measures": measures, "n_pairs": n_sys * (n_sys - 1) // 2,
        "n_users": len(judgments.users), "n_evaluated": int(evaluated.sum()),
        "n_test": int(judgments.n_entries), "n_nonrelevant": n_non,
        "system_means": system_means, "boot_means": boot_means,
        "tau_cutoffs": tau_cutoffs, "tau_metrics": tau_metrics,
        "sparsity": sparsity, "popularity": popularity, "popularity_boot": popularity_boot,
        "pvalues": pvalues, "dp": dp, "dp_t": dp_t, "dp_t_boot": dp_t_boot,
        "significant": significant, "mc_check": mc_check, "infap": infap,
        "degenerate": degenerate,
        "setup": {"n_samples": int(n_samples), "n_permutations": int(n_permutations),
                  "n_bootstrap": int(n_bootstrap), "seed": seed,
                  "sparsity_shares": [float(x) for x in sparsity_shares],
                  "popularity_shares": [float(x) for x in popularity_shares]},
    }


def _tidy(tau: np.ndarray, measures: Sequence[str], masks: pd.DataFrame) -> pd.DataFrame:
    """τ (masks × measures) as a long frame with the masks' share, sample and kept_rows."""
    wide = pd.DataFrame(tau, columns=list(measures))
    wide = pd.concat([masks.reset_index(drop=True).rename_axis("mask").reset_index(), wide], axis=1)
    return wide.melt(id_vars=["mask", *masks.columns], var_name="measure", value_name="tau")


def _tau_nan(x: np.ndarray, y: np.ndarray, chunk_elements: int = 4_000_000) -> np.ndarray:
    """Kendall's τ along the last axis (broadcast over the others), NaN where a side is missing.

    Computed in chunks of the leading axis so that the pairwise sign arrays stay small.
    """
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    lead = x.shape[:-1]
    s = x.shape[-1]
    xf = x.reshape(-1, s)
    yf = y.reshape(-1, s)
    out = np.full(xf.shape[0], np.nan)
    ok = np.isfinite(xf).all(axis=1) & np.isfinite(yf).all(axis=1)
    rows = np.flatnonzero(ok)
    step = max(1, chunk_elements // max(1, s * (s - 1) // 2))
    for start in range(0, rows.size, step):
        r = rows[start:start + step]
        out[r] = agreement.kendall_tau(xf[r], yf[r])
    return out.reshape(lead)


def _mc_check(scores: np.ndarray, names: Sequence[str], seed: int, n_permutations: int,
              measure: str) -> dict[str, Any]:
    """Monte-Carlo against exact permutation p-value on 12 random users of the closest pair."""
    n_users = scores.shape[1]
    size = min(12, n_users)
    mean = scores.mean(axis=1)
    gaps = np.abs(mean[:, None] - mean[None, :]) + np.where(np.eye(len(mean), dtype=bool), np.inf, 0)
    a, b = np.unravel_index(np.argmin(gaps), gaps.shape)
    pick = np.random.default_rng(seed).choice(n_users, size, replace=False)
    d = scores[a, pick] - scores[b, pick]
    exact = significance.exact_permutation_p(d)
    mc = float(significance.permutation_test(scores[[a, b]][:, pick], seed=seed,
                                             n_permutations=n_permutations)[0])
    return {"measure": measure, "a": names[a], "b": names[b], "users": size, "exact": exact,
            "mc": mc, "se": math.sqrt(max(exact * (1 - exact), 0.0) / n_permutations),
            "n_permutations": int(n_permutations)}


# ================================================================= derived quantities, curves
def sparsity_curves(results: Mapping[str, Any], level: float = 0.95) -> pd.DataFrame:
    """Mean τ over the random masks of each share, with its Student-t band (Figs. 2 and 6)."""
    f = results["sparsity"]
    rows = []
    for (measure, share), part in f.groupby(["measure", "share"], sort=False):
        centre, low, high = agreement.mean_band(part["tau"].to_numpy(), level)
        rows.append({"measure": measure, "share": share, "tau": float(centre),
                     "low": float(low), "high": float(high), "samples": len(part)})
    return pd.DataFrame(rows)


def popularity_curves(results: Mapping[str, Any], level: float = 0.95) -> pd.DataFrame:
    """τ of each popularity mask, with a percentile band over the bootstrap resamples of users
    (Figs. 3 and 7)."""
    f = results["popularity"]
    boot = results["popularity_boot"]
    measures = list(results["measures"])
    shares = f.drop_duplicates("mask").set_index("mask")
    rows = []
    q = [(1 - level) / 2, (1 + level) / 2]
    for r in f.itertuples(index=False):
        reps = boot[:, r.mask, measures.index(r.measure)]
        reps = reps[np.isfinite(reps)]
        low, high = np.quantile(reps, q) if reps.size else (np.nan, np.nan)
        rows.append({"measure": r.measure, "share": r.share, "kept_rows": shares.at[r.mask, "kept_rows"],
                     "tau": r.tau, "low": low, "high": high})
    return pd.DataFrame(rows)


def _samples_estimate(values: np.ndarray, what: str, bounds: tuple[float, float] | None = None) -> Estimate:
    """Mean of per-sample values with a t interval, clipped to ``bounds`` (τ cannot leave [−1, 1])."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return Estimate.point(float(values.mean()), f"{what}; one random sample, no interval")
    est = Estimate.mean_se(values, method=f"{what}; t interval over {values.size} random samples, 95 %"
                                          + (", clipped to τ's range" if bounds else ""))
    if bounds is None:
        return est
    return Estimate(est.value, float(np.clip(est.low, *bounds)), float(np.clip(est.high, *bounds)), est.method)


def _boot_estimate(value: float, replicates: np.ndarray, what: str, *, floor: float | None = None) -> Estimate:
    reps = np.asarray(replicates, dtype=float)
    reps = reps[np.isfinite(reps)]
    if floor is not None:
        reps = np.maximum(reps, floor)
    if reps.size < 2:
        return Estimate.point(value, f"{what}; no bootstrap interval")
    return Estimate.from_samples(reps, value=value,
                                 method=f"{what}; percentile interval over {reps.size} bootstrap "
                                        f"resamples of users, 95 %")


def robustness_estimate(results: Mapping[str, Any], bias: str, measure: str | Callable,
                        share: float | None = None) -> Estimate:
    """Robustness of a measure to a bias: the mean τ over the shares (the area under the curve
    divided by its width), or τ at one ``share`` (sparsity only).

    ``bias="sparsity"``: a Student-t interval over the random samples (each sample's τ averaged
    over the shares); ``bias="popularity"``: a percentile interval over bootstrap resamples of
    users. ``measure`` may be a function of a mapping measure → value, e.g. a difference
    ``lambda v: v["nDCG@100"] - v["nDCG@5"]``, evaluated per sample or per resample.
    """
    fn = measure if callable(measure) else (lambda v, m=measure: v[m])
    label = "mean τ over shares" if share is None else f"τ at {share:.0%} of the ratings"
    if bias == "sparsity":
        f = results["sparsity"]
        if share is not None:
            f = f[np.isclose(f["share"], share)]
            if f.empty:
                raise KeyError(f"share {share:g} is not in the sparsity grid")
        per = f.groupby(["sample", "measure"])["tau"].mean().unstack("measure")
        values = np.array([fn(row) for _, row in per.iterrows()])
        bounds = (-1.0, 1.0) if isinstance(measure, str) else None
        return _samples_estimate(values, f"{label} (random ratings removed)", bounds)
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
            reps = np.array([fn(dict(zip(cols, row))) for row in boot])
        return _boot_estimate(float(value), reps, f"{label} (popular items removed)")
    raise ValueError(f"bias must be 'sparsity' or 'popularity', got {bias!r}")


def tau_estimate(results: Mapping[str, Any], fn: Callable[[pd.DataFrame], float], what: str) -> Estimate:
    """A statistic of the system means (``fn`` of a systems × measures frame), with a percentile
    interval over the bootstrap resamples of users (e.g. a Kendall τ between two measures)."""
    value = float(fn(results["system_means"]))
    cols = list(results["measures"])
    idx = list(results["systems"])
    reps = np.array([fn(pd.DataFrame(b.T, index=idx, columns=cols)) for b in results["boot_means"]])
    return _boot_estimate(value, reps, what)


def _tau_between(frame: pd.DataFrame, a: str, b: str) -> float:
    return float(agreement.kendall_tau(frame[a].to_numpy(), frame[b].to_numpy()))


def _tau_estimates(results: Mapping[str, Any], pairs: Sequence[tuple[str, str]], what: str) -> list[Estimate]:
    """τ between measure pairs with bootstrap intervals, vectorised over resamples and pairs."""
    cols = list(results["measures"])
    ia = [cols.index(a) for a, _ in pairs]
    ib = [cols.index(b) for _, b in pairs]
    means = results["system_means"].to_numpy().T  # measures × systems
    value = agreement.kendall_tau(means[ia], means[ib])
    boot = results["boot_means"]
    reps = _tau_nan(boot[:, ia], boot[:, ib])  # B × pairs
    return [_boot_estimate(float(value[k]), reps[:, k], what) for k in range(len(pairs))]


_TAU_CACHE: dict[tuple[int, tuple[str, ...]], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _tau_matrices(results: Mapping[str, Any], measures: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
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


def _tau_matrices_uncached(results: Mapping[str, Any], measures: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    cols = list(results["measures"])
    idx = np.array([cols.index(m) for m in measures])
    n = idx.size
    iu, ju = np.triu_indices(n, 1)
    means = results["system_means"].to_numpy().T[idx]
    boot = results["boot_means"][:, idx]
    value = np.eye(n)
    value[iu, ju] = value[ju, iu] = agreement.kendall_tau(means[iu], means[ju])
    reps = np.broadcast_to(np.eye(n), (boot.shape[0], n, n)).copy()
    t = _tau_nan(boot[:, iu], boot[:, ju])
    reps[:, iu, ju] = t
    reps[:, ju, iu] = t
    return value, reps


def _tau_stat_estimate(results: Mapping[str, Any], fn: Callable[[np.ndarray], float],
                       measures: Sequence[str], what: str,
                       matrices: tuple[np.ndarray, np.ndarray] | None = None) -> Estimate:
    """``fn`` of the τ matrix (among ``measures``) with a bootstrap interval over users."""
    value, reps = matrices if matrices is not None else _tau_matrices(results, measures)
    stats = np.array([fn(t) if np.isfinite(t).all() else np.nan for t in reps])
    return _boot_estimate(float(fn(value)), stats, what)


def dp_estimate(results: Mapping[str, Any], fn: Callable[[pd.Series], float] | str, what: str | None = None,
                *, scale: float = 1.0, floor: float | None = None) -> Estimate:
    """A statistic of the DP values (``fn`` of a Series measure → DP, or a measure name).

    The value uses the permutation test's DP. The interval is the spread of the same statistic
    over bootstrap resamples of users, whose p-values come from the paired t-test
    (:func:`recmeta.metaeval.significance.bootstrap_dp_t`), placed around the value: replicate ``b`` is
    ``value + fn(DP_t*_b) − fn(DP_t)``. ``scale`` multiplies everything (e.g. to 210 pairs).
    """
    name = None
    if isinstance(fn, str):
        name = fn
        fn = lambda s, m=name: s[m]  # noqa: E731
        what = what or f"DP of {name}"
    value = float(fn(results["dp"])) * scale
    base = float(fn(results["dp_t"])) * scale
    boot = results["dp_t_boot"]
    if name is not None:
        reps = boot[name].to_numpy() * scale
    else:
        cols = list(boot.columns)
        reps = np.array([fn(dict(zip(cols, row))) for row in boot.to_numpy()]) * scale
    return _boot_estimate(value, value + reps - base, f"{what} (permutation test; bootstrap spread by "
                                                      f"paired t-test)", floor=floor)


# ============================================================================ verdict rules
def _threshold_rule(est: Estimate, threshold: float, direction: str, label: str) -> Outcome:
    """Our estimate lies above (``direction="above"``) or below a threshold the paper states."""
    shifted = Estimate(est.value - threshold,
                       None if est.low is None else est.low - threshold,
                       None if est.high is None else est.high - threshold, est.method)
    out = sign_rule(shifted, "positive" if direction == "above" else "negative",
                    label=f"{label} minus {threshold:g}")
    return Outcome(out.verdict, est, out.reason, out.detail)


def _all_rule(estimates: Mapping[str, Estimate], threshold: float, label: str) -> Outcome:
    """Every item lies above ``threshold``: all intervals above → agrees; one wholly below →
    differs; otherwise inconclusive. ``ours`` is the lowest item's estimate."""
    worst = min(estimates, key=lambda k: estimates[k].value)
    est = estimates[worst]
    below = [k for k, e in estimates.items() if e.high is not None and e.high < threshold]
    unsure = [k for k, e in estimates.items() if k not in below and (e.low is None or e.low <= threshold)]
    detail = None
    if below:
        return Outcome(Verdict.DIFFERS, est, f"{label} of {', '.join(below)} lies wholly below "
                                             f"{threshold:g} (lowest: {worst})", detail)
    if unsure:
        return Outcome(Verdict.INCONCLUSIVE, est, f"the interval of {label} of {', '.join(unsure)} "
                                                  f"reaches {threshold:g} (lowest: {worst})", detail)
    return Outcome(Verdict.AGREES, est, f"{label} of every metric lies wholly above {threshold:g} "
                                        f"(lowest: {worst})", detail)


def _group_rule(estimates: Mapping[str, Estimate], expected: Sequence[str], higher_is_better: bool = True) -> Outcome:
    """"The k expected items are the k best": the ledger's :func:`rank_rule` over ranks 1..k,
    with the best item's estimate as ours."""
    best = max(estimates, key=lambda n: estimates[n].value if higher_is_better else -estimates[n].value)
    return rank_rule(estimates, expected, 1, len(expected), higher_is_better, value=estimates[best])


def _majority_rule(outcomes: Mapping[str, Outcome], label: str) -> Outcome:
    """"The same holds for the other metrics": the per-item verdicts, counted.

    A majority of agreeing items → **agrees**; a majority of differing items → **differs**;
    otherwise **inconclusive**. ``ours`` is the share of items that agree (exact).
    """
    n = len(outcomes)
    agree = [k for k, o in outcomes.items() if o.verdict is Verdict.AGREES]
    differ = [k for k, o in outcomes.items() if o.verdict is Verdict.DIFFERS]
    marks = {Verdict.AGREES: "✓", Verdict.DIFFERS: "✗", Verdict.INCONCLUSIVE: "?"}
    detail = ", ".join(f"{k} {marks.get(o.verdict, '–')}" for k, o in outcomes.items())
    text = (f"{label}: {len(agree)} of {n} agree, {len(differ)} differ, "
            f"{n - len(agree) - len(differ)} inconclusive")
    est = Estimate.exact(len(agree) / n, "share of the metrics whose own verdict agrees")
    if len(agree) * 2 > n:
        return Outcome(Verdict.AGREES, est, text, detail)
    if len(differ) * 2 > n:
        return Outcome(Verdict.DIFFERS, est, text, detail)
    return Outcome(Verdict.INCONCLUSIVE, est, text, detail)


def _order(estimates: Mapping[str, Estimate], expected: str, *, higher_is_better: bool = True,
           best: str = "best") -> Outcome:
    """:func:`order_rule` worded for the claim: ``best`` names the end of the order that is
    claimed ("least robust"), and an order read from the lowest value up uses ``<``."""
    out = order_rule(estimates, expected, higher_is_better=higher_is_better)
    reason = out.reason.replace(" is best (", f" is {best} (").replace(" tie at the top ", f" tie as {best} ")
    detail = out.detail if higher_is_better else (out.detail or "").replace(" > ", " < ")
    return Outcome(out.verdict, out.ours, reason, detail)


def _short(out: Outcome, keep: int = 6) -> Outcome:
    """The outcome with a long order in ``detail`` cut after ``keep`` places."""
    detail = out.detail or ""
    sep = " < " if " < " in detail else " > "
    parts = detail.split(sep)
    if len(parts) <= keep:
        return out
    return Outcome(out.verdict, out.ours, out.reason, sep.join(parts[:keep]) + sep + "…")


def _with_note(out: Outcome, note: str) -> Outcome:
    return Outcome(out.verdict, out.ours, f"{out.reason}; {note}" if note else out.reason, out.detail)


# ================================================================================= the ledger
LEDGER = register(Ledger(CHAPTER, paper=PAPER, title="Robustness and discriminative power of ranking metrics"))
_claim = LEDGER.claim

_NO_DATA = {
    "LibraryThing": "this book has no LibraryThing data (its licence and size keep it out; the "
                    "chapter runs on MovieLens only)",
    "BeerAdvocate": "this book has no BeerAdvocate data (the chapter runs on MovieLens only)",
}


def _label(measure: str) -> str:
    m, _, k = measure.partition("@")
    return f"{LABELS.get(m, m)}@{k}" if k else LABELS.get(m, m)


def _usable(results: Mapping[str, Any], metrics: Sequence[str]) -> tuple[list[str], str]:
    """The metrics that are not degenerate on these data, and a note naming the dropped ones."""
    deg = results.get("degenerate") or {}
    keep = [m for m in metrics if m not in deg]
    dropped = [m for m in metrics if m in deg]
    note = (f"{' and '.join(LABELS[m] for m in dropped)} left out: they need judged non-relevant "
            f"items, and these data have none" if dropped else "")
    return keep, note


def _degenerate(results: Mapping[str, Any], *metrics: str) -> Outcome | None:
    deg = results.get("degenerate") or {}
    hit = [m for m in metrics if m in deg]
    return not_reproduced(deg[hit[0]]) if hit else None


def _cut_pair(deep: int, cutoffs: Sequence[int]) -> tuple[int, int]:
    return min(cutoffs), deep


# ---- §6, Fig. 1: agreement among cut-offs --------------------------------------------------
@_claim("valcarce2018.fig1.ndcg-min",
        statement="Every Kendall τ between two cut-offs of nDCG is at least 0.9",
        source="§6, Fig. 1", paper_value=PAPER_NDCG_CUTOFF_MIN, paper_dataset="ML-1M",
        rule="the smallest τ among nDCG's cut-offs, minus 0.895, lies wholly above 0 (bootstrap over users)",
        needs=("system_means", "boot_means", "measures", "systems", "cutoffs"))
def _(r):
    ms = [f"nDCG@{k}" for k in r["cutoffs"]]
    iu = np.triu_indices(len(ms), 1)
    est = _tau_stat_estimate(r, lambda t: t[iu].min(), ms, "smallest τ among nDCG's cut-offs")
    return _threshold_rule(est, PAPER_NDCG_CUTOFF_MIN - TAU_TOLERANCE, "above", "the smallest τ")


@_claim("valcarce2018.fig1.ndcg-5-100",
        statement="Kendall τ between nDCG@5 and nDCG@100",
        source="§6, Fig. 1", paper_value=float(PAPER_FIG1.at["@5", "@100"]), paper_dataset="ML-1M",
        rule="value rule: the paper's value within our bootstrap interval widened by the tolerance "
             "(0.005, or half the step of τ among our systems)",
        needs=("system_means", "boot_means", "measures", "cutoffs", "deep", "n_pairs"))
def _(r):
    lo, hi = _cut_pair(r["deep"], r["cutoffs"])
    est, = _tau_estimates(r, [(f"nDCG@{lo}", f"nDCG@{hi}")], f"τ(nDCG@{lo}, nDCG@{hi})")
    return value_rule(float(PAPER_FIG1.at["@5", "@100"]), est, tau_tolerance(r["n_pairs"]))


@_claim("valcarce2018.fig1.ndcg-5-apart",
        statement="The largest discrepancy among nDCG's cut-offs is between @5 and the rest",
        source="§6, Fig. 1", paper_value="@5", paper_dataset="ML-1M",
        rule="order rule on each cut-off's mean τ with the others (lowest first; bootstrap intervals)",
        needs=("system_means", "boot_means", "measures", "cutoffs"))
def _(r):
    ms = [f"nDCG@{k}" for k in r["cutoffs"]]
    n = len(ms)
    mats = _tau_matrices(r, ms)
    ests = {f"@{k}": _tau_stat_estimate(r, lambda t, i=i: (t[i].sum() - 1) / (n - 1), ms,
                                        f"mean τ of nDCG@{k} with the other cut-offs", mats)
            for i, k in enumerate(r["cutoffs"])}
    return _order(ests, f"@{min(r['cutoffs'])}", higher_is_better=False, best="furthest from the rest")


def _lowest_pair_value(metric: str):
    def evaluate(r):
        lo, hi = _cut_pair(r["deep"], r["cutoffs"])
        est, = _tau_estimates(r, [(f"{metric}@{lo}", f"{metric}@{hi}")],
                              f"τ({LABELS[metric]}@{lo}, {LABELS[metric]}@{hi})")
        return value_rule(PAPER_CUTOFF_LOWEST, est, tau_tolerance(r["n_pairs"]))
    return evaluate


def _lowest_pair_order(metric: str):
    def evaluate(r):
        cut = list(r["cutoffs"])
        value, reps = _tau_matrices(r, [f"{metric}@{k}" for k in cut])
        what = f"τ between two cut-offs of {LABELS[metric]}"
        named = {f"@{a}–@{b}": _boot_estimate(float(value[i, j]), reps[:, i, j], what)
                 for i, a in enumerate(cut) for j, b in enumerate(cut) if j > i}
        out = _order(named, f"@{min(cut)}–@{max(cut)}", higher_is_better=False, best="lowest")
        top = (out.detail or "").split(" < ")[0].split(" ≈ ")
        if len(top) > 4:  # name the expected pair and count the others tied with it
            reason = (f"{len(top)} pairs of cut-offs tie at the bottom (overlapping intervals), "
                      f"{'including' if f'@{min(cut)}–@{max(cut)}' in top else 'but not'} "
                      f"@{min(cut)}–@{max(cut)}")
            out = Outcome(out.verdict, out.ours, reason, f"lowest: {top[0]} ≈ {len(top) - 1} other pairs")
        return _short(out)
    return evaluate


for _m in ("P", "R"):
    LEDGER.claim(f"valcarce2018.s6.{_m.lower()}-5-100",
                 statement=f"Kendall τ between {LABELS[_m]}@5 and {LABELS[_m]}@100 (the lowest among "
                           f"cut-offs on ML-1M)",
                 source="§6", paper_value=PAPER_CUTOFF_LOWEST, paper_dataset="ML-1M",
                 rule="value rule: the paper's value within our bootstrap interval widened by the tolerance "
                      "(0.005, or half the step of τ among our systems)",
                 needs=("system_means", "boot_means", "measures", "cutoffs", "deep", "n_pairs"))(_lowest_pair_value(_m))
    LEDGER.claim(f"valcarce2018.s6.{_m.lower()}-lowest-pair",
                 statement=f"Of all pairs of cut-offs of {LABELS[_m]}, @5 and @100 agree least",
                 source="§6", paper_value="@5–@100", paper_dataset="ML-1M",
                 rule="order rule on τ of every pair of cut-offs (lowest first; bootstrap intervals)",
                 needs=("system_means", "boot_means", "measures", "cutoffs"))(_lowest_pair_order(_m))


def _cutoff_share(r, cutoffs: Sequence[int], threshold: float, what: str) -> tuple[Estimate, str]:
    """Share of the pairs of cut-offs (within each usable metric) whose τ exceeds ``threshold``."""
    metrics, note = _usable(r, r["metrics"])
    pos = np.array([list(r["cutoffs"]).index(k) for k in cutoffs])
    iu = np.triu_indices(len(cutoffs), 1)
    rows, cols = pos[iu[0]], pos[iu[1]]
    values, reps = [], []
    for m in metrics:  # slices of each metric's matrix among all cut-offs
        v, b = _tau_matrices(r, [f"{m}@{k}" for k in r["cutoffs"]])
        values.append(v[rows, cols])
        reps.append(b[:, rows, cols])
    value = float(np.mean(np.concatenate(values) > threshold))
    boot = np.concatenate(reps, axis=1)
    shares = np.where(np.isfinite(boot).all(axis=1), np.mean(boot > threshold, axis=1), np.nan)
    return _boot_estimate(value, shares, what), note


@_claim("valcarce2018.s6.most-above-0.85",
        statement="Most τ between two cut-offs of the same metric are above 0.85",
        source="§6", paper_value=PAPER_CUTOFF_MOST, paper_dataset="ML-1M",
        rule="the share of pairs of cut-offs (all metrics) with τ > 0.85, minus 0.5, lies wholly above 0",
        needs=("system_means", "boot_means", "measures", "metrics", "cutoffs", "degenerate"))
def _(r):
    est, note = _cutoff_share(r, r["cutoffs"], PAPER_CUTOFF_MOST, "share of pairs of cut-offs with τ > 0.85")
    return _with_note(_threshold_rule(est, 0.5, "above", "the share"), note)


@_claim("valcarce2018.s6.deep-above-0.9",
        statement="Among cut-offs of 20 and more, τ between two cut-offs of a metric is almost always above 0.9",
        source="§6", paper_value=PAPER_CUTOFF_DEEP, paper_dataset="LibraryThing, BeerAdvocate",
        rule="the share of pairs of cut-offs ≥ 20 (all metrics) with τ > 0.895, minus 0.9, lies wholly above 0",
        needs=("system_means", "boot_means", "measures", "metrics", "cutoffs", "degenerate"))
def _(r):
    cut = [k for k in r["cutoffs"] if k >= 20]
    if len(cut) < 2:
        return not_reproduced("fewer than two cut-offs of 20 or more in this run")
    est, note = _cutoff_share(r, cut, PAPER_CUTOFF_DEEP - TAU_TOLERANCE,
                              "share of pairs of cut-offs ≥ 20 with τ > 0.895")
    return _with_note(_threshold_rule(est, 0.9, "above", "the share"), note)


# ---- §6, Figs. 2–3: robustness among cut-offs ----------------------------------------------
def _deeper_robust(bias: str, metric: str, r) -> Outcome:
    lo, hi = _cut_pair(r["deep"], r["cutoffs"])
    est = robustness_estimate(r, bias, lambda v: v[f"{metric}@{hi}"] - v[f"{metric}@{lo}"])
    return sign_rule(est, "positive", label=f"mean τ of {LABELS[metric]}@{hi} minus @{lo}")


for _bias, _fig in (("sparsity", "fig2"), ("popularity", "fig3")):
    _how = ("t interval over the random samples" if _bias == "sparsity"
            else "bootstrap over users")
    LEDGER.claim(f"valcarce2018.{_fig}.ndcg-deeper-robust",
                 statement=f"nDCG is more robust to the {_bias} bias at @100 than at @5",
                 source=f"§6, Fig. {_fig[-1]}", paper_value="deeper is more robust", paper_dataset="ML-1M",
                 rule=f"sign rule on the mean τ over shares at @100 minus @5 ({_how})",
                 needs=(_bias, "popularity_boot", "measures", "cutoffs", "deep"),
                 )(lambda r, b=_bias: _deeper_robust(b, "nDCG", r))
    LEDGER.claim(f"valcarce2018.{_fig}.all-deeper-robust",
                 statement=f"Every metric, not only nDCG, is more robust to the {_bias} bias at @100 than at @5",
                 source="§6", paper_value="also the other metrics", paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
                 rule=f"majority of the metrics' own sign rules (@100 minus @5, {_how})",
                 needs=(_bias, "popularity_boot", "measures", "metrics", "cutoffs", "deep", "degenerate"),
                 )(lambda r, b=_bias: _with_note(_majority_rule(
                     {LABELS[m]: _deeper_robust(b, m, r) for m in _usable(r, r["metrics"])[0]},
                     "metrics more robust at @100"), _usable(r, r["metrics"])[1]))


# ---- §4 and §6, Fig. 4: discriminative power among cut-offs ---------------------------------
@_claim("valcarce2018.s4.monte-carlo",
        statement="The Monte-Carlo permutation test estimates the exact p-value within its sampling error",
        source="§4", paper_value="±0.001 at p = 0.05 (100,000 permutations)", paper_dataset=None,
        rule="value rule: 0 within (Monte-Carlo p − exact p) ± 1.96 standard errors √(p(1−p)/B)",
        needs=("mc_check",))
def _(r):
    c = r["mc_check"]
    diff = c["mc"] - c["exact"]
    half = 1.96 * c["se"] + 1.0 / (c["n_permutations"] + 1)
    est = Estimate(diff, diff - half, diff + half,
                   f"Monte-Carlo minus exact p of {c['a']} vs {c['b']} on {c['users']} users, "
                   f"±1.96 standard errors with B = {c['n_permutations']:,}")
    inside = est.low <= 0.0 <= est.high
    text = (f"Monte-Carlo p {c['mc']:.5f} against exact {c['exact']:.5f}: the difference "
            f"{format_estimate(est)} {'contains' if inside else 'excludes'} 0")
    return Outcome(Verdict.AGREES if inside else Verdict.DIFFERS, est, text)


def _deeper_dp(metric: str, r) -> Outcome:
    lo, hi = _cut_pair(r["deep"], r["cutoffs"])
    est = dp_estimate(r, lambda s: s[f"{metric}@{lo}"] - s[f"{metric}@{hi}"],
                      f"DP of {LABELS[metric]}@{lo} minus @{hi}")
    return sign_rule(est, "positive", label=f"DP @{lo} minus @{hi}")


_DP_NEEDS = ("dp", "dp_t", "dp_t_boot")


@_claim("valcarce2018.fig4.ndcg-deeper-dp",
        statement="nDCG discriminates more pairs of systems at @100 than at @5 (lower DP)",
        source="§6, Fig. 4", paper_value="deeper is more discriminative", paper_dataset="ML-1M",
        rule="sign rule on DP@5 minus DP@100 (bootstrap over users)",
        needs=(*_DP_NEEDS, "cutoffs", "deep"))
def _(r):
    return _deeper_dp("nDCG", r)


@_claim("valcarce2018.fig4.ndcg-above-50",
        statement="Every cut-off of nDCG above 50 has a lower DP than every cut-off up to 50",
        source="§6, Fig. 4", paper_value="cut-offs above 50 consistently better", paper_dataset="ML-1M",
        rule="sign rule on min DP over cut-offs ≤ 50 minus max DP over cut-offs > 50 (bootstrap over users)",
        needs=(*_DP_NEEDS, "cutoffs"))
def _(r):
    low = [k for k in r["cutoffs"] if k <= PAPER_DEEP_DP]
    high = [k for k in r["cutoffs"] if k > PAPER_DEEP_DP]
    if not low or not high:
        return not_reproduced("the cut-offs of this run do not straddle 50")
    est = dp_estimate(r, lambda s: min(s[f"nDCG@{k}"] for k in low) - max(s[f"nDCG@{k}"] for k in high),
                      "smallest DP up to @50 minus largest DP above @50 (nDCG)")
    return sign_rule(est, "positive", label="the gap")


@_claim("valcarce2018.fig4.all-deeper-dp",
        statement="Every metric, not only nDCG, discriminates more at @100 than at @5",
        source="§6", paper_value="similar results for the other metrics",
        paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule="majority of the metrics' own sign rules (DP@5 minus DP@100, bootstrap over users)",
        needs=(*_DP_NEEDS, "metrics", "cutoffs", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_majority_rule({LABELS[m]: _deeper_dp(m, r) for m in metrics},
                                     "metrics more discriminative at @100"), note)


# ---- §7, Fig. 5: agreement among metrics ----------------------------------------------------
def _metric_tau_value(a: str, b: str):
    paper = float(PAPER_FIG5["ML-1M"].at[a, b])

    def evaluate(r):
        skip = _degenerate(r, a, b)
        if skip is not None:
            return skip
        d = r["deep"]
        est, = _tau_estimates(r, [(f"{a}@{d}", f"{b}@{d}")], f"τ({LABELS[a]}@{d}, {LABELS[b]}@{d})")
        return value_rule(paper, est, tau_tolerance(r["n_pairs"]))
    return paper, evaluate


for _a, _b, _why in (("AP", "nDCG", "MAP and nDCG agree strongly"),
                     ("P", "RR", "the lowest τ of Fig. 5a"),
                     ("AP", "infAP", "infAP estimates MAP")):
    _paper, _fn = _metric_tau_value(_a, _b)
    LEDGER.claim(f"valcarce2018.fig5.{_a.lower()}-{_b.lower()}",
                 statement=f"Kendall τ between {LABELS[_a]}@100 and {LABELS[_b]}@100 ({_why})",
                 source="§7, Fig. 5a", paper_value=_paper, paper_dataset="ML-1M",
                 rule="value rule: the paper's value within our bootstrap interval widened by the tolerance "
                      "(0.005, or half the step of τ among our systems)",
                 needs=("system_means", "boot_means", "measures", "deep", "degenerate", "n_pairs"))(_fn)


@_claim("valcarce2018.fig5.mrr-apart",
        statement="MRR orders the systems least like the other metrics",
        source="§7, Fig. 5", paper_value="MRR", paper_dataset="ML-1M, LibraryThing",
        rule="order rule on each metric's mean τ with the others at @100 (lowest first; bootstrap intervals)",
        needs=("system_means", "boot_means", "measures", "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    ms = [f"{m}@{r['deep']}" for m in metrics]
    n = len(ms)
    mats = _tau_matrices(r, ms)
    ests = {LABELS[m]: _tau_stat_estimate(r, lambda t, i=i: (t[i].sum() - 1) / (n - 1), ms,
                                          f"mean τ of {LABELS[m]} with the other metrics", mats)
            for i, m in enumerate(metrics)}
    return _with_note(_order(ests, "MRR", higher_is_better=False, best="furthest from the others"), note)


@_claim("valcarce2018.fig5.some-below-0.8",
        statement="Some metrics at @100 correlate below 0.8",
        source="§7, Fig. 5", paper_value=PAPER_FIG5_LOW, paper_dataset="ML-1M, BeerAdvocate",
        rule="the smallest τ between two metrics, minus 0.8, lies wholly below 0 (bootstrap over users)",
        needs=("system_means", "boot_means", "measures", "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    ms = [f"{m}@{r['deep']}" for m in metrics]
    iu = np.triu_indices(len(ms), 1)
    est = _tau_stat_estimate(r, lambda t: t[iu].min(), ms, "smallest τ between two metrics")
    return _with_note(_threshold_rule(est, PAPER_FIG5_LOW, "below", "the smallest τ"), note)


LEDGER.claim("valcarce2018.fig5b.all-above-0.9",
             statement="On LibraryThing every τ between two metrics is above 0.9",
             source="§7, Fig. 5b",
             paper_value=float(PAPER_FIG5["LibraryThing"].to_numpy()[np.triu_indices(7, 1)].min()),
             paper_dataset="LibraryThing", rule="not reproduced: no such data",
             )(lambda r: not_reproduced(_NO_DATA["LibraryThing"]))
LEDGER.claim("valcarce2018.fig5c.bpref-map",
             statement="On BeerAdvocate bpref correlates poorly with MAP",
             source="§7, Fig. 5c", paper_value=float(PAPER_FIG5["BeerAdvocate"].at["bpref", "AP"]),
             paper_dataset="BeerAdvocate", rule="not reproduced: no such data",
             )(lambda r: not_reproduced(_NO_DATA["BeerAdvocate"]))


# ---- §7, Figs. 6–7: robustness among metrics --------------------------------------------------
def _robust_estimates(r, bias: str, metrics: Sequence[str]) -> dict[str, Estimate]:
    d = r["deep"]
    return {LABELS[m]: robustness_estimate(r, bias, f"{m}@{d}") for m in metrics}


@_claim("valcarce2018.fig6.half-above-0.9",
        statement="Every metric at @100 keeps τ above 0.9 with half of the test ratings removed",
        source="§7, Fig. 6", paper_value=PAPER_HALF_SPARSITY, paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule="every metric's mean τ at 50 % (t interval over the random samples) lies wholly above 0.9",
        needs=("sparsity", "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    if not np.isclose(r["sparsity"]["share"], 0.5).any():
        return not_reproduced("the sparsity grid of this run has no share of 50 %")
    ests = {LABELS[m]: robustness_estimate(r, "sparsity", f"{m}@{r['deep']}", share=0.5) for m in metrics}
    return _with_note(_all_rule(ests, PAPER_HALF_SPARSITY, "mean τ at 50 %"), note)


@_claim("valcarce2018.fig6.p-ndcg-lead",
        statement="Precision and nDCG are the two metrics most robust to the sparsity bias",
        source="§7, Fig. 6", paper_value="P, nDCG", paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule="group rule on the mean τ over shares (t intervals over the random samples)",
        needs=("sparsity", "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_group_rule(_robust_estimates(r, "sparsity", metrics), ["P", "nDCG"]), note)


@_claim("valcarce2018.s7.p-most-robust",
        statement="Precision is the metric most robust to the sparsity bias",
        source="§7, §8", paper_value="P", paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule="order rule on the mean τ over shares (t intervals over the random samples)",
        needs=("sparsity", "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_order(_robust_estimates(r, "sparsity", metrics), "P", best="most robust"), note)


@_claim("valcarce2018.fig6.bpref-least",
        statement="bpref is the metric least robust to the sparsity bias (infAP and MRR next)",
        source="§7, Fig. 6", paper_value="bpref", paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule="order rule on the mean τ over shares, lowest first (t intervals over the random samples)",
        needs=("sparsity", "metrics", "deep", "degenerate"))
def _(r):
    skip = _degenerate(r, "bpref")
    if skip is not None:
        return skip
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_order(_robust_estimates(r, "sparsity", metrics), "bpref", higher_is_better=False,
                             best="least robust"), note)


LEDGER.claim("valcarce2018.fig6.map-beats-bpref-infap",
             statement="MAP is more robust to sparsity than bpref and infAP on LibraryThing and BeerAdvocate",
             source="§7, Fig. 6b–c", paper_value="MAP > bpref, infAP", paper_dataset="LibraryThing, BeerAdvocate",
             rule="not reproduced: no such data",
             )(lambda r: not_reproduced(_NO_DATA["LibraryThing"].split(" (")[0] + " or BeerAdvocate data"))


@_claim("valcarce2018.fig7.p-most-robust",
        statement="Precision is the metric most robust to the popularity bias",
        source="§7, Fig. 7", paper_value="P", paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule="order rule on the mean τ over shares (bootstrap intervals over users)",
        needs=("popularity", "popularity_boot", "measures", "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_order(_robust_estimates(r, "popularity", metrics), "P", best="most robust"), note)


@_claim("valcarce2018.fig7.mrr-least",
        statement="MRR is the metric least robust to the popularity bias",
        source="§7, Fig. 7", paper_value="MRR", paper_dataset="ML-1M, LibraryThing, BeerAdvocate",
        rule="order rule on the mean τ over shares, lowest first (bootstrap intervals over users)",
        needs=("popularity", "popularity_boot", "measures", "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_order(_robust_estimates(r, "popularity", metrics), "MRR", higher_is_better=False,
                             best="least robust"), note)


LEDGER.claim("valcarce2018.fig7c.negative",
             statement="On BeerAdvocate τ drops quickly under the popularity bias, even below 0",
             source="§7, Fig. 7c", paper_value="τ < 0", paper_dataset="BeerAdvocate",
             rule="not reproduced: no such data",
             )(lambda r: not_reproduced(_NO_DATA["BeerAdvocate"]))


# ---- §7, Fig. 8 and Table 3: discriminative power among metrics --------------------------------
def _table3_value(metric: str):
    paper = float(PAPER_TABLE3.at["ML-1M", metric])

    def evaluate(r):
        skip = _degenerate(r, metric)
        if skip is not None:
            return skip
        scale = PAPER_PAIRS / r["n_pairs"]
        est = dp_estimate(r, f"{metric}@{r['deep']}", f"DP of {LABELS[metric]}@{r['deep']} rescaled from "
                                                      f"{r['n_pairs']} to {PAPER_PAIRS} pairs",
                          scale=scale, floor=0.0)
        return value_rule(paper, est, DP_TOLERANCE)
    return paper, evaluate


for _m in METRICS:
    _paper, _fn = _table3_value(_m)
    LEDGER.claim(f"valcarce2018.tab3.ml1m.{_m.lower()}",
                 statement=f"DP of {LABELS[_m]}@100 (sum of p-values; ours rescaled to 210 pairs)",
                 source="§7, Table 3", paper_value=_paper, paper_dataset="ML-1M",
                 rule="value rule: the paper's value within our bootstrap interval widened by 0.05",
                 needs=(*_DP_NEEDS, "deep", "n_pairs", "degenerate"))(_fn)

for _ds in PAPER_DATASETS[1:]:
    LEDGER.claim(f"valcarce2018.tab3.{_ds.lower()}",
                 statement=f"DP of the seven metrics at @100 on {_ds}",
                 source="§7, Table 3",
                 paper_value=", ".join(f"{LABELS[m]} {PAPER_TABLE3.at[_ds, m]:g}" for m in METRICS),
                 paper_dataset=_ds, rule="not reproduced: no such data",
                 )(lambda r, ds=_ds: not_reproduced(_NO_DATA[ds]))


def _dp_estimates(r, metrics: Sequence[str]) -> dict[str, Estimate]:
    d = r["deep"]
    return {LABELS[m]: dp_estimate(r, f"{m}@{d}", floor=0.0) for m in metrics}


@_claim("valcarce2018.tab3.ndcg-best",
        statement="nDCG is the most discriminative metric (lowest DP)",
        source="§7, Fig. 8, Table 3; abstract", paper_value="nDCG", paper_dataset="ML-1M, LibraryThing",
        rule="order rule on DP at @100, lowest first (bootstrap intervals)",
        needs=(*_DP_NEEDS, "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_order(_dp_estimates(r, metrics), "nDCG", higher_is_better=False,
                             best="most discriminative"), note)


@_claim("valcarce2018.tab3.ndcg-p-lead",
        statement="nDCG and precision are the two most discriminative metrics",
        source="§7, Table 3", paper_value="nDCG, P", paper_dataset="ML-1M, LibraryThing",
        rule="group rule on DP at @100, lowest first (bootstrap intervals)",
        needs=(*_DP_NEEDS, "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_group_rule(_dp_estimates(r, metrics), ["nDCG", "P"], higher_is_better=False), note)


def _above_median(metric: str):
    def evaluate(r):
        skip = _degenerate(r, metric)
        if skip is not None:
            return skip
        metrics, note = _usable(r, r["metrics"])
        d = r["deep"]
        est = dp_estimate(r, lambda s: s[f"{metric}@{d}"] - float(np.median([s[f"{m}@{d}"] for m in metrics])),
                          f"DP of {LABELS[metric]} minus the median DP of the metrics")
        return _with_note(sign_rule(est, "positive", label="the gap"), note)
    return evaluate


LEDGER.claim("valcarce2018.tab3.bpref-poor",
             statement="bpref discriminates poorly: its DP lies above the median of the seven metrics",
             source="§7, Table 3; §8", paper_value=f"{PAPER_TABLE3.at['ML-1M', 'bpref']:g} > median "
                                                    f"{PAPER_TABLE3.loc['ML-1M'].median():g}",
             paper_dataset="ML-1M (also LibraryThing, BeerAdvocate)",
             rule="sign rule on DP(bpref) minus the median DP (bootstrap over users)",
             needs=(*_DP_NEEDS, "metrics", "deep", "degenerate"))(_above_median("bpref"))
LEDGER.claim("valcarce2018.tab3.infap-poor",
             statement="infAP discriminates poorly: its DP lies above the median of the seven metrics",
             source="§7, Table 3; §8", paper_value=f"{PAPER_TABLE3.at['ML-1M', 'infAP']:g} > median "
                                                    f"{PAPER_TABLE3.loc['ML-1M'].median():g}",
             paper_dataset="ML-1M (also LibraryThing)",
             rule="sign rule on DP(infAP) minus the median DP (bootstrap over users)",
             needs=(*_DP_NEEDS, "metrics", "deep", "degenerate"))(_above_median("infAP"))


@_claim("valcarce2018.tab3.mrr-worst",
        statement="MRR is the least discriminative metric (highest DP)",
        source="§7, Table 3; §8", paper_value="MRR", paper_dataset="ML-1M",
        rule="order rule on DP at @100, highest first (bootstrap intervals)",
        needs=(*_DP_NEEDS, "metrics", "deep", "degenerate"))
def _(r):
    metrics, note = _usable(r, r["metrics"])
    return _with_note(_order(_dp_estimates(r, metrics), "MRR", higher_is_better=True,
                             best="least discriminative"), note)


# ============================================================================ chapter helpers
def verdict(frame: pd.DataFrame, claim: str, *, paper: bool = True) -> str:
    """One claim of an evaluated ledger as Markdown: ours, the paper's value and the verdict.

    ``"0.911 [0.867, 0.956] against the paper's 0.9 (ML-1M): **inconclusive**"``; with
    ``paper=False`` the paper's part is left out.
    """
    from ..ledger import ours_text, paper_text

    rows = frame[frame["claim"] == claim]
    if rows.empty:
        raise KeyError(f"no claim {claim!r} in the frame")
    row = rows.iloc[0].to_dict()
    ours = ours_text(row)
    if row["verdict"] == Verdict.NOT_REPRODUCED.value:
        return f"not reproduced here ({row['reason']})"
    head = f"{ours} against the paper's {paper_text(row)}" if paper else ours
    return f"{head}: **{row['verdict']}**"


def reason(frame: pd.DataFrame, claim: str) -> str:
    """The computed reason of one claim's verdict."""
    rows = frame[frame["claim"] == claim]
    if rows.empty:
        raise KeyError(f"no claim {claim!r} in the frame")
    return str(rows.iloc[0]["reason"])


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
        row = {}
        ests = {"sparsity": robustness_estimate(results, "sparsity", ms),
                "popularity": robustness_estimate(results, "popularity", ms),
                "dp": dp_estimate(results, ms, floor=0.0)}
        if has_half:
            ests["tau_half"] = robustness_estimate(results, "sparsity", ms, share=0.5)
        for k, e in ests.items():
            row[k], row[f"{k}_low"], row[f"{k}_high"] = e.value, e.low, e.high
        row["dp_210"] = row["dp"] * PAPER_PAIRS / results["n_pairs"]
        row["significant"] = int(results["significant"][ms])
        row["paper_dp"] = float(PAPER_TABLE3.at["ML-1M", m])
        rows[LABELS[m]] = row
    return pd.DataFrame(rows).T


def plot_heatmaps(frames: Mapping[str, pd.DataFrame], *, ncols: int = 4, vmin: float = 0.5,
                  annot: bool | Sequence[str] = True, size: float = 3.2, label: str = "Kendall's τ",
                  axis_label: str = "cut-off"):
    """τ matrices side by side on one colour scale; returns the figure.

    ``annot`` writes the value in every cell of every panel (``True``) or of the panels whose
    titles it lists. Drawn with ``imshow`` and one text per cell: seaborn's ``heatmap`` draws the
    same picture but annotates several times more slowly, which matters for a page of 11 × 11
    matrices.
    """
    import matplotlib.pyplot as plt

    n = len(frames)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    same = len({(tuple(f.index), tuple(f.columns)) for f in frames.values()}) == 1
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols + 1.0, size * nrows + 0.4), squeeze=False,
                             sharex=same, sharey=same)
    fig.subplots_adjust(left=0.06, right=0.88, bottom=0.1, top=0.93, wspace=0.45 if not same else 0.15,
                        hspace=0.45 if not same else 0.25)
    image = None
    for ax, (title, frame) in zip(axes.flat, frames.items()):
        a = frame.to_numpy(dtype=float)
        image = ax.imshow(a, cmap="viridis", vmin=vmin, vmax=1.0)
        ax.set_xticks(range(a.shape[1]), [str(c) for c in frame.columns], rotation=90)
        ax.set_yticks(range(a.shape[0]), [str(c) for c in frame.index])
        ax.grid(False)
        ax.tick_params(labelsize=7)
        ax.set(title=title, xlabel=axis_label, ylabel=axis_label)
        if same:  # shared labels: only the outer panels carry them
            ax.label_outer()
        if annot is True or (not isinstance(annot, bool) and title in annot):
            for (i, j), value in np.ndenumerate(a):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=5.5 if a.shape[0] > 8 else 7,
                        color="white" if value < (vmin + 1.0) / 2 else "black")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.colorbar(image, cax=fig.add_axes((0.91, 0.15, 0.015, 0.7)), label=label)
    return fig


def plot_curves(panels: Mapping[str, tuple[pd.DataFrame, Sequence[str], str]], labels: Sequence[str], *,
                ncols: int = 4, size: float = 3.0, x: str = "share", bands: Sequence[int] | None = None):
    """Robustness curves with their bands, one panel per entry of ``panels``.

    ``panels`` maps a title to ``(curves, measures, xlabel)``: ``curves`` has columns measure,
    ``x``, tau, low, high (:func:`sparsity_curves`, :func:`popularity_curves`), and the panel
    draws one line per measure, named by ``labels`` (one per position, shared palette), with
    the band of the positions in ``bands`` (all by default). The x axis (share kept, in %) runs
    from the full test set down. Returns the figure.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    n = len(panels)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols + 1.2, size * nrows * 0.9), squeeze=False,
                             sharey=True, constrained_layout=True)
    width = max(len(p[1]) for p in panels.values())
    palette = sns.color_palette("viridis" if width > 7 else "tab10", width)
    for ax, (title, (curves, measures, xlabel)) in zip(axes.flat, panels.items()):
        for pos, (colour, m, lab) in enumerate(zip(palette, measures, labels)):
            c = curves[curves["measure"] == m].sort_values(x)
            ax.plot(100 * c[x], c["tau"], color=colour, label=lab, lw=1.2)
            if bands is None or pos in bands:
                ax.fill_between(100 * c[x], c["low"], c["high"], color=colour, alpha=0.2, lw=0)
        ax.invert_xaxis()
        ax.set(title=title, xlabel=xlabel)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("Kendall's τ with the full test set")
    handles, names = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside right center", fontsize=8)
    return fig
