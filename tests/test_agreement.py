"""Kendall's tau, tau matrices, aggregation and robustness curves against scipy and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from recmeta.metaeval import agreement as ag


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 6), min_size=n, max_size=n),
            st.lists(st.integers(0, 6), min_size=n, max_size=n),
        )
    )
)
def test_tau_b_matches_scipy_with_ties(xy):
    x, y = (np.array(v, dtype=float) for v in xy)
    expected = stats.kendalltau(x, y).statistic
    got = ag.kendall_tau(x, y)
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_tau_is_vectorised_over_samples():
    rng = np.random.default_rng(0)
    reference = rng.random(20)
    samples = reference + rng.normal(0, 0.1, size=(300, 20))
    samples[:5] = np.round(samples[:5], 1)  # some ties
    got = ag.kendall_tau(samples, reference)
    assert got.shape == (300,)
    expected = [stats.kendalltau(s, reference).statistic for s in samples]
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_tau_hand_worked():
    # two concordant pairs and one discordant pair: (2 - 1) / 3
    assert ag.kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert ag.kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)
    assert np.isnan(ag.kendall_tau([1, 1, 1], [1, 2, 3]))


def test_tau_refuses_bad_input():
    with pytest.raises(ValueError, match="same systems"):
        ag.kendall_tau([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="NaN"):
        ag.kendall_tau([1, np.nan, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="two systems"):
        ag.kendall_tau([1], [1])


def test_tau_matrix_against_scipy():
    rng = np.random.default_rng(1)
    scores = rng.random((4, 12))
    scores[3] = scores[0] ** 2  # same ordering as row 0
    m = ag.tau_matrix(scores, ["P", "R", "MAP", "P2"])
    assert list(m.index) == ["P", "R", "MAP", "P2"]
    np.testing.assert_allclose(np.diag(m), 1.0)
    np.testing.assert_allclose(m.to_numpy(), m.to_numpy().T)
    assert m.loc["P", "P2"] == pytest.approx(1.0)
    assert m.loc["R", "MAP"] == pytest.approx(stats.kendalltau(scores[1], scores[2]).statistic)


def test_mean_band_is_the_t_interval():
    rng = np.random.default_rng(4)
    v = rng.normal(size=17)
    centre, low, high = ag.mean_band(v, 0.9)
    lo, hi = stats.t.interval(0.9, 16, loc=v.mean(), scale=stats.sem(v))
    assert centre == pytest.approx(v.mean())
    assert (low, high) == pytest.approx((lo, hi))


def test_robustness_curve_by_hand():
    reference = np.array([1.0, 2.0, 3.0, 4.0])
    scores = np.array(
        [
            [1.0, 2.0, 3.0, 4.0],  # share 1.0: tau 1
            [1.0, 2.0, 3.0, 4.0],  # share 0.5: tau 1
            [2.0, 1.0, 3.0, 4.0],  # share 0.5: one swap -> 4/6
        ]
    )
    curve = ag.robustness_curve(scores, reference, [1.0, 0.5, 0.5])
    assert list(curve["share"]) == [1.0, 0.5]
    assert list(curve["samples"]) == [1, 2]
    assert curve["tau"].tolist() == pytest.approx([1.0, (1 + 4 / 6) / 2])
    half = stats.t.ppf(0.975, 1) * np.std([1, 4 / 6], ddof=1) / np.sqrt(2)
    assert curve["high"][1] - curve["tau"][1] == pytest.approx(half)


def test_robustness_curves_stack_metrics():
    rng = np.random.default_rng(5)
    reference = rng.random((2, 6))
    scores = reference[None] + rng.normal(0, 0.05, size=(8, 2, 6))
    share = np.repeat([1.0, 0.5], 4)
    curves = ag.robustness_curves(scores, reference, share, ["P@100", "RR"])
    assert list(curves["metric"]) == ["P@100", "P@100", "RR", "RR"]
    one = ag.robustness_curve(scores[:, 1], reference[1], share)
    np.testing.assert_allclose(curves.loc[curves.metric == "RR", "tau"], one["tau"])
    with pytest.raises(ValueError, match="label per metric"):
        ag.robustness_curves(scores, reference, share, ["P@100"])


def test_nan_kendall_tau_skips_missing_and_matches_scipy():
    rng = np.random.default_rng(6)
    x = rng.random((7, 5, 9))
    y = rng.random(9)
    x[2, 3, 4] = np.nan  # a resample that left one system without a scored user
    got = ag.nan_kendall_tau(x, y)
    assert got.shape == (7, 5)
    assert np.isnan(got[2, 3]) and np.isfinite(np.delete(got.ravel(), 2 * 5 + 3)).all()
    for i, j in [(0, 0), (2, 2), (6, 4)]:
        assert got[i, j] == pytest.approx(stats.kendalltau(x[i, j], y).statistic, abs=1e-12)
    # without missing scores it is kendall_tau, to the last digit
    np.testing.assert_array_equal(ag.nan_kendall_tau(x[0], y), ag.kendall_tau(x[0], y))
    np.testing.assert_array_equal(ag.nan_kendall_tau([1.0, 2.0], [np.nan, 1.0]), np.nan)
    # with ties on either side (scores on a coarse grid) and one side all tied: still kendall_tau
    tied = rng.integers(0, 3, size=(200, 6)).astype(float)
    ref = rng.integers(0, 3, size=(200, 6)).astype(float)
    tied[7] = 1.0  # every system tied: τ-b undefined
    np.testing.assert_array_equal(ag.nan_kendall_tau(tied, ref), ag.kendall_tau(tied, ref))
    assert np.isnan(ag.nan_kendall_tau(tied, ref)[7])
    with pytest.raises(ValueError, match="at least two systems"):
        ag.nan_kendall_tau([1.0], [2.0])


def test_tau_against_a_reference_is_kendall_tau_to_the_last_digit():
    rng = np.random.default_rng(9)
    ref = rng.integers(0, 4, size=(50, 3, 12)).astype(float)  # ties within the reference
    ref[4, 1] = 2.0  # a reference ordering that ties every system
    ref[9, 0, 5] = np.nan  # and one with a missing score
    against = ag.TauAgainst(ref)
    for k in range(3):
        x = rng.integers(0, 5, size=ref.shape).astype(float)
        x[rng.random(ref.shape[:-1]) < 0.05, 3] = np.nan
        x[11, 2] = 7.0  # an ordering that ties every system
        got = against(x)
        assert got.shape == (50, 3)
        finite = np.isfinite(x).all(axis=-1) & np.isfinite(ref).all(axis=-1)
        assert not finite[9, 0] and finite.sum() > 100
        f = finite[..., None]
        want = ag.kendall_tau(np.where(f, x, 0.0), np.where(f, ref, 0.0))
        np.testing.assert_array_equal(got[finite], want[finite])  # τ-b, to the last digit
        assert np.isnan(got[~finite]).all()
        assert np.isnan(got[4, 1]) and np.isnan(got[11, 2])  # one side ties every system
    with pytest.raises(ValueError, match="reference's shape"):
        against(ref[0])
    with pytest.raises(ValueError, match="at least two systems"):
        ag.TauAgainst(np.ones((3, 1)))


def test_tau_matrices_against_tau_matrix_and_by_resample():
    rng = np.random.default_rng(8)
    scores = rng.random((4, 10))
    one = ag.tau_matrices(scores)
    np.testing.assert_allclose(one, ag.tau_matrix(scores).to_numpy(), atol=1e-15)
    np.testing.assert_array_equal(one, one.T)
    boot = scores[None] + rng.normal(0, 0.2, size=(3, 4, 10))
    boot[1, 2, 0] = np.nan
    many = ag.tau_matrices(boot)
    assert many.shape == (3, 4, 4)
    np.testing.assert_array_equal(np.diagonal(many, axis1=1, axis2=2), 1.0)
    np.testing.assert_allclose(many[0, 1, 3], stats.kendalltau(boot[0, 1], boot[0, 3]).statistic)
    assert np.isnan(many[1, 2, [0, 1, 3]]).all() and np.isnan(many[1, [0, 1, 3], 2]).all()
    assert np.isfinite(many[1, 0, 1])
    with pytest.raises(ValueError, match="rows × systems"):
        ag.tau_matrices([1.0, 2.0])


def test_offdiag_and_mean_with_others_by_hand():
    t = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.8], [0.2, 0.8, 1.0]])
    assert ag.offdiag(t).tolist() == [0.5, 0.2, 0.8]
    assert ag.mean_with_others(t) == pytest.approx([0.35, 0.65, 0.5])
    stacked = np.stack([t, 2 * t])
    assert ag.offdiag(stacked).shape == (2, 3)
    assert ag.mean_with_others(stacked)[1] == pytest.approx([0.2 + 0.5, 0.5 + 0.8, 0.2 + 0.8])
    with pytest.raises(ValueError, match="square"):
        ag.offdiag(np.ones((2, 3)))
    with pytest.raises(ValueError, match="square"):
        ag.mean_with_others(np.ones((1, 1)))


def test_pairs_ordered_alike_by_hand():
    # pairs (0,1): both say 0 ahead; (0,2): x ties, y puts 2 ahead; (1,2): both put 2 ahead
    alike, pairs = ag.pairs_ordered_alike([0.5, 0.2, 0.5], [0.9, 0.1, 1.0])
    assert (int(alike), pairs) == (2, 3)
    # a pair both sides tie counts as ordered alike
    alike, _ = ag.pairs_ordered_alike([1.0, 1.0], [3.0, 3.0])
    assert int(alike) == 1


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
        )
    )
)
def test_pairs_ordered_alike_counts_every_pair(xy):
    x, y = (np.array(v, dtype=float) for v in xy)
    n = x.size
    expected = sum(
        (x[i] > x[j]) == (y[i] > y[j]) and (x[i] < x[j]) == (y[i] < y[j])
        for i in range(n)
        for j in range(i + 1, n)
    )
    alike, pairs = ag.pairs_ordered_alike(x, y)
    assert pairs == n * (n - 1) // 2
    assert int(alike) == expected
    # leading axes broadcast: the same count for a stack of copies
    stacked, _ = ag.pairs_ordered_alike(np.stack([x, x]), y)
    assert stacked.tolist() == [expected, expected]


def test_pairs_ordered_alike_is_kendall_concordance_without_ties():
    rng = np.random.default_rng(3)
    x, y = rng.permutation(9).astype(float), rng.permutation(9).astype(float)
    alike, pairs = ag.pairs_ordered_alike(x, y)
    assert (2 * int(alike) - pairs) / pairs == pytest.approx(stats.kendalltau(x, y).statistic)


def test_pairs_ordered_alike_refuses_bad_input():
    with pytest.raises(ValueError, match="same systems"):
        ag.pairs_ordered_alike([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="NaN"):
        ag.pairs_ordered_alike([1.0, np.nan], [1.0, 2.0])
