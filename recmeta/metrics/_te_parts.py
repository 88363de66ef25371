"""The parts of the compiled trec_eval pass (:mod:`._te_kernel`): grade levels, gain tables,
the DCG family, RBP and interpolated precision, each as its ``m_*.c`` computes it (the measure
codes are in :mod:`._te_codes`)."""

from __future__ import annotations

from typing import Literal, TypedDict

import numpy as np
from numba import njit

from ._te_codes import (
    DCG,
    IDEAL_DCG,
    NDCG,
    NDCG_REL,
    G,
)


class _JitOptions(TypedDict):
    cache: bool
    nogil: bool
    error_model: Literal["python", "numpy"]


# numba's options for every function of the pass (numpy's error model: 1/0 gives inf, as in C)
_JIT: _JitOptions = {"cache": True, "nogil": True, "error_model": "numpy"}


@njit(**_JIT)
def _round_level(x, num_rel, v10):
    """A recall level as a number of relevant documents: ``lround(x·R)`` (10.0) or
    ``(long)(x·R + 0.9)`` (9.0.8)."""
    v = x * num_rel
    if v10:
        r = np.floor(v)
        if v - r >= 0.5:
            r += 1.0
        return int(r)
    return int(v + 0.9)


@njit(**_JIT)
def _gains(levels, n_lev, keys, vals, lvl, gain, cnt):
    """trec_eval's ``setup_gains``: the gain of each grade (the grade itself unless a
    ``grade=gain`` parameter says otherwise), with the number of judgments at it, sorted by
    gain. Returns the number of entries."""
    n = 0
    for i in range(keys.shape[0]):
        lvl[n] = keys[i]
        gain[n] = vals[i]
        cnt[n] = 0
        n += 1
    n_par = n
    for i in range(n_lev):
        j = 0
        while j < n_par and lvl[j] != i:
            j += 1
        if j < n_par:
            cnt[j] = levels[i]
        else:
            lvl[n] = i
            gain[n] = float(i)
            cnt[n] = levels[i]
            n += 1
    # insertion sort on the truncated difference of gains (qsort's comparator), stable
    for a in range(1, n):
        kl, kg, kc = lvl[a], gain[a], cnt[a]
        b = a - 1
        while b >= 0 and int(gain[b] - kg) > 0:
            lvl[b + 1], gain[b + 1], cnt[b + 1] = lvl[b], gain[b], cnt[b]
            b -= 1
        lvl[b + 1], gain[b + 1], cnt[b + 1] = kl, kg, kc
    return n


@njit(**_JIT)
def _gain_table(lvl, gain, n, tab, known):
    """``get_gain`` as a table: ``tab[grade + 2]`` is the gain of the first entry (in gain
    order) for that grade, 0 where none (``known`` says which grades have an entry)."""
    tab[:] = 0.0
    known[:] = False
    for i in range(n):
        j = lvl[i] + 2
        if 0 <= j < tab.shape[0] and not known[j]:
            tab[j] = gain[i]
            known[j] = True


@njit(**_JIT)
def _step_ideal(cur, at, cnt, gain):
    """One rank further down the ideal ordering: (level index, rank within it, its gain)."""
    at += 1
    while cur >= 0 and at > cnt[cur]:
        at = 1
        cur -= 1
    return cur, at, (gain[cur] if cur >= 0 else 0.0)


@njit(**_JIT)
def _dcg_family(code, rl, num_ret, tab, gain, cnt, n):
    """ndcg, dcg, ideal_dcg, ndcg_rel and G: the run's gains against the ideal ordering."""
    res_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0  # ndcg_rel: sum of ndcg at relevant documents
    n_rel = 0
    n_rel_ret = 0
    sum_res = 0.0  # G
    sum_ideal = 0.0
    sum_cost = 0.0
    res_g = 0.0
    cur = n - 1
    ideal = gain[cur] if cur >= 0 else 0.0
    at = 0
    i = 0
    while i < num_ret and ideal > 0.0:
        g = tab[rl[i] + 2]
        if code == G:
            sum_res += g
        elif g != 0:
            res_dcg += g / np.log2(i + 2.0)
        cur, at, ideal = _step_ideal(cur, at, cnt, gain)
        if code == G:
            if ideal > 0.0:
                sum_ideal += ideal
            sum_cost += max(ideal, 1.0)
            if g != 0:
                res_g += g / np.log2(2.0 + sum_cost - sum_res)
        elif ideal > 0.0:
            n_rel += 1
            ideal_dcg += ideal / np.log2(i + 2.0)
        if code == NDCG_REL and g > 0:
            total += res_dcg / ideal_dcg
            n_rel_ret += 1
        i += 1
    while i < num_ret:
        g = tab[rl[i] + 2]
        if code == G:
            sum_res += g
            sum_cost += 1.0
            if g != 0:
                res_g += g / np.log2(2.0 + sum_cost - sum_res)
        else:
            if g != 0:
                res_dcg += g / np.log2(i + 2.0)
            if code == NDCG_REL and g > 0:
                total += res_dcg / ideal_dcg
                n_rel_ret += 1
        i += 1
    while ideal > 0.0:
        cur, at, ideal = _step_ideal(cur, at, cnt, gain)
        if ideal > 0.0:
            if code == G:
                sum_ideal += ideal
            else:
                n_rel += 1
                ideal_dcg += ideal / np.log2(i + 2.0)
        i += 1
    if code == G:
        return res_g / sum_ideal if sum_ideal > 0.0 else 0.0
    if code == DCG:
        return res_dcg
    if code == IDEAL_DCG:
        return ideal_dcg
    if code == NDCG:
        return res_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0
    total += float(n_rel - n_rel_ret) * res_dcg / ideal_dcg  # NDCG_REL
    return total / n_rel if total > 0.0 else 0.0


