"""The two-level bootstrap of the robustness curves (Valcarce et al. 2020), checked by hand.

Each replicate's τ is rebuilt from a materialised resample: every topic weighted by how often
its user was drawn, the system means computed directly, τ-b from scipy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta.metaeval import bootstrap
from recmeta.metrics import GMEAN_FLOOR
from recmeta.papers import valcarce2020 as v20

N_BOOT, SEED = 6, 7


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(5)
    tests, runs = [], []
    for _ in range(2):
        rows, lists = [], []
        for u in range(40):
            items = rng.choice(60, rng.integers(3, 12), replace=False)
            rows.append(pd.DataFrame({"user": u, "item": items,
                                      "rating": rng.integers(1, 6, items.size) * 1.0}))
            for s in range(5):
                good = items[rng.random(items.size) < 0.2 * s]
                rest = rng.choice(np.setdiff1d(np.arange(70), good), 20 - good.size, replace=False)
                lists.append(pd.DataFrame({"system": f"s{s}", "user": u,
                                           "item": np.r_[good, rest], "rank": np.arange(1, 21)}))
        tests.append(pd.concat(rows))
        runs.append(pd.concat(lists))
    study = v20.pool_folds(tests, runs, threshold=4, max_grade=5)
    subsets = v20.scorer(study, 10)
    masks = {
        "popular": v20.incompleteness_masks(study.test, "popular", [1.0, 0.9, 0.8], 1, seed=1),
        "ratings": v20.incompleteness_masks(study.test, "ratings", [1.0, 0.5], 3, seed=2),
    }
    cr = v20.curve_replicates(subsets, masks, study.topics, n_boot=N_BOOT, seed=SEED)
    return study, subsets, masks, cr


def by_hand(scores: np.ndarray, weights: np.ndarray, how: str) -> np.ndarray:
    """System means of a (systems × topics) matrix with each topic weighted, NaN skipped."""
    x = np.log(np.maximum(scores, GMEAN_FLOOR)) if how == "gmean" else scores
    w = np.where(np.isfinite(x), weights, 0.0)
    mean = np.nansum(np.where(np.isfinite(x), x, 0.0) * w, axis=1) / w.sum(axis=1)
    return np.exp(mean) if how == "gmean" else mean


def replicate_level(study, subsets, keep, b: int, how: str) -> np.ndarray:
    """Each metric's mean over the systems of the means on ``keep``, for replicate ``b``."""
    codes, users = pd.factorize(study.topics["user"])
    counts = bootstrap.resample_counts(len(users), N_BOOT, SEED)[b]
    w = counts[codes].astype(float)[None, :]
    part = subsets.score(keep)
    return np.array([by_hand(part[n], w, how).mean() for n in subsets.metrics])


def replicate_tau(study, subsets, keep, b: int, how: str) -> np.ndarray:
    """τ-b (scipy) per metric between the means on ``keep`` and on the full test set, for the
    users of replicate ``b``."""
    codes, users = pd.factorize(study.topics["user"])
    counts = bootstrap.resample_counts(len(users), N_BOOT, SEED)[b]
    w = counts[codes].astype(float)[None, :]
    full, part = subsets.score(), subsets.score(keep)
    return np.array([stats.kendalltau(by_hand(part[n], w, how), by_hand(full[n], w, how)).statistic
                     for n in subsets.metrics])


@pytest.mark.parametrize("how", ["mean", "gmean"])
def test_deterministic_scheme_resamples_the_users(small, how):
    study, subsets, masks, cr = small
    m = masks["popular"]
    assert cr.deterministic("popular") and list(cr.shares["popular"]) == [1.0, 0.9, 0.8]
    for b in range(N_BOOT):
        for i in (1, 2):
            want = replicate_tau(study, subsets, m.keep[i], b, how)
            got = cr.tau[("popular", how)][b, i]
            np.testing.assert_allclose(got, want, atol=1e-12, equal_nan=True)
            np.testing.assert_allclose(cr.level[("popular", how)][b, i],
                                       replicate_level(study, subsets, m.keep[i], b, how))
        np.testing.assert_allclose(cr.full_level[how][b],
                                   replicate_level(study, subsets, None, b, how))
        assert np.all(cr.tau[("popular", how)][b, 0] == 1.0)  # the full test set


