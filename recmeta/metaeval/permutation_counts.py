r"""Counting the extreme sign flips of :func:`recmeta.metaeval.significance.permutation_test`.

For pair ``j = (a, b)`` with per-user differences ``d_u = s_{a,u} - s_{b,u}`` and permutation
``i`` flipping the users ``F_i`` (0/1 flags), the flipped sum is ``T_j - 2 F_i · d_j`` with
``T_j = Σ_u d_u``; the permutation counts when ``|T_j - 2 F_i · d_j| >= θ_j`` (``θ_j`` the
observed ``|T_j|`` less the tie tolerance). Two ways to get ``F_i · d_j`` for every pair:

* **by pair** (:func:`count_by_pair`): one product ``F @ D`` over the pairs' differences, the
  test's definition;
* **by system** (:func:`count_by_system`): one product ``F @ S`` over the systems' scores, then
  ``F_i · s_a - F_i · s_b`` for each pair: as many columns as systems instead of pairs
  (``n - 1``/2 times fewer for all ``n(n - 1)/2`` pairs of ``n`` systems).

The two differ by rounding only. A dot product of ``m`` terms in floating point is within
``γ_m Σ|x_k y_k|`` of the exact one, ``γ_m = m u / (1 - m u)``, ``u = 2⁻⁵³`` (Higham 2002,
eq. 3.5), whatever the order of the sums, so the flipped sums of the two ways are within
``δ_j = 8 (γ_m + u) (A_a + A_b + Σ|d_j|)`` of each other (``A`` = Σ_u |s_u|, with the
roundings of the subtractions). :func:`count_by_system` decides every permutation whose flipped
sum is farther than ``δ_j`` from ``θ_j`` (the other way decides it alike) and hands back the
pairs with one closer, which the caller counts by pair: the counts are those of
:func:`count_by_pair`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["count_by_pair", "count_by_system", "system_margin"]

#: pairs per block of the compiled passes (each block's counts are private to one thread)
_WIDTH = 256


def system_margin(
    scores_t: np.ndarray, ia: np.ndarray, ib: np.ndarray, d_abs: np.ndarray
) -> np.ndarray:
    """``δ_j`` of the module's docstring for every pair: ``scores_t`` is users × systems,
    ``d_abs`` the pairs' ``Σ|d|``."""
    m = scores_t.shape[0]
    u = np.finfo(np.float64).eps / 2
    gamma = m * u / (1.0 - m * u)
    size = np.abs(scores_t).sum(axis=0)
    return 8.0 * (gamma + u) * (size[ia] + size[ib] + d_abs)


@njit(cache=True, nogil=True, parallel=True)
def count_by_pair(
    flipped: np.ndarray, total: np.ndarray, threshold: np.ndarray, hits: np.ndarray
) -> None:  # pragma: no cover
    """Add to ``hits[j]`` the permutations ``i`` with ``|total_j - 2 flipped_ij| >= threshold_j``
    (``flipped = F @ D``, permutations × pairs): ``np.abs(total - 2.0 * flipped) >= threshold``
    counted in one pass without its temporaries, blocks of pairs in parallel."""
    n_perm, n_pairs = flipped.shape
    for block in prange((n_pairs + _WIDTH - 1) // _WIDTH):
        lo = block * _WIDTH
        hi = min(n_pairs, lo + _WIDTH)
        count = np.zeros(hi - lo, dtype=np.int64)
        for i in range(n_perm):
            for j in range(lo, hi):
                if abs(total[j] - 2.0 * flipped[i, j]) >= threshold[j]:
                    count[j - lo] += 1
        hits[lo:hi] += count


@njit(cache=True, nogil=True, parallel=True)
def count_by_system(
    flipped: np.ndarray,
    ia: np.ndarray,
    ib: np.ndarray,
    total: np.ndarray,
    threshold: np.ndarray,
    margin: np.ndarray,
    counts: np.ndarray,
    unsure: np.ndarray,
) -> None:  # pragma: no cover
    """Per pair ``j``, into ``counts[j]``: the permutations whose flipped sum, from
    ``flipped = F @ S`` (permutations × systems) as ``flipped[:, ia[j]] - flipped[:, ib[j]]``,
    is at least ``threshold_j`` by more than ``margin_j``; ``unsure[j]`` is set when one lies
    within ``margin_j`` of it (that pair must be counted by pair)."""
    n_perm = flipped.shape[0]
    n_pairs = ia.size
    for block in prange((n_pairs + _WIDTH - 1) // _WIDTH):
        lo = block * _WIDTH
        hi = min(n_pairs, lo + _WIDTH)
        for j in range(lo, hi):
            counts[j] = 0
            unsure[j] = False
        for i in range(n_perm):
            for j in range(lo, hi):
                gap = abs(total[j] - 2.0 * (flipped[i, ia[j]] - flipped[i, ib[j]])) - threshold[j]
                if abs(gap) <= margin[j]:
                    unsure[j] = True
                elif gap > 0.0:
                    counts[j] += 1
