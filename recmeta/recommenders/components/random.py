"""A seeded random scorer: score(u, i) = a hash of (seed, u, i) mapped to [0, 1).

LensKit's ``RandomSelector`` draws a permutation of whatever candidates it is given, so the same
(user, item) pair gets unrelated positions under AllItems, TestItems and sampled candidates, and
it gives no scores. Here the score of a pair depends only on the seed and the two ids (SplitMix64
finaliser, Steele et al. 2014), so one random system ranks consistently under every protocol and
can be scored for any candidate set. Item and user ids must be integers.
"""

from __future__ import annotations

from typing import override

import numpy as np
from lenskit.data import ItemList, QueryInput, RecQuery
from lenskit.pipeline import Component
from numba import njit
from numpy.typing import ArrayLike
from pydantic import BaseModel

__all__ = ["RandomScoreConfig", "RandomScorer", "pair_uniform"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # φ, SplitMix64's increment


@njit(cache=True, nogil=True, inline="always")
def _mix(z):  # pragma: no cover - compiled
    """SplitMix64 finaliser of one uint64 (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def _uniform_pairs(seed, u, i, out):  # pragma: no cover - compiled
    """:func:`pair_uniform`'s hash of each pair (u[k], i[k]) in one pass, into ``out``."""
    h_seed = _mix(seed * _GOLDEN + _GOLDEN)
    for k in range(u.size):
        h = _mix((h_seed ^ u[k]) * _GOLDEN + _GOLDEN)
        h = _mix((h ^ i[k]) * _GOLDEN + _GOLDEN)
        out[k] = np.float64(h >> np.uint64(11)) * 2.0**-53


def pair_uniform(seed: int, users: ArrayLike, items: ArrayLike) -> np.ndarray:
    """Uniform [0, 1) value for each (user, item) pair (broadcasting), fixed by ``seed``:
    ``h = mix((mix((mix(seed·φ + φ) ^ u)·φ + φ) ^ i)·φ + φ)``, then ``(h >> 11) · 2⁻⁵³``, in
    wrapping uint64 arithmetic (φ = 0x9E3779B97F4A7C15, ``mix`` the SplitMix64 finaliser),
    in one compiled pass over the broadcast pairs."""
    for name, ids in (("user", users), ("item", items)):
        if not np.issubdtype(np.asarray(ids).dtype, np.integer):
            raise TypeError(f"RandomScorer needs integer {name} ids, got {np.asarray(ids).dtype}")
    u, i = np.broadcast_arrays(np.asarray(users), np.asarray(items))
    out = np.empty(u.shape)
    flat_u = np.ascontiguousarray(u, dtype=np.uint64).reshape(-1)
    flat_i = np.ascontiguousarray(i, dtype=np.uint64).reshape(-1)
    _uniform_pairs(np.uint64(seed), flat_u, flat_i, out.reshape(-1))
    return out if out.ndim else out[()]


class RandomScoreConfig(BaseModel, extra="forbid"):
    seed: int = 0
    "Seed of the hash; part of the system's configuration (and its cache key)."


class RandomScorer(Component[ItemList]):
    """Random scores, fixed per (seed, user, item); see the module docstring."""

    config: RandomScoreConfig

    @override
    def __call__(self, query: QueryInput, items: ItemList) -> ItemList:
        q = RecQuery.create(query)
        if q.user_id is None:
            return ItemList(items, scores=np.nan)
        ids = items.ids()
        return ItemList(items, scores=pair_uniform(self.config.seed, np.int64(q.user_id), ids))
