"""The ``n`` smallest open keys of every row of a matrix: the compiled pass behind the NN draw of
:mod:`recmeta.protocols.targets` (a uniform sample without replacement, drawn by random keys).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["row_smallest"]


def row_smallest(keys: np.ndarray, blocked: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The columns of the ``n`` smallest open keys of every row, as (row, column) arrays.

    Row r keeps {c : not blocked[r, c]} whole when it holds at most ``n`` columns, else the
    ``n`` of smallest key (equal keys: the lower column first) — what an ``argpartition`` of
    each row with blocked keys set above every open one selects. Rows ascending, columns
    ascending within a row. One compiled pass per row gathers the open keys at or under a
    bound (in a row at least 8 ``n`` wide, taken from a sample of the row; else none), finds
    the ``n``-th smallest of them (Hoare's FIND, :func:`_select`) and keeps, in column order,
    the keys under it and the lowest columns of the keys equal to it. A row with fewer than
    ``n`` keys under the bound is read again without it, so the result does not depend on the
    bound. A NaN among the open keys is refused.
    """
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    blocked = np.ascontiguousarray(blocked, dtype=np.bool_)
    if keys.ndim != 2 or keys.shape != blocked.shape:
        raise ValueError(
            f"keys {keys.shape} and blocked {blocked.shape} must be matrices of one shape"
        )
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    r, c, nan = _row_smallest(keys, blocked, int(n))
    if nan:
        raise ValueError("keys contain NaN; give every open entry a number")
    return r, c


@njit(cache=True, nogil=True)
def _select(a, j):  # pragma: no cover - compiled
    """The ``j``-th smallest value of ``a`` (from 0; no NaN), reordering ``a`` in place:
    Hoare's (1961) FIND. The value ``np.partition(a, j)[j]`` gives, which numba compiles
    in about 5 s where this takes a fraction of one."""
    lo, hi = 0, a.shape[0] - 1
    while lo < hi:
        pivot = a[(lo + hi) >> 1]
        i, k = lo, hi
        while i <= k:  # a[lo:i] <= pivot <= a[k + 1:hi + 1]
            while a[i] < pivot:
                i += 1
            while a[k] > pivot:
                k -= 1
            if i <= k:
                a[i], a[k] = a[k], a[i]
                i += 1
                k -= 1
        if j <= k:
            hi = k
        elif j >= i:
            lo = i
        else:  # between the two parts: equal to the pivot
            break
    return a[j]


@njit(cache=True, nogil=True)
def _row_smallest(keys, blocked, n):  # pragma: no cover - compiled
    rows, width = keys.shape
    keep = min(n, width)
    out_r = np.empty(rows * keep, dtype=np.int64)
    out_c = np.empty(rows * keep, dtype=np.int64)
    if keep == 0:
        return out_r, out_c, False
    ck = np.empty(width, dtype=np.float64)  # the row's open keys at or under the bound
    cc = np.empty(width, dtype=np.int64)  # and their columns, ascending
    scratch = np.empty(width, dtype=np.float64)
    # a bound from every step-th open key: the j-th smallest of the sample lies above the keep
    # smallest keys of a row of random keys but for 3 standard deviations, so most keys are
    # passed over; a row with fewer than keep keys under it is read again
    step = width // 256 if width >= 8 * keep else 0
    sample = np.empty(width // max(step, 1) + 1, dtype=np.float64)
    lam = keep / max(step, 1)
    j = int(lam + 3.0 * np.sqrt(lam) + 2.0)
    at = 0
    for r in range(rows):
        bound = np.inf
        if step > 0:
            s = 0
            for c in range(0, width, step):
                if not blocked[r, c]:
                    sample[s] = keys[r, c]
                    s += 1
            if j < s:
                bound = _select(sample[:s], j)
        while True:
            m = 0
            nan = False
            for c in range(width):  # without branches: every key written, the open kept
                v = keys[r, c]
                ck[m] = v
                cc[m] = c
                opened = not blocked[r, c]
                nan |= opened and v != v
                m += opened and v <= bound
            if nan:
                return out_r[:0], out_c[:0], True
            if m >= keep or bound == np.inf:
                break
            bound = np.inf  # fewer than keep keys under the bound: read the row whole
        if m <= keep:  # the whole pool, or exactly keep keys
            for k in range(m):
                out_r[at] = r
                out_c[at] = cc[k]
                at += 1
            continue
        scratch[:m] = ck[:m]
        t = _select(scratch[:m], keep - 1)  # the keep-th smallest key
        need = keep
        for k in range(m):
            if ck[k] < t:
                need -= 1
        # every key under t, and the lowest columns of those equal to t, in column order
        for k in range(m):
            v = ck[k]
            if v < t or (v == t and need > 0):
                if v == t:
                    need -= 1
                out_r[at] = r
                out_c[at] = cc[k]
                at += 1
    return out_r[:at], out_c[:at], False
