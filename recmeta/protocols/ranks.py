"""Ranks within target sets: score descending, ties by item id ascending.

This is the metric engine's ``ties="item_id"`` order, computed without building runs; every
measure on target sets (:mod:`recmeta.protocols.set_metrics`) and the lemma's ranks
(:mod:`recmeta.protocols.expectations`) use it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit

__all__ = ["rank_in_sets", "rank_within", "set_codes"]


def set_codes(s: np.ndarray, item: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """(set ids, code of each row's set, whether rows are grouped by set and sorted by item
    within).

    Numeric columns take one compiled pass, which stops at the first row out of that order;
    others the same test by numpy. Rows out of that order are coded by ``np.unique``."""
    sets, code, firsts = _set_layout(s, item)
    return sets, code, firsts is not None


def _set_layout(
    s: np.ndarray, item: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`set_codes` with, in place of whether the rows are grouped, the first row of each
    set when they are (else None)."""
    if len(s) > 1 and s.dtype.kind in "iu" and item.dtype.kind in "iuf":
        grouped, code, firsts = _grouped_codes(s, item)
        if grouped:
            return s[firsts], code, firsts
    else:
        same = s[1:] == s[:-1]
        grouped = len(s) < 2 or bool(np.all((s[1:] > s[:-1]) | (same & (item[1:] >= item[:-1]))))
        if grouped:
            start = np.r_[True, ~same] if len(s) else np.zeros(0, bool)
            return s[start], np.cumsum(start) - 1, np.flatnonzero(start)
    sets, inverse = np.unique(s, return_inverse=True)
    return sets, inverse, None


def rank_in_sets(scored: pd.DataFrame, depth: int | None = None) -> np.ndarray:
    """0-based rank of every row within its set: score descending, ties by item id ascending —
    the metric engine's ``ties="item_id"`` order, computed without building runs.

    With ``depth`` only the ranks below ``depth`` are exact: the rows that cannot reach the first
    ``depth`` places of their set are found without a sort and get ``depth``: for rows grouped
    by set without a NaN score by one compiled pass per set (a heap of its ``depth`` largest
    scores), else by a partition of a padded sets × rows table. A full sort of rows grouped by
    set (sorted by item within, no NaN score) is one compiled stable sort per set; of other
    rows, one lexsort.
    """
    s = scored["set"].to_numpy()
    item = scored["item"].to_numpy()
    score = scored["score"].to_numpy(dtype=float)
    _, inv, firsts = _set_layout(s, item)
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1 or None, got {depth}")
    rows = np.arange(len(s))
    # grouped rows: set g holds rows bounds[g]:bounds[g + 1]; only their passes read has_nan
    bounds = np.r_[firsts, len(s)] if firsts is not None and len(s) else None
    has_nan = bounds is not None and bool(np.isnan(score).any())
    if depth is not None and bounds is not None:
        counts = np.diff(bounds)
        width = int(counts.max())
        if width > depth and len(counts) * width <= 4 * len(s) + 4096:
            if not has_nan:
                return _grouped_top_ranks(bounds, score, depth)
            starts = bounds[:-1]
            table = np.full((len(counts), width), -np.inf)
            table[inv, rows - starts[inv]] = score
            # the depth-th largest score of each set: every row that can rank above depth has
            # at least it
            floor = np.partition(table, width - depth, axis=1)[:, width - depth]
            pick = np.flatnonzero(score >= floor[inv])
            rank = np.full(len(s), depth, dtype=np.int64)
            order = pick[np.lexsort((-score[pick], inv[pick]))]  # stable: item order among ties
            so = inv[order]
            rank[order] = np.arange(len(order)) - np.searchsorted(so, so, side="left")
            return rank
    if bounds is not None and not has_nan:
        return _grouped_ranks(bounds, score)
    if firsts is not None:  # stable sorts keep the item order among equal scores
        by_score = np.argsort(-score, kind="stable")
        order = by_score[np.argsort(inv[by_score], kind="stable")]
    else:
        order = np.lexsort((item, -score, inv))
    so = inv[order]
    rank = np.empty(len(s), dtype=np.int64)
    rank[order] = rows - np.searchsorted(so, so, side="left")
    return rank


