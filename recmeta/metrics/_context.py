"""The judgments looked up at every ranked position: the arrays every metric family reads.

For systems × users × depth, ``grade`` holds the grade of the ranked item (NaN if unjudged or no
item), ``rel`` flags relevant items (grade >= τ), ``nonrel`` judged non-relevant ones. Per-user
counts come from the judgments, not from the lists. All of it is computed once per
(judgments, runs) pair and shared by the metrics of one evaluation.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ._judgments import Judgments
from ._runs import Runs


def discount(n: int) -> np.ndarray:
    """Log discount ``1 / log2(rank + 1)`` for ranks 1..n (Järvelin & Kekäläinen 2002)."""
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


class RankedJudgments:
    """Judgments at ranked positions, for one (judgments, runs) pair."""

    def __init__(self, judgments: Judgments, runs: Runs):
        runs.check_aligned(judgments)
        self.judgments = judgments
        self.runs = runs
        e = judgments._entries
        pos = runs.entry_positions(e)
        hit = pos >= 0
        safe = np.where(hit, pos, 0)
        if judgments._mask is not None:
            hit &= judgments._mask[safe]
        self.entry = np.where(hit, pos, -1)
        self.judged = hit
        self.grade = np.where(hit, e.grades[safe], np.nan)
        self.threshold = judgments.threshold
        self.rel = hit & (self.grade >= self.threshold)
        self.nonrel = hit & ~self.rel
        self.present = runs.ranks >= 0
        self.num_rel = judgments.relevant_counts().astype(np.float64)
        self.num_judged = judgments.judged_counts().astype(np.float64)
        self.num_nonrel = self.num_judged - self.num_rel
        self.depth = runs.depth
        self.n_users = len(judgments.users)

    def cut(self, k: int | None) -> int:
        """Number of ranked positions a cut-off reads: min(k, depth)."""
        return self.depth if k is None else min(k, self.depth)

    @cached_property
    def active_entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(user code, item code, grade) of the active judged entries, sorted by user."""
        e = self.judgments._entries
        keep = self.judgments.active()
        return e.users[keep], e.items[keep], e.grades[keep]

    def per_user_top(self, gains: np.ndarray, k: int) -> np.ndarray:
        """Ideal DCG: ``sum_i gain_(i) / log2(i + 1)`` over each user's k largest entry gains.

        ``gains`` is aligned with :attr:`active_entries`.
        """
        users = self.active_entries[0]
        order = np.lexsort((-gains, users))
        u = users[order]
        g = gains[order]
        start = np.searchsorted(u, np.arange(self.n_users))
        rank = np.arange(len(u)) - start[u]
        keep = rank < k
        disc = discount(k)
        return np.bincount(u[keep], weights=g[keep] * disc[rank[keep]], minlength=self.n_users)

    def per_user_max(self, values: np.ndarray) -> np.ndarray:
        """Largest entry value per user (0 for a user without entries)."""
        out = np.zeros(self.n_users)
        np.maximum.at(out, self.active_entries[0], values)
        return out
