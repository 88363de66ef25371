"""The compiled passes: every requested metric at every cut-off from the judged positions of a list.

Only the ranked items that carry a judgment change a metric; the others count only in a list's
length (P divides by k, not by the list's length). So each (system, user) list is reduced to its
*hits* — position, grade and item of every judged item it ranks, in rank order — and one scorer
(:func:`_score_sorted`, or :func:`_score_expected` for ``ties="expected"``) reads them once,
updating running sums (hits, AP, DCG for each gain, bpref and infAP terms, ERR, ...) and writing
the metrics of each cut-off as the pass crosses it. Two passes find the hits:

* :func:`evaluate_lists` (and its one-thread twin) spreads each user's judged grades into a dense
  item table shared by every system's list for that user, and reads each list position by
  position (``Judgments`` and ``Runs`` as they are);
* :func:`subset_means` / :func:`subset_scores_many` read hits found once by
  :class:`recmeta.metrics.Subsets` (each a judgment row) and skip those whose row a ``keep`` mask
  switches off, so one pass per incomplete test set serves every metric.

Tie rules (:mod:`recmeta.metrics._options`): ``pessimistic`` and ``optimistic`` move the judged
items of each tie block to its end or start (:func:`_reassign`); ``expected`` reads whole blocks
(:func:`_score_expected`). The metrics' definitions are in :mod:`recmeta.metrics._plan`.
Cost: O(systems × users × depth) for the table pass, O(hits) for the subset pass, no
intermediate arrays. Compiled with numba (``cache=True``: once per machine).

This is the one module of the package over 600 lines, on purpose: the running sums of every
metric are updated in one loop over a list's hits (:func:`_score_sorted`), and that loop, its
tie-aware twin and the two passes that feed them share the metric codes and scratch layout
(:func:`_workspace`); cut apart, a reader would follow one metric through four files.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from ..arrays import threaded_map

# metric codes (the plan's ``codes``); module-level ints are compile-time constants in numba
(
    P,
    R,
    F1,
    AP,
    NDCG_LIN,
    NDCG_EXP,
    NDCG_BIN,
    NDCNG,
    RR,
    ERR,
    BPREF,
    INFAP,
    AUC,
    MUAP,
    SRECALL,
    RPREC,
    SUCCESS,
    IPREC,
    NUM_Q,
    NUM_RET,
    NUM_REL,
    NUM_REL_RET,
    NDCG_MAP,
) = range(23)
N_CODES = 23
# gain kinds of the DCG sums: linear, exponential, binary, normalised (NDCNG), mapped
N_KINDS = 5
# tie modes of the kernel (trec_eval and item_id lists are read as stored)
TIE_STORED, TIE_PESSIMISTIC, TIE_OPTIMISTIC, TIE_EXPECTED = range(4)
INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON
USERS_PER_BLOCK = 64


@njit(cache=True, nogil=True, inline="always")
def _kind_of(c):
    if c == NDCG_LIN:
        return 0
    if c == NDCG_EXP:
        return 1
    if c == NDCG_BIN:
        return 2
    if c == NDCNG:
        return 3
    return 4


@njit(cache=True, nogil=True, inline="always")
def _exp_gain(g):
    """2^g − 1, the exponential gain. A whole grade from 0 to 52 takes a shift instead of the
    power: 2^g − 1 is then an integer below 2^53, which the power gives exactly too, so the
    float is the same."""
    if g >= 0.0 and g <= 52.0:
        whole = int(g)
        if whole == g:
            return float((1 << whole) - 1)
    return 2.0**g - 1.0


@njit(cache=True, nogil=True, inline="always")
def _gain(kind, g, top, threshold, gain_keys, gain_vals):
    """Gain of a judged grade ``g >= 0`` (see :mod:`recmeta.metrics._options`)."""
    if kind == 0:
        return g
    if kind == 1:
        return _exp_gain(g)
    if kind == 2:
        return 1.0 if g >= threshold and g > 0 else 0.0
    if kind == 3:
        return 2.0 ** (g / top) - 1.0 if top > 0 else 0.0
    return gain_vals[np.searchsorted(gain_keys, g)]


@njit(cache=True, nogil=True)
def _setup_user(
    u,
    indptr,
    ent_items,
    ent_grades,
    keep,
    threshold,
    need_kind,
    need_muap,
    ideal_len,
    disc,
    weights,
    gain_keys,
    gain_vals,
    buf,
    gbuf,
    ideal,
    levels,
    lev_count,
    lev_dist,
    sw_total,
    us,
):
    """The user's kept judgments: ``us`` = (|R|, judged, top grade, bpref divisor, levels, entries).

    Fills ``ideal[kind, i]`` (cumulative ideal DCG of each needed gain), the µAP grade levels and
    the stratified-recall totals. Negative grades (pooled, unjudged) count only in ``us[5]``.
    """
    n_w = weights.shape[0]
    n_e = 0
    n_kept = 0
    num_rel = 0.0
    top = 0.0
    for w in range(n_w):
        sw_total[w] = 0.0
    for e in range(indptr[u], indptr[u + 1]):
        if keep[e]:
            n_kept += 1
            g = ent_grades[e]
            if g < 0.0:
                continue
            buf[n_e] = g
            n_e += 1
            if g > top:
                top = g
            if g >= threshold:
                num_rel += 1.0
                for w in range(n_w):
                    sw_total[w] += weights[w, ent_items[e]]
    us[0] = num_rel
    us[1] = n_e
    us[2] = top
    us[3] = max(min(n_e - num_rel, num_rel), 1.0)
    us[4] = 0.0
    us[5] = n_kept
    if (num_rel == 0.0 and n_kept == 0) or not (need_kind.any() or need_muap):
        return
    grades = buf[:n_e]
    grades.sort()  # ascending, in place
    n_id = min(n_e, ideal_len)
    for kind in range(4):  # gains that grow with the grade: the ideal is the grades descending
        if need_kind[kind]:
            acc = 0.0
            for i in range(n_id):
                acc += (
                    _gain(kind, grades[n_e - 1 - i], top, threshold, gain_keys, gain_vals) * disc[i]
                )
                ideal[kind, i] = acc
    if need_kind[4]:  # a mapped gain need not grow with the grade: sort the gains
        for i in range(n_e):
            gbuf[i] = _gain(4, grades[i], top, threshold, gain_keys, gain_vals)
        gains = np.sort(gbuf[:n_e])
        acc = 0.0
        for i in range(n_id):
            acc += gains[n_e - 1 - i] * disc[i]
            ideal[4, i] = acc
    if need_muap:
        n_lev = 0
        previous = 0.0
        for i in range(n_e):
            g = grades[i]
            if g > 0 and (n_lev == 0 or g != levels[n_lev - 1]):
                levels[n_lev] = g
                lev_count[n_lev] = n_e - i  # grades are ascending: n_e - i are >= g
                lev_dist[n_lev] = g - previous
                previous = g
                n_lev += 1
        us[4] = n_lev


@njit(cache=True, nogil=True, inline="always")
def _value(
    c,
    kd,
    cut,
    slot,
    hits,
    ap_sum,
    dcg,
    first,
    bpref_sum,
    infap_sum,
    rank_sum,
    hits_r,
    rr,
    succ,
    num_rel,
    n_e,
    n_lev,
    list_len,
    expected,
    ideal,
    ideal_len,
    err_sum,
    sw,
    sw_total,
    mu_sum,
    levels,
    lev_count,
    lev_dist,
    hit_prec,
    recall_levels,
):
    """The value of metric ``c`` at the cut-off reading ``cut`` positions, from the running sums
    (``dcg`` is the sum of the gain of ``c``; ``rr`` and ``succ`` are read when ``expected``)."""
    if c == P:
        return hits / kd
    if c == R:
        return hits / num_rel if num_rel > 0 else 0.0
    if c == F1:
        p = hits / kd
        r = hits / num_rel if num_rel > 0 else 0.0
        return 2 * p * r / (p + r) if p + r > 0 else 0.0
    if c == AP:
        return ap_sum / num_rel if num_rel > 0 else 0.0
    if c == NDCG_LIN or c == NDCG_EXP or c == NDCG_BIN or c == NDCNG or c == NDCG_MAP:
        n_id = min(kd, n_e, ideal_len)
        best = ideal[_kind_of(c), n_id - 1] if n_id > 0 else 0.0
        return dcg / best if best > 0 else 0.0
    if c == RR:
        if expected:
            return rr
        return 1.0 / first if first > 0 else 0.0
    if c == ERR:
        return err_sum[slot]
    if c == BPREF:
        return bpref_sum / num_rel if num_rel > 0 else 0.0
    if c == INFAP:
        return infap_sum / num_rel if num_rel > 0 else 0.0
    if c == AUC:
        n_list = float(min(list_len, cut))
        missing = num_rel - hits
        total = rank_sum + missing * n_list + missing * (missing + 1) / 2
        n = n_list + missing
        if num_rel == 0:
            return np.nan
        return (n - (num_rel - 1) / 2 - total / num_rel) / (n - num_rel) if n > num_rel else 1.0
    if c == MUAP:
        if n_lev == 0:
            return np.nan
        acc = 0.0
        for lv in range(n_lev):
            acc += lev_dist[lv] * (mu_sum[lv] / lev_count[lv])
        return acc / levels[n_lev - 1]
    if c == SRECALL:
        total_w = sw_total[slot]
        return sw[slot] / total_w if total_w > 0 else 0.0
    if c == RPREC:
        if num_rel > 0:
            return (hits_r if num_rel <= cut else hits) / num_rel
        return 0.0
    if c == SUCCESS:
        if expected:
            return succ
        return 1.0 if hits > 0 else 0.0
    if c == IPREC:
        # trec_eval 9.0.8 m_iprec_at_recall.c: the level becomes a number of relevant items,
        # (long)(x * |R| + 0.9); the value is the largest precision at or after the rank of
        # that relevant item, 0 if not reached
        need_hits = int(recall_levels[slot] * num_rel + 0.9)
        if need_hits <= hits:
            best = 0.0
            for h in range(int(hits) - 1, max(need_hits, 1) - 2, -1):
                if hit_prec[h] > best:
                    best = hit_prec[h]
            return best
        return 0.0
    if c == NUM_Q:
        return 1.0
    if c == NUM_RET:
        return float(min(list_len, cut))
    if c == NUM_REL:
        return num_rel
    if c == NUM_REL_RET:
        return hits
    return np.nan


@njit(cache=True, nogil=True)
def _value_call(
    c,
    kd,
    cut,
    slot,
    hits,
    ap_sum,
    dcg,
    first,
    bpref_sum,
    infap_sum,
    rank_sum,
    hits_r,
    rr,
    succ,
    num_rel,
    n_e,
    n_lev,
    list_len,
    expected,
    ideal,
    ideal_len,
    err_sum,
    sw,
    sw_total,
    mu_sum,
    levels,
    lev_count,
    lev_dist,
    hit_prec,
    recall_levels,
):
    """:func:`_value` as a call, for the metrics the scorers do not write out themselves."""
    return _value(
        c,
        kd,
        cut,
        slot,
        hits,
        ap_sum,
        dcg,
        first,
        bpref_sum,
        infap_sum,
        rank_sum,
        hits_r,
        rr,
        succ,
        num_rel,
        n_e,
        n_lev,
        list_len,
        expected,
        ideal,
        ideal_len,
        err_sum,
        sw,
        sw_total,
        mu_sum,
        levels,
        lev_count,
        lev_dist,
        hit_prec,
        recall_levels,
    )


@njit(cache=True, nogil=True)
def _reset(err_sum, err_reach, sw, mu_hits, mu_sum):
    for e in range(err_sum.shape[0]):
        err_sum[e] = 0.0
        err_reach[e] = 1.0
    for w in range(sw.shape[0]):
        sw[w] = 0.0
    for lv in range(mu_hits.shape[0]):
        mu_hits[lv] = 0.0
        mu_sum[lv] = 0.0


@njit(cache=True, nogil=True)
def _score_expected(
    s,
    u,
    hpos,
    hg,
    hitem,
    hlo,
    hhi,
    n_hits,
    list_len,
    max_cut,
    us,
    threshold,
    codes,
    cuts,
    kdivs,
    slots,
    need_kind,
    weights,
    gain_keys,
    gain_vals,
    disc,
    ideal,
    ideal_len,
    recall_levels,
    levels,
    lev_count,
    lev_dist,
    err_sum,
    err_reach,
    sw,
    sw_total,
    mu_hits,
    mu_sum,
    hit_prec,
    wbuf,
    gsum,
    out,
):
    """The metrics averaged over every ordering of every tie block (McSherry & Najork 2008).

    Hits come grouped by tie block (``hlo``/``hhi``: first and last position of the hit's
    block). Each position of a block holds a relevant item with probability m/n and the block's
    mean gain; AP, RR and Success use the formulas of :mod:`recmeta.metrics._options`.
    """
    _reset(err_sum, err_reach, sw, mu_hits, mu_sum)
    n_req = codes.shape[0]
    n_w = weights.shape[0]
    num_rel = us[0]
    n_e = int(us[1])
    top = us[2]
    hits = ap_sum = hits_r = rr = succ = 0.0
    dcg = np.zeros(N_KINDS)
    req = 0
    above = 0.0  # relevant items in the blocks above
    h = 0
    while True:
        lo = hlo[h] if h < n_hits else max_cut
        n_b = hhi[h] - lo + 1 if h < n_hits else 1
        m = 0.0
        for kind in range(N_KINDS):
            gsum[kind] = 0.0
        for w in range(n_w):
            wbuf[w] = 0.0
        h1 = h
        while h1 < n_hits and hlo[h1] == lo:
            g = hg[h1]
            if g >= 0.0:
                for kind in range(N_KINDS):
                    if need_kind[kind]:
                        gsum[kind] += _gain(kind, g, top, threshold, gain_keys, gain_vals)
                if g >= threshold:
                    m += 1.0
                    for w in range(n_w):
                        wbuf[w] += weights[w, hitem[h1]]
            h1 += 1
        p = m / n_b
        first_block = above == 0.0 and m > 0.0
        none = 1.0  # probability that no relevant item of the block comes before position t
        for t in range(n_b):
            d = min(lo + t, max_cut)
            while req < n_req and cuts[req] <= d:
                c = codes[req]
                out[req, s, u] = _value(
                    c,
                    kdivs[req],
                    cuts[req],
                    slots[req],
                    hits,
                    ap_sum,
                    dcg[_kind_of(c)],
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    hits_r,
                    rr,
                    succ,
                    num_rel,
                    n_e,
                    0,
                    list_len,
                    True,
                    ideal,
                    ideal_len,
                    err_sum,
                    sw,
                    sw_total,
                    mu_sum,
                    levels,
                    lev_count,
                    lev_dist,
                    hit_prec,
                    recall_levels,
                )
                req += 1
            if d >= max_cut:
                break
            rank = d + 1.0
            hits += p
            if n_b > 1:
                ap_sum += p * (above + 1.0 + t * (m - 1.0) / (n_b - 1.0)) / rank
            else:
                ap_sum += p * (above + 1.0) / rank
            if rank <= num_rel:
                hits_r += p
            for kind in range(N_KINDS):
                if need_kind[kind]:
                    dcg[kind] += gsum[kind] / n_b * disc[d]
            for w in range(n_w):
                sw[w] += wbuf[w] / n_b
            if first_block:
                first = none * m / (n_b - t)
                rr += first / rank
                succ += first
                none *= (n_b - m - t) / (n_b - t)
        if lo >= max_cut:
            break
        above += m
        h = h1


@njit(cache=True, nogil=True)
def _reassign(hpos, hg, hitem, hlo, hhi, n_hits, pessimistic, tpos, tg, titem, order):
    """Move the judged hits of each tie block to its end (``pessimistic``) or start, by grade.

    Pessimistic: increasing grade, so relevant items come last; optimistic: decreasing. Judged
    items of equal grade keep their order; pooled-but-unjudged hits (negative grade) keep their
    place among the block's unjudged items. Rewrites the hits in their new rank order.
    """
    h = 0
    while h < n_hits:
        lo = hlo[h]
        hi = hhi[h]
        h1 = h
        while h1 < n_hits and hlo[h1] == lo:
            h1 += 1
        # judged hits of the block, stably sorted by grade (insertion sort: blocks are small)
        n_j = 0
        for i in range(h, h1):
            if hg[i] >= 0.0:
                order[n_j] = i
                n_j += 1
        for a in range(1, n_j):
            x = order[a]
            b = a - 1
            while b >= 0 and ((hg[order[b]] > hg[x]) if pessimistic else (hg[order[b]] < hg[x])):
                order[b + 1] = order[b]
                b -= 1
            order[b + 1] = x
        out = 0
        if not pessimistic:
            for a in range(n_j):
                i = order[a]
                tpos[out] = lo + a
                tg[out] = hg[i]
                titem[out] = hitem[i]
                out += 1
        judged_before = 0
        for i in range(h, h1):
            if hg[i] >= 0.0:
                judged_before += 1
            else:
                offset = hpos[i] - lo - judged_before
                tpos[out] = lo + offset if pessimistic else lo + n_j + offset
                tg[out] = hg[i]
                titem[out] = hitem[i]
                out += 1
        if pessimistic:
            for a in range(n_j):
                i = order[a]
                tpos[out] = hi - n_j + 1 + a
                tg[out] = hg[i]
                titem[out] = hitem[i]
                out += 1
        for a in range(out):
            hpos[h + a] = tpos[a]
            hg[h + a] = tg[a]
            hitem[h + a] = titem[a]
        h = h1


@njit(cache=True, nogil=True)
def _score_user(
    u,
    n_sys,
    tie_mode,
    HP,
    HG,
    HI,
    HLO,
    HHI,
    NH,
    LL,
    max_cut,
    us,
    threshold,
    infap_pooled,
    codes,
    cuts,
    kdivs,
    slots,
    need,
    need_kind,
    err_scale,
    weights,
    gain_keys,
    gain_vals,
    disc,
    ideal,
    ideal_len,
    recall_levels,
    levels,
    lev_count,
    lev_dist,
    err_sum,
    err_reach,
    sw,
    sw_total,
    mu_hits,
    mu_sum,
    hit_prec,
    tpos,
    tg,
    titem,
    order,
    wbuf,
    gsum,
    out,
):
    """Every requested metric of every system's list for user ``u``, from the lists' hits.

    Row ``s`` of ``HP``/``HG``/``HI`` holds the position, grade and item of the ``NH[s]`` hits
    of system ``s``'s list (``HLO``/``HHI``: their tie blocks), ``LL[s]`` the list's length
    within the cut-offs. One call per user: the scorer of a list is written out here, not
    called, so that the pass does not pay a call per list.
    """
    n_req = codes.shape[0]
    n_err = err_sum.shape[0]
    n_w = weights.shape[0]
    num_rel = us[0]
    n_e = int(us[1])
    top = us[2]
    bpref_den = us[3]
    n_lev = int(us[4])
    eps = INFAP_EPSILON
    need_infap = need[INFAP]
    need_bpref = need[BPREF]
    need_iprec = need[IPREC]
    need_exp = need_kind[1] or n_err > 0
    nk0, nk1, nk2, nk3, nk4 = need_kind[0], need_kind[1], need_kind[2], need_kind[3], need_kind[4]
    for s in range(n_sys):
        n_hits = NH[s]
        list_len = LL[s]
        if list_len == 0:  # no list: 0 on every metric but the counts that do not read it
            for req in range(n_req):
                c = codes[req]
                out[req, s, u] = 1.0 if c == NUM_Q else num_rel if c == NUM_REL else 0.0
            continue
        if tie_mode == TIE_EXPECTED:
            _score_expected(
                s,
                u,
                HP[s],
                HG[s],
                HI[s],
                HLO[s],
                HHI[s],
                n_hits,
                list_len,
                max_cut,
                us,
                threshold,
                codes,
                cuts,
                kdivs,
                slots,
                need_kind,
                weights,
                gain_keys,
                gain_vals,
                disc,
                ideal,
                ideal_len,
                recall_levels,
                levels,
                lev_count,
                lev_dist,
                err_sum,
                err_reach,
                sw,
                sw_total,
                mu_hits,
                mu_sum,
                hit_prec,
                wbuf,
                gsum,
                out,
            )
            continue
        if tie_mode == TIE_PESSIMISTIC or tie_mode == TIE_OPTIMISTIC:
            _reassign(
                HP[s],
                HG[s],
                HI[s],
                HLO[s],
                HHI[s],
                n_hits,
                tie_mode == TIE_PESSIMISTIC,
                tpos,
                tg,
                titem,
                order,
            )
        for e in range(n_err):
            err_sum[e] = 0.0
            err_reach[e] = 1.0
        for w in range(n_w):
            sw[w] = 0.0
        for lv in range(n_lev):
            mu_hits[lv] = 0.0
            mu_sum[lv] = 0.0
        hits = ap_sum = first = nonrel_seen = pooled_seen = hits_r = 0.0
        bpref_sum = infap_sum = rank_sum = 0.0
        dcg0 = dcg1 = dcg2 = dcg3 = dcg4 = 0.0
        last_g = -1.0  # no grade is -1 here: pooled hits (negative grades) skip the gains
        last_exp = 0.0
        req = 0
        h = 0
        while True:
            # the position of the next hit, or the end once every hit is read
            d = HP[s, h] if h < n_hits else max_cut
            if d > max_cut:
                d = max_cut
            while req < n_req and cuts[req] <= d:
                c = codes[req]
                kd = kdivs[req]
                v = 0.0
                if c == P:
                    v = hits / kd
                elif c == R:
                    v = hits / num_rel if num_rel > 0 else 0.0
                elif c == F1:
                    p = hits / kd
                    r = hits / num_rel if num_rel > 0 else 0.0
                    v = 2 * p * r / (p + r) if p + r > 0 else 0.0
                elif c == AP:
                    v = ap_sum / num_rel if num_rel > 0 else 0.0
                elif c == NDCG_LIN or c == NDCG_EXP or c == NDCG_BIN or c == NDCNG or c == NDCG_MAP:
                    kind = _kind_of(c)
                    dcg = (
                        dcg0
                        if kind == 0
                        else dcg1
                        if kind == 1
                        else dcg2
                        if kind == 2
                        else dcg3
                        if kind == 3
                        else dcg4
                    )
                    n_id = min(kd, n_e, ideal_len)
                    best = ideal[kind, n_id - 1] if n_id > 0 else 0.0
                    v = dcg / best if best > 0 else 0.0
                elif c == RR:
                    v = 1.0 / first if first > 0 else 0.0
                elif c == BPREF:
                    v = bpref_sum / num_rel if num_rel > 0 else 0.0
                elif c == INFAP:
                    v = infap_sum / num_rel if num_rel > 0 else 0.0
                elif c == SUCCESS:
                    v = 1.0 if hits > 0 else 0.0
                elif c == NUM_REL_RET:
                    v = hits
                elif c == ERR:
                    v = err_sum[slots[req]]
                elif c == RPREC:
                    if num_rel > 0:
                        v = (hits_r if num_rel <= cuts[req] else hits) / num_rel
                elif c == NUM_RET:
                    v = float(min(list_len, cuts[req]))
                elif c == NUM_REL:
                    v = num_rel
                elif c == NUM_Q:
                    v = 1.0
                else:
                    v = _value_call(
                        c,
                        kd,
                        cuts[req],
                        slots[req],
                        hits,
                        ap_sum,
                        0.0,
                        first,
                        bpref_sum,
                        infap_sum,
                        rank_sum,
                        hits_r,
                        0.0,
                        0.0,
                        num_rel,
                        n_e,
                        n_lev,
                        list_len,
                        False,
                        ideal,
                        ideal_len,
                        err_sum,
                        sw,
                        sw_total,
                        mu_sum,
                        levels,
                        lev_count,
                        lev_dist,
                        hit_prec,
                        recall_levels,
                    )
                out[req, s, u] = v
                req += 1
            if d >= max_cut:
                break
            g = HG[s, h]
            item = HI[s, h]
            h += 1
            if g < 0.0:  # in the pool, not judged
                pooled_seen += 1.0
                continue
            rank = d + 1.0
            if g >= threshold:
                if need_infap:
                    if d == 0:
                        infap_sum += 1.0
                    else:
                        a = hits + nonrel_seen
                        above = d if infap_pooled else a + pooled_seen
                        infap_sum += 1.0 / rank + (d / rank) * (above / d) * (
                            (hits + eps) / (a + 2 * eps)
                        )
                if need_bpref:
                    bpref_sum += 1.0 - min(nonrel_seen, num_rel) / bpref_den
                hits += 1.0
                ap_sum += hits / rank
                if need_iprec:
                    hit_prec[int(hits) - 1] = hits / rank
                rank_sum += rank
                if first == 0.0:
                    first = rank
                if rank <= num_rel:
                    hits_r += 1.0
                for w in range(n_w):
                    sw[w] += weights[w, item]
                if nk2 and g > 0:
                    dcg2 += disc[d]
            else:
                nonrel_seen += 1.0
            if nk0:
                dcg0 += g * disc[d]
            if need_exp and g != last_g:  # grades repeat along a list: one power per change
                last_g = g
                last_exp = _exp_gain(g)
            exp_gain = last_exp
            if nk1:
                dcg1 += exp_gain * disc[d]
            if nk3 and top > 0:
                dcg3 += (2.0 ** (g / top) - 1.0) * disc[d]
            if nk4:
                dcg4 += _gain(4, g, top, threshold, gain_keys, gain_vals) * disc[d]
            for e in range(n_err):
                gain = exp_gain / err_scale[e]
                err_sum[e] += err_reach[e] * gain / rank
                err_reach[e] *= 1.0 - gain
            for lv in range(n_lev):
                if levels[lv] <= g:
                    mu_hits[lv] += 1.0
                    mu_sum[lv] += mu_hits[lv] / rank


@njit(cache=True, nogil=True)
def _discounts(n):
    disc = np.empty(max(n, 1))
    for i in range(disc.shape[0]):
        disc[i] = 1.0 / np.log2(i + 2.0)
    return disc


@njit(cache=True, nogil=True)
def _need_kinds(need):
    need_kind = np.zeros(N_KINDS, dtype=np.bool_)
    need_kind[0] = need[NDCG_LIN]
    need_kind[1] = need[NDCG_EXP]
    need_kind[2] = need[NDCG_BIN]
    need_kind[3] = need[NDCNG]
    need_kind[4] = need[NDCG_MAP]
    return need_kind


@njit(cache=True, nogil=True)
def _workspace(size, disc_len, ideal_len, rmax, n_w, n_sys, width):
    """Scratch arrays of one pass: a user's judgments (``size`` entries), the discounts up to
    ``disc_len``, ERR's scale per r_max, and each of ``n_sys`` lists' judged positions
    (``width``)."""
    n_err = rmax.shape[0]
    err_scale = np.empty(n_err)
    for e in range(n_err):
        err_scale[e] = 2.0 ** rmax[e]
    return (
        np.empty(size),
        np.empty(size),
        _discounts(disc_len),
        np.zeros((N_KINDS, max(ideal_len, 1))),
        np.empty(size),
        np.empty(size),
        np.empty(size),
        np.empty(size),
        np.empty(size),
        np.empty(size),
        np.empty(n_err),
        np.empty(n_err),
        err_scale,
        np.empty(n_w),
        np.empty(n_w),
        np.empty(n_w),
        np.zeros(N_KINDS),
        np.zeros(6),
        np.empty((n_sys, width), dtype=np.int64),
        np.empty((n_sys, width)),
        np.empty((n_sys, width), dtype=np.int64),
        np.zeros((n_sys, width), dtype=np.int64),
        np.zeros((n_sys, width), dtype=np.int64),
        np.zeros(n_sys, dtype=np.int64),
        np.zeros(n_sys, dtype=np.int64),
        np.empty(width, dtype=np.int64),
        np.empty(width),
        np.empty(width, dtype=np.int64),
        np.empty(width, dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def _table_block(
    u0,
    u1,
    ranks,
    tied,
    tie_mode,
    indptr,
    ent_items,
    ent_grades,
    active,
    n_judged,
    threshold,
    infap_pooled,
    codes,
    cuts,
    kdivs,
    slots,
    need,
    rmax,
    weights,
    recall_levels,
    gain_keys,
    gain_vals,
    ideal_len,
    max_entries,
    max_cut,
    all_users,
    out,
    gmax,
):
    """Users ``u0 .. u1 - 1`` of every system from the dense item table; writes ``out``, ``gmax``.

    Users without a relevant item are skipped (left NaN) unless ``all_users``; then the metrics
    that divide by |R| give 0. ``gmax[u]`` is the largest grade any list ranks for the user (the
    ERR check of :func:`recmeta.metrics._plan.run_plan`).
    """
    n_sys = ranks.shape[0]
    depth = ranks.shape[2]
    table = np.full(max(n_judged, 1), np.nan)  # grade of each judged item for the current user
    (
        buf,
        gbuf,
        disc,
        ideal,
        levels,
        lev_count,
        lev_dist,
        mu_hits,
        mu_sum,
        hit_prec,
        err_sum,
        err_reach,
        err_scale,
        sw,
        sw_total,
        wbuf,
        gsum,
        us,
        HP,
        HG,
        HI,
        HLO,
        HHI,
        NH,
        LL,
        tpos,
        tg,
        titem,
        order,
    ) = _workspace(
        max(max_entries, 1), max(depth, ideal_len), ideal_len, rmax, weights.shape[0], n_sys, depth
    )
    need_kind = _need_kinds(need)
    need_muap = need[MUAP]
    need_err = need[ERR]
    ties = tie_mode != TIE_STORED

    for u in range(u0, u1):
        for e in range(indptr[u], indptr[u + 1]):
            if active[e]:
                table[ent_items[e]] = ent_grades[e]
        _setup_user(
            u,
            indptr,
            ent_items,
            ent_grades,
            active,
            threshold,
            need_kind,
            need_muap,
            ideal_len,
            disc,
            weights,
            gain_keys,
            gain_vals,
            buf,
            gbuf,
            ideal,
            levels,
            lev_count,
            lev_dist,
            sw_total,
            us,
        )
        skip = us[0] == 0.0 and not all_users
        for s in range(n_sys):
            if need_err:  # the ERR grade check reads the whole list, beyond the cut-offs
                for d in range(depth):
                    item = ranks[s, u, d]
                    if item >= 0 and item < n_judged and table[item] > gmax[u]:
                        gmax[u] = table[item]
            if skip:
                continue
            n = 0
            list_len = max_cut
            if not ties:
                for d in range(max_cut):
                    item = ranks[s, u, d]
                    if item < 0:
                        list_len = d
                        break
                    if item < n_judged:
                        g = table[item]
                        if g == g:
                            HP[s, n] = d
                            HG[s, n] = g
                            HI[s, n] = item
                            n += 1
            else:
                end = max_cut  # read on to the end of the block holding the last position read
                while end < depth and tied[s, u, end]:
                    end += 1
                lo = 0
                for d in range(end):
                    item = ranks[s, u, d]
                    if item < 0:
                        list_len = min(d, max_cut)
                        break
                    if not tied[s, u, d]:
                        lo = d
                    if item < n_judged:
                        g = table[item]
                        if g == g:
                            HP[s, n] = d
                            HG[s, n] = g
                            HI[s, n] = item
                            HLO[s, n] = lo
                            n += 1
                last_lo = -1  # the last position of each hit's block
                hi = 0
                for i in range(n):
                    if HLO[s, i] != last_lo:
                        last_lo = HLO[s, i]
                        hi = HP[s, i]
                        while hi + 1 < depth and tied[s, u, hi + 1]:
                            hi += 1
                    HHI[s, i] = hi
            NH[s] = n
            LL[s] = list_len
        if not skip:
            _score_user(
                u,
                n_sys,
                tie_mode,
                HP,
                HG,
                HI,
                HLO,
                HHI,
                NH,
                LL,
                max_cut,
                us,
                threshold,
                infap_pooled,
                codes,
                cuts,
                kdivs,
                slots,
                need,
                need_kind,
                err_scale,
                weights,
                gain_keys,
                gain_vals,
                disc,
                ideal,
                ideal_len,
                recall_levels,
                levels,
                lev_count,
                lev_dist,
                err_sum,
                err_reach,
                sw,
                sw_total,
                mu_hits,
                mu_sum,
                hit_prec,
                tpos,
                tg,
                titem,
                order,
                wbuf,
                gsum,
                out,
            )
        for e in range(indptr[u], indptr[u + 1]):
            table[ent_items[e]] = np.nan


@njit(cache=True, nogil=True)
def evaluate_lists_serial(
    ranks: np.ndarray,
    tied: np.ndarray,
    tie_mode: int,
    indptr: np.ndarray,
    ent_items: np.ndarray,
    ent_grades: np.ndarray,
    active: np.ndarray,
    n_judged: int,
    threshold: float,
    infap_pooled: bool,
    codes: np.ndarray,
    cuts: np.ndarray,
    kdivs: np.ndarray,
    slots: np.ndarray,
    need: np.ndarray,
    rmax: np.ndarray,
    weights: np.ndarray,
    recall_levels: np.ndarray,
    gain_keys: np.ndarray,
    gain_vals: np.ndarray,
    ideal_len: int,
    max_entries: int,
    all_users: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`evaluate_lists` in the calling thread: small inputs skip the thread launch."""
    n_sys, n_users, _ = ranks.shape
    out = np.full((codes.shape[0], n_sys, n_users), np.nan)
    gmax = np.zeros(n_users)
    max_cut = np.int64(0)  # not the literal 0: a literal would compile the block twice
    for c in cuts:
        max_cut = max(max_cut, c)
    _table_block(
        np.int64(0),  # not the literal 0, which would compile a block of its own
        n_users,
        ranks,
        tied,
        tie_mode,
        indptr,
        ent_items,
        ent_grades,
        active,
        n_judged,
        threshold,
        infap_pooled,
        codes,
        cuts,
        kdivs,
        slots,
        need,
        rmax,
        weights,
        recall_levels,
        gain_keys,
        gain_vals,
        ideal_len,
        max_entries,
        max_cut,
        all_users,
        out,
        gmax,
    )
    return out, gmax


