"""Sort-based set operations on id arrays, and order-keeping codes of (user, item) pairs.

numpy's ``np.unique`` without ``return_index``/``return_inverse``/``return_counts`` goes through
a hash table; on integer keys with many distinct values (user × item pair codes, as the target
sets and the runs build) it is an order of magnitude slower than sorting, so the hot paths use
these instead. Each returns what the numpy function of its name returns for arrays without NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["has_duplicates", "pair_codes", "sorted_unique"]


def sorted_unique(values: ArrayLike) -> np.ndarray:
    """The sorted distinct values of ``values`` (``np.unique(values)``), by one sort."""
    s = np.sort(np.asarray(values).ravel())
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


def has_duplicates(values: ArrayLike) -> bool:
    """Whether a value occurs twice in ``values`` (``np.unique(values).size < values.size``)."""
    s = np.sort(np.asarray(values).ravel())
    return bool(len(s) > 1 and np.any(s[1:] == s[:-1]))


def pair_codes(
    users: Sequence[np.ndarray], items: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], int] | None:
    """Order-keeping int64 codes u·m + i of (user, item) id pairs, comparable across the arrays
    given, with m = 1 + the largest item id: one code per pair, ordered as the pairs are
    (users first). For non-negative integer ids whose codes fit in int64; ``None`` otherwise
    (then code the ids first, e.g. with ``np.unique(..., return_inverse=True)``). Returns the
    codes of each (users[k], items[k]) and m."""
    arrays = [*users, *items]
    if not arrays or any(a.dtype.kind not in "iu" for a in arrays):
        return None
    nonempty = [a for a in arrays if len(a)]
    if any(int(a.min()) < 0 for a in nonempty):
        return None
    top_u = max((int(a.max()) for a in users if len(a)), default=0)
    m = 1 + max((int(a.max()) for a in items if len(a)), default=0)
    if (top_u + 1) * m >= 2**63:
        return None
    return [
        u.astype(np.int64) * m + i.astype(np.int64) for u, i in zip(users, items, strict=True)
    ], m
