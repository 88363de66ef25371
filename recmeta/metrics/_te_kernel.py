"""The compiled pass of :func:`recmeta.metrics.trec_eval`: trec_eval's measures per topic.

Each topic arrives as trec_eval's ``res_rels`` (``form_res_rels.c``): the grade at each rank of
its ranked, cut (``-M``) and filtered (``-J``) list, ``-1`` for a document outside the pool and
``-2`` for a pooled document without a grade (a negative grade in the qrels), plus the count of
judgments at each grade >= 0. Every measure is computed from these as trec_eval 10.0 computes
it (its ``m_*.c`` files), in the same order of floating-point operations, so that the printed
values agree to the last digit; ``v10=False`` selects 9.0.8's recall-level rule.

Measures (Moffat & Zobel 2008 for RBP; Järvelin & Kekäläinen 2002 for the DCG family; Buckley
& Voorhees 2004 for bpref; Yilmaz & Aslam 2006 for infAP) are the codes below; a block of
output columns holds one measure with its cut-offs or parameters.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._te_codes import (
    BING,
    BPREF,
    GM_BPREF,
    GM_MAP,
    INFAP,
    INFAP_EPSILON,
    IPREC,
    JUDGED,
    MAP,
    MAP_CUT,
    MIN_GEO_MEAN,
    NDCG_CUT,
    NONPOOL,
    NONREL_JUDGED_RET,
    NUM_Q,
    NUM_REL,
    NUM_REL_RET,
    NUM_RET,
    PT11,
    RBP,
    RBP_RESID,
    RECALL,
    RECIP_RANK,
    REL_P,
    RNDCG,
    RPREC,
    RPREC_MULT,
    SET_F,
    SET_MAP,
    SET_P,
    SET_RECALL,
    SET_REL_P,
    SUCCESS,
    UNJ,
    UNJUDGED,
    UTILITY,
    P,
)
from ._te_parse import parse_trec  # noqa: F401 - the reader, compiled with the pass
from ._te_parts import (
    _JIT,
    _counts,
    _dcg_family,
    _gain_table,
    _gains,
    _interpolated,
    _rbp,
    _rndcg,
)


@njit(**_JIT)
def _topic(
    rl,
    num_ret,
    levels,
    n_lev,
    nonpool,
    unjudged,
    level0,
    codes,
    col0,
    blevel,
    pptr,
    params,
    gptr,
    gkey,
    gval,
    v10,
    n_docs,
    lvl,
    gain,
    cnt,
    tab,
    known,
    ibuf,
    out,
):
    """Every requested measure of one topic into ``out`` (zeros where trec_eval leaves 0).
    ``blevel[b]`` >= 0 gives block ``b`` its own relevance level (ir_measures' ``rel=``)."""
    base_rel, base_rel_ret = _counts(rl, num_ret, levels, n_lev, level0)
    for b in range(codes.shape[0]):
        c = codes[b]
        level = level0 if blevel[b] < 0 else blevel[b]
        if level == level0:
            num_rel, num_rel_ret = base_rel, base_rel_ret
        else:
            num_rel, num_rel_ret = _counts(rl, num_ret, levels, n_lev, level)
        o = col0[b]
        par = params[pptr[b] : pptr[b + 1]]
        k = par.shape[0]
        if c == NUM_Q:
            out[o] = 1.0
        elif c == NUM_RET:
            out[o] = num_ret
        elif c == NUM_REL:
            out[o] = num_rel
        elif c == NUM_REL_RET:
            out[o] = num_rel_ret
        elif c == NONREL_JUDGED_RET:
            out[o] = float(num_ret - nonpool - unjudged - num_rel_ret)
        elif c == MAP or c == GM_MAP or c == MAP_CUT:
            so_far = 0
            total = 0.0
            ci = 0
            for i in range(num_ret):
                if c == MAP_CUT and num_rel > 0 and i == int(par[ci]):
                    out[o + ci] = total / float(num_rel)
                    ci += 1
                    if ci == k:
                        break
                if rl[i] >= level:
                    so_far += 1
                    total += float(so_far) / float(i + 1)
            if c == MAP_CUT:
                if num_rel > 0:
                    while ci < k:
                        out[o + ci] = total / float(num_rel)
                        ci += 1
            elif so_far:
                out[o] = total / float(num_rel)
        elif c == RPREC:
            n_look = min(num_ret, num_rel)
            if n_look > 0:
                so_far = 0
                for i in range(n_look):
                    if rl[i] >= level:
                        so_far += 1
                out[o] = float(so_far) / float(num_rel)
        elif c == BPREF or c == GM_BPREF:
            num_nonrel = 0
            for lv in range(min(level, n_lev)):
                num_nonrel += levels[lv]
            nonrel = 0
            v = 0.0
            for i in range(num_ret):
                r = rl[i]
                if r == NONPOOL or r == UNJUDGED:
                    continue
                if r >= 0 and r < level:
                    nonrel += 1
                elif nonrel > 0:
                    v += 1.0 - float(min(nonrel, num_rel)) / float(min(num_nonrel, num_rel))
                else:
                    v += 1.0
            if num_rel:
                v /= num_rel
            out[o] = v
        elif c == RECIP_RANK:
            for i in range(num_ret):
                if rl[i] >= level:
                    out[o] = 1.0 / float(i + 1)
                    break
        elif c == IPREC:
            _interpolated(rl, num_ret, num_rel, num_rel_ret, level, par, v10, out, o)
        elif c == PT11:
            ibuf[:k] = 0.0
            _interpolated(rl, num_ret, num_rel, num_rel_ret, level, par, v10, ibuf, 0)
            total = 0.0
            for j in range(k - 1, -1, -1):  # m_11pt_avg.c adds from the highest level down
                total += ibuf[j]
            out[o] = total / float(k)
        elif c == P or c == RECALL or c == REL_P or c == SUCCESS:
            if (c == RECALL or c == REL_P) and num_rel == 0:
                continue
            so_far = 0
            ci = 0
            i = 0
            while ci < k:
                cut = int(par[ci])
                if i < num_ret and i != cut:
                    if rl[i] >= level:
                        so_far += 1
                    i += 1
                    continue
                d = float(cut) if i >= num_ret else float(i)
                if c == P:
                    out[o + ci] = float(so_far) / d
                elif c == RECALL:
                    out[o + ci] = float(so_far) / float(num_rel)
                elif c == REL_P:
                    div = cut if i >= num_ret else i
                    out[o + ci] = float(so_far) / float(min(div, num_rel))
                else:
                    out[o + ci] = 1.0 if so_far else 0.0
                ci += 1
        elif c == UNJ:
            so_far = 0
            ci = 0
            i = 0
            while ci < k:
                cut = int(par[ci])
                if i < num_ret and i != cut:
                    if rl[i] == NONPOOL or rl[i] == UNJUDGED:
                        so_far += 1
                    i += 1
                    continue
                out[o + ci] = float(so_far) / float(cut)
                ci += 1
        elif c == INFAP:
            nonrel = 0
            so_far = 0
            pooled = 0
            v = 0.0
            for j in range(num_ret):
                r = rl[j]
                if r == NONPOOL:
                    continue
                if r == UNJUDGED:
                    pooled += 1
                    continue
                if r >= 0 and r < level:
                    nonrel += 1
                else:
                    so_far += 1
                    if j == 0:
                        v += 1.0
                    else:
                        fj = float(j)
                        v += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                            (so_far - 1 + nonrel + pooled) / fj
                        ) * (
                            (so_far - 1 + INFAP_EPSILON) / (so_far - 1 + nonrel + 2 * INFAP_EPSILON)
                        )
            if num_rel:
                v /= num_rel
            out[o] = v
        elif c == RPREC_MULT:
            cuts = np.empty(k, dtype=np.int64)
            for i in range(k):
                cuts[i] = int(par[i] * num_rel + 0.9)
            best = float(num_rel_ret) / float(num_ret)
            cur = k - 1
            while cur >= 0 and cuts[cur] > num_ret:
                out[o + cur] = float(num_rel_ret) / float(cuts[cur])
                cur -= 1
            so_far = num_rel_ret
            i = num_ret
            while i > 0 and so_far > 0:
                precis = float(so_far) / float(i)
                if best < precis:  # noqa: PLR1730
                    best = precis
                while cur >= 0 and i == cuts[cur]:
                    out[o + cur] = precis
                    cur -= 1
                if rl[i - 1] >= level:
                    so_far -= 1
                i -= 1
        elif c == UTILITY:
            out[o] = (
                par[0] * num_rel_ret
                + par[1] * (num_ret - num_rel_ret)
                + par[2] * (num_rel - num_rel_ret)
                + par[3] * (n_docs + num_rel_ret - num_ret - num_rel)
            )
        elif c == BING:
            so_far = 0
            total = 0.0
            for i in range(num_ret):
                if rl[i] >= level:
                    so_far += 1
                    total += 1.0 / np.log2(float(3 + i - so_far))
            if so_far:
                out[o] = total / float(num_rel)
        elif c == NDCG_CUT:
            total = 0.0
            ci = 0
            for i in range(num_ret):
                if i == int(par[ci]):
                    out[o + ci] = total
                    ci += 1
                    if ci == k:
                        break
                g = float(rl[i])
                if g > 0:
                    total += g / np.log2(i + 2.0)
            while ci < k:
                out[o + ci] = total
                ci += 1
            ci = 0
            cur = n_lev - 1
            at = 0
            ideal = 0.0
            i = 0
            while True:
                at += 1
                while cur > 0 and at > levels[cur]:
                    cur -= 1
                    at = 1
                if cur <= 0:
                    break
                if i == int(par[ci]):
                    if ideal > 0.0:
                        out[o + ci] /= ideal
                    ci += 1
                    if ci == k:
                        break
                ideal += float(cur) / np.log2(i + 2.0)
                i += 1
            while ci < k:
                if ideal > 0.0:
                    out[o + ci] /= ideal
                ci += 1
        elif c == SET_P:
            if num_ret:
                out[o] = float(num_rel_ret) / float(num_ret)
        elif c == SET_REL_P:
            if num_ret and num_rel:
                out[o] = float(num_rel_ret) / float(min(num_ret, num_rel))
        elif c == SET_RECALL:
            if num_rel:
                out[o] = float(num_rel_ret) / float(num_rel)
        elif c == SET_MAP:
            if num_ret and num_rel:
                out[o] = (float(num_rel_ret) * float(num_rel_ret)) / (
                    float(num_ret) * float(num_rel)
                )
        elif c == SET_F:
            if num_rel_ret:
                pr = float(num_rel_ret) / float(num_ret)
                re = float(num_rel_ret) / float(num_rel)
                x = par[0]
                out[o] = (x + 1.0) * pr * re / (x * pr + re)
        elif c == JUDGED:  # judged documents (any grade) in the top k, over min(k, num_ret)
            for ci in range(k):
                n = min(int(par[ci]), num_ret)
                judged = 0
                for i in range(n):
                    if rl[i] != NONPOOL:
                        judged += 1
                out[o + ci] = float(judged) / float(n) if n > 0 else 0.0
        elif c == RBP_RESID:
            p = par[0]
            unj = 0
            total = 0.0
            cur_p = 1.0
            for i in range(num_ret):
                if rl[i] < 0:
                    unj += 1
                    total += cur_p
                cur_p = cur_p * p
            if unj:
                out[o] = cur_p + (1 - p) * total
        elif c == RBP and blevel[b] >= 0:  # binary gains: grade >= rel (ir_measures' rel=)
            p = par[0]
            total = 0.0
            cur_p = 1.0
            for i in range(num_ret):
                if rl[i] >= level:
                    total += cur_p
                cur_p = cur_p * p
            out[o] = (1.0 - p) * total
        else:  # the gain-based measures
            keys = gkey[gptr[b] : gptr[b + 1]]
            vals = gval[gptr[b] : gptr[b + 1]]
            n = _gains(levels, n_lev, keys, vals, lvl, gain, cnt)
            _gain_table(lvl, gain, n, tab, known)
            if c == RBP:
                out[o] = _rbp(rl, num_ret, par[0], tab, known, gain, n)
            elif c == RNDCG:
                out[o] = _rndcg(rl, num_ret, num_rel, tab, gain, cnt, n)
            else:
                out[o] = _dcg_family(c, rl, num_ret, tab, gain, cnt, n)
        if c == GM_MAP or c == GM_BPREF:
            out[o] = np.log(max(out[o], MIN_GEO_MEAN))


