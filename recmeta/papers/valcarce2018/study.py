r"""Valcarce, Parapar, Bellogín & Castells (2018): the study behind the chapter ``robustness``.

A per-user 80/20 holdout, top-``depth`` lists over the items seen in training that the user has
not rated in training, and seven metrics (P, Recall, MAP, nDCG, MRR, bpref, infAP) at eleven
cut-offs, all computed by the metric engine on the full and on every incomplete test set
(:class:`recmeta.metrics.Subsets`, one compiled pass per test set), infAP with
``infap="pooled"``: the paper's eq. 8, every ranked item pooled and the unrated ones pooled but
unjudged. On these scores (:func:`analyse`):

- Kendall's τ among cut-offs (Fig. 1) and among metrics (Fig. 5), with a bootstrap over users;
- τ of every incomplete test set with the full one: random ratings removed (sparsity bias,
  Figs. 2 and 6; a two-level bootstrap band over users and random masks,
  :class:`recmeta.metaeval.two_level.TwoLevel`) and the ratings of the most popular test items
  removed (popularity bias, Figs. 3 and 7; a bootstrap band over users);
- paired permutation tests of every pair of systems, p-value curves and DP, the sum of the
  p-values (Figs. 4 and 8, Table 3), with a bootstrap band over users whose resamples use the
  paired t-test (:func:`recmeta.metaeval.significance.bootstrap_dp_t`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import analyses, data, recommenders
from ...arrays import threaded_map
from ...book.costs import Plan, Size, run_seconds
from ...data import splits
from ...metaeval import agreement, bootstrap, incompleteness, significance
from ...metaeval.two_level import TwoLevel
from ...metrics import Judgments, Runs, Subsets, score_matrix
from ...recommenders import roster
from .equations import engine_gaps
from .values import CUTOFFS, LABELS, METRICS, PAPER_PERMUTATIONS, PAPER_SAMPLES

__all__ = ["EQ_SAMPLE", "analyse", "cost_plan", "gini", "nanmean", "study"]

#: users whose scores are checked against the paper's eqs. 1–8 (every system, two cut-offs)
EQ_SAMPLE = 50


@analyses.analysis
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
    boot_masks: int | None = None,
    seed: int = 20180702,
    dataset: str = "ratings",
) -> dict[str, Any]:
    """The whole study on one dataset: split, cached recommender runs, then :func:`analyse`.

    A per-user holdout of ``test_fraction`` (Sec. 5: 80/20 per user, ``split_seed``), the
    roster's ``systems`` (:mod:`recmeta.recommenders.roster`; those that learn from rating values
    are left out on implicit feedback) trained on the training part, and top-``depth`` lists over
    the items seen in training that the user has not rated in training
    (``recommenders.make(candidates="all")``).
    A rating ``>= threshold`` is relevant; a lower one is judged non-relevant; on implicit
    feedback (no rating column) every test interaction is relevant. Returns the mapping of
    named results the chapter and :data:`LEDGER` read (see :func:`analyse`).
    """
    implicit = data.is_implicit(ratings)
    threshold = None if implicit else threshold
    names, left_out = roster.for_implicit(systems, implicit)
    if len(names) < 3:
        raise ValueError(f"the study needs at least three systems, got {names}")
    split = splits.holdout_per_user(ratings, test_fraction, seed=split_seed)
    judgments = Judgments.from_frame(split.test, threshold=threshold)
    options: dict[str, Any] = {
        "dataset": str(dataset),
        "split": f"holdout-{test_fraction:g}",
        "seed": split_seed,
        "depth": depth,
    }
    chosen = roster.systems(names)
    recommenders.make_ahead(
        [recommenders.Task(s, split.train, options) for s in chosen],
        cost=lambda t: run_seconds(t.system.name, t.train),
    )
    run = recommenders.make_runs(chosen, split.train, judgments, **options)
    out = analyse(
        judgments,
        run,
        metrics=metrics,
        cutoffs=cutoffs,
        sparsity_shares=sparsity_shares,
        n_samples=n_samples,
        popularity_shares=popularity_shares,
        n_permutations=n_permutations,
        n_bootstrap=n_bootstrap,
        boot_masks=boot_masks,
        seed=seed,
    )
    train_items = pd.Index(split.train["item"].unique())
    test_items = pd.Index(split.test["item"].unique())
    out.update(
        {
            "dataset": str(dataset),
            "implicit": implicit,
            "left_out": list(left_out),
            "data": {
                "users": int(ratings["user"].nunique()),
                "items": int(ratings["item"].nunique()),
                "ratings": len(ratings),
                "density": len(ratings) / (ratings["user"].nunique() * ratings["item"].nunique()),
                "gini": gini(ratings["item"].value_counts().to_numpy()),
                "train_items": len(train_items),
                "test_only_items": len(test_items.difference(train_items)),
                "test_only_ratings": int((~split.test["item"].isin(train_items)).sum()),
            },
            "setup": {
                **out["setup"],
                "threshold": threshold,
                "test_fraction": test_fraction,
                "split_seed": split_seed,
                "depth": depth,
            },
        }
    )
    return out


def gini(counts: np.ndarray) -> float:
    r"""The Gini coefficient of the ratings across items (Table 2's long tail):
    :math:`G = \sum_{i=1}^{n} (2i - n - 1)\, x_{(i)} / (n \sum_i x_i)`, the counts
    :math:`x_{(i)}` sorted ascending (0: every item as popular; towards 1: one item has all)."""
    x = np.sort(np.asarray(counts, dtype=float))
    if x.size == 0 or x.sum() <= 0 or (x < 0).any():
        raise ValueError("the Gini coefficient needs non-negative counts with a positive sum")
    i = np.arange(1, x.size + 1)
    return float(((2 * i - x.size - 1) * x).sum() / (x.size * x.sum()))


def _measures(metrics: Sequence[str], cutoffs: Sequence[int]) -> list[str]:
    return [f"{m}@{k}" for m in metrics for k in cutoffs]


def _per_user(subsets: Subsets, keep: np.ndarray | None) -> np.ndarray:
    """Per-user scores (measures × systems × users) on the test rows ``keep`` leaves, measures
    metric-major as :func:`_measures`."""
    return _stacked(subsets.score(keep))


def _stacked(scores: dict[str, np.ndarray]) -> np.ndarray:
    """Per-user scores of every measure stacked (measures × systems × users)."""
    return np.stack(list(scores.values()))


def nanmean(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis skipping NaN (users without a score); NaN where none is left."""
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
    boot_masks: int | None = None,
    **_: Any,
) -> Plan:
    """The expensive steps of :func:`study` on a dataset of ``size`` (:mod:`recmeta.book.costs`).

    The runs of ``systems`` (on implicit feedback, those that can train on it); one compiled pass
    per incomplete test set (``sparsity_shares`` × ``n_samples`` random masks and one mask per
    popularity share) at every metric × cut-off, and one more per random mask for its per-user
    scores (the two-level bootstrap); and the permutation tests of every system pair for
    every measure. Other settings of :func:`study` are accepted and do not change the estimate.
    """
    runnable, _left_out = roster.for_implicit(list(systems), size.implicit)  # as study() does
    n_sys, measures = len(runnable), len(metrics) * len(cutoffs)
    return (
        Plan(size)
        .runs(runnable, ahead=True)
        .subsets(len(sparsity_shares) * n_samples + len(popularity_shares), n_sys, measures)
        .subsets(
            len(sparsity_shares) * min(n_samples, boot_masks or n_samples),
            n_sys,
            measures,
            label="per-user scores of the random masks (two-level bootstrap)",
        )
        .tests(n_sys * (n_sys - 1) // 2 * measures, n_permutations)
        .unmodelled("the bootstrap intervals and t-tests over resampled users")
    )


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
    boot_masks: int | None = None,
    seed: int = 20180702,
) -> dict[str, Any]:
    """Every measurement of the paper on given judgments and runs (no training).

    ``boot_masks`` bounds the cost of the two-level bootstrap of the sparsity curves: only the
    first ``boot_masks`` random masks of each share enter it (None: all), drawn that many at a
    time. Their mean varies more than the mean of all masks the point value averages, so the
    interval can only widen.

    Returns a dict with, among others: ``system_means`` (systems × measures, full test set),
    ``boot_means`` (resamples × measures × systems: the same means over bootstrap resamples of
    the evaluated users), ``tau_cutoffs`` (metric → τ matrix among cut-offs), ``tau_metrics``
    (τ among metrics at the deepest cut-off), ``sparsity`` and ``popularity`` (tidy frames: τ of
    each incomplete test set with the full one, per measure), ``popularity_boot`` (resamples ×
    masks × measures), ``sparsity_boot`` (resamples × shares × measures: the two-level
    bootstrap of the mean τ over the random masks of each share,
    :class:`~recmeta.metaeval.two_level.TwoLevel`; users resampled as in ``boot_means``, masks
    within each share, shares in the order of ``sparsity``), ``pvalues`` (permutation test of
    every pair for every measure; t-test and Wilcoxon at the deepest cut-off), ``dp``, ``dp_t``
    and ``dp_t_boot`` (DP by permutation test, by t-test, and by t-test over the resamples),
    ``mc_check`` (a Monte-Carlo p-value against exact enumeration), ``infap`` (how the two
    readings of infAP relate to AP) and ``degenerate`` (the metrics that need judged
    non-relevant items, with the reason, when the test set has none: implicit feedback).
    """
    metrics = list(metrics)
    cutoffs = sorted(int(k) for k in cutoffs)
    if boot_masks is not None and (int(boot_masks) != boot_masks or boot_masks < 1):
        raise ValueError(f"boot_masks must be a positive integer or None, got {boot_masks!r}")
    unknown = [m for m in metrics if m not in LABELS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; the study knows {list(METRICS)}")
    deep = max(cutoffs)
    measures = _measures(metrics, cutoffs)
    names = list(runs.systems)
    n_sys = len(names)
    sparsity_grid = (
        incompleteness.sparsity_shares()
        if sparsity_shares is None
        else np.asarray(sparsity_shares, dtype=float)
    )
    popularity_grid = (
        incompleteness.popularity_shares()
        if popularity_shares is None
        else np.asarray(popularity_shares, dtype=float)
    )

    subsets = Subsets(judgments, runs, measures, infap="pooled")
    full = _per_user(subsets, None)  # measures × systems × users
    evaluated = np.isfinite(full[0]).all(axis=0)
    full_e = full[:, :, evaluated]
    means = nanmean(full)  # measures × systems
    system_means = pd.DataFrame(means.T, index=names, columns=measures)
    draws = TwoLevel(int(evaluated.sum()), n_bootstrap, seed)  # users as resample_counts(seed)
    counts = draws.counts
    boot_means = bootstrap.weighted_means(full_e, counts)  # B × measures × systems

    # infAP: the paper's eq. 8 (pooled) against trec_eval's reading, which is AP
    at = {m: i * len(cutoffs) + len(cutoffs) - 1 for i, m in enumerate(metrics)}
    infap = {}
    if "infAP" in at and "AP" in at:
        trec = score_matrix(judgments, runs, f"infAP@{deep}")[:, evaluated]  # trec_eval's
        ap = full_e[at["AP"]]
        pooled = full_e[at["infAP"]]
        infap = {
            "trec_gap_max": float(np.abs(trec - ap).max()),
            "pooled_gap_mean": float(np.abs(pooled - ap).mean()),
            "pooled_gap_max": float(np.abs(pooled - ap).max()),
            "trec_mean": float(trec.mean()),
            "ap_mean": float(ap.mean()),
            "pooled_mean": float(pooled.mean()),
        }

    # τ among cut-offs and among metrics
    tau_cutoffs = {
        m: agreement.tau_matrix(
            means[i * len(cutoffs) : (i + 1) * len(cutoffs)], [f"@{k}" for k in cutoffs]
        )
        for i, m in enumerate(metrics)
    }
    tau_metrics = agreement.tau_matrix(means[[at[m] for m in metrics]], metrics)

    # incompleteness: sparsity (random ratings) and popularity (most popular test items removed)
    test = judgments.to_frame()
    sparse = incompleteness.random_ratings(test, sparsity_grid, n_samples, seed=seed)
    popular = incompleteness.popular_items_removed(test, popularity_grid)

    # eqs. 1–8: the engine's scores of a sample of evaluated users, at the shallowest and the
    # deepest cut-off, against the paper's formulas written out (.equations)
    pick = np.random.default_rng(seed).permutation(np.flatnonzero(evaluated))[:EQ_SAMPLE]
    eq_k = sorted({cutoffs[0], deep})
    eq_scores = {f"{m}@{k}": full[measures.index(f"{m}@{k}")] for m in metrics for k in eq_k}
    metric_check = {
        "gaps": engine_gaps(test, runs, judgments, metrics, eq_k, np.sort(pick), eq_scores),
        "users": int(pick.size),
        "systems": n_sys,
        "cutoffs": eq_k,
    }
    # system means on every sparse test set, one compiled pass each (a mask that keeps every
    # row gives the full test set again: its means are the full ones)
    sparse_means = subsets.means(sparse.keep)["mean"]  # masks × measures × systems
    sparse_means[sparse.keep.all(axis=1)] = means
    rows = [agreement.kendall_tau(m_j, means) for m_j in sparse_means]
    sparsity = _tidy(np.array(rows), measures, sparse.frame())

    against = agreement.TauAgainst(boot_means)  # nan_kendall_tau(·, boot_means)

    def resampled(pu: np.ndarray | None) -> np.ndarray:
        """The means in every bootstrap resample of the users (B × measures × systems) of an
        incomplete test set's per-user scores (None: the full test set)."""
        return boot_means if pu is None else bootstrap.weighted_means(pu[:, :, evaluated], counts)

    def sparse_boot(idx: np.ndarray) -> np.ndarray:
        """τ with the full test set in every resample (B × measures) of the sparse masks
        ``idx`` (one share's), scored together; the resamples' means of the next masks are
        computed while one's τ is (threaded_map)."""
        keep = sparse.keep[idx]
        pus = (
            None if k.all() else _stacked(s)
            for k, s in zip(keep, subsets.scores(keep), strict=True)
        )
        return np.stack([against(m) for m in threaded_map(resampled, pus)])

    groups = [np.flatnonzero(sparse.share == s)[:boot_masks] for s in pd.unique(sparse.share)]
    sparsity_boot = draws.over_group_batches(sparse_boot, groups)  # B × shares × measures
    rows = []

    def popular_scores(keep: np.ndarray) -> np.ndarray | None:
        """A popularity mask's per-user scores (None: every item kept), its τ in ``rows``."""
        pu = None if keep.all() else _per_user(subsets, keep)
        rows.append(agreement.kendall_tau(means if pu is None else nanmean(pu), means))
        return pu

    # B × masks × measures; the masks read one by one, in order
    pus = map(popular_scores, popular.keep)
    popularity_boot = np.stack([against(m) for m in threaded_map(resampled, pus)], axis=1)
    popularity = _tidy(np.array(rows), measures, popular.frame())

    # discriminative power: every measure's permutation tests in one pass (the same random
    # signs as one test per measure, so the same p-values)
    matrices = {m: full_e[i] for i, m in enumerate(measures)}
    ia, ib = significance.system_pairs(n_sys)
    n_pairs = ia.size
    p_perm = np.concatenate(
        list(
            significance.permutation_tests(
                matrices, seed=seed, n_permutations=n_permutations
            ).values()
        )
    )
    # the measures' systems stacked, pairs only within a measure (the bootstrap t-tests)
    stacked = full_e.reshape(len(measures) * n_sys, -1)
    offset = np.repeat(np.arange(len(measures)) * n_sys, n_pairs)
    pairs = (np.tile(ia, len(measures)) + offset, np.tile(ib, len(measures)) + offset)
    perm = pd.DataFrame(
        {
            "metric": np.repeat(measures, n_pairs),
            "test": "permutation",
            "a": np.tile([names[k] for k in ia], len(measures)),
            "b": np.tile([names[k] for k in ib], len(measures)),
            "p": p_perm,
        }
    )
    others = significance.pvalue_table(
        {f"{m}@{deep}": matrices[f"{m}@{deep}"] for m in metrics},
        names,
        seed=seed,
        tests=("t", "wilcoxon"),
    )
    pvalues = pd.concat([perm, others], ignore_index=True)
    dp = pd.Series(p_perm.reshape(len(measures), n_pairs).sum(axis=1), index=measures)
    ones = np.ones((1, stacked.shape[1]))
    dp_t = pd.Series(
        significance.bootstrap_t_pvalues(stacked, ones, pairs)
        .reshape(len(measures), n_pairs)
        .sum(axis=1),
        index=measures,
    )
    group = max(1, 2_000_000 // (counts.shape[0] * n_pairs))  # measures per call, to bound memory
    dp_t_boot = pd.DataFrame(
        np.concatenate(
            [
                significance.bootstrap_t_pvalues(
                    stacked,
                    counts,
                    (
                        pairs[0][g * n_pairs : (g + group) * n_pairs],
                        pairs[1][g * n_pairs : (g + group) * n_pairs],
                    ),
                )
                .reshape(counts.shape[0], -1, n_pairs)
                .sum(axis=2)
                for g in range(0, len(measures), group)
            ],
            axis=1,
        ),
        columns=measures,
    )
    significant = pd.Series(
        {
            m: significance.count_significant(p_perm[i * n_pairs : (i + 1) * n_pairs])
            for i, m in enumerate(measures)
        }
    )

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
                what = (
                    "it reduces to recall"
                    if m == "bpref"
                    else "eq. 8 estimates the precision above each relevant item from relevant "
                    "items "
                    "only, so it measures recall with a discount on the first hit"
                )
                degenerate[m] = (
                    f"the test set judges no item non-relevant (implicit feedback): "
                    f"{LABELS[m]} needs such items, and without them {what} (largest "
                    f"per-user gap with recall at @{deep}: {gap:.2g})"
                )
    return {
        "systems": names,
        "metrics": metrics,
        "cutoffs": cutoffs,
        "deep": deep,
        "measures": measures,
        "n_pairs": n_sys * (n_sys - 1) // 2,
        "n_users": len(judgments.users),
        "n_evaluated": int(evaluated.sum()),
        "n_test": int(judgments.n_entries),
        "n_nonrelevant": n_non,
        "system_means": system_means,
        "boot_means": boot_means,
        "tau_cutoffs": tau_cutoffs,
        "tau_metrics": tau_metrics,
        "sparsity": sparsity,
        "popularity": popularity,
        "popularity_boot": popularity_boot,
        "sparsity_boot": sparsity_boot,
        "pvalues": pvalues,
        "dp": dp,
        "dp_t": dp_t,
        "dp_t_boot": dp_t_boot,
        "significant": significant,
        "mc_check": mc_check,
        "metric_check": metric_check,
        "infap": infap,
        "degenerate": degenerate,
        "setup": {
            "n_samples": int(n_samples),
            "n_permutations": int(n_permutations),
            "n_bootstrap": int(n_bootstrap),
            "boot_masks": boot_masks,
            "seed": seed,
            "sparsity_shares": [float(x) for x in sparsity_grid],
            "popularity_shares": [float(x) for x in popularity_grid],
        },
    }


def _tidy(tau: np.ndarray, measures: Sequence[str], masks: pd.DataFrame) -> pd.DataFrame:
    """τ (masks × measures) as a long frame with the masks' share, sample and kept_rows."""
    wide = pd.DataFrame(tau, columns=list(measures))
    wide = pd.concat([masks.reset_index(drop=True).rename_axis("mask").reset_index(), wide], axis=1)
    return wide.melt(id_vars=["mask", *masks.columns], var_name="measure", value_name="tau")


def _mc_check(
    scores: np.ndarray, names: Sequence[str], seed: int, n_permutations: int, measure: str
) -> dict[str, Any]:
    """Monte-Carlo against exact permutation p-value on 12 random users of the closest pair."""
    n_users = scores.shape[1]
    size = min(12, n_users)
    mean = scores.mean(axis=1)
    gaps = np.abs(mean[:, None] - mean[None, :]) + np.where(
        np.eye(len(mean), dtype=bool), np.inf, 0
    )
    a, b = np.unravel_index(np.argmin(gaps), gaps.shape)
    pick = np.random.default_rng(seed).choice(n_users, size, replace=False)
    d = scores[a, pick] - scores[b, pick]
    exact = significance.exact_permutation_p(d)
    mc = float(
        significance.permutation_test(
            scores[[a, b]][:, pick], seed=seed, n_permutations=n_permutations
        )[0]
    )
    return {
        "measure": measure,
        "a": names[int(a)],
        "b": names[int(b)],
        "users": size,
        "exact": exact,
        "mc": mc,
        "se": math.sqrt(max(exact * (1 - exact), 0.0) / n_permutations),
        "n_permutations": int(n_permutations),
    }
