"""Popularity statistics and the shifted power-law simulation (Bellogín et al. 2017, §5.2, §6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta.data import popularity as pop

# items 10, 20, 30, 40 with 3, 2, 2, 1 ratings; item 20 and 30 tie (smaller id first)
TOY = pd.DataFrame(
    {
        "user": [1, 2, 3, 1, 2, 3, 4, 4],
        "item": [10, 10, 10, 30, 30, 20, 20, 40],
        "rating": [5.0, 4.0, 1.0, 5.0, 2.0, 5.0, 5.0, 3.0],
    }
)


def test_item_counts_orders_by_count_then_id():
    c = pop.item_counts(TOY, items=np.array([10, 20, 30, 40, 50]))
    assert c.index.tolist() == [10, 20, 30, 40, 50]
    assert c.tolist() == [3, 2, 2, 1, 0]
    assert pop.popularity_ranks(TOY).to_dict() == {10: 1, 20: 2, 30: 3, 40: 4}


def test_percentile_strata_equal_sizes_most_popular_first():
    s = pop.percentile_strata(TOY, 2)
    assert s.to_dict() == {10: 0, 20: 0, 30: 1, 40: 1}
    big = pd.DataFrame({"user": 1, "item": np.arange(103), "rating": 1.0})
    sizes = pop.percentile_strata(big, 10).value_counts()
    assert sizes.min() >= 10 and sizes.max() <= 11 and sizes.sum() == 103
    with pytest.raises(ValueError, match="m must lie"):
        pop.percentile_strata(TOY, 5)


def test_head_items_takes_ceil_fraction():
    assert pop.head_items(TOY, 0.1).tolist() == [10]  # ceil(0.4) = 1
    assert pop.head_items(TOY, 0.5).tolist() == [10, 20]
    with pytest.raises(ValueError):
        pop.head_items(TOY, 0.0)


def test_positive_ratio_by_rank_hand_example():
    per_item = pop.positive_ratio_by_rank(TOY, threshold=4, segments=None)
    # item 10: 2/3 positive; 20: 2/2; 30: 1/2; 40: 0/1
    np.testing.assert_allclose(per_item["ratio"], [2 / 3, 1.0, 0.5, 0.0])
    seg = pop.positive_ratio_by_rank(TOY, threshold=4, segments=2)
    np.testing.assert_allclose(seg["ratio"], [(2 / 3 + 1) / 2, 0.25])
    assert seg["rank"].tolist() == [1, 3]


def test_cumulative_share_and_prior():
    np.testing.assert_allclose(pop.cumulative_share([1, 3, 1]), [0.6, 0.8, 1.0])
    prior = pop.rating_prior(TOY)
    assert prior.to_dict() == {1.0: 1 / 8, 2.0: 1 / 8, 3.0: 1 / 8, 4.0: 1 / 8, 5.0: 4 / 8}


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 1.4, 2.0])
def test_power_law_counts_hit_the_total_and_follow_the_law(alpha):
    c1, c2 = 2.0, 20.0
    counts = shifted_counts = pop.shifted_power_law_counts(500, 20_000, alpha, c1=c1, c2=c2, max_count=300)
    assert counts.sum() == 20_000
    assert (np.diff(counts) <= 0).all() and counts.min() >= 0 and counts.max() <= 300
    # independent check: on uncapped items, counts - c1 is proportional to (c2 + k)^-alpha up to rounding
    k = np.arange(1, 501)
    free = shifted_counts < 300
    w = (c2 + k[free]) ** (-alpha)
    beta = np.sum((counts[free] - c1) * w) / np.sum(w * w)
    assert np.abs(counts[free] - (c1 + beta * w)).max() <= 1.0 + 1e-9


def test_power_law_alpha_zero_is_uniform_and_caps_bind():
    counts = pop.shifted_power_law_counts(7, 100, 0.0, c1=0.0, c2=5.0, max_count=50)
    assert counts.max() - counts.min() <= 1 and counts.sum() == 100
    capped = pop.shifted_power_law_counts(100, 2_000, 2.0, c1=0.0, c2=0.0, max_count=30)
    assert capped.max() == 30 and capped.sum() == 2_000
    with pytest.raises(ValueError, match="do not fit"):
        pop.shifted_power_law_counts(10, 1_000, 1.0, c1=0.0, c2=0.0, max_count=50)
    with pytest.raises(ValueError, match="c1"):
        pop.shifted_power_law_counts(10, 100, 1.0, c1=20.0, c2=0.0, max_count=50)


def test_fit_recovers_known_parameters():
    k = np.arange(1, 801, dtype=float)
    truth = (3.0, 15.0, 40_000.0, 1.3)
    counts = truth[0] + truth[2] * (truth[1] + k) ** (-truth[3])
    fit = pop.fit_shifted_power_law(counts[::-1])  # order must not matter
    np.testing.assert_allclose(fit, truth, rtol=1e-3)
    assert fit.alpha == pytest.approx(1.3, rel=1e-3)


def test_simulation_marginals():
    prior = {1.0: 0.1, 2.0: 0.1, 3.0: 0.3, 4.0: 0.3, 5.0: 0.2}
    n_users, n_items, n_ratings = 300, 200, 12_000
    df = pop.simulate_ratings(n_users, n_items, n_ratings, 1.0, prior, c1=1.0, c2=10.0, seed=3)
    assert len(df) == n_ratings and not df.duplicated(["user", "item"]).any()
    assert df["user"].between(1, n_users).all() and df["item"].between(1, n_items).all()
    assert df.dtypes.to_dict() == {
        "user": np.dtype("int64"),
        "item": np.dtype("int64"),
        "rating": np.dtype("float64"),
        "timestamp": np.dtype("int64"),
    }
    expected = pop.shifted_power_law_counts(n_items, n_ratings, 1.0, c1=1.0, c2=10.0, max_count=n_users)
    per_item = df["item"].value_counts().reindex(np.arange(1, n_items + 1), fill_value=0)
    np.testing.assert_array_equal(per_item.to_numpy(), expected)
    # rating values follow the prior: chi-square goodness of fit
    obs = df["rating"].value_counts().reindex(list(prior)).to_numpy()
    assert stats.chisquare(obs, n_ratings * np.array(list(prior.values()))).pvalue > 1e-3
    # raters are uniform: a user's count is a sum of independent Bernoulli(c_i / |U|) draws
    p = expected / n_users
    per_user = df["user"].value_counts().reindex(np.arange(1, n_users + 1), fill_value=0)
    assert per_user.mean() == pytest.approx(n_ratings / n_users)
    var = np.sum(p * (1 - p))
    assert per_user.var() == pytest.approx(var, rel=0.25)
    # ratings carry no item signal: mean rating does not trend with popularity rank
    by_item = df.groupby("item")["rating"].mean()
    assert abs(stats.spearmanr(by_item.index, by_item.to_numpy()).statistic) < 0.2


def test_simulation_is_seeded():
    prior = pd.Series({1.0: 0.5, 5.0: 0.5})
    a = pop.simulate_ratings(50, 40, 500, 1.5, prior, c1=0.0, c2=2.0, seed=7)
    b = pop.simulate_ratings(50, 40, 500, 1.5, prior, c1=0.0, c2=2.0, seed=7)
    c = pop.simulate_ratings(50, 40, 500, 1.5, prior, c1=0.0, c2=2.0, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    with pytest.raises(ValueError, match="rating_prior"):
        pop.simulate_ratings(50, 40, 500, 1.5, {1.0: 0.5}, c1=0.0, c2=2.0)


def test_simulate_like_copies_the_sizes_and_prior():
    rng = np.random.default_rng(0)
    counts = np.sort(rng.zipf(1.6, 120).clip(1, 60))[::-1]
    item = np.repeat(np.arange(120), counts)
    user = np.concatenate([rng.choice(80, c, replace=False) for c in counts])
    df = pd.DataFrame({"user": user, "item": item, "rating": rng.choice([1.0, 3.0, 5.0], len(item))})
    sim = pop.simulate_like(df, 1.0, seed=1)
    assert len(sim) == len(df) and sim["user"].max() <= df["user"].nunique()
    assert sim["item"].max() <= df["item"].nunique()
    assert set(sim["rating"].unique()) <= {1.0, 3.0, 5.0}


def test_power_law_fit_pickles():
    import copy
    import pickle

    fit = pop.PowerLawFit(1.5, 10.0, 300.0, 1.2)
    for back in (pickle.loads(pickle.dumps(fit)), copy.deepcopy(fit)):
        assert back == fit and back.alpha == 1.2 and isinstance(back, pop.PowerLawFit)
