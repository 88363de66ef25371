"""Permutation test against exact enumeration; t-test, Wilcoxon, Holm and DP against independent computations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from recmeta.metaeval import permutation_counts as counts, significance as sg

B = 100_000


def _exact_p(x: np.ndarray, y: np.ndarray) -> float:
    """Exact two-sided randomisation p-value by swapping the two systems' scores for every
    subset of users (all 2^n relabellings), statistic |mean(x') - mean(y')|, compared in exact
    rational arithmetic (scores are multiples of 1/60)."""
    xi = np.rint(np.asarray(x) * 60).astype(np.int64)
    yi = np.rint(np.asarray(y) * 60).astype(np.int64)
    observed = abs(int(xi.sum()) - int(yi.sum()))
    extreme = 0
    for swap in itertools.product([False, True], repeat=xi.size):
        s = np.array(swap)
        x2 = np.where(s, yi, xi)
        y2 = np.where(s, xi, yi)
        extreme += abs(int(x2.sum()) - int(y2.sum())) >= observed
    return extreme / 2**xi.size


def _mc_tolerance(p: float, n: int = B) -> float:
    """Five Monte-Carlo standard errors plus the (1 + b)/(1 + B) offset."""
    return 5 * np.sqrt(max(p * (1 - p), 1 / n) / n) + 2 / n


@pytest.mark.parametrize("n_users", [6, 9, 12])
def test_permutation_p_matches_exact_enumeration(n_users):
    rng = np.random.default_rng(n_users)
    # discrete scores (multiples of 1/60) so that many flipped sums tie with the observed one
    base = rng.integers(0, 40, size=n_users)
    scores = np.stack([base + rng.integers(-6, 9, size=n_users) + shift for shift in (0, 2, 5, 9)])
    scores = scores / 60
    ia, ib = sg.system_pairs(scores.shape[0])
    got = sg.permutation_test(scores, seed=123)
    for k, (a, b) in enumerate(zip(ia, ib)):
        exact = _exact_p(scores[a], scores[b])
        assert abs(got[k] - exact) <= _mc_tolerance(exact), (a, b, got[k], exact)
    # the p-values span a useful range, so the check is not trivial
    assert got.min() < 0.2 and got.max() > 0.3


def test_permutation_p_matches_scipy_exact_on_continuous_scores():
    rng = np.random.default_rng(5)
    scores = rng.random((3, 11)) + np.array([[0.0], [0.15], [0.3]])
    got = sg.permutation_test(scores, seed=9)
    for k, (a, b) in enumerate(zip(*sg.system_pairs(3))):
        ref = stats.permutation_test(
            (scores[a], scores[b]),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            n_resamples=np.inf,
            alternative="two-sided",
        )
        assert abs(got[k] - ref.pvalue) <= _mc_tolerance(ref.pvalue)


def test_permutation_test_is_seeded():
    rng = np.random.default_rng(0)
    scores = rng.random((4, 30))
    a = sg.permutation_test(scores, seed=1, n_permutations=5000, chunk_size=700)
    b = sg.permutation_test(scores, seed=1, n_permutations=5000, chunk_size=700)
    c = sg.permutation_test(scores, seed=2, n_permutations=5000, chunk_size=700)
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


def test_identical_systems_give_one_and_clear_winners_the_floor():
    rng = np.random.default_rng(1)
    x = rng.random(200)
    scores = np.stack([x, x, x + 0.5])
    p = sg.permutation_test(scores, seed=0, n_permutations=2000)
    assert p[0] == 1.0  # pair (0, 1): identical
    np.testing.assert_array_equal(p[1:], 1 / 2001)  # (0, 2) and (1, 2): every user differs by +0.5


def test_custom_pairs_and_chunking_agree_with_default():
    rng = np.random.default_rng(2)
    scores = rng.random((5, 40))
    full = sg.permutation_test(scores, seed=4, n_permutations=3000, chunk_size=3000)
    chunked = sg.permutation_test(scores, seed=4, n_permutations=3000, chunk_size=7)
    np.testing.assert_array_equal(full, chunked)
    np.testing.assert_array_equal(full, sg.permutation_test(scores, seed=4, n_permutations=3000))
    ia, ib = sg.system_pairs(5)
    some = sg.permutation_test(scores, seed=4, n_permutations=3000, pairs=(ia[3:6], ib[3:6]))
    np.testing.assert_array_equal(some, full[3:6])


def test_null_p_values_are_roughly_uniform():
    """Under the null (exchangeable labels) the test rejects at about the nominal rate."""
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(30, 60))  # 435 pairs, no real difference
    p = sg.permutation_test(scores, seed=5, n_permutations=2000)
    assert 0.02 < (p <= 0.05).mean() < 0.09
    assert 0.4 < p.mean() < 0.6


def test_t_test_and_wilcoxon_match_scipy_pair_by_pair():
    rng = np.random.default_rng(4)
    scores = np.round(rng.random((4, 25)), 1)
    scores[3] = scores[2]  # identical pair: undefined for both tests
    pt = sg.paired_t_test(scores)
    pw = sg.wilcoxon_test(scores)
    for k, (a, b) in enumerate(zip(*sg.system_pairs(4))):
        if (a, b) == (2, 3):
            assert np.isnan(pt[k]) and np.isnan(pw[k])
            continue
        assert pt[k] == pytest.approx(stats.ttest_rel(scores[a], scores[b]).pvalue)
        assert pw[k] == pytest.approx(stats.wilcoxon(scores[a], scores[b]).pvalue)


def test_holm_hand_worked():
    # sorted: 0.005 x4 = 0.02; 0.01 x3 = 0.03; 0.03 x2 = 0.06; 0.04 x1 = 0.04 -> max(0.06, 0.04)
    p = [0.01, 0.04, 0.03, 0.005]
    np.testing.assert_allclose(sg.holm(p), [0.03, 0.06, 0.06, 0.02])
    assert sg.count_significant(p, 0.05) == 2
    assert sg.count_significant(p, 0.05, adjust=None) == 4


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30),
    st.sampled_from([0.01, 0.05, 0.1]),
)
def test_holm_rejections_match_the_sequential_procedure(p, alpha):
    """Holm (1979) as a step-down loop: reject the smallest p while p_(i) <= alpha / (m - i)."""
    m = len(p)
    rejected = 0
    for i, value in enumerate(sorted(p)):
        if value <= alpha / (m - i):
            rejected += 1
        else:
            break
    # the adjusted p-values reproduce the procedure (up to rounding at the boundary)
    adjusted = sg.holm(p)
    tight = [v for i, v in enumerate(sorted(p)) if np.isclose(v * (m - i), alpha)]
    if not tight:
        assert int((adjusted <= alpha).sum()) == rejected
    assert (adjusted >= np.asarray(p)).all() and (adjusted <= 1).all()


def test_curve_and_discriminative_power():
    p = np.array([0.2, 0.7, 0.01, 0.5])
    np.testing.assert_array_equal(sg.p_value_curve(p), [0.7, 0.5, 0.2, 0.01])
    assert sg.discriminative_power(p) == pytest.approx(1.41)


def test_pairwise_tests_frame():
    rng = np.random.default_rng(6)
    scores = rng.random((3, 20))
    f = sg.pairwise_tests(scores, ["a", "b", "c"], seed=0, n_permutations=1000)
    assert list(zip(f["a"], f["b"])) == [("a", "b"), ("a", "c"), ("b", "c")]
    np.testing.assert_allclose(f["mean_diff"][0], scores[0].mean() - scores[1].mean())
    np.testing.assert_allclose(f["p_holm"], sg.holm(f["p_permutation"]))


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="NaN"):
        sg.permutation_test(np.array([[0.1, np.nan], [0.2, 0.3]]), seed=0)
    with pytest.raises(ValueError, match="systems × users"):
        sg.permutation_test(np.ones(3), seed=0)
    with pytest.raises(ValueError, match="two systems"):
        sg.permutation_test(np.ones((1, 3)), seed=0)
    with pytest.raises(ValueError, match="n_permutations"):
        sg.permutation_test(np.ones((2, 3)), seed=0, n_permutations=0)
    with pytest.raises(ValueError, match="pair indices"):
        sg.permutation_test(np.ones((2, 3)), seed=0, pairs=([0], [2]))
    with pytest.raises(ValueError, match="NaN"):
        sg.holm([0.1, np.nan])
    with pytest.raises(ValueError, match="adjust"):
        sg.count_significant([0.1], adjust="bonferroni")


def test_evaluated_users_drops_only_unscored_users():
    a = np.array([[0.1, np.nan, 0.3], [0.2, np.nan, 0.1]])
    np.testing.assert_array_equal(sg.evaluated_users(a), [[0.1, 0.3], [0.2, 0.1]])
    with pytest.raises(ValueError, match="some systems but not others"):
        sg.evaluated_users(np.array([[0.1, np.nan], [0.2, 0.3]]))


def test_pvalue_table_matches_the_single_tests():
    rng = np.random.default_rng(8)
    m1 = rng.random((3, 30))
    m2 = rng.random((3, 30))
    m2[:, 4] = np.nan  # an unevaluated user
    table = sg.pvalue_table(
        {"P@10": m1, "RR": m2},
        ["x", "y", "z"],
        seed=3,
        n_permutations=2000,
        tests=("permutation", "t", "wilcoxon"),
    )
    assert len(table) == 2 * 3 * 3
    perm = table[(table.metric == "RR") & (table.test == "permutation")]
    expected = sg.permutation_test(np.delete(m2, 4, axis=1), seed=3, n_permutations=2000)
    np.testing.assert_array_equal(perm["p"], expected)
    t = table[(table.metric == "P@10") & (table.test == "t")]
    np.testing.assert_allclose(t["p"], sg.paired_t_test(m1))
    assert list(zip(t["a"], t["b"])) == [("x", "y"), ("x", "z"), ("y", "z")]
    with pytest.raises(ValueError, match="unknown test"):
        sg.pvalue_table({"P@10": m1}, ["x", "y", "z"], seed=0, tests=("bootstrap",))


def test_permutation_counts_match_the_numpy_count_of_the_same_flips():
    """The compiled count of extreme permutations equals ``np.abs(total - 2 F @ D) >= threshold``
    summed in numpy over the same sign flips (the stream of raw words the module documents), on
    scores with many ties and more pairs than one block of the compiled pass."""
    rng = np.random.default_rng(11)
    scores = rng.integers(0, 4, size=(40, 70)) / 3.0  # 780 pairs, many zero differences
    n_perm = 1500
    got = sg.permutation_test(scores, seed=8, n_permutations=n_perm, chunk_size=400)
    ia, ib = sg.system_pairs(40)
    d = (scores[ia] - scores[ib]).T
    total = d.sum(axis=0)
    threshold = np.abs(total) - sg.TIE_TOLERANCE * np.abs(d).sum(axis=0)
    words = np.random.default_rng(8).bit_generator.random_raw(n_perm * 2).astype("<u8")
    flips = np.unpackbits(words.reshape(n_perm, 2).view(np.uint8), axis=1, count=70)
    hits = (np.abs(total - 2.0 * (flips.astype(np.float64) @ d)) >= threshold).sum(axis=0)
    np.testing.assert_array_equal(got, (hits + 1) / (n_perm + 1))
    assert (got == 1.0).any() and (got < 0.01).any()  # ties counted, and clear differences


def test_permutation_tests_stacked_equal_one_call_per_matrix():
    """Matrices of the same shape share one call (and its sign flips); each p-value is that of
    its own call with the same seed, whatever the matrices beside it."""
    rng = np.random.default_rng(12)
    mats = {
        "a": rng.integers(0, 5, size=(4, 50)) / 4.0,  # ties: many zero differences
        "b": rng.random((4, 50)),
        "c": rng.random((4, 49)),  # another number of users: a call of its own
        "d": rng.random((3, 50)),  # another number of systems
    }
    got = sg.permutation_tests(mats, seed=21, n_permutations=3000)
    assert list(got) == ["a", "b", "c", "d"]
    for name, m in mats.items():
        np.testing.assert_array_equal(
            got[name], sg.permutation_test(m, seed=21, n_permutations=3000)
        )
    with pytest.raises(ValueError, match="NaN"):
        sg.permutation_tests({"x": np.array([[0.1, np.nan], [0.2, 0.3]])}, seed=0)


def test_permutation_by_system_equals_by_pair_even_near_ties():
    """With more pairs than systems the flipped sums come from the systems' scores; the pairs
    whose rounding could change a count (here two systems a millionth apart on one user of
    scores near 1000, every flip a tie) are counted from their differences: the p-values are
    those of one call per pair, which takes the differences."""
    rng = np.random.default_rng(13)
    scores = rng.random((6, 60)) * 1000
    scores[1] = scores[0]
    scores[1, 0] += 1e-6
    scores[2] = rng.integers(0, 3, size=60) / 2  # ties of another kind
    scores[3] = scores[2]
    scores[3, :5] = 1 - scores[3, :5]
    got = sg.permutation_test(scores, seed=5, n_permutations=4000, chunk_size=999)
    ia, ib = sg.system_pairs(6)
    one = [
        sg.permutation_test(scores, seed=5, n_permutations=4000, pairs=([a], [b]))[0]
        for a, b in zip(ia, ib, strict=True)
    ]
    np.testing.assert_array_equal(got, one)
    assert got[0] == 1.0  # (0, 1): every flip ties with the observed difference
    d = scores[0] - scores[1]
    margin = counts.system_margin(np.ascontiguousarray(scores.T), ia[:1], ib[:1], np.abs(d).sum())
    assert margin[0] > sg.TIE_TOLERANCE * np.abs(d).sum()  # so the pair was counted by pair
