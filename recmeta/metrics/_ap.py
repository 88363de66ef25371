"""Average precision (trec_eval ``map_cut``) and multi-graded µAP (Scheel et al.)."""

from __future__ import annotations

import numpy as np

from ._context import RankedJudgments, cumsum_ranks
from ._names import MetricSpec


def _ap(rel: np.ndarray, num_rel: np.ndarray) -> np.ndarray:
    """``sum_i rel_i P@i / |R|`` over the given (depth-first) positions; NaN where |R| = 0."""
    hits = cumsum_ranks(rel.astype(np.float64))
    ranks = np.arange(1, rel.shape[0] + 1, dtype=np.float64)[:, None, None]
    s = (rel * (hits / ranks)).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return s / num_rel


def average_precision(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """AP@k = (1/|R|) sum_{i<=k} rel_i P@i — trec_eval ``map_cut``, divided by all of |R|.

    Valcarce et al. (2020), eq. 4. Some libraries divide by min(|R|, k) instead (see the book's
    Metrics page).
    """
    cum = ctx.cumulative(
        "ap", lambda: cumsum_ranks(ctx.rel * (ctx.cum_rel / ctx.ranks1))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        return ctx.at(cum, spec.k) / ctx.num_rel


def mu_ap(ctx: RankedJudgments, spec: MetricSpec) -> np.ndarray:
    """µAP@k: AP averaged over the thresholds of the grades a user has (Scheel et al., eq. 4).

    ``µAP = sum_{t in L} d_t AP^t / sum_{t in L} d_t`` where ``L`` is the set of positive grades
    among the user's judged items, ``AP^t`` is AP@k with "relevant" meaning grade >= t (divided
    by the number of items with grade >= t), and ``d_t`` is the distance from t to the next lower
    level of ``L`` (to 0 for the lowest). Grades <= 0 are irrelevant; shift a scale whose
    irrelevant level is not 0. The relevance threshold τ is not used.
    """
    K = ctx.cut(spec.k)
    users, _, grades = ctx.active_entries
    grade = ctx.grade[:K]
    levels = np.unique(grades[grades > 0])
    previous = np.zeros(ctx.n_users)
    total = np.zeros(ctx.grade.shape[1:])
    for t in levels:  # loop over grade levels, vectorised over systems and users
        at_or_above = grades >= t
        count = np.bincount(users[at_or_above], minlength=ctx.n_users).astype(np.float64)
        has = np.bincount(users[grades == t], minlength=ctx.n_users) > 0
        ap_t = _ap(grade >= t, count)
        d = np.where(has, t - previous, 0.0)
        total += np.where(has, d * np.nan_to_num(ap_t), 0.0)
        previous = np.where(has, t, previous)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(previous > 0, total / previous, np.nan)