@njit(cache=True, nogil=True)
def _grouped_codes(s, item):  # pragma: no cover - compiled
    """(whether every row's set is above its predecessor's, or the same with an item at least
    as large; the 0-based code of each row's set in that order; the first row of each set)."""
    n = len(s)
    code = np.empty(n, dtype=np.int64)
    firsts = np.empty(n, dtype=np.int64)
    k = 0
    code[0] = 0
    firsts[0] = 0
    for r in range(1, n):
        if s[r] > s[r - 1]:
            k += 1
            firsts[k] = r
        elif not (s[r] == s[r - 1] and item[r] >= item[r - 1]):
            return False, code, firsts[:0]
        code[r] = k
    return True, code, firsts[: k + 1]


@njit(cache=True, nogil=True)
def _grouped_ranks(starts, score):  # pragma: no cover - compiled
    """Ranks within the consecutive sets rows starts[g]:starts[g + 1]: a stable sort of each
    set's negated scores (ties keep the row order, the item order)."""
    rank = np.empty(len(score), dtype=np.int64)
    for g in range(len(starts) - 1):
        a, b = starts[g], starts[g + 1]
        order = np.argsort(-score[a:b], kind="mergesort")
        for k in range(b - a):
            rank[a + order[k]] = k
    return rank


@njit(cache=True, nogil=True)
def _grouped_top_ranks(starts, score, depth):  # pragma: no cover - compiled
    """Ranks within the consecutive sets rows starts[g]:starts[g + 1], exact for the rows
    scoring at least their set's depth-th largest score (every row of a set of at most
    ``depth``), ``depth`` for the others: the same ranks as the partition of a padded table in
    :func:`rank_in_sets`. A min-heap of the ``depth`` largest scores gives each set's floor in
    one pass; the rows at or above it get a stable sort of their negated scores."""
    rank = np.full(len(score), depth, dtype=np.int64)
    heap = np.empty(depth, dtype=np.float64)
    for g in range(len(starts) - 1):
        a, b = starts[g], starts[g + 1]
        if b - a <= depth:
            order = np.argsort(-score[a:b], kind="mergesort")
            for k in range(b - a):
                rank[a + order[k]] = k
            continue
        for k in range(depth):  # heapify the first depth scores, the smallest at 0
            v = score[a + k]
            i = k
            while i > 0:
                p = (i - 1) >> 1
                if heap[p] <= v:
                    break
                heap[i] = heap[p]
                i = p
            heap[i] = v
        for r in range(a + depth, b):
            v = score[r]
            if v <= heap[0]:
                continue
            i = 0  # replace the smallest, sifting down
            while True:
                c = 2 * i + 1
                if c >= depth:
                    break
                if c + 1 < depth and heap[c + 1] < heap[c]:
                    c += 1
                if heap[c] >= v:
                    break
                heap[i] = heap[c]
                i = c
            heap[i] = v
        floor = heap[0]
        picked = np.empty(b - a, dtype=np.int64)
        m = 0
        for r in range(a, b):
            if score[r] >= floor:
                picked[m] = r
                m += 1
        picked = picked[:m]
        order = np.argsort(-score[picked], kind="mergesort")
        for k in range(m):
            rank[picked[order[k]]] = k
    return rank


def rank_within(frame: pd.DataFrame, group: np.ndarray) -> np.ndarray:
    """0-based rank of each row within its ``group``: score descending, then item id ascending."""
    _, inv = np.unique(group, return_inverse=True)
    order = np.lexsort((frame["item"].to_numpy(), -frame["score"].to_numpy(dtype=float), inv))
    inv_s = inv[order]
    rank = np.empty(len(frame), dtype=np.int64)
    rank[order] = np.arange(len(frame)) - np.searchsorted(inv_s, inv_s, side="left")
    return rank