@njit(**_JIT)
def _rndcg(rl, num_ret, num_rel, tab, gain, cnt, n):
    """Rndcg: ndcg averaged at each change of the ideal gain."""
    if num_rel == 0:
        return 0.0
    res_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    changes = 0
    cur = n - 1
    ideal = gain[cur] if cur >= 0 else 0.0
    old = ideal
    at = 0
    i = 0
    while i < num_ret and ideal > 0.0:
        g = tab[rl[i] + 2]
        cur, at, ideal = _step_ideal(cur, at, cnt, gain)
        if old != ideal:
            if ideal_dcg > 0.0:
                total += res_dcg / ideal_dcg
                changes += 1
            old = ideal
        if g != 0:
            res_dcg += g / np.log2(i + 2.0)
        if ideal > 0.0:
            ideal_dcg += ideal / np.log2(i + 2.0)
        i += 1
    if i < num_ret:
        while i < num_ret:
            g = tab[rl[i] + 2]
            if g != 0:
                res_dcg += g / np.log2(i + 2.0)
            i += 1
        if ideal_dcg > 0.0:
            total += res_dcg / ideal_dcg
            changes += 1
    while ideal > 0.0:
        cur, at, ideal = _step_ideal(cur, at, cnt, gain)
        if old != ideal:
            if ideal_dcg > 0.0:
                total += res_dcg / ideal_dcg
                changes += 1
            old = ideal
        if ideal > 0.0:
            ideal_dcg += ideal / np.log2(i + 2.0)
        i += 1
    return total / float(changes)


@njit(**_JIT)
def _rbp(rl, num_ret, p, tab, known, gain, n):
    """RBP = (1 - p) Σ gain(rank i) p^(i-1); gains outside [0, 1] are rescaled to it
    (by the range of the gains and 0)."""
    lo = 0.0
    hi = 0.0
    for i in range(n):
        lo = min(lo, gain[i])
        hi = max(hi, gain[i])
    total = 0.0
    cur_p = 1.0
    for i in range(num_ret):
        g = tab[rl[i] + 2]
        if lo < 0 or hi > 1:
            g = (g - lo) / (hi - lo) if known[rl[i] + 2] else 0.0
        if g != 0:
            total += g * cur_p
        cur_p = cur_p * p
    return (1.0 - p) * total


@njit(**_JIT)
def _interpolated(rl, num_ret, num_rel, num_rel_ret, level, xs, v10, out, o):
    """iprec_at_recall: the largest precision at or after the rank where each recall level is
    reached, walking the list from its end."""
    k = xs.shape[0]
    cuts = np.empty(k, dtype=np.int64)
    for i in range(k):
        cuts[i] = _round_level(xs[i], num_rel, v10)
    cur = k - 1
    while cur >= 0 and cuts[cur] > num_rel_ret:
        cur -= 1
    precis = float(num_rel_ret) / float(num_ret)
    best = precis
    so_far = num_rel_ret
    i = num_ret
    while i > 0 and so_far > 0:
        precis = float(so_far) / float(i)
        if best < precis:  # noqa: PLR1730 (a NaN best stays NaN, as in C)
            best = precis
        if rl[i - 1] >= level:
            while cur >= 0 and so_far == cuts[cur]:
                out[o + cur] = best
                cur -= 1
            so_far -= 1
        i -= 1
    while cur >= 0:
        out[o + cur] = best
        cur -= 1


@njit(**_JIT)
def _counts(rl, num_ret, levels, n_lev, level):
    """(relevant judged, relevant retrieved) at relevance level ``level``."""
    num_rel = 0
    for g in range(max(level, 0), n_lev):
        num_rel += levels[g]
    num_rel_ret = 0
    for i in range(num_ret):
        if rl[i] >= level:
            num_rel_ret += 1
    return num_rel, num_rel_ret
