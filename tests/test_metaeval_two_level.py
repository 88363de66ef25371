"""The two-level bootstrap over users and masks (recmeta.metaeval.two_level) on cases whose
truth is known: a planted population of users and masks, and hand cases of the mask level."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from recmeta.metaeval import bootstrap
from recmeta.metaeval.two_level import TwoLevel


def _planted(rng, n_users, n_masks, sd_user, sd_mask, sd_noise):
    """Per-user values on each mask, y_uj = x_u + z_j + e_uj, all centred on 0 (the truth):
    a user effect, a mask effect shared by the users, and a per-user noise of the mask."""
    x = rng.normal(0, sd_user, n_users)
    z = rng.normal(0, sd_mask, n_masks)
    return x[:, None] + z[None, :] + rng.normal(0, sd_noise, (n_users, n_masks))


def _coverage(n_rep=400, n_users=80, n_masks=30, n_boot=400, sd=(1.0, 0.5, 0.3)):
    """Share of repetitions whose 95 % interval holds the truth (0): the two-level bootstrap's
    BC interval, and a t interval over the masks on all users."""
    rng = np.random.default_rng(2018)
    hit_two = hit_masks = 0
    for r in range(n_rep):
        y = _planted(rng, n_users, n_masks, *sd)  # users × masks
        draws = TwoLevel(n_users, n_boot, seed=r)
        per = bootstrap.weighted_means(y.T, draws.counts)  # B × masks: each mask's mean
        reps = draws.over_groups(lambda j, per=per: per[:, j], [np.arange(n_masks)])[:, 0]
        low, high = bootstrap.replicate_interval(reps, point=float(y.mean()))
        hit_two += low <= 0.0 <= high
        m = y.mean(axis=0)
        half = stats.t.ppf(0.975, n_masks - 1) * m.std(ddof=1) / np.sqrt(n_masks)
        hit_masks += abs(m.mean()) <= half
    return hit_two / n_rep, hit_masks / n_rep


def test_two_level_interval_covers_near_nominal_where_masks_alone_fall_short():
    two, masks_only = _coverage()
    # 400 repetitions: the standard error of a 95 % coverage is about 0.011 (measured: 0.945)
    assert 0.92 <= two <= 0.975, two
    # the users' variation (variance 1/80) is missing from an interval over the masks only
    # (variance 0.25/30): its coverage is near 2Φ(1.96·√(0.0083/0.0209)) − 1 ≈ 0.78
    assert masks_only < 0.85, masks_only
    assert two - masks_only > 0.1


def test_one_mask_per_group_leaves_only_the_users():
    draws = TwoLevel(30, 50, seed=1)
    per = np.random.default_rng(0).normal(size=(1, 50, 3))  # one mask: B × 3 statistics
    np.testing.assert_array_equal(draws.average(per), per[0])


def test_mask_level_draws_among_the_masks_of_each_group():
    draws = TwoLevel(10, 200, seed=3)
    # three masks whose statistic is the same in every replicate: 0, 1 and 5
    level = np.array([0.0, 1.0, 5.0])
    reps = draws.over_groups(lambda j: np.full(200, level[j]), [[0, 1, 2], [2]])
    assert reps.shape == (200, 2)
    np.testing.assert_array_equal(reps[:, 1], 5.0)  # a group of one mask
    # each replicate is the mean of three draws with replacement: a multiple of 1/3 in [0, 5]
    thirds = reps[:, 0] * 3
    np.testing.assert_allclose(thirds, np.round(thirds), atol=1e-9)
    assert reps[:, 0].min() >= 0 and reps[:, 0].max() <= 5
    # mean of the replicates near the mean of the masks (2); variance near (14/3)/3 = 14/9
    assert abs(reps[:, 0].mean() - 2.0) < 0.25
    assert abs(reps[:, 0].var() - 14 / 9) < 0.3
    # not every replicate draws every mask once
    assert np.unique(reps[:, 0]).size > 3


def test_a_group_at_once_draws_as_a_mask_at_a_time():
    per = np.random.default_rng(4).normal(size=(7, 60, 2))  # 7 masks × B × 2 statistics
    groups = [[0, 1, 2], [3, 4, 5, 6], [2]]
    one = TwoLevel(12, 60, seed=5).over_groups(lambda j: per[j], groups)
    asked = []

    def batch(idx):
        asked.append(idx.tolist())
        return per[idx]

    both = TwoLevel(12, 60, seed=5).over_group_batches(batch, groups)
    np.testing.assert_array_equal(both, one)
    assert asked == groups and both.shape == (60, 3, 2)


def test_users_are_those_of_resample_counts_and_nan_is_skipped():
    draws = TwoLevel(25, 40, seed=9)
    np.testing.assert_array_equal(draws.counts, bootstrap.resample_counts(25, 40, 9))
    per = np.ones((2, 40))
    per[0] = np.nan  # the first mask scores nothing in any replicate
    reps = draws.average(per)
    assert np.isnan(reps).sum() > 0  # replicates that drew the first mask twice
    np.testing.assert_array_equal(reps[np.isfinite(reps)], 1.0)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="n_boot"):
        TwoLevel(10, 1, seed=0)
    draws = TwoLevel(10, 5, seed=0)
    with pytest.raises(ValueError, match="replicates"):
        draws.average(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="empty"):
        draws.over_groups(lambda j: np.zeros(5), [[]])
    with pytest.raises(ValueError, match="at least one group"):
        draws.over_groups(lambda j: np.zeros(5), [])