def test_random_scheme_averages_masks_drawn_with_replacement(small):
    study, subsets, masks, cr = small
    m = masks["ratings"]
    assert not cr.deterministic("ratings") and cr.masks["ratings"] == 3
    half = np.flatnonzero(m.share == 0.5)
    seen = np.zeros(len(subsets.metrics), dtype=bool)
    for b in range(N_BOOT):
        per_mask = np.array([replicate_tau(study, subsets, m.keep[j], b, "mean") for j in half])
        got = cr.tau[("ratings", "mean")][b, 1]
        # a mean of three of the masks' values, drawn with replacement
        options = {tuple(np.round(per_mask[list(d)].mean(axis=0), 12))
                   for d in np.ndindex(3, 3, 3)}
        assert tuple(np.round(got, 12)) in options
        seen |= ~np.isclose(got, per_mask.mean(axis=0))
    assert seen.any()  # the masks are resampled, not always all three once


def test_areas_are_trapezoid_means_of_the_replicates(small):
    *_, cr = small
    a = cr.area("popular")
    w = v20.trapezoid_weights(cr.shares["popular"])
    np.testing.assert_allclose(a, np.einsum("bsm,s->bm", cr.tau[("popular", "mean")], w))
    assert a.shape == (N_BOOT, len(cr.metrics))
    assert cr.at("ratings", 0.5).shape == (N_BOOT, len(cr.metrics))
    assert cr.at("ratings", 0.4) is None


def test_max_masks_bounds_the_masks_drawn(small):
    study, subsets, masks, _ = small
    cr = v20.curve_replicates(subsets, {"ratings": masks["ratings"]}, study.topics,
                              n_boot=N_BOOT, seed=SEED, max_masks=2)
    m = masks["ratings"]
    first = np.flatnonzero(m.share == 0.5)[:2]
    for b in range(N_BOOT):
        per_mask = np.array([replicate_tau(study, subsets, m.keep[j], b, "mean") for j in first])
        options = {tuple(np.round(per_mask[list(d)].mean(axis=0), 12)) for d in np.ndindex(2, 2)}
        assert tuple(np.round(cr.tau[("ratings", "mean")][b, 1], 12)) in options


def test_refuses_bad_sizes(small):
    study, subsets, masks, _ = small
    with pytest.raises(ValueError, match="n_boot"):
        v20.curve_replicates(subsets, masks, study.topics, n_boot=1, seed=0)
    with pytest.raises(ValueError, match="max_masks"):
        v20.curve_replicates(subsets, masks, study.topics, n_boot=2, seed=0, max_masks=0)


def test_some_on_hand_p_values():
    from recmeta.ledger import Estimate, Verdict
    from recmeta.ledger import some

    parts = {k: Estimate(v, v - 0.01, v + 0.01) for k, v in (("a", 0.1), ("b", -0.2))}
    # one part clearly shows it (p = 0.001 ≤ 0.05/2): agrees
    out = some(parts, {"a": 0.001, "b": 0.9}, {"a": 0.9, "b": 0.001}, what="parts")
    assert out.verdict is Verdict.AGREES and out.ours is parts["a"] and out.rule == "some sign"
    # 0.03 > 0.05/2: Holm does not establish it, and "a" is not excluded: inconclusive
    out = some(parts, {"a": 0.03, "b": 0.9}, {"a": 0.9, "b": 0.001}, what="parts")
    assert out.verdict is Verdict.INCONCLUSIVE
    # every part excluded: differs
    out = some(parts, {"a": 0.9, "b": 0.9}, {"a": 0.01, "b": 0.02}, what="parts")
    assert out.verdict is Verdict.DIFFERS and out.ours is parts["a"]  # the nearer of equal p
    with pytest.raises(ValueError, match="no p-value"):
        some(parts, {"a": 0.1}, {"a": 0.1, "b": 0.1}, what="parts")


def test_user_sums_equal_a_count_per_row_to_the_last_digit():
    """All rows in one count give, bin by bin, the sums of a count per row (the same order of
    additions), under both means, on a (metrics × systems × topics) stack with unscored topics."""
    from recmeta.papers.valcarce2020.uncertainty import user_sums

    rng = np.random.default_rng(3)
    x = rng.random((3, 4, 50)) * rng.integers(0, 2, size=(3, 4, 50))  # zeros for the floor
    x[:, :, 7] = np.nan
    codes = rng.integers(0, 9, size=50)
    for how in ("mean", "gmean"):
        sums, nums = user_sums(x, codes, 9, how)
        assert sums.shape == nums.shape == (3, 4, 9)
        v = np.log(np.maximum(x, GMEAN_FLOOR)) if how == "gmean" else x
        for m in range(3):
            for s in range(4):
                seen = np.isfinite(v[m, s])
                w = np.where(seen, v[m, s], 0.0)
                np.testing.assert_array_equal(sums[m, s], np.bincount(codes, w, minlength=9))
                np.testing.assert_array_equal(nums[m, s], np.bincount(codes, seen, minlength=9))
    with pytest.raises(ValueError, match="how must be"):
        user_sums(x, codes, 9, "median")
