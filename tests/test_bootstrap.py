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


def test_percentile_interval_is_numpys_quantiles_of_the_finite_replicates():
    reps = np.array([np.nan, 1.0, 2.0, 3.0, 4.0, np.inf])
    assert bootstrap.percentile_interval(reps, 0.5) == pytest.approx((1.75, 3.25))
    with pytest.raises(ValueError, match="no finite replicate"):
        bootstrap.percentile_interval([np.nan])


def test_scipy_interval_is_scipys_bootstrap_and_flat_rows_collapse():
    rng = np.random.default_rng(1)
    x = np.vstack([rng.random(40), np.full(40, 0.5)])
    low, high = bootstrap.scipy_interval(x, np.mean, n_resamples=999, seed=2, method="BCa")
    ref = stats.bootstrap(
        (x[0],), np.mean, n_resamples=999, method="BCa", rng=np.random.default_rng(2)
    ).confidence_interval
    assert (low[0], high[0]) == pytest.approx((ref.low, ref.high))
    assert low[1] == high[1] == 0.5
