"""The one bootstrap over users, checked against explicit resampling and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from recmeta.metaeval import bootstrap


def test_resample_counts_are_draws_of_users_with_replacement():
    counts = bootstrap.resample_counts(50, 400, seed=3)
    assert counts.shape == (400, 50) and (counts.sum(axis=1) == 50).all()
    # each user is drawn once per replicate on average (multinomial with equal shares)
    assert abs(counts.mean() - 1.0) < 0.02
    np.testing.assert_array_equal(bootstrap.resample_counts(50, 400, seed=3), counts)


def test_bootstrap_sums_equals_explicit_resampling_and_ignores_the_batch():
    rng = np.random.default_rng(0)
    s = rng.random((30, 2)) + 0.1
    ratio = lambda m: m[:, 0] / m[:, 1]  # noqa: E731 - a statistic of summed columns
    value, reps = bootstrap.bootstrap_sums(s, ratio, n_resamples=100, seed=5, batch=7)
    assert value == pytest.approx(s[:, 0].sum() / s[:, 1].sum())
    counts = bootstrap.resample_counts(30, 100, np.random.default_rng(5))
    explicit = [
        np.repeat(s, c, axis=0)[:, 0].sum() / np.repeat(s, c, axis=0)[:, 1].sum() for c in counts
    ]
    np.testing.assert_allclose(reps, explicit, rtol=1e-12)
    _, again = bootstrap.bootstrap_sums(s, ratio, n_resamples=100, seed=5, batch=256)
    np.testing.assert_allclose(reps, again, rtol=1e-12)  # same draws; BLAS may sum in another order
    with pytest.raises(ValueError, match="at least two users"):
        bootstrap.bootstrap_sums(s[:1], ratio, n_resamples=10, seed=0)


def test_percentile_band_is_numpys_quantiles_of_the_finite_replicates():
    reps = np.array([np.nan, 1.0, 2.0, 3.0, 4.0, np.inf])
    assert bootstrap.replicate_interval(reps, 0.5, point=None) == pytest.approx((1.75, 3.25))
    with pytest.raises(ValueError, match="no finite replicate"):
        bootstrap.replicate_interval([np.nan], point=None)
    with pytest.raises(ValueError, match="needs the point"):
        bootstrap.replicate_interval(reps, point=None, acceleration=0.1)
    with pytest.raises(ValueError, match="point estimate must be finite"):
        bootstrap.replicate_interval(reps, point=np.nan)


def _loo_means(x: np.ndarray) -> np.ndarray:
    return (x.sum() - x) / (x.size - 1)


def _pearson(x, y, axis=-1):
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def test_bca_and_percentile_are_scipys_on_the_same_replicates():
    rng = np.random.default_rng(7)
    x = rng.exponential(size=40)  # a skewed mean: z0 and the acceleration are both nonzero
    for method in ("BCa", "percentile"):
        res = stats.bootstrap((x,), np.mean, n_resamples=1999, method=method, rng=1)
        reps = res.bootstrap_distribution
        if method == "BCa":
            a = bootstrap.jackknife_acceleration(_loo_means(x))
            ours = bootstrap.replicate_interval(reps, point=x.mean(), acceleration=a)
        else:
            ours = bootstrap.replicate_interval(reps, point=None)
        ref = res.confidence_interval
        assert ours == pytest.approx((ref.low, ref.high), rel=1e-12), method
    # a correlation near its bound 1 (paired data: the jackknife leaves out one pair)
    xy = rng.multivariate_normal([0, 0], [[1, 0.95], [0.95, 1]], size=25)
    res = stats.bootstrap(
        (xy[:, 0], xy[:, 1]), _pearson, paired=True, n_resamples=1999, method="BCa", rng=2
    )
    keep = ~np.eye(25, dtype=bool)
    loo = np.array([_pearson(xy[k, 0], xy[k, 1]) for k in keep])
    ours = bootstrap.replicate_interval(
        res.bootstrap_distribution,
        point=float(_pearson(xy[:, 0], xy[:, 1])),
        acceleration=bootstrap.jackknife_acceleration(loo),
    )
    ref = res.confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), rel=1e-12)


def test_bc_levels_by_hand_ties_counted_half_and_the_hull_beyond_the_replicates():
    reps = np.arange(1000) / 999.0  # quantile q of these replicates is q itself
    point = reps[699] + 1e-9  # 700 replicates below: z0 = Φ⁻¹(0.7) = 0.5244
    low, high = bootstrap.replicate_interval(reps, 0.9, point=point)
    z0 = 0.524400512708041  # Φ⁻¹(0.7), from tables
    # ends at Φ(2 z0 ∓ 1.6449): Φ(-0.5961) = 0.2756 and Φ(2.6937) = 0.99647
    assert (low, high) == pytest.approx((0.27556, 0.99647), abs=2e-5)
    assert 2 * z0 - 1.6448536 == pytest.approx(-0.5960526)
    # ties with the point count half: 25 below, 50 at it, 25 above -> share 0.5, z0 = 0
    tied = np.r_[np.zeros(25), np.ones(50), np.full(25, 2.0)]
    assert bootstrap.replicate_interval(tied, point=1.0) == bootstrap.replicate_interval(
        tied, point=None
    )
    # a point beyond every replicate: the hull of the point and the replicates
    assert bootstrap.replicate_interval([2.0, 3.0, 5.0], point=1.0) == (1.0, 5.0)
    assert bootstrap.replicate_interval([2.0, 3.0, 5.0], point=6.0) == (2.0, 6.0)


def test_jackknife_of_sums_leaves_each_user_out():
    rng = np.random.default_rng(3)
    s = rng.random((12, 2)) + 0.1
    ratio = lambda m: m[:, 0] / m[:, 1]  # noqa: E731 - a statistic of summed columns
    loo = bootstrap.jackknife_sums(s, ratio)
    explicit = [np.delete(s, u, 0)[:, 0].sum() / np.delete(s, u, 0)[:, 1].sum() for u in range(12)]
    np.testing.assert_allclose(loo, explicit, rtol=1e-12)
    # the mean's acceleration is the skewness of the data over 6 √n (Efron 1987, §7)
    x = rng.exponential(size=50)
    d = x - x.mean()
    skew = (d**3).mean() / (d**2).mean() ** 1.5
    assert bootstrap.jackknife_acceleration(_loo_means(x)) == pytest.approx(
        skew / (6 * np.sqrt(50))
    )
    assert bootstrap.jackknife_acceleration(np.ones(5)) == 0.0
    with pytest.raises(ValueError, match="two finite"):
        bootstrap.jackknife_acceleration([1.0, np.nan])


def test_sign_pvalues_invert_the_bc_interval():
    rng = np.random.default_rng(11)
    for shift, point in ((0.3, 0.1), (0.1, 0.3), (-0.2, -0.25)):
        reps = rng.normal(shift, 0.2, 4000)
        p_pos, p_neg = bootstrap.sign_pvalues(reps, point=point)
        for alpha in np.linspace(0.005, 0.45, 60):
            # the one-sided BC bound at 1 − alpha is an end of the two-sided 1 − 2 alpha interval
            low, high = bootstrap.replicate_interval(reps, 1 - 2 * alpha, point=point)
            if abs(alpha - p_pos) > 2e-3:
                assert (low > 0) == (p_pos < alpha), (shift, point, alpha, p_pos)
            if abs(alpha - p_neg) > 2e-3:
                assert (high < 0) == (p_neg < alpha), (shift, point, alpha, p_neg)
    # centred replicates: the percentile test (1 + #{θ* ≤ 0}) / (B + 1)
    reps = np.r_[-0.1, np.full(49, 0.05), np.full(50, 0.3)]  # 50 below 0.1, 50 above
    assert bootstrap.sign_pvalues(reps, point=0.1)[0] == pytest.approx(2 / 101)
    # never below 1/(B + 1): 80 of 100 replicates below the point 0.35, none at or below 0
    reps = np.r_[np.linspace(0.01, 0.3, 80), np.linspace(0.4, 0.5, 20)]
    assert bootstrap.sign_pvalues(reps, point=0.35)[0] == pytest.approx(1 / 101)
    # 5 of 100 at or below 0, 80 below the point: t = Φ(−1.6449 − 2 · 0.8416) = Φ(−3.328)
    reps = np.r_[np.linspace(-0.1, 0.0, 5), np.linspace(0.01, 0.3, 75), np.linspace(0.4, 0.5, 20)]
    t = stats.norm.cdf(stats.norm.ppf(0.05) - 2 * stats.norm.ppf(0.8))
    assert t == pytest.approx(0.000437, abs=1e-6)
    assert bootstrap.sign_pvalues(reps, point=0.35)[0] == pytest.approx((1 + 100 * t) / 101)
    # beyond every replicate: the hull's tests
    assert bootstrap.sign_pvalues([0.2, 0.3], point=0.1) == (1 / 3, 1.0)
    assert bootstrap.sign_pvalues([0.2, 0.3], point=-0.1) == (1.0, 1.0)


def test_bc_covers_a_correlation_near_1_where_the_percentile_interval_leans():
    """Pearson's r of 20 pairs from a bivariate normal with ρ = 0.95, bounded at 1: its
    replicates are skewed towards 0 and the percentile interval lies wholly above ρ far more
    often than wholly below; BC moves the interval back and balances the two misses."""
    rho, n, b, runs = 0.95, 20, 499, 600
    rng = np.random.default_rng(2024)
    miss = {"percentile": np.zeros(2), "BC": np.zeros(2)}
    for _ in range(runs):
        xy = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)
        idx = rng.integers(0, n, (b, n))
        reps = _pearson(xy[idx, 0], xy[idx, 1])
        point = float(_pearson(xy[:, 0], xy[:, 1]))
        for method, p in (("percentile", None), ("BC", point)):
            low, high = bootstrap.replicate_interval(reps, point=p)
            miss[method] += (rho < low, rho > high)
    cover = {m: 1 - v.sum() / runs for m, v in miss.items()}
    # misses: [interval above ρ, interval below ρ]
    assert cover["BC"] > cover["percentile"], cover
    assert miss["percentile"][0] > 2 * miss["percentile"][1], miss
    assert miss["BC"][0] < 1.6 * miss["BC"][1], miss


def test_scipy_interval_is_scipys_bootstrap_and_flat_rows_collapse():
    rng = np.random.default_rng(1)
    x = np.vstack([rng.random(40), np.full(40, 0.5)])
    low, high = bootstrap.scipy_interval(x, np.mean, n_resamples=999, seed=2, method="BCa")
    ref = stats.bootstrap(
        (x[0],), np.mean, n_resamples=999, method="BCa", rng=np.random.default_rng(2)
    ).confidence_interval
    assert (low[0], high[0]) == pytest.approx((ref.low, ref.high))
    assert low[1] == high[1] == 0.5


def test_an_end_the_replicates_cannot_place_is_marked_open():
    # 99 replicates 0, 1/98, ..., 1; the point above 95 of them: z0 = Φ⁻¹(95/99) = 1.7461
    reps = np.arange(99) / 98.0
    point = reps[94] + 1e-9
    z0 = 1.7461  # Φ⁻¹(0.9596), from tables
    # upper level Φ(2 z0 + 1.96) = Φ(5.45) ≈ 1 − 3e-8 > 99/100: beyond the largest replicate,
    # which is the end given; lower level Φ(2 z0 − 1.96) = Φ(1.532) = 0.9373: inside
    ends = bootstrap.replicate_ends(reps, point=point)
    assert ends.high == 1.0 and ends.high_open and not ends.low_open
    assert ends.low == pytest.approx(0.9373, abs=2e-4)
    assert 2 * z0 - 1.959964 == pytest.approx(1.532, abs=1e-3)
    # replicates centred on the point: no open end at B = 99 (levels 0.025 and 0.975)
    centred = bootstrap.replicate_ends(reps, point=reps[49])
    assert not centred.low_open and not centred.high_open
    # the same skew with 20,000 replicates: the level is still beyond B/(B + 1), since
    # Φ(5.44) lies within 3e-8 of 1; with z0 = 1 it is Φ(3.96) = 0.99996, resolved by B = 99,999
    many = np.arange(20_000) / 19_999.0
    assert bootstrap.replicate_ends(many, point=many[int(0.9596 * 20_000)]).high_open
    more = np.arange(99_999) / 99_998.0
    z1 = bootstrap.replicate_ends(more, point=more[int(0.8413 * 99_999)])  # Φ(1) = 0.8413
    assert not z1.high_open and not z1.low_open
    # the mirror image: the lower end open
    mirror = bootstrap.replicate_ends(-reps, point=-point)
    assert mirror.low == -1.0 and mirror.low_open and not mirror.high_open
    # the hull: the end on the point's side is open, the other is the extreme replicate
    assert bootstrap.replicate_ends([2.0, 3.0, 5.0], point=1.0) == (1.0, 5.0, True, False)
    assert bootstrap.replicate_ends([2.0, 3.0, 5.0], point=6.0) == (2.0, 6.0, False, True)
    # replicate_interval gives the same ends, unmarked; a percentile band is never open
    assert bootstrap.replicate_interval(reps, point=point) == (ends.low, ends.high)
    assert bootstrap.replicate_ends(reps, point=None)[2:] == (False, False)


def test_bootstrap_sums_reuses_an_int_seeds_draws_and_gives_the_same_replicates():
    rng = np.random.default_rng(5)
    s = rng.random((50, 2)) + 0.1
    ratio = lambda m: m[:, 0] / m[:, 1]  # noqa: E731 - a statistic of summed columns
    first = bootstrap.bootstrap_sums(s, ratio, n_resamples=300, seed=11, batch=64)
    again = bootstrap.bootstrap_sums(s, ratio, n_resamples=300, seed=11, batch=64)
    # the same draws from a Generator made of the seed, never memoised
    fresh = bootstrap.bootstrap_sums(
        s, ratio, n_resamples=300, seed=np.random.default_rng(11), batch=64
    )
    for out in (again, fresh):
        assert out[0] == first[0] and np.array_equal(out[1], first[1])
    # and the replicates are those of explicit resamples of the users
    counts = bootstrap.resample_counts(50, 300, 11)
    np.testing.assert_allclose(first[1], ratio(counts @ s), rtol=1e-13)


def test_resampled_ranks_equal_scipys_average_ranks():
    resampled_ranks = bootstrap.resampled_ranks
    rng = np.random.default_rng(11)
    for x in (
        rng.integers(0, 30, 400).astype(float),  # many ties
        rng.random(300),  # none
        np.repeat([2.0, 1.0], 50),  # two values
        rng.integers(-5, 5, 200),  # integers
    ):
        idx = rng.integers(0, len(x), size=(64, len(x)))
        assert np.array_equal(resampled_ranks(x, idx), stats.rankdata(x[idx], axis=1))
    x = np.array([1.0, np.nan, 3.0])
    idx = np.array([[0, 2, 2], [1, 0, 0]])
    assert np.array_equal(resampled_ranks(x, idx), stats.rankdata(x[idx], axis=1), equal_nan=True)
    with pytest.raises(ValueError, match="resamples"):
        resampled_ranks(x, idx[0])
