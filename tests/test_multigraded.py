"""Multi-graded relevance (Scheel et al. 2011): µAP, NDCNG and the chapter's experiments.

Expected values come from hand-worked examples, from slow references written here (plain Python
over one ranking), and from exact enumeration of all swap sequences of tiny rankings.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from recmeta.metrics import score_rankings
from recmeta.papers import scheel2011 as mg


# ---------------------------------------------------------------- slow references
def slow_ap(grades: list[float], t: float) -> float:
    rel = [g >= t for g in grades]
    hits, total = 0, 0.0
    for rank, r in enumerate(rel, 1):
        if r:
            hits += 1
            total += hits / rank
    return total / sum(rel)


def slow_mu_ap(grades: list[float]) -> float:
    levels = sorted({g for g in grades if g > 0})
    prev, num = 0.0, 0.0
    for t in levels:
        num += (t - prev) * slow_ap(grades, t)
        prev = t
    return num / prev


def slow_ndcg(grades: list[float], gain) -> float:
    def dcg(gs):
        return sum(gain(g) / math.log2(i + 1) for i, g in enumerate(gs, 1))

    return dcg(grades) / dcg(sorted(grades, reverse=True))


def slow_ndcng(grades: list[float]) -> float:
    m = max(grades)
    return slow_ndcg(grades, lambda g: 2 ** (g / m) - 1)


# ---------------------------------------------------------------- the measures (acceptance)
def test_level_weights_of_the_papers_three_level_example():
    w = mg.level_weights([0.0, 0.3, 1.0, 0.3])
    assert list(w.index) == [0.3, 1.0]
    assert w.to_numpy() == pytest.approx([0.3, 0.7])


def test_level_weights_refuse_bad_grades():
    with pytest.raises(ValueError, match="irrelevant level is 0"):
        mg.level_weights([-1.0, 2.0])
    with pytest.raises(ValueError, match="no positive grade"):
        mg.level_weights([0.0, 0.0])


def test_mu_ap_of_the_three_level_example_by_hand():
    # ranked: C(0.3) B(1.0) A(0.0) D(0.3). t=0.3: relevant at 1, 2, 4 -> (1 + 1 + 3/4) / 3;
    # t=1.0: relevant at 2 -> 1/2. µAP = 0.3 * 11/12 + 0.7 * 1/2.
    out = score_rankings([0.3, 1.0, 0.0, 0.3], ["muAP"])
    assert out["muAP"][0] == pytest.approx(0.3 * 11 / 12 + 0.7 * 0.5, abs=1e-12)


def test_measures_on_a_small_ranking_by_hand():
    # ranked grades 1, 2, 0, 2 on levels 0..2.
    # AP(t=1) = (1 + 1 + 3/4) / 3 = 11/12, AP(t=2) = (1/2 + 2/4) / 2 = 1/2, d = 1, 1
    # NDCNG: m = 2, gains 2^(g/2) - 1 = sqrt2 - 1, 1, 0, 1; ideal order 2, 2, 1, 0
    # nDCG(exp): gains 1, 3, 0, 3; ideal 3, 3, 1, 0
    out = score_rankings([1.0, 2.0, 0.0, 2.0], ["muAP", "NDCNG", "nDCG(gain=exp)"])
    l3, l5 = math.log2(3), math.log2(5)
    s = math.sqrt(2) - 1
    assert out["muAP"][0] == pytest.approx(17 / 24, abs=1e-12)
    assert out["NDCNG"][0] == pytest.approx((s + 1 / l3 + 1 / l5) / (1 + 1 / l3 + s / 2), abs=1e-12)
    assert out["nDCG(gain=exp)"][0] == pytest.approx((1 + 3 / l3 + 3 / l5) / (3 + 3 / l3 + 1 / 2),
                                                     abs=1e-12)


def test_mu_ap_equals_ap_when_there_are_two_levels():
    rng = np.random.default_rng(3)
    for top in (1.0, 3.0, 0.25):
        grades = top * (rng.random((200, 12)) < 0.4)
        grades[:, 0] = top  # every ranking has a relevant item
        out = score_rankings(grades, ["muAP", "AP"], threshold=top)
        np.testing.assert_allclose(out["muAP"], out["AP"], rtol=0, atol=1e-12)
        assert out["AP"].min() < 1  # the rankings are not all ideal


@pytest.mark.parametrize("distribution", mg.DISTRIBUTIONS)
@pytest.mark.parametrize("levels", mg.PAPER_LEVELS)
def test_ideal_ranking_scores_one(levels, distribution):
    ref = mg.reference_grades(100, levels, distribution, rng=levels)
    out = score_rankings(ref, list(mg.PAPER_METRICS))
    for name in mg.PAPER_METRICS:
        assert out[name][0] == pytest.approx(1.0, abs=1e-12), name


def test_ndcng_and_mu_ap_are_invariant_to_scaling_ndcg_exp_is_not():
    rng = np.random.default_rng(5)
    grades = rng.integers(0, 5, size=(50, 20)).astype(float)
    grades[:, -1] = 4  # a top-grade item at the bottom: no ranking is ideal
    names = ["muAP", "NDCNG", "nDCG(gain=exp)", "nDCG"]
    base = score_rankings(grades, names)
    for c in (0.5, 2.0, 7.3):
        scaled = score_rankings(c * grades, names)
        for name in ("muAP", "NDCNG", "nDCG"):  # nDCG: linear gain, scale-free as well
            np.testing.assert_allclose(scaled[name], base[name], rtol=1e-12, err_msg=name)
        diff = np.abs(scaled["nDCG(gain=exp)"] - base["nDCG(gain=exp)"])
        assert diff.min() > 1e-6


def test_engine_agrees_with_slow_references_on_random_graded_rankings():
    rng = np.random.default_rng(11)
    grades = rng.choice([0.0, 0.5, 1.0, 2.5, 4.0], size=(40, 9))
    grades[:, 4] = 4.0
    out = score_rankings(grades, ["muAP", "NDCNG", "nDCG(gain=exp)"])
    for row, g in enumerate(grades.tolist()):
        assert out["muAP"][row] == pytest.approx(slow_mu_ap(g), abs=1e-12)
        assert out["NDCNG"][row] == pytest.approx(slow_ndcng(g), abs=1e-12)
        assert out["nDCG(gain=exp)"][row] == pytest.approx(
            slow_ndcg(g, lambda x: 2**x - 1), abs=1e-12)


# ---------------------------------------------------------------- reference rankings
def test_level_counts():
    assert mg.level_counts(100, 10).tolist() == [10] * 10
    assert mg.level_counts(7, 3).tolist() == [3, 2, 2]
    for seed in range(20):
        c = mg.level_counts(100, 2, "non-uniform", rng=seed)
        assert c.sum() == 100 and c[1:].sum() > 0
    many = np.array([mg.level_counts(100, 50, "non-uniform", rng=s) for s in range(20)])
    assert (many == 0).any()  # some levels stay empty, as in the paper
    with pytest.raises(ValueError, match="distribution"):
        mg.level_counts(10, 3, "zipf")
    with pytest.raises(ValueError, match="n_levels"):
        mg.level_counts(10, 1)


def test_reference_grades_are_sorted_levels():
    ref = mg.reference_grades(100, 20)
    assert ref.tolist() == sorted(ref.tolist(), reverse=True)
    assert np.unique(ref).tolist() == list(range(20))
    assert (np.bincount(ref.astype(int)) == 5).all()


# ---------------------------------------------------------------- swaps
def _parity(perm: np.ndarray) -> int:
    seen, cycles = np.zeros(perm.size, bool), 0
    for start in range(perm.size):
        if not seen[start]:
            cycles += 1
            i = start
            while not seen[i]:
                seen[i] = True
                i = perm[i]
    return (perm.size - cycles) % 2


def test_swap_permutations_are_permutations_with_the_right_parity():
    swaps = np.arange(30).repeat(5)
    perms = mg.swap_permutations(12, swaps, rng=0)
    assert (np.sort(perms, axis=1) == np.arange(12)).all()
    assert (perms[swaps == 0] == np.arange(12)).all()
    displaced = (perms != np.arange(12)).sum(axis=1)
    assert (displaced[swaps == 1] == 2).all()
    assert (displaced <= 2 * swaps).all()
    # every transposition flips the parity: s swaps give a permutation of parity s mod 2
    assert [_parity(p) for p in perms] == (swaps % 2).tolist()


def test_single_swap_picks_every_pair_equally_often():
    perms = mg.swap_permutations(4, np.ones(6000, dtype=int), rng=1)
    pairs = [tuple(np.flatnonzero(p != np.arange(4))) for p in perms]
    counts = pd.Series(pairs).value_counts()
    assert len(counts) == 6
    chi2 = ((counts - 1000) ** 2 / 1000).sum()
    assert chi2 < 20.5  # chi-square, 5 degrees of freedom, p = 0.001


def test_swap_permutations_refuse_bad_counts():
    with pytest.raises(ValueError, match="non-negative"):
        mg.swap_permutations(5, np.array([1, -1]))
    with pytest.raises(ValueError, match="non-negative"):
        mg.swap_permutations(5, np.array([1.5]))


def _exact_swap_means(reference: list[float], n_swaps: int) -> dict[str, float]:
    """Mean of each measure over every sequence of n_swaps swaps (all equally likely)."""
    n = len(reference)
    pairs = list(itertools.combinations(range(n), 2))
    sums = {"muAP": 0.0, "NDCNG": 0.0, "nDCG(gain=exp)": 0.0}
    count = 0
    for seq in itertools.product(pairs, repeat=n_swaps):
        g = list(reference)
        for i, j in seq:
            g[i], g[j] = g[j], g[i]
        sums["muAP"] += slow_mu_ap(g)
        sums["NDCNG"] += slow_ndcng(g)
        sums["nDCG(gain=exp)"] += slow_ndcg(g, lambda x: 2**x - 1)
        count += 1
    return {k: v / count for k, v in sums.items()}


def test_swap_study_matches_exact_enumeration_on_a_tiny_ranking():
    reps = 4000
    out = mg.swap_study([3], ["uniform"], n_items=5, max_swaps=2, repetitions=reps,
                        thresholds=False, seed=2, progress=False)
    ref = mg.reference_grades(5, 3).tolist()
    assert ref == [2.0, 1.0, 1.0, 0.0, 0.0]
    for s in (1, 2):
        exact = _exact_swap_means(ref, s)
        for name, value in exact.items():
            row = out[(out.swaps == s) & (out.metric == name)].iloc[0]
            se = row["sd"] / math.sqrt(reps)
            assert abs(row["value"] - value) < 4 * se + 1e-12, (s, name, row["value"], value)


def test_swap_study_mu_ap_is_the_weighted_mean_of_map_per_threshold():
    out = mg.swap_study([2, 10], ["uniform", "non-uniform"], max_swaps=20, repetitions=5,
                        seed=4, progress=False)
    assert set(out.metric) == {"muAP", "NDCNG", "nDCG(gain=exp)", "MAP"}
    for (dist, levels), part in out.groupby(["distribution", "levels"]):
        at0 = part[part.swaps == 0]
        assert at0["value"].to_numpy() == pytest.approx(1.0)
        maps = part[part.metric == "MAP"].pivot(index="swaps", columns="threshold", values="value")
        # weights of eq. 4 from the thresholds present: levels are 1 apart, except where the
        # non-uniform draw left a level empty
        w = mg.level_weights(maps.columns.to_numpy())
        mu = part[part.metric == "muAP"].set_index("swaps")["value"]
        np.testing.assert_allclose(maps.to_numpy() @ w.to_numpy(), mu.loc[maps.index], atol=1e-12)
        if levels == 2:
            np.testing.assert_allclose(maps[1.0], mu.loc[maps.index], atol=1e-12)
        last = part[(part.metric == "muAP") & (part.swaps == 20)]["value"].iloc[0]
        assert last < 0.99


# ---------------------------------------------------------------- rating scales
def _ratings(values) -> pd.DataFrame:
    return pd.DataFrame({"user": 1, "item": np.arange(len(values)), "rating": values})


def test_to_grades_shifts_the_irrelevant_level_to_zero_and_rescales():
    df = _ratings([1.0, 2.0, 5.0, 3.5])
    assert mg.to_grades(df)["rating"].tolist() == [0.0, 1.0, 4.0, 2.5]
    assert mg.to_grades(df, factor=2)["rating"].tolist() == [0.0, 2.0, 8.0, 5.0]
    assert mg.to_grades(df, irrelevant=3)["rating"].tolist() == [0.0, 0.0, 2.0, 0.5]
    assert df["rating"].tolist() == [1.0, 2.0, 5.0, 3.5]  # input untouched


def test_to_grades_refuses_bad_input():
    with pytest.raises(ValueError, match="positive"):
        mg.to_grades(_ratings([1.0, 2.0]), factor=0)
    with pytest.raises(ValueError, match="finite"):
        mg.to_grades(_ratings([1.0, np.nan]))
    with pytest.raises(KeyError, match="score"):
        mg.to_grades(_ratings([1.0]), column="score")


def test_scale_study_on_a_doubled_scale():
    rng = np.random.default_rng(8)
    test = pd.DataFrame({"user": np.repeat([1, 2, 3], 6), "item": np.tile(np.arange(6), 3),
                         "rating": rng.integers(1, 6, size=18).astype(float)})
    test.loc[test.item == 5, "rating"] = 5.0
    runs = pd.DataFrame({"system": np.repeat(["a", "b"], 18), "user": np.tile(test.user, 2),
                         "item": np.tile(test.item, 2), "score": rng.random(36)})
    metrics = ["muAP", "NDCNG", "nDCG(gain=exp)", "nDCG"]
    out = mg.scale_study(test, runs, {"native": mg.to_grades,
                                      "doubled": lambda df: mg.to_grades(df, factor=2)}, metrics)
    wide = out.pivot_table(index=["system", "metric"], columns="scale", values="value")
    for m in ("muAP", "NDCNG", "nDCG"):
        np.testing.assert_allclose(wide.xs(m, level="metric")["native"],
                                   wide.xs(m, level="metric")["doubled"], rtol=1e-12)
    exp = wide.xs("nDCG(gain=exp)", level="metric")
    assert (np.abs(exp["native"] - exp["doubled"]) > 1e-6).all()
    # the native values equal the slow references, user by user
    for system in ("a", "b"):
        values = []
        for u in (1, 2, 3):
            r = runs[(runs.system == system) & (runs.user == u)].sort_values("score", ascending=False)
            g = test.set_index(["user", "item"]).loc[[(u, i) for i in r.item], "rating"] - 1
            values.append(slow_mu_ap(g.tolist()))
        assert wide.loc[(system, "muAP"), "native"] == pytest.approx(np.mean(values), abs=1e-12)


# ---------------------------------------------------------------- virtual users
def test_quantise_levels_by_hand():
    scores = pd.DataFrame({"user": [1, 1, 1, 1, 2, 2, 3, 3],
                           "score": [2.0, 3.0, 4.0, 6.0, 10.0, 11.0, 5.0, 5.0]})
    # user 1: range 2..6, width 4 / 4 levels = 1 per level; 6 falls in the top level
    assert mg.quantise_levels(scores, 4).tolist() == [0, 1, 2, 3, 0, 3, 0, 0]
    assert mg.quantise_levels(scores, None).tolist() == [0, 1, 2, 4, 0, 1, 0, 0]
    with pytest.raises(ValueError, match="n_levels"):
        mg.quantise_levels(scores, 1)
    with pytest.raises(ValueError, match="NaN"):
        mg.quantise_levels(scores.assign(score=np.nan), 3)


def _virtual_scores(seed: int = 0, n_users: int = 6, n_items: int = 15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n_users, n_items))
    systems = {"ref": base, "monotone": np.exp(2 * base),  # same order as ref
               "noisy": base + rng.normal(scale=1.0, size=base.shape),
               "reversed": -base}
    return pd.concat([
        pd.DataFrame({"system": name, "user": np.repeat(np.arange(n_users), n_items),
                      "item": np.tile(np.arange(n_items), n_users), "score": s.ravel()})
        for name, s in systems.items()], ignore_index=True)


def test_virtual_user_study_scores_the_reference_and_its_monotone_copy_one():
    scores = _virtual_scores()
    out = mg.virtual_user_study(scores, "ref", [5, None], thresholds=True)
    main = out[out.metric != "MAP"].set_index(["levels", "system", "metric"])["value"]
    for levels in (5, -1):
        for m in mg.PAPER_METRICS:
            assert main[(levels, "ref", m)] == pytest.approx(1.0)
            assert main[(levels, "monotone", m)] == pytest.approx(1.0)
            assert main[(levels, "noisy", m)] < 1
            assert main[(levels, "reversed", m)] < main[(levels, "noisy", m)]
    maps = out[(out.metric == "MAP") & (out.levels == 5)]
    assert sorted(maps.threshold.unique()) == [1.0, 2.0, 3.0, 4.0]


def test_virtual_user_study_against_slow_references():
    scores = _virtual_scores(seed=3, n_users=4, n_items=10)
    out = mg.virtual_user_study(scores, "ref", [3])
    got = out.set_index(["system", "metric"])["value"]
    ref = scores[scores.system == "ref"]
    grades = mg.quantise_levels(ref, 3)
    grade_of = dict(zip(zip(ref.user, ref.item), grades))
    for system in ("noisy", "reversed"):
        sub = scores[scores.system == system]
        mu, ng = [], []
        for _, lst in sub.groupby("user"):
            lst = lst.sort_values("score", ascending=False)
            g = [grade_of[(u, i)] for u, i in zip(lst.user, lst.item)]
            mu.append(slow_mu_ap(g))
            ng.append(slow_ndcng(g))
        assert got[(system, "muAP")] == pytest.approx(np.mean(mu), abs=1e-12)
        assert got[(system, "NDCNG")] == pytest.approx(np.mean(ng), abs=1e-12)


def test_virtual_user_study_refuses_bad_input():
    scores = _virtual_scores()
    with pytest.raises(ValueError, match="reference system 'nope'"):
        mg.virtual_user_study(scores, "nope", [3])
    extra = pd.DataFrame({"system": ["noisy"], "user": [0], "item": [99], "score": [1.0]})
    with pytest.raises(ValueError, match="same candidates"):
        mg.virtual_user_study(pd.concat([scores, extra]), "ref", [3])


def test_single_swaps_lists_every_transposition_once():
    perms = mg.single_swaps(5)
    assert perms.shape == (10, 5)
    moved = {tuple(np.flatnonzero(p != np.arange(5))) for p in perms}
    assert moved == set(itertools.combinations(range(5), 2))
    assert (np.sort(perms, axis=1) == np.arange(5)).all()


def test_study_reference_is_the_reference_of_the_study():
    ref = mg.study_reference("non-uniform", 20, 100, seed=7)
    assert ref.tolist() == mg.study_reference("non-uniform", 20, 100, seed=7).tolist()
    out = mg.swap_study([20], ["non-uniform"], max_swaps=1, repetitions=2, seed=7, progress=False)
    thresholds = sorted(out.loc[out.metric == "MAP", "threshold"].unique())
    assert thresholds == sorted(np.unique(ref[ref > 0]).tolist())
    with pytest.raises(ValueError, match="distribution"):
        mg.study_reference("normal", 5)


def test_candidate_items_are_unrated_distinct_and_uniform():
    train = pd.DataFrame({"user": np.repeat([10, 20, 30], 4),
                          "item": np.r_[0, 1, 2, 3, 0, 4, 5, 6, 7, 8, 9, 1], "rating": 3.0})
    pairs = mg.candidate_items(train, 5, seed=1)
    assert pairs.groupby("user").size().tolist() == [5, 5, 5]
    assert not pairs.duplicated().any()
    rated = set(zip(train.user, train.item))
    assert not any(p in rated for p in zip(pairs.user, pairs.item))
    # user 10 has 6 unrated items (4..9): over many seeds each is picked 5/6 of the time
    picks = pd.concat([mg.candidate_items(train, 5, users=[10], seed=s) for s in range(600)])
    share = picks["item"].value_counts() / 600
    assert sorted(share.index) == [4, 5, 6, 7, 8, 9]
    assert np.abs(share - 5 / 6).max() < 0.06
    with pytest.raises(ValueError, match="fewest unrated"):
        mg.candidate_items(train, 7)
    with pytest.raises(ValueError, match="no training ratings"):
        mg.candidate_items(train, 2, users=[99])


def test_virtual_user_study_ranks_unscored_candidates_last_only_when_asked():
    scores = _virtual_scores()
    holes = scores.copy()
    hole = (holes.system == "noisy") & (holes.item == 0)
    holes.loc[hole, "score"] = np.nan
    with pytest.raises(ValueError, match="unscored='last'"):
        mg.virtual_user_study(holes, "ref", [3])
    got = mg.virtual_user_study(holes, "ref", [3], unscored="last")
    filled = holes.assign(score=holes.score.fillna(-1e9))
    want = mg.virtual_user_study(filled, "ref", [3])
    np.testing.assert_allclose(got.value, want.value, atol=1e-12)
    ref_hole = scores.copy()
    ref_hole.loc[(ref_hole.system == "ref") & (ref_hole.item == 0), "score"] = np.nan
    with pytest.raises(ValueError, match="reference"):
        mg.virtual_user_study(ref_hole, "ref", [3], unscored="last")


# ---------------------------------------------------------------- levels on [0, 1] (gain size)
def test_reference_grades_on_the_unit_scale():
    ref = mg.reference_grades(10, 5, scale="unit")
    assert ref.tolist() == [1.0, 1.0, 0.75, 0.75, 0.5, 0.5, 0.25, 0.25, 0.0, 0.0]
    integer = mg.study_reference("non-uniform", 20, 100, seed=3)
    unit = mg.study_reference("non-uniform", 20, 100, seed=3, scale="unit")
    np.testing.assert_allclose(unit, integer / 19)  # same counts per level, other values
    with pytest.raises(ValueError, match="scale"):
        mg.reference_grades(10, 5, scale="log")


def test_unit_levels_turn_ndcg_into_ndcng():
    # on a uniform reference the top level L-1 is used, so NDCNG divides every grade by L-1:
    # NDCG on levels k/(L-1) is NDCNG on levels k, ranking by ranking (the swaps are the same)
    kw = {"max_swaps": 30, "repetitions": 4, "thresholds": False, "seed": 5, "progress": False}
    ints = mg.swap_study([2, 20], ["uniform"], **kw)
    unit = mg.swap_study([2, 20], ["uniform"], scale="unit", **kw)
    a = unit[unit.metric == "nDCG(gain=exp)"].set_index(["levels", "swaps"])["value"]
    b = ints[ints.metric == "NDCNG"].set_index(["levels", "swaps"])["value"]
    np.testing.assert_allclose(a, b.loc[a.index], atol=1e-12)
    # and the unit study's NDCG is the slow reference's on the swapped unit grades
    ref = mg.study_reference("uniform", 20, 100, seed=5, scale="unit")
    perm = mg.swap_permutations(100, np.array([7]), rng=1)[0]
    got = score_rankings(ref[perm], ["nDCG(gain=exp)"])["nDCG(gain=exp)"][0]
    assert got == pytest.approx(slow_ndcg(ref[perm].tolist(), lambda x: 2**x - 1), abs=1e-12)


def test_ndcg_reacts_to_the_size_of_the_gains_not_to_the_number_of_levels():
    kw = {"max_swaps": 40, "repetitions": 6, "thresholds": False, "seed": 2, "progress": False,
          "metrics": ["nDCG(gain=exp)"]}
    ints = mg.swap_study([2, 50], ["uniform"], **kw)
    unit = mg.swap_study([2, 50], ["uniform"], scale="unit", **kw)
    sel = lambda n: {"distribution": "uniform", "levels": n, "metric": "nDCG(gain=exp)"}
    drop_int, se_int = mg.curve_difference(ints, sel(2), sel(50))
    drop_unit, _se_unit = mg.curve_difference(unit, sel(2), sel(50))
    assert drop_int > 0.1 and drop_int > 5 * se_int  # integer levels: 2^49 swamps the others
    assert abs(drop_unit) < 0.05  # the same 50 levels with small gains: no such drop


def test_curve_difference_by_hand():
    study = pd.DataFrame({
        "distribution": "uniform", "metric": "m", "threshold": np.nan, "n": 4,
        "levels": [2, 2, 2, 9, 9, 9], "swaps": [0, 1, 2, 0, 1, 2],
        "value": [1.0, 0.8, 0.6, 1.0, 0.5, 0.4], "sd": [0.0, 0.2, 0.4, 0.0, 0.2, 0.2]})
    value, se = mg.curve_difference(study, {"levels": 2}, {"levels": 9})
    assert value == pytest.approx(((0.8 - 0.5) + (0.6 - 0.4)) / 2)
    # variances of the four means: 0.04/4, 0.04/4 at s=1; 0.16/4, 0.04/4 at s=2; mean of 2 curves
    assert se == pytest.approx(math.sqrt(0.01 + 0.01 + 0.04 + 0.01) / 2)
    with pytest.raises(ValueError, match="no curve"):
        mg.curve_difference(study, {"levels": 3}, {"levels": 9})


def test_top_level_share_by_hand():
    # grades 2, 1, 0: gains 3, 1, 0 -> the top level holds 3/4
    assert mg.top_level_share(np.array([2.0, 1.0, 0.0])) == pytest.approx(0.75)
    assert mg.top_level_share(mg.reference_grades(100, 50)) == pytest.approx(0.5, abs=0.01)


# ---------------------------------------------------------------- the one-swap check, computed
def test_single_swap_scores_give_the_exact_one_swap_distribution():
    ref = np.array([2.0, 1.0, 1.0, 0.0])
    out = mg.single_swap_scores(ref, ["muAP"])
    assert len(out) == 6 and out["distance"].tolist() == [1, 1, 2, 0, 1, 1]
    for row in out.itertuples():
        g = ref.copy()
        g[row.i], g[row.j] = g[row.j], g[row.i]
        assert row.muAP == pytest.approx(slow_mu_ap(g.tolist()), abs=1e-12)


def test_one_swap_check_uses_the_exact_spread():
    check = mg.one_swap_check([3], ["uniform"], n_items=5, draws=4000, metrics=["muAP"], seed=1)
    row = check.iloc[0]
    ref = mg.study_reference("uniform", 3, 5, seed=1)
    exact = []
    for i, j in itertools.combinations(range(5), 2):
        g = ref.copy()
        g[i], g[j] = g[j], g[i]
        exact.append(slow_mu_ap(g.tolist()))
    assert row["exact"] == pytest.approx(np.mean(exact), abs=1e-12)
    assert row["sd"] == pytest.approx(np.std(exact), abs=1e-12)
    assert row["z"] == pytest.approx((row["simulated"] - np.mean(exact)) / (np.std(exact) / math.sqrt(4000)))
    assert abs(row["z"]) < 4  # the sampler is right: z behaves like a standard normal


def test_describe_one_swap_states_what_the_numbers_say():
    good = pd.DataFrame({"distribution": "uniform", "levels": [2, 10], "metric": "muAP",
                         "draws": 100, "z": [0.5, -1.2]})
    text = mg.describe_one_swap(good)
    assert "largest |z| is 1.20" in text and "0 exceed 3" in text and "agree" in text
    bad = good.assign(z=[0.5, 4.5])
    text = mg.describe_one_swap(bad)
    assert "1 exceed 3" in text and "Not every simulated mean" in text
    assert "agree with the exact" not in text


# ---------------------------------------------------------------- rating scales in words
def test_rating_scale_names_the_lowest_relevant_rating():
    whole = _ratings([1.0, 2.0, 3.0, 4.0, 5.0, 5.0])
    f = mg.rating_scale(whole)
    assert f == {"lowest": 1.0, "highest": 5.0, "step": 1.0, "levels": 5, "lowest_relevant": 2.0}
    half = mg.rating_scale(_ratings([0.5, 1.0, 3.5, 5.0]))
    assert half["lowest_relevant"] == 1.0 and half["step"] == 0.5
    text = mg.describe_rating_scale("ML", whole)
    assert "from 1 to 5" in text and "grades from 0 to 4" in text and "rating of 2 or more" in text
    with pytest.raises(ValueError, match="two distinct"):
        mg.rating_scale(_ratings([3.0, 3.0]))


def test_two_stars_are_relevant_at_the_lowest_mu_ap_threshold():
    # a user who rated 2 stars and 5 stars (grades 1 and 4): µAP's thresholds are 1 and 4, with
    # weights 1/4 and 3/4; at the lowest one the 2-star item counts as relevant
    grades = mg.to_grades(_ratings([5.0, 1.0, 2.0]), irrelevant=1.0)["rating"].to_numpy()
    assert grades.tolist() == [4.0, 0.0, 1.0]
    w = mg.level_weights(grades)
    assert w.to_dict() == {1.0: 0.25, 4.0: 0.75}
    ap_low = (1 / 1 + 2 / 3) / 2  # relevant at ranks 1 and 3
    ap_high = 1.0
    mu = score_rankings(grades, ["muAP"])["muAP"][0]
    assert mu == pytest.approx(0.25 * ap_low + 0.75 * ap_high, abs=1e-12)


def test_relative_changes_order_agreement_and_closest_gap_by_hand():
    res = pd.DataFrame({"dataset": "d", "metric": "m",
                        "scale": ["native"] * 3 + ["doubled"] * 3,
                        "system": ["a", "b", "c"] * 2,
                        "value": [0.5, 0.6, 0.9, 0.55, 0.54, 0.9]})
    ch = mg.relative_changes(res).set_index("system")["relative_change"]
    assert ch.to_dict() == pytest.approx({"a": 0.1, "b": -0.1, "c": 0.0})
    tau = mg.order_agreement(res)
    assert tau["tau"].iloc[0] == pytest.approx(1 / 3)  # one discordant pair of three
    gap, low, high = mg.closest_pair_gap(res[res.scale == "native"].set_index("system")["value"])
    assert (low, high) == ("a", "b") and gap == pytest.approx(0.2)


def test_describe_reordering_says_whether_the_order_changes():
    base = pd.DataFrame({"dataset": "d", "metric": "nDCG(gain=exp)",
                         "scale": ["native"] * 3 + ["doubled"] * 3,
                         "system": ["a", "b", "c"] * 2})
    moved = base.assign(value=[0.5, 0.6, 0.9, 0.55, 0.54, 0.9])
    text = mg.describe_reordering(moved)
    assert "by at most 10.0%" in text and "smaller than the smallest gap" in text
    assert "the order of the systems changes" in text and "τ = 0.333" in text
    kept = base.assign(value=[0.5, 0.6, 0.9, 0.51, 0.61, 0.91])
    text = mg.describe_reordering(kept)
    assert "no change of scale reorders the systems" in text


# ---------------------------------------------------------------- virtual users: how levels are cut
def test_quantise_levels_global_scope_by_hand():
    scores = pd.DataFrame({"user": [1, 1, 1, 2, 2], "score": [0.0, 1.0, 2.0, 6.0, 8.0]})
    # one range 0..8 for everybody, 4 levels of width 2
    assert mg.quantise_levels(scores, 4, scope="global").tolist() == [0, 0, 1, 3, 3]
    assert mg.quantise_levels(scores, 4).tolist() == [0, 2, 3, 0, 3]  # per user
    assert mg.quantise_levels(scores, None, scope="global").tolist() == [0, 1, 2, 6, 8]
    grades = mg.virtual_judgments(scores.assign(item=range(5)), 4, scope="global")
    assert mg.levels_per_user(grades).to_dict() == {1: 2, 2: 1}
    with pytest.raises(ValueError, match="scope"):
        mg.quantise_levels(scores, 4, scope="item")


def test_per_user_results_average_to_the_means():
    scores = _virtual_scores(seed=5)
    means = mg.virtual_user_study(scores, "ref", [3, None])
    per_user = mg.virtual_user_study(scores, "ref", [3, None], per_user=True)
    again = per_user.groupby(["levels", "system", "metric"])["value"].mean()
    np.testing.assert_allclose(means.set_index(["levels", "system", "metric"])["value"].loc[again.index],
                               again, atol=1e-12)
    assert per_user["user"].nunique() == 6


def test_pearson_over_users_against_numpy():
    rng = np.random.default_rng(4)
    users = np.repeat(np.arange(30), 5)
    x = rng.normal(size=users.size)
    y = 0.7 * x + rng.normal(size=users.size)
    y[3] = np.nan
    r, reps = mg.pearson_over_users(x, y, users, n_resamples=50, seed=1)
    ok = ~np.isnan(y)
    assert r == pytest.approx(np.corrcoef(x[ok], y[ok])[0, 1], abs=1e-12)
    assert reps.shape == (50,)
    # a replicate is the correlation of the pairs of the drawn users, repeated as often as drawn
    counts = np.zeros((1, 30), dtype=int)
    counts[0, [0, 1, 5]] = [1, 2, 3]
    _, one = mg.pearson_over_users(x, y, users, counts=counts)
    rows = np.concatenate([np.flatnonzero(users == u) for u in (0, 1, 1, 5, 5, 5)])
    rows = rows[ok[rows]]
    assert one[0] == pytest.approx(np.corrcoef(x[rows], y[rows])[0, 1], abs=1e-12)
    with pytest.raises(ValueError, match="counts"):
        mg.pearson_over_users(x, y, users, counts=np.ones((2, 3)))
