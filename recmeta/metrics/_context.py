"""The judgments looked up at every ranked position: the arrays every metric family reads.

Arrays are laid out depth × systems × users (rank first): cumulative sums over ranks then add
contiguous rows, which is several times faster than summing along short last axes. ``grade`` holds the grade of the ranked item (NaN if unjudged or no
item), ``rel`` flags relevant items (grade >= τ), ``nonrel`` judged non-relevant ones. Per-user
counts come from the judgments, not from the lists. All of it is computed once per
(judgments, runs) pair and shared by the metrics of one evaluation.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ._judgments import Judgments
from ._runs import Runs


def cumsum_ranks(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Cumulative sum over the first (rank) axis, one row at a time.

    Same additions in the same order as ``np.cumsum(x, axis=0)``, but adding whole rows is
    several times faster for depth × (systems · users) arrays. The loop is over ranks.
    """
    out = np.empty_like(x) if out is None else out
    out[0] = x[0]
    for d in range(1, x.shape[0]):
        np.add(out[d - 1], x[d], out=out[d])
    return out


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
        pos = runs.entry_positions(e)  # depth × systems × users, -1 = not judged / no item
        # per-entry lookups with one extra slot at index -1 for "not judged"
        active = np.append(judgments.active(), False)
        grades = np.append(e.grades, np.nan)
        grades[~active] = np.nan
        self.threshold = judgments.threshold
        is_rel = active & (grades >= self.threshold)
        self.judged = active[pos]
        self.grade = grades[pos]
        self.rel = is_rel[pos]
        self.nonrel = (active & ~is_rel)[pos]
        self.ranks_t = np.ascontiguousarray(np.moveaxis(runs.ranks, 2, 0))
        self.present = self.ranks_t >= 0
        self.num_rel = judgments.relevant_counts().astype(np.float64)
        self.num_judged = judgments.judged_counts().astype(np.float64)
        self.num_nonrel = self.num_judged - self.num_rel
        self.depth = runs.depth
        self.n_users = len(judgments.users)

    # ---- cumulative sums over ranks: a metric at cut-off k reads column k - 1, so a suite of
    # ---- cut-offs costs one pass over the lists per quantity.
    @cached_property
    def ranks1(self) -> np.ndarray:
        """Rank numbers 1..depth as floats, shaped to broadcast over depth × systems × users."""
        return np.arange(1, self.depth + 1, dtype=np.float64)[:, None, None]

    @cached_property
    def grade0(self) -> np.ndarray:
        """Grades at ranked positions with 0 for unjudged items and empty slots."""
        return np.where(self.judged, self.grade, 0.0)

    @cached_property
    def cum_rel(self) -> np.ndarray:
        """Relevant items among the first i ranks."""
        return cumsum_ranks(self.rel.astype(np.float64))

    @cached_property
    def cum_nonrel(self) -> np.ndarray:
        """Judged non-relevant items among the first i ranks."""
        return cumsum_ranks(self.nonrel.astype(np.float64))

    @cached_property
    def list_length(self) -> np.ndarray:
        """Number of items in each list (lists are padded at the end)."""
        return self.present.sum(axis=0)

    @cached_property
    def first_rel(self) -> np.ndarray:
        """0-based position of the first relevant item, or depth if none."""
        any_rel = self.rel.any(axis=0)
        return np.where(any_rel, self.rel.argmax(axis=0), self.depth)

    def cumulative(self, key: str, fn) -> np.ndarray:
        """Cache ``fn()`` (a depth × S × U cumulative array) under ``key``."""
        cache = self.__dict__.setdefault("_cumulative", {})
        if key not in cache:
            cache[key] = fn()
        return cache[key]

    def at(self, cum: np.ndarray, k: int | None) -> np.ndarray:
        """Column ``min(k, depth) - 1`` of a cumulative array."""
        return cum[self.cut(k) - 1]

    def cut(self, k: int | None) -> int:
        """Number of ranked positions a cut-off reads: min(k, depth)."""
        return self.depth if k is None else min(k, self.depth)

    @cached_property
    def active_entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(user code, item code, grade) of the active judged entries, sorted by user."""
        e = self.judgments._entries
        keep = self.judgments.active()
        return e.users[keep], e.items[keep], e.grades[keep]

    def per_user_top(self, gains: np.ndarray, k: int, key: str | None = None) -> np.ndarray:
        """Ideal DCG: ``sum_i gain_(i) / log2(i + 1)`` over each user's k largest entry gains.

        ``gains`` is aligned with :attr:`active_entries`; ``key`` caches the sort across cut-offs.
        """
        cache = self.__dict__.setdefault("_ideal", {})
        if key is None or key not in cache:
            users = self.active_entries[0]
            order = np.lexsort((-gains, users))
            u = users[order]
            g = gains[order]
            start = np.searchsorted(u, np.arange(self.n_users))
            rank = np.arange(len(u)) - start[u]
            sorted_ = (u, g, rank)
            if key is not None:
                cache[key] = sorted_
        else:
            sorted_ = cache[key]
        u, g, rank = sorted_
        keep = rank < k
        disc = discount(k)
        return np.bincount(u[keep], weights=g[keep] * disc[rank[keep]], minlength=self.n_users)

    def per_user_max(self, values: np.ndarray) -> np.ndarray:
        """Largest entry value per user (0 for a user without entries)."""
        out = np.zeros(self.n_users)
        np.maximum.at(out, self.active_entries[0], values)
        return out