@njit(**_JIT)
def topic_values(
    rels: np.ndarray,
    ptr: np.ndarray,
    levels: np.ndarray,
    n_lev: np.ndarray,
    nonpool: np.ndarray,
    unjudged: np.ndarray,
    level: int,
    codes: np.ndarray,
    col0: np.ndarray,
    blevel: np.ndarray,
    n_cols: int,
    pptr: np.ndarray,
    params: np.ndarray,
    gptr: np.ndarray,
    gkey: np.ndarray,
    gval: np.ndarray,
    v10: bool,
    n_docs: int,
) -> np.ndarray:
    """Every requested measure of every topic: topics × columns (gm measures hold the log of
    their value, floored at 1e-5, as trec_eval accumulates them)."""
    n_t = ptr.shape[0] - 1
    out = np.zeros((n_t, n_cols))
    width = levels.shape[1] + gkey.shape[0] + 1
    lvl = np.empty(width, dtype=np.int64)
    gain = np.empty(width)
    cnt = np.empty(width, dtype=np.int64)
    tab = np.zeros(levels.shape[1] + 2)  # gains by grade + 2 (grades -2 .. top)
    known = np.zeros(levels.shape[1] + 2, dtype=np.bool_)
    ibuf = np.zeros(max(params.shape[0], 1))
    for t in range(n_t):
        rl = rels[ptr[t] : ptr[t + 1]]
        _topic(
            rl,
            rl.shape[0],
            levels[t],
            n_lev[t],
            nonpool[t],
            unjudged[t],
            level,
            codes,
            col0,
            blevel,
            pptr,
            params,
            gptr,
            gkey,
            gval,
            v10,
            n_docs,
            lvl,
            gain,
            cnt,
            tab,
            known,
            ibuf,
            out[t],
        )
    return out