def evaluate_lists(
    ranks: np.ndarray,
    tied: np.ndarray,
    tie_mode: int,
    indptr: np.ndarray,
    ent_items: np.ndarray,
    ent_grades: np.ndarray,
    active: np.ndarray,
    n_judged: int,
    threshold: float,
    infap_pooled: bool,
    codes: np.ndarray,
    cuts: np.ndarray,
    kdivs: np.ndarray,
    slots: np.ndarray,
    need: np.ndarray,
    rmax: np.ndarray,
    weights: np.ndarray,
    recall_levels: np.ndarray,
    gain_keys: np.ndarray,
    gain_vals: np.ndarray,
    ideal_len: int,
    max_entries: int,
    all_users: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Run the table pass over all users, blocks of consecutive users in threads
    (:func:`recmeta.arrays.threaded_map`; four blocks a thread, of at least
    :data:`USERS_PER_BLOCK` users).

    Returns ``out`` (requests × systems × users; requests sorted by cut-off, NaN for users
    without a relevant item unless ``all_users``) and ``gmax`` (largest grade ranked per user).
    Threads of this process rather than a numba ``prange``: a parallel kernel around the pass
    compiled for 10 s more in a fresh clone, and each user's values are the same either way.
    """
    n_sys, n_users, _ = ranks.shape
    out = np.full((codes.shape[0], n_sys, n_users), np.nan)
    gmax = np.zeros(n_users)
    max_cut = np.int64(cuts.max()) if cuts.size else np.int64(0)
    size = max(USERS_PER_BLOCK, -(-n_users // (4 * numba.get_num_threads())))
    blocks = [(u0, min(n_users, u0 + size)) for u0 in range(0, n_users, size)]
    args: tuple[object, ...] = (
        *(ranks, tied, tie_mode, indptr, ent_items, ent_grades, active, n_judged, threshold),
        *(infap_pooled, codes, cuts, kdivs, slots, need, rmax, weights, recall_levels),
        *(gain_keys, gain_vals, ideal_len, max_entries, max_cut, all_users, out, gmax),
    )
    for _ in threaded_map(
        lambda b: _table_block(np.int64(b[0]), np.int64(b[1]), *args),
        blocks,
        parallel_kernels=False,
    ):
        pass
    return out, gmax


# ------------------------------------------------------------------------ subsets of judgments
@njit(cache=True, nogil=True)
def _subset_pass(
    keep,
    n_sys,
    n_users,
    list_ptr,
    hit_pos,
    hit_entry,
    hit_lo,
    hit_hi,
    list_len,
    tie_mode,
    indptr,
    ent_items,
    ent_grades,
    threshold,
    infap_pooled,
    codes,
    cuts,
    kdivs,
    slots,
    need,
    rmax,
    weights,
    recall_levels,
    gain_keys,
    gain_vals,
    ideal_len,
    max_entries,
    max_hits,
    max_cut,
    all_users,
    out,
):
    """Every metric of every list on the judgments ``keep`` leaves; writes ``out`` (NaN = excluded).

    A user is excluded (NaN) when no kept judgment is relevant, or with ``all_users`` when the
    user keeps no judgment at all.
    """
    (
        buf,
        gbuf,
        disc,
        ideal,
        levels,
        lev_count,
        lev_dist,
        mu_hits,
        mu_sum,
        hit_prec,
        err_sum,
        err_reach,
        err_scale,
        sw,
        sw_total,
        wbuf,
        gsum,
        us,
        HP,
        HG,
        HI,
        HLO,
        HHI,
        NH,
        LL,
        tpos,
        tg,
        titem,
        order,
    ) = _workspace(
        max(max_entries, 1),
        max(max_cut, ideal_len),
        ideal_len,
        rmax,
        weights.shape[0],
        n_sys,
        max(max_hits, 1),
    )
    need_kind = _need_kinds(need)
    need_muap = need[MUAP]
    ties = tie_mode != TIE_STORED
    for u in range(n_users):
        _setup_user(
            u,
            indptr,
            ent_items,
            ent_grades,
            keep,
            threshold,
            need_kind,
            need_muap,
            ideal_len,
            disc,
            weights,
            gain_keys,
            gain_vals,
            buf,
            gbuf,
            ideal,
            levels,
            lev_count,
            lev_dist,
            sw_total,
            us,
        )
        if (us[0] == 0.0 and not all_users) or us[5] == 0.0:
            for req in range(codes.shape[0]):
                for s in range(n_sys):
                    out[req, s, u] = np.nan
            continue
        for s in range(n_sys):
            lst = s * n_users + u
            n = 0
            for i in range(list_ptr[lst], list_ptr[lst + 1]):
                e = hit_entry[i]
                if keep[e]:
                    HP[s, n] = hit_pos[i]
                    HG[s, n] = ent_grades[e]
                    HI[s, n] = ent_items[e]
                    if ties:
                        HLO[s, n] = hit_lo[i]
                        HHI[s, n] = hit_hi[i]
                    n += 1
            NH[s] = n
            LL[s] = list_len[s, u]
        _score_user(
            u,
            n_sys,
            tie_mode,
            HP,
            HG,
            HI,
            HLO,
            HHI,
            NH,
            LL,
            max_cut,
            us,
            threshold,
            infap_pooled,
            codes,
            cuts,
            kdivs,
            slots,
            need,
            need_kind,
            err_scale,
            weights,
            gain_keys,
            gain_vals,
            disc,
            ideal,
            ideal_len,
            recall_levels,
            levels,
            lev_count,
            lev_dist,
            err_sum,
            err_reach,
            sw,
            sw_total,
            mu_hits,
            mu_sum,
            hit_prec,
            tpos,
            tg,
            titem,
            order,
            wbuf,
            gsum,
            out,
        )


@njit(cache=True, nogil=True)
def _subset_scores(keep, out, hits):  # pragma: no cover - compiled
    """:func:`subset_scores_many` of the masks ``keep``, in the calling thread."""
    for k in range(keep.shape[0]):
        _subset_pass(keep[k], *(hits + (out[k],)))


def subset_scores_many(keep: np.ndarray, out: np.ndarray, hits: tuple) -> None:
    """Per-user values on the judgments each mask of ``keep`` (masks × rows) leaves, into
    ``out`` (masks × requests × systems × users; NaN = excluded), runs of consecutive masks in
    threads (:func:`recmeta.arrays.threaded_map`). ``hits`` are :func:`_subset_pass`'s
    arguments after the mask, up to ``out`` (``Subsets._args``).

    Threads of this process rather than a numba ``prange``: a parallel kernel around the pass
    compiled for 4 s more in a fresh clone, and each mask's values are the same either way."""
    n = keep.shape[0]
    bounds = np.linspace(0, n, min(n, numba.get_num_threads()) + 1).astype(np.int64)
    runs = zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    for _ in threaded_map(
        lambda ab: _subset_scores(keep[ab[0] : ab[1]], out[ab[0] : ab[1]], hits),
        runs,
        parallel_kernels=False,
    ):
        pass


@njit(cache=True, nogil=True)
def floored_logs(values, floor, with_gmean, out):
    """``log(max(v, floor))`` of every value into ``out`` (same shape; NaN stays NaN), the
    terms of a geometric mean; nothing when not ``with_gmean``."""
    if not with_gmean:
        return
    log_floor = np.log(floor)
    flat, logs = values.reshape(values.size), out.reshape(out.size)  # views: both contiguous
    for i in range(flat.size):
        v = flat[i]
        logs[i] = log_floor if v <= floor else np.log(v)  # a NaN fails v <= floor


@njit(cache=True, nogil=True, inline="always")
def _neumaier(total, comp, v):
    """``total + v`` with its rounding error added to ``comp`` (Neumaier 1974): the compensated
    sum is ``total + comp``."""
    t = total + v
    if abs(total) >= abs(v):
        comp += (total - t) + v
    else:
        comp += (v - t) + total
    return t, comp


@njit(cache=True, nogil=True, inline="always")
def _user_means(values, logs, users, mean, gmean, with_gmean):
    """Means over the ``users`` (a flag per user) of ``values`` (requests × systems × users)
    into ``mean`` (requests × systems), and of ``logs`` (:func:`floored_logs`) into ``gmean``
    as ``exp`` of their mean. NaN values are left out.

    Sums are compensated (Neumaier 1974), so two systems whose means are equal get equal
    floats and rank correlations see their tie.
    """
    n_req, n_sys, n_users = values.shape
    for req in range(n_req):
        for s in range(n_sys):
            total = comp = 0.0
            lsum = lcomp = 0.0
            count = 0
            for u in range(n_users):
                v = values[req, s, u]
                if users[u] and v == v:
                    total, comp = _neumaier(total, comp, v)
                    if with_gmean:
                        lsum, lcomp = _neumaier(lsum, lcomp, logs[req, s, u])
                    count += 1
            if count > 0:
                mean[req, s] = (total + comp) / count
                gmean[req, s] = np.exp((lsum + lcomp) / count)


@njit(cache=True, nogil=True)
def whole_users(keep: np.ndarray, indptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which masks keep every user's judgment rows whole (all of them or none), and for those
    the users they keep (masks × users).

    ``indptr`` delimits each user's rows. A user without rows counts as left out.
    """
    n_masks = keep.shape[0]
    n_users = indptr.size - 1
    whole = np.ones(n_masks, dtype=np.bool_)
    users = np.zeros((n_masks, n_users), dtype=np.bool_)
    for k in range(n_masks):
        for u in range(n_users):
            lo, hi = indptr[u], indptr[u + 1]
            if lo == hi:
                continue
            first = keep[k, lo]
            for e in range(lo + 1, hi):
                if keep[k, e] != first:
                    whole[k] = False
                    break
            if not whole[k]:
                break
            users[k, u] = first
    return whole, users


@njit(cache=True, nogil=True, parallel=True)
def user_subset_means(
    full: np.ndarray,
    users: np.ndarray,
    which: np.ndarray,
    mean: np.ndarray,
    gmean: np.ndarray,
    floor: float,
    with_gmean: bool,
    n_chunks: int,
) -> None:
    """:func:`subset_means` of masks that keep whole users: mask ``which[i]`` keeps the users
    ``users[which[i]]``, whose values are those of the full judgments ``full`` (requests ×
    systems × users); the rest are left out. Writes ``mean`` and ``gmean`` (masks × requests ×
    systems) at the masks ``which``.

    A user keeping all its judgment rows scores as on the full judgments, and one keeping none
    is left out (:func:`_subset_pass`), so these are the values of :func:`subset_means`.
    """
    n = which.size
    logs = np.empty_like(full)
    floored_logs(full, floor, with_gmean, logs)
    for c in prange(n_chunks):
        for i in range(c, n, n_chunks):  # every n_chunks-th mask (see subset_means)
            k = which[i]
            _user_means(full, logs, users[k], mean[k], gmean[k], with_gmean)


@njit(cache=True, nogil=True)
def _subset_means_turn(keep, which, mean, gmean, hits, floor, with_gmean, c, n_chunks):
    """The masks ``which[c::n_chunks]`` of :func:`subset_means`, in the calling thread."""
    n_req, n_sys, n_users = mean.shape[1], mean.shape[2], hits[1]  # hits: n_sys, n_users, ...
    every = np.ones(n_users, dtype=np.bool_)
    out = np.empty((n_req, n_sys, n_users))
    logs = np.empty_like(out)
    for i in range(c, which.size, n_chunks):
        k = which[i]
        _subset_pass(keep[k], *(hits + (out,)))
        floored_logs(out, floor, with_gmean, logs)
        _user_means(out, logs, every, mean[k], gmean[k], with_gmean)


def subset_means(
    keep: np.ndarray,
    which: np.ndarray,
    mean: np.ndarray,
    gmean: np.ndarray,
    hits: tuple,
    floor: float,
    with_gmean: bool,
    n_chunks: int,
) -> None:
    """Arithmetic and geometric means over users (requests × systems) of the masks ``which``,
    written into ``mean`` and ``gmean`` (masks × requests × systems) at those masks; ``hits``
    as for :func:`subset_scores_many`.

    Users left out on a mask (NaN) are left out of its means; the geometric mean (computed
    when ``with_gmean``) floors values at ``floor`` (:func:`_user_means`). Masks are dealt
    out among ``n_chunks`` threads in turn (:func:`recmeta.arrays.threaded_map`): masks come
    grouped by share, and a share's masks cost alike, so contiguous blocks left one thread the
    costly shares while the other sat idle. Each mask's values do not depend on its thread.
    Threads of this process rather than a numba ``prange``, which compiled for 7 s more.
    """
    for _ in threaded_map(
        lambda c: _subset_means_turn(
            keep, which, mean, gmean, hits, floor, with_gmean, c, n_chunks
        ),
        range(n_chunks),
        parallel_kernels=False,
    ):
        pass
