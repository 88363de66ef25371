"""Set-based metrics at a cut-off: precision, recall, F1, stratified recall.

Notation: ``L@k`` the first k items of the list, ``R`` the user's relevant items (grade >= τ).
"""

from __future__ import annotations

import numpy as np

from ._context import RankedJudgments
from ._names import MetricSpec


def _k(ctx: RankedJudgments, k: int | None) -> int:
    return ctx.depth if k is None else k


def precision(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """P@k = |L@k ∩ R| / k (trec_eval ``P``: divides by k even when the list is shorter)."""
    return ctx.at(ctx.cum_rel, spec.k) / _k(ctx, spec.k)


def recall(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """R@k = |L@k ∩ R| / |R| (trec_eval ``recall``; not ÷ min(|R|, k))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return ctx.at(ctx.cum_rel, spec.k) / ctx.num_rel


def f1(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """F1@k = 2 P@k R@k / (P@k + R@k), and 0 when nothing relevant is retrieved.

    Valcarce et al. (2020), eq. 3.
    """
    p = precision(ctx, spec)
    r = recall(ctx, spec)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p + r > 0, 2 * p * r / (p + r), 0.0)


def stratified_recall(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """Popularity-stratified recall (Steck 2011; notation of Bellogín et al. 2017, sec. 6).

    ``SRecall@k = sum_{i in L@k ∩ R} w_i / sum_{i in R} w_i`` with ``w_i = N_i^(-γ/(γ+1))``,
    ``N_i`` the number of relevant ratings of item ``i``. γ = 0 gives recall; γ = inf gives
    ``w_i = 1/N_i``. ``N_i`` is taken from ``Judgments.item_popularity`` if set
    (:meth:`Judgments.with_popularity`), else counted over the relevant entries of the judgments.
    """
    gamma = float(spec.param("gamma"))
    exponent = -1.0 if np.isinf(gamma) else -gamma / (gamma + 1.0)
    users, items, grades = ctx.active_entries
    relevant = grades >= ctx.threshold
    n_items = len(ctx.runs.items)
    pop = np.zeros(n_items)
    if ctx.judgments.item_popularity is not None:
        pop[: len(ctx.judgments.items)] = ctx.judgments.item_popularity
    else:
        pop += np.bincount(items[relevant], minlength=n_items)
    if (pop[items[relevant]] <= 0).any():
        raise ValueError(
            "stratified recall: a relevant item has popularity 0; popularity counts must "
            "include the test ratings (count relevant ratings over the whole data set)"
        )
    weight = np.where(pop > 0, pop, 1.0) ** exponent
    total = np.bincount(users[relevant], weights=weight[items[relevant]], minlength=ctx.n_users)
    K = ctx.cut(spec.k)
    ranked = ctx.ranks_t[:K]
    w = np.where(ctx.rel[:K], weight[np.maximum(ranked, 0)], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return w.sum(axis=0) / total