@njit(cache=True, nogil=True)
def res_rels(
    q_t: np.ndarray,
    q_d: np.ndarray,
    q_rel: np.ndarray,
    r_t: np.ndarray,
    r_d: np.ndarray,
    sim: np.ndarray,
    n_t: int,
    n_d: int,
    max_ret: int,
    judged_only: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """``form_res_rels.c`` for every topic at once: each topic's results ordered by score, ties
    by docno descending (doc codes follow the docnos' byte order), cut at ``max_ret``, graded
    from the qrels (-1 outside the pool, -2 pooled without a grade) and, with ``judged_only``,
    left with the graded ones.

    Returns (rels, ptr, levels, n_levels, nonpool, unjudged, error); ``error`` is -1, or
    ``(i + 1)`` for a repeated qrels pair at row i, or ``-(j + 2)`` for a document ranked twice
    for one topic at run row j.
    """
    n_q = q_t.shape[0]
    n_r = r_t.shape[0]
    top = 0
    for i in range(n_q):
        top = max(top, q_rel[i])
    levels = np.zeros((n_t, top + 1), dtype=np.int64)
    n_levels = np.zeros(n_t, dtype=np.int64)
    q_ptr = np.zeros(n_t + 1, dtype=np.int64)
    for i in range(n_q):
        q_ptr[q_t[i] + 1] += 1
    r_ptr = np.zeros(n_t + 1, dtype=np.int64)
    for j in range(n_r):
        if r_t[j] >= 0:
            r_ptr[r_t[j] + 1] += 1
    for t in range(n_t):
        q_ptr[t + 1] += q_ptr[t]
        r_ptr[t + 1] += r_ptr[t]
    q_rows = np.empty(n_q, dtype=np.int32)
    fill = q_ptr[:-1].copy()
    for i in range(n_q):
        q_rows[fill[q_t[i]]] = i
        fill[q_t[i]] += 1
    r_rows = np.empty(r_ptr[n_t], dtype=np.int32)
    fill = r_ptr[:-1].copy()
    for j in range(n_r):
        if r_t[j] >= 0:
            r_rows[fill[r_t[j]]] = j
            fill[r_t[j]] += 1
    grade = np.zeros(n_d, dtype=np.int64)
    stamp = np.full(n_d, -1, dtype=np.int64)  # topic whose qrels set grade[doc]
    seen = np.full(n_d, -1, dtype=np.int64)  # topic whose run ranked doc
    rels = np.empty(r_ptr[n_t], dtype=np.int64)
    ptr = np.zeros(n_t + 1, dtype=np.int64)
    nonpool = np.zeros(n_t, dtype=np.int64)
    unjudged = np.zeros(n_t, dtype=np.int64)
    out = 0
    for t in range(n_t):
        for a in range(q_ptr[t], q_ptr[t + 1]):
            i = q_rows[a]
            d = q_d[i]
            if stamp[d] == t:
                return rels, ptr, levels, n_levels, nonpool, unjudged, i + 1
            stamp[d] = t
            grade[d] = q_rel[i]
            if q_rel[i] >= 0:
                levels[t, q_rel[i]] += 1
                n_levels[t] = max(n_levels[t], q_rel[i] + 1)
        rows = r_rows[r_ptr[t] : r_ptr[t + 1]]
        for j in rows:
            if seen[r_d[j]] == t:
                return rels, ptr, levels, n_levels, nonpool, unjudged, -(j + 2)
            seen[r_d[j]] = t
        ranked = rows
        for k in range(1, rows.shape[0]):  # a run file is usually in trec_eval's order already
            a, b = rows[k - 1], rows[k]
            if sim[a] < sim[b] or (sim[a] == sim[b] and r_d[a] < r_d[b]):
                by_doc = rows[np.argsort(-r_d[rows], kind="mergesort")]
                ranked = by_doc[np.argsort(-sim[by_doc], kind="mergesort")]
                break
        n = ranked.shape[0] if max_ret < 0 else min(ranked.shape[0], max_ret)
        for k in range(n):
            d = r_d[ranked[k]]
            if stamp[d] != t:
                g = NONPOOL
            elif grade[d] < 0:
                g = UNJUDGED
            else:
                g = grade[d]
            if g < 0 and judged_only:
                continue
            if g == NONPOOL:
                nonpool[t] += 1
            elif g == UNJUDGED:
                unjudged[t] += 1
            rels[out] = g
            out += 1
        ptr[t + 1] = out
    return rels[:out], ptr, levels, n_levels, nonpool, unjudged, -1
