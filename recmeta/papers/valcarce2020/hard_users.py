r"""Valcarce et al. (2020), §6.2: do the graded metrics discriminate better among hard users?

The paper calls *hard* the users with small test profiles, for whom relevant items are hard to
find, and reads across its datasets that nDCG and ERR, the metrics that use the grades,
discriminate better on the collection with more of them (LibraryThing). The chapter has one
collection at a time, so it asks the same question inside it: the users are cut at the median
of their test profile size (:func:`halves`), and on each half the DP of the graded metrics is
set against the DP of the seven binary ones (:func:`graded_contrast`),

.. math::  c = \log \frac{\overline{DP}_{graded}}{\overline{DP}_{binary}},

a ratio that does not care that a half of harder users has larger p-values for every metric.
The paper's reading is :math:`c_{hard} - c_{easy} < 0`. DP here sums paired t-test p-values
(:func:`recmeta.metaeval.significance.bootstrap_t_pvalues`, the stand-in the DP intervals of
the chapter already use), each floored at :math:`1/(B + 1)` for the chapter's :math:`B`
permutations: the smallest p-value the permutation test of the paper's DP can report. Without
the floor, a half in which every pair is decisively significant has DP values of 1e-10 and
less, and their ratio is noise. The users of each half are resampled with replacement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...metaeval import bootstrap
from ...metaeval.significance import bootstrap_t_pvalues

__all__ = ["GRADED", "HardUsers", "graded_contrast", "halves", "hard_user_dp"]

#: the metrics of the nine that use the grades (§6.2: "NDCG and ERR")
GRADED: tuple[str, ...] = ("nDCG", "ERR")


def halves(sizes: pd.Series, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the *hard* half (the smaller test profiles) and of the *easy* half of the
    users of ``sizes`` (test ratings per user), of equal size; users of equal size fall on
    either side of the cut in a seeded random order."""
    s = np.asarray(sizes, dtype=np.float64)
    if s.ndim != 1 or s.size < 4 or not np.isfinite(s).all():
        raise ValueError(f"need the test profile sizes of at least 4 users, got {s.size}")
    tie = np.random.default_rng(seed).random(s.size)
    order = np.lexsort((tie, s))
    half = s.size // 2
    return np.sort(order[:half]), np.sort(order[-half:])


def graded_contrast(dp: Mapping[str, np.ndarray]) -> np.ndarray:
    """:math:`\\log(\\overline{DP}_{graded} / \\overline{DP}_{binary})` per replicate, from DP
    per metric (short names; arrays of one length); NaN where a mean DP is 0."""
    graded = [m for m in dp if m in GRADED]
    binary = [m for m in dp if m not in GRADED]
    if not graded or not binary:
        raise ValueError(f"need graded metrics {GRADED} and others, got {list(dp)}")
    g = np.mean([np.asarray(dp[m], dtype=np.float64) for m in graded], axis=0)
    b = np.mean([np.asarray(dp[m], dtype=np.float64) for m in binary], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((g > 0) & (b > 0), np.log(g / b), np.nan)


@dataclass(frozen=True)
class HardUsers:
    """The ``hard_users`` result: ``point`` (:math:`c_{hard} - c_{easy}`), ``reps`` (its
    bootstrap replicates), ``dp`` (t-test DP per metric on each half, a frame with columns
    hard and easy), ``sizes`` (the median test profile of each half) and ``users`` (users per
    half)."""

    point: float
    reps: np.ndarray
    dp: pd.DataFrame
    sizes: dict[str, float]
    users: int


def hard_user_dp(
    user_matrices: Mapping[str, np.ndarray],
    sizes: pd.Series,
    *,
    n_boot: int,
    seed: int,
    n_permutations: int,
    metrics: Sequence[str] | None = None,
) -> HardUsers:
    """The contrast of :func:`graded_contrast` between the hard and the easy half of the users.

    ``user_matrices`` maps short metric names to (systems × users) scores, each user's folds
    averaged (:meth:`~.study.Results.user_matrices`, renamed); ``sizes`` gives each of those
    users' test ratings (aligned; a user without a score in every metric is dropped). Each half
    is resampled ``n_boot`` times (seeded), the same draws for every metric; every p-value is
    floored at ``1 / (n_permutations + 1)``.
    """
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    floor = 1.0 / (int(n_permutations) + 1)
    names = list(metrics or user_matrices)
    first = np.asarray(user_matrices[names[0]], dtype=np.float64)
    scored = ~np.isnan(first).all(axis=0)
    for n in names:
        scored &= ~np.isnan(np.asarray(user_matrices[n], dtype=np.float64)).all(axis=0)
    if len(sizes) != first.shape[1]:
        raise ValueError(f"{len(sizes)} profile sizes for {first.shape[1]} users")
    cols = np.flatnonzero(scored)
    hard, easy = halves(sizes.iloc[cols], seed)
    dp: dict[str, dict[str, float]] = {}
    reps: dict[str, np.ndarray] = {}
    for what, part, shift in (("hard", hard, 0), ("easy", easy, 1)):
        users = cols[part]
        counts = bootstrap.resample_counts(users.size, int(n_boot), seed + shift)
        ones = np.ones((1, users.size))
        per = {}
        base = {}
        for n in names:
            a = np.asarray(user_matrices[n], dtype=np.float64)[:, users]
            per[n] = np.maximum(bootstrap_t_pvalues(a, counts), floor).sum(axis=1)
            base[n] = float(np.maximum(bootstrap_t_pvalues(a, ones), floor).sum())
        dp[what] = base
        reps[what] = graded_contrast(per)
    point = float(
        graded_contrast({k: np.array([v]) for k, v in dp["hard"].items()})[0]
        - graded_contrast({k: np.array([v]) for k, v in dp["easy"].items()})[0]
    )
    s = sizes.iloc[cols].to_numpy()
    return HardUsers(
        point=point,
        reps=reps["hard"] - reps["easy"],
        dp=pd.DataFrame(dp),
        sizes={"hard": float(np.median(s[hard])), "easy": float(np.median(s[easy]))},
        users=int(hard.size),
    )
