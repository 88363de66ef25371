"""Metrics without a trec_eval counterpart, checked against slow per-user references written
here from the papers' formulas, and against hand-worked examples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from recmeta.metrics import Judgments, Runs, aggregate, score_matrices, score_rankings

ITEMS = list(range(12))


# ---------------------------------------------------------------- slow references (one user)
def ref_f1(judged, ranked, tau, k):
    rel = {i for i, g in judged.items() if g >= tau}
    hits = sum(1 for i in ranked[:k] if i in rel)
    p, r = hits / k, hits / len(rel)
    return 0.0 if hits == 0 else 2 * p * r / (p + r)


def ref_err(judged, ranked, rmax, k):
    total, p_continue = 0.0, 1.0
    for rank, item in enumerate(ranked[:k], 1):
        g = (2 ** judged.get(item, 0) - 1) / 2**rmax
        total += p_continue * g / rank
        p_continue *= 1 - g
    return total


def ref_auc(judged, ranked, tau, k):
    rel = {i for i, g in judged.items() if g >= tau}
    full = list(ranked[:k]) + sorted(rel - set(ranked[:k]))
    pos = {item: n for n, item in enumerate(full)}
    negatives = [i for i in full if i not in rel]
    if not negatives:
        return 1.0
    good = sum(1 for r in rel for n in negatives if pos[r] < pos[n])
    return good / (len(rel) * len(negatives))


def ref_ap(rel, ranked, k):
    hits, total = 0, 0.0
    for rank, item in enumerate(ranked[:k], 1):
        if item in rel:
            hits += 1
            total += hits / rank
    return total / len(rel)


def ref_mu_ap(judged, ranked, k):
    levels = sorted({g for g in judged.values() if g > 0})
    num, den, prev = 0.0, 0.0, 0.0
    for t in levels:
        rel = {i for i, g in judged.items() if g >= t}
        d = t - prev
        num += d * ref_ap(rel, ranked, k)
        den += d
        prev = t
    return num / den


def ref_ndcng(judged, ranked, k):
    m = max(judged.values())
    if m <= 0:
        return 0.0

    def dcg(grades):
        return sum((2 ** (g / m) - 1) / math.log2(n + 1) for n, g in enumerate(grades[:k], 1))

    ideal = dcg(sorted(judged.values(), reverse=True))
    return dcg([judged.get(i, 0) for i in ranked]) / ideal


def ref_srecall(judged, ranked, tau, k, gamma, popularity):
    rel = {i for i, g in judged.items() if g >= tau}
    power = 1.0 if math.isinf(gamma) else gamma / (gamma + 1)
    w = {i: popularity[i] ** -power for i in rel}
    return sum(w[i] for i in ranked[:k] if i in rel) / sum(w.values())


# ---------------------------------------------------------------- random cases
@st.composite
def cases(draw):
    n_users = draw(st.integers(1, 4))
    judged, runs = {}, {}
    for u in range(n_users):
        items = draw(st.lists(st.sampled_from(ITEMS), min_size=1, max_size=8, unique=True))
        judged[u] = {i: draw(st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.5, 5.0])) for i in items}
        runs[u] = draw(st.lists(st.sampled_from(ITEMS + [50, 51]), min_size=1, max_size=9,
                                unique=True))
    return judged, runs, draw(st.sampled_from([1.0, 3.0, 4.5])), draw(st.sampled_from([1, 3, 5, 20]))


def _build(judged, runs, tau):
    jf = pd.DataFrame([(u, i, g) for u, d in judged.items() for i, g in d.items()],
                      columns=["user", "item", "rating"])
    j = Judgments.from_frame(jf, threshold=tau, max_grade=5.0)
    rf = pd.DataFrame([(u, i, -n) for u, items in runs.items() for n, i in enumerate(items)],
                      columns=["user", "item", "score"])
    return j, Runs.from_frame(rf, j, system="s")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([0.0, 1.0, 2.0, math.inf]))
def test_paper_metrics_equal_slow_references(case, gamma):
    judged, runs_, tau, k = case
    j, runs = _build(judged, runs_, tau)
    names = [f"F1@{k}", f"ERR@{k}", f"AUC@{k}", f"muAP@{k}", f"NDCNG@{k}",
             f"SRecall(gamma={gamma})@{k}", "ERR(rmax=6)@3"]
    mats = score_matrices(j, runs, names)
    popularity = j.to_frame().query("rating >= @tau").groupby("item").size().to_dict()
    for u, d in judged.items():
        col = j.users.get_loc(u)
        got = {n: mats[n][0, col] for n in names}
        if not any(g >= tau for g in d.values()):
            assert all(math.isnan(v) for v in got.values())
            continue
        ranked = runs_[u]
        assert got[f"F1@{k}"] == pytest.approx(ref_f1(d, ranked, tau, k), abs=1e-12)
        assert got[f"ERR@{k}"] == pytest.approx(ref_err(d, ranked, 5.0, k), abs=1e-12)
        assert got["ERR(rmax=6)@3"] == pytest.approx(ref_err(d, ranked, 6.0, 3), abs=1e-12)
        assert got[f"AUC@{k}"] == pytest.approx(ref_auc(d, ranked, tau, k), abs=1e-12)
        assert got[f"muAP@{k}"] == pytest.approx(ref_mu_ap(d, ranked, k), abs=1e-12)
        assert got[f"NDCNG@{k}"] == pytest.approx(ref_ndcng(d, ranked, k), abs=1e-12)
        assert got[f"SRecall(gamma={gamma})@{k}"] == pytest.approx(
            ref_srecall(d, ranked, tau, k, gamma, popularity), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.sampled_from(["mean", "gmean"]))
def test_aggregates_equal_a_loop(values, how):
    m = np.array(values)[None, :]
    if how == "mean":
        expected = sum(values) / len(values)
    else:
        expected = math.exp(sum(math.log(max(v, 1e-5)) for v in values) / len(values))
    assert aggregate(m, how)[0] == pytest.approx(expected, rel=1e-12)


def test_paper_metrics_in_parallel_blocks_equal_slow_references(monkeypatch):
    """Several parallel blocks of users, with the threaded pass forced on."""
    from recmeta.metrics import _kernel, _plan

    monkeypatch.setattr(_plan, "PARALLEL_MIN_POSITIONS", 0)
    rng = np.random.default_rng(8)
    judged, runs_ = {}, {}
    for u in range(2 * _kernel.USERS_PER_BLOCK + 5):
        items = rng.choice(30, size=int(rng.integers(1, 10)), replace=False)
        judged[u] = {int(i): float(rng.choice([0.0, 1.0, 2.5, 4.0, 5.0])) for i in items}
        runs_[u] = [int(i) for i in rng.choice(35, size=int(rng.integers(1, 12)), replace=False)]
    tau, k = 4.0, 8
    j, runs = _build(judged, runs_, tau)
    names = [f"F1@{k}", f"ERR@{k}", f"AUC@{k}", f"muAP@{k}", f"NDCNG@{k}", "SRecall(gamma=2)@5"]
    mats = score_matrices(j, runs, names)
    popularity = j.to_frame().query("rating >= @tau").groupby("item").size().to_dict()
    checked = 0
    for u, d in judged.items():
        if not any(g >= tau for g in d.values()):
            continue
        col = j.users.get_loc(u)
        ranked = runs_[u]
        assert mats[f"F1@{k}"][0, col] == pytest.approx(ref_f1(d, ranked, tau, k), abs=1e-12)
        assert mats[f"ERR@{k}"][0, col] == pytest.approx(ref_err(d, ranked, 5.0, k), abs=1e-12)
        assert mats[f"AUC@{k}"][0, col] == pytest.approx(ref_auc(d, ranked, tau, k), abs=1e-12)
        assert mats[f"muAP@{k}"][0, col] == pytest.approx(ref_mu_ap(d, ranked, k), abs=1e-12)
        assert mats[f"NDCNG@{k}"][0, col] == pytest.approx(ref_ndcng(d, ranked, k), abs=1e-12)
        assert mats["SRecall(gamma=2)@5"][0, col] == pytest.approx(
            ref_srecall(d, ranked, tau, 5, 2.0, popularity), abs=1e-12)
        checked += 1
    assert checked > _kernel.USERS_PER_BLOCK


def test_err_refuses_grades_above_rmax():
    with pytest.raises(ValueError, match="rmax"):
        score_rankings([4.0, 0.0, 5.0], ["ERR(rmax=4)@3"], threshold=4)
    # a grade above rmax ranked past the cut-off is refused too (the whole list is checked)
    with pytest.raises(ValueError, match="rmax"):
        score_rankings([4.0, 0.0, 5.0], ["ERR(rmax=4)@1"], threshold=4)


def test_stratified_recall_refuses_unpopular_relevant_items():
    j, runs = _build({0: {1: 5.0, 2: 4.0}}, {0: [2]}, 4.0)
    j2 = j.with_popularity(pd.Series({1: 3.0}))  # item 2 is relevant but has popularity 0
    runs2 = Runs.from_frame(runs.to_frame().assign(system="s"), j2)
    with pytest.raises(ValueError, match="popularity 0"):
        score_matrices(j2, runs2, ["SRecall@1"])


# ---------------------------------------------------------------- hand-worked examples
def test_mu_ap_scheel_level_distances():
    # Scheel et al.'s levels 0, 0.3, 1.0: thresholds 0.3 and 1.0 weigh 0.3 and 0.7.
    # Ranking B(0.3) A(1.0) C(0): AP at t=0.3 is 1, at t=1.0 is 1/2.
    out = score_rankings([0.3, 1.0, 0.0], ["muAP", "AP"], threshold=0.3)
    assert out["muAP"][0] == pytest.approx(0.3 * 1.0 + 0.7 * 0.5)
    assert out["AP"][0] == pytest.approx(1.0)


def test_mu_ap_with_two_levels_is_ap():
    out = score_rankings([0, 1, 1, 0, 1], ["muAP", "AP"], threshold=1)
    assert out["muAP"][0] == pytest.approx(out["AP"][0])


def test_ndcng_by_hand_and_scale_invariance():
    out = score_rankings([2.0, 0.0, 1.0], ["NDCNG@3"])
    dcg = 1 + (math.sqrt(2) - 1) / 2
    ideal = 1 + (math.sqrt(2) - 1) / math.log2(3)
    assert out["NDCNG@3"][0] == pytest.approx(dcg / ideal)
    # doubling every grade (a finer scale, same order) leaves NDCNG unchanged, nDCG(exp) not
    a = score_rankings([[2.0, 0.0, 1.0]], ["NDCNG@3", "nDCG(gain=exp)@3"])
    b = score_rankings([[4.0, 0.0, 2.0]], ["NDCNG@3", "nDCG(gain=exp)@3"])
    assert a["NDCNG@3"][0] == pytest.approx(b["NDCNG@3"][0])
    assert a["nDCG(gain=exp)@3"][0] != pytest.approx(b["nDCG(gain=exp)@3"][0])


def test_err_by_hand():
    out = score_rankings([4.0, 0.0, 5.0], ["ERR(rmax=5)@3"], threshold=4)
    g1, g3 = 15 / 32, 31 / 32
    assert out["ERR(rmax=5)@3"][0] == pytest.approx(g1 + (1 - g1) * g3 / 3)


def test_auc_of_one_relevant_item_is_linear_in_rank():
    # Krichene & Rendle eq. 7: AUC = (n - r) / (n - 1) for one relevant item at rank r.
    n, r = 1000, 100
    grades = np.zeros(n)
    grades[r - 1] = 1.0
    assert score_rankings(grades, ["AUC"])["AUC"][0] == pytest.approx((n - r) / (n - 1))


def test_stratified_recall_gamma_zero_is_recall():
    judged = {0: {1: 5.0, 2: 4.0, 3: 1.0}, 1: {1: 5.0, 4: 5.0}}
    j, runs = _build(judged, {0: [2, 9, 1], 1: [4]}, 4.0)
    m = score_matrices(j, runs, ["SRecall(gamma=0)@2", "R@2", "SRecall(gamma=inf)@2"])
    np.testing.assert_allclose(m["SRecall(gamma=0)@2"], m["R@2"])
    # user 0 with gamma=inf: relevant items 1 (2 relevant ratings) and 2 (1); only 2 in top 2
    assert m["SRecall(gamma=inf)@2"][0, 0] == pytest.approx(1 / (1 / 2 + 1))


def test_stratified_recall_with_external_popularity():
    judged = {0: {1: 5.0, 2: 4.0}}
    j, runs = _build(judged, {0: [2]}, 4.0)
    j2 = j.with_popularity(pd.Series({1: 9.0, 2: 1.0}))
    runs2 = Runs.from_frame(runs.to_frame().assign(system="s"), j2)
    got = score_matrices(j2, runs2, ["SRecall(gamma=inf)@1"])["SRecall(gamma=inf)@1"][0, 0]
    assert got == pytest.approx(1 / (1 / 9 + 1))


def test_exponential_gain_is_the_power_it_replaces():
    # the kernel takes 2^g − 1 of a whole grade by a shift; every grade must give the float
    # the power gives (compiled as it was before the shortcut), exactly
    from numba import njit

    from recmeta.metrics._kernel import _exp_gain

    exp_gain = njit(lambda g: _exp_gain(g))
    power = njit(lambda g: 2.0**g - 1.0)
    grades = [*np.arange(0.0, 60.5, 0.5), -0.0, -1.0, -2.5, 1e-300, 52.0 - 2**-40, 1e6]
    for g in grades:
        assert exp_gain(g) == power(g), g
    assert exp_gain(52.0) == 2.0**52 - 1 and exp_gain(3.0) == 7.0
    assert np.isnan(exp_gain(np.nan)) and exp_gain(np.inf) == np.inf
