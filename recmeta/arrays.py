"""Sort-based set operations on id arrays.

numpy's ``np.unique`` without ``return_index``/``return_inverse``/``return_counts`` goes through
a hash table; on integer keys with many distinct values (user × item pair codes, as the target
sets and the runs build) it is an order of magnitude slower than sorting, so the hot paths use
these instead. Each returns what the numpy function of its name returns for arrays without NaN.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["has_duplicates", "sorted_unique"]


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
