"""One compiled pass over every ranked list, computing every requested metric at every cut-off.

For each user, the user's judged grades are spread into a dense item table (shared by every
system's list for that user); each (system, user) list is then read once, position by position,
updating running sums (hits, AP, DCG for each gain, bpref and infAP terms, ERR, ...). When the
pass reaches a requested cut-off, the metrics at that cut-off are written from the running sums.
Cost: O(systems × users × depth) with no intermediate arrays; the definitions of the metrics are
in :mod:`recmeta.metrics._plan`, which builds the plan this pass executes.

Compiled with numba (``cache=True``: compiled once per machine, then loaded from ``__pycache__``),
``parallel=True`` over blocks of users.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# metric codes (the plan's ``codes``); module-level ints are compile-time constants in numba
(P, R, F1, AP, NDCG_LIN, NDCG_EXP, NDCG_BIN, NDCNG, RR, ERR, BPREF, INFAP, AUC, MUAP, SRECALL,
 RPREC, SUCCESS, IPREC, NUM_Q, NUM_RET, NUM_REL, NUM_REL_RET) = range(22)
N_CODES = 22
INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON
USERS_PER_BLOCK = 64


@njit(cache=True, nogil=True)
def _block(u0, u1, ranks, indptr, ent_items, ent_grades, active, n_judged, threshold,
           codes, cuts, kdivs, slots, need, rmax, weights, recall_levels, ideal_len,
           max_entries, max_cut, all_users, out, gmax):
    """Evaluate users ``u0 .. u1 - 1`` of every system; writes ``out[:, :, u]`` and ``gmax[u]``.

    A negative grade marks an item in the pool but not judged (trec_eval's reading of a qrels
    grade < 0): it is neither relevant nor judged non-relevant, gains nothing, and counts only
    in infAP's share of pooled items above a relevant one. Users without a relevant item are
    skipped (left NaN) unless ``all_users``; then the metrics that divide by |R| give 0.
    """
    n_sys = ranks.shape[0]
    depth = ranks.shape[2]
    n_req = codes.shape[0]
    n_err = rmax.shape[0]
    n_w = weights.shape[0]
    eps = INFAP_EPSILON
    table = np.full(max(n_judged, 1), np.nan)  # grade of each judged item for the current user
    buf = np.empty(max(max_entries, 1))
    ideal = np.zeros((4, max(ideal_len, 1)))  # cumulative ideal DCG: linear, exp, binary, normalised
    levels = np.empty(max(max_entries, 1))
    lev_count = np.empty(max(max_entries, 1))
    lev_dist = np.empty(max(max_entries, 1))
    mu_hits = np.empty(max(max_entries, 1))
    mu_sum = np.empty(max(max_entries, 1))
    hit_prec = np.empty(max(max_entries, 1))  # precision at the rank of each relevant item
    err_sum = np.empty(max(n_err, 1))
    err_reach = np.empty(max(n_err, 1))
    err_scale = np.empty(max(n_err, 1))
    for e in range(n_err):
        err_scale[e] = 2.0 ** rmax[e]
    sw = np.empty(max(n_w, 1))
    sw_total = np.empty(max(n_w, 1))
    disc = np.empty(max(max_cut, max(ideal_len, 1)))
    for i in range(disc.shape[0]):
        disc[i] = 1.0 / np.log2(i + 2.0)
    need_ideal = need[NDCG_LIN] or need[NDCG_EXP] or need[NDCG_BIN] or need[NDCNG]
    need_exp = need[NDCG_EXP] or n_err > 0
    need_norm = need[NDCNG]
    need_infap = need[INFAP]
    need_bpref = need[BPREF]
    need_iprec = need[IPREC]

    for u in range(u0, u1):
        # ---- the user's judgments: table, counts, top grade, ideal DCG, grade levels
        n_e = 0
        num_rel = 0.0
        top = 0.0
        for w in range(n_w):
            sw_total[w] = 0.0
        for e in range(indptr[u], indptr[u + 1]):
            if active[e]:
                g = ent_grades[e]
                table[ent_items[e]] = g
                if g < 0.0:  # pooled but unjudged: only marked in the table
                    continue
                buf[n_e] = g
                n_e += 1
                if g > top:
                    top = g
                if g >= threshold:
                    num_rel += 1.0
                    for w in range(n_w):
                        sw_total[w] += weights[w, ent_items[e]]
        num_nonrel = n_e - num_rel
        bpref_den = max(min(num_nonrel, num_rel), 1.0)
        if num_rel == 0.0 and not all_users:  # excluded: left NaN; the ERR check reads the lists
            if need[ERR]:
                for s in range(n_sys):
                    for d in range(depth):
                        item = ranks[s, u, d]
                        if item >= 0 and item < n_judged and table[item] > gmax[u]:
                            gmax[u] = table[item]
            for e in range(indptr[u], indptr[u + 1]):
                table[ent_items[e]] = np.nan
            continue
        grades = np.sort(buf[:n_e])  # ascending
        if need_ideal:
            n_id = min(n_e, ideal_len)
            acc0 = acc1 = acc2 = acc3 = 0.0
            for i in range(n_id):
                g = grades[n_e - 1 - i]
                acc0 += g * disc[i]
                acc1 += (2.0 ** g - 1.0) * disc[i]
                if g >= threshold and g > 0:
                    acc2 += disc[i]
                if top > 0:
                    acc3 += (2.0 ** (g / top) - 1.0) * disc[i]
                ideal[0, i] = acc0
                ideal[1, i] = acc1
                ideal[2, i] = acc2
                ideal[3, i] = acc3
        n_lev = 0
        if need[MUAP]:
            previous = 0.0
            for i in range(n_e):
                g = grades[i]
                if g > 0 and (n_lev == 0 or g != levels[n_lev - 1]):
                    levels[n_lev] = g
                    lev_count[n_lev] = n_e - i  # grades are ascending: n_e - i are >= g
                    lev_dist[n_lev] = g - previous
                    previous = g
                    n_lev += 1

        for s in range(n_sys):
            hits = 0.0
            ap_sum = 0.0
            dcg0 = dcg1 = dcg2 = dcg3 = 0.0
            first = 0.0
            nonrel_seen = 0.0
            pooled_seen = 0.0
            hits_r = 0.0  # relevant items in the first |R| positions (R-precision)
            bpref_sum = 0.0
            infap_sum = 0.0
            rank_sum = 0.0
            n_list = 0.0
            for e in range(n_err):
                err_sum[e] = 0.0
                err_reach[e] = 1.0
            for w in range(n_w):
                sw[w] = 0.0
            for lv in range(n_lev):
                mu_hits[lv] = 0.0
                mu_sum[lv] = 0.0
            req = 0
            for d in range(max_cut):
                item = ranks[s, u, d]
                if item >= 0:
                    rank = d + 1.0
                    n_list += 1.0
                    g = np.nan
                    if item < n_judged:
                        g = table[item]
                    if g == g and g < 0.0:  # in the pool, not judged
                        pooled_seen += 1.0
                    elif g == g:  # judged
                        if n_err > 0 and g > gmax[u]:
                            gmax[u] = g
                        if g >= threshold:
                            if need_infap:
                                if d == 0:
                                    infap_sum += 1.0
                                else:
                                    ra = hits
                                    a = hits + nonrel_seen
                                    infap_sum += 1.0 / rank + (d / rank) * (
                                        (a + pooled_seen) / d) * ((ra + eps) / (a + 2 * eps))
                            if need_bpref:
                                bpref_sum += 1.0 - min(nonrel_seen, num_rel) / bpref_den
                            hits += 1.0
                            ap_sum += hits / rank
                            if need_iprec:
                                hit_prec[int(hits) - 1] = hits / rank
                            rank_sum += rank
                            if first == 0.0:
                                first = rank
                            for w in range(n_w):
                                sw[w] += weights[w, item]
                            dcg2 += disc[d] if g > 0 else 0.0
                        else:
                            nonrel_seen += 1.0
                        dcg0 += g * disc[d]
                        exp_gain = 2.0 ** g - 1.0 if need_exp else 0.0
                        dcg1 += exp_gain * disc[d]
                        if need_norm and top > 0:
                            dcg3 += (2.0 ** (g / top) - 1.0) * disc[d]
                        for e in range(n_err):
                            gain = exp_gain / err_scale[e]
                            err_sum[e] += err_reach[e] * gain / rank
                            err_reach[e] *= 1.0 - gain
                        for lv in range(n_lev):
                            if levels[lv] <= g:
                                mu_hits[lv] += 1.0
                                mu_sum[lv] += mu_hits[lv] / rank
                if d + 1.0 == num_rel:
                    hits_r = hits
                # ---- write the metrics whose cut-off is this position
                while req < n_req and cuts[req] == d + 1:
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
                    elif c == NDCG_LIN or c == NDCG_EXP or c == NDCG_BIN or c == NDCNG:
                        kind = c - NDCG_LIN if c != NDCNG else 3
                        dcg = dcg0 if kind == 0 else dcg1 if kind == 1 else dcg2 if kind == 2 \
                            else dcg3
                        n_id = min(kd, n_e, ideal_len)
                        best = ideal[kind, n_id - 1] if n_id > 0 else 0.0
                        v = dcg / best if best > 0 else 0.0
                    elif c == RR:
                        v = 1.0 / first if first > 0 else 0.0
                    elif c == ERR:
                        v = err_sum[slots[req]]
                    elif c == BPREF:
                        v = bpref_sum / num_rel if num_rel > 0 else 0.0
                    elif c == INFAP:
                        v = infap_sum / num_rel if num_rel > 0 else 0.0
                    elif c == AUC:
                        missing = num_rel - hits
                        total = rank_sum + missing * n_list + missing * (missing + 1) / 2
                        n = n_list + missing
                        if num_rel == 0:
                            v = np.nan
                        else:
                            v = (n - (num_rel - 1) / 2 - total / num_rel) / (n - num_rel) \
                                if n > num_rel else 1.0
                    elif c == MUAP:
                        if n_lev == 0:
                            v = np.nan
                        else:
                            acc = 0.0
                            for lv in range(n_lev):
                                acc += lev_dist[lv] * (mu_sum[lv] / lev_count[lv])
                            v = acc / levels[n_lev - 1]
                    elif c == SRECALL:
                        total_w = sw_total[slots[req]]
                        v = sw[slots[req]] / total_w if total_w > 0 else 0.0
                    elif c == RPREC:
                        if num_rel > 0:
                            v = (hits_r if num_rel <= d + 1 else hits) / num_rel
                    elif c == SUCCESS:
                        v = 1.0 if hits > 0 else 0.0
                    elif c == IPREC:
                        # trec_eval 9.0.8 m_iprec_at_recall.c: the level becomes a number of
                        # relevant items, (long)(x * |R| + 0.9); the value is the largest
                        # precision at or after the rank of that relevant item, 0 if not reached
                        need_hits = int(recall_levels[slots[req]] * num_rel + 0.9)
                        if need_hits <= hits:
                            best = 0.0
                            for h in range(int(hits) - 1, max(need_hits, 1) - 2, -1):
                                if hit_prec[h] > best:
                                    best = hit_prec[h]
                            v = best
                    elif c == NUM_Q:
                        v = 1.0
                    elif c == NUM_RET:
                        v = n_list
                    elif c == NUM_REL:
                        v = num_rel
                    elif c == NUM_REL_RET:
                        v = hits
                    out[req, s, u] = v
                    req += 1
            if need[ERR]:  # the ERR grade check reads the whole list, beyond the cut-offs
                for d in range(max_cut, depth):
                    item = ranks[s, u, d]
                    if item >= 0 and item < n_judged and table[item] > gmax[u]:
                        gmax[u] = table[item]
        for e in range(indptr[u], indptr[u + 1]):
            table[ent_items[e]] = np.nan


@njit(cache=True, nogil=True)
def evaluate_lists_serial(ranks, indptr, ent_items, ent_grades, active, n_judged, threshold,
                          codes, cuts, kdivs, slots, need, rmax, weights, recall_levels, ideal_len,
                          max_entries, all_users):
    """:func:`evaluate_lists` in the calling thread: small inputs skip the thread launch."""
    n_sys, n_users, _ = ranks.shape
    out = np.full((codes.shape[0], n_sys, n_users), np.nan)
    gmax = np.zeros(n_users)
    max_cut = 0
    for c in cuts:
        max_cut = max(max_cut, c)
    _block(0, n_users, ranks, indptr, ent_items, ent_grades, active, n_judged, threshold,
           codes, cuts, kdivs, slots, need, rmax, weights, recall_levels, ideal_len,
           max_entries, max_cut, all_users, out, gmax)
    return out, gmax


@njit(cache=True, nogil=True, parallel=True)
def evaluate_lists(ranks, indptr, ent_items, ent_grades, active, n_judged, threshold,
                   codes, cuts, kdivs, slots, need, rmax, weights, recall_levels, ideal_len,
                   max_entries, all_users):
    """Run the pass over all users in parallel blocks.

    Returns ``out`` (requests × systems × users; requests sorted by cut-off, NaN for users
    without a relevant item unless ``all_users``) and ``gmax`` (largest grade ranked per user).
    """
    n_sys, n_users, _ = ranks.shape
    out = np.full((codes.shape[0], n_sys, n_users), np.nan)
    gmax = np.zeros(n_users)
    max_cut = 0
    for c in cuts:
        max_cut = max(max_cut, c)
    n_blocks = (n_users + USERS_PER_BLOCK - 1) // USERS_PER_BLOCK
    for b in prange(n_blocks):
        u0 = b * USERS_PER_BLOCK
        u1 = min(n_users, u0 + USERS_PER_BLOCK)
        _block(u0, u1, ranks, indptr, ent_items, ent_grades, active, n_judged, threshold,
               codes, cuts, kdivs, slots, need, rmax, weights, recall_levels, ideal_len,
               max_entries, max_cut, all_users, out, gmax)
    return out, gmax
