"""Incompleteness masks keep exactly the requested share, reproducibly, with the documented nesting."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta.metaeval import incompleteness as inc


def _kept(share: float, n: int) -> int:
    """round(share·n), halves up, in exact decimal arithmetic on the share as written."""
    exact = Decimal(str(float(share))) * n
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


@pytest.fixture(scope="module")
def test_frame() -> pd.DataFrame:
    """A small synthetic test set with skewed item popularity and uneven user profiles."""
    rng = np.random.default_rng(7)
    users = np.repeat(np.arange(40) * 3 + 11, rng.integers(1, 12, size=40))
    items = rng.zipf(1.6, size=users.size) % 97 + 1000
    frame = pd.DataFrame({"user": users, "item": items}).drop_duplicates(ignore_index=True)
    frame["rating"] = rng.integers(1, 6, size=len(frame)).astype(float)
    return frame


def test_share_grids_match_the_paper():
    s = inc.sparsity_shares()
    assert s.size == 20 and s[0] == 1.0 and s[-1] == 0.05
    np.testing.assert_allclose(np.diff(s), -0.05)
    p = inc.popularity_shares()
    assert p.size == 21 and p[0] == 1.0 and p[-1] == 0.8


@pytest.mark.parametrize("nested", [False, True])
def test_random_ratings_keep_exact_share(nested):
    n = 137
    shares = np.array([1.0, 0.95, 0.5, 0.35, 0.05, 0.01])
    m = inc.random_ratings(n, shares, n_samples=9, seed=3, nested=nested)
    assert m.keep.shape == (shares.size * 9, n) and m.keep.dtype == bool
    expected = np.array([_kept(p, n) for p in shares])
    kept = m.keep.sum(axis=1).reshape(shares.size, 9)
    assert (kept == expected[:, None]).all()
    np.testing.assert_array_equal(m.share, np.repeat(shares, 9))
    np.testing.assert_array_equal(m.sample, np.tile(np.arange(9), shares.size))


def test_same_seed_same_masks_other_seed_other_masks(test_frame):
    a = inc.random_ratings(test_frame, [0.5, 0.2], 5, seed=11)
    b = inc.random_ratings(test_frame, [0.5, 0.2], 5, seed=11)
    c = inc.random_ratings(test_frame, [0.5, 0.2], 5, seed=12)
    np.testing.assert_array_equal(a.keep, b.keep)
    assert (a.keep != c.keep).any()
    g1 = inc.random_items(test_frame, [0.5], 3, seed=np.random.default_rng(5))
    g2 = inc.random_items(test_frame, [0.5], 3, seed=np.random.default_rng(5))
    np.testing.assert_array_equal(g1.keep, g2.keep)


def test_samples_differ_within_a_share(test_frame):
    m = inc.random_ratings(test_frame, [0.5], 20, seed=1)
    assert len({row.tobytes() for row in m.keep}) == 20


def test_nested_masks_are_subsets_and_independent_ones_are_not():
    shares = inc.sparsity_shares()
    nested = inc.random_ratings(200, shares, 4, seed=2, nested=True)
    k = nested.keep.reshape(shares.size, 4, 200)
    # a smaller share (later row) is contained in every larger one of the same sample
    assert (k[1:] <= k[:-1]).all()
    indep = inc.random_ratings(200, shares, 4, seed=2, nested=False)
    k = indep.keep.reshape(shares.size, 4, 200)
    assert not (k[1:] <= k[:-1]).all()


def test_random_ratings_are_uniform():
    """Each row is kept with probability k/N: chi-square on inclusion counts over many samples."""
    n, samples = 50, 4000
    m = inc.random_ratings(n, [0.3], samples, seed=99)
    counts = m.keep.sum(axis=0)
    expected = samples * 15 / n
    chi2 = ((counts - expected) ** 2 / expected).sum()
    # the counts are negatively correlated (fixed total), so the statistic is at most chi2(n - 1)
    assert stats.chi2.sf(chi2, n - 1) > 1e-3


@pytest.mark.parametrize("scheme, column", [(inc.random_items, "item"), (inc.random_users, "user")])
def test_random_units_keep_whole_units_at_exact_share(test_frame, scheme, column):
    shares = [0.9, 0.5, 0.1]
    m = scheme(test_frame, shares, 6, seed=4)
    values = test_frame[column].to_numpy()
    n_units = np.unique(values).size
    assert m.unit == column and m.n_units == n_units
    for row, p in zip(m.keep, m.share):
        kept_units = np.unique(values[row])
        assert kept_units.size == _kept(p, n_units)
        # whole units: every row of a kept unit is kept, no row of a dropped unit is
        np.testing.assert_array_equal(row, np.isin(values, kept_units))


def test_arrays_and_frames_give_the_same_masks(test_frame):
    a = inc.random_items(test_frame, [0.4], 3, seed=8)
    b = inc.random_items(test_frame["item"].to_numpy(), [0.4], 3, seed=8)
    np.testing.assert_array_equal(a.keep, b.keep)


def test_popular_items_removed_by_test_popularity(test_frame):
    shares = inc.popularity_shares()
    m = inc.popular_items_removed(test_frame, shares)
    counts = test_frame["item"].value_counts()
    n_items = counts.size
    assert (m.sample == 0).all() and m.unit == "item"
    for row, p in zip(m.keep, m.share):
        kept = set(test_frame["item"][row])
        assert len(kept) == _kept(p, n_items)
        removed = counts.index.difference(list(kept))
        if len(removed):
            # nothing kept is more popular than anything removed
            assert counts[list(kept)].max() <= counts[removed].min()
    # deterministic and nested
    assert (m.keep[1:] <= m.keep[:-1]).all()
    np.testing.assert_array_equal(m.keep, inc.popular_items_removed(test_frame, shares).keep)


def test_popularity_ties_broken_by_larger_id_first():
    items = np.array([5, 5, 7, 7, 3, 3, 9])  # 3, 5 and 7 tie on two ratings each
    m = inc.popular_items_removed(items, [0.75, 0.5])
    assert set(items[m.keep[0]]) == {3, 5, 9}
    assert set(items[m.keep[1]]) == {3, 9}


def test_popularity_can_come_from_training(test_frame):
    items = np.unique(test_frame["item"])
    train_pop = pd.Series(np.arange(items.size)[::-1], index=items)  # smallest id most popular
    m = inc.popular_items_removed(test_frame, [0.5], popularity=train_pop)
    kept = np.unique(test_frame["item"][m.keep[0]])
    np.testing.assert_array_equal(kept, items[items.size - kept.size :])
    with pytest.raises(ValueError, match="no size"):
        inc.popular_items_removed(test_frame, [0.5], popularity=train_pop.iloc[1:])


def test_largest_users_removed(test_frame):
    m = inc.largest_users_removed(test_frame, [1.0, 0.8, 0.3])
    sizes = test_frame["user"].value_counts()
    for row, p in zip(m.keep, m.share):
        kept = np.unique(test_frame["user"][row])
        assert kept.size == _kept(p, sizes.size)
        dropped = sizes.index.difference(kept)
        if len(dropped):
            assert sizes[kept].max() <= sizes[dropped].min()
    assert m.keep[0].all()


def test_kept_rows_and_frame(test_frame):
    m = inc.random_users(test_frame, [0.5], 2, seed=0)
    f = m.frame()
    assert list(f.columns) == ["share", "sample", "kept_rows"]
    np.testing.assert_allclose(f["kept_rows"], m.keep.mean(axis=1))


@pytest.mark.parametrize("shares", [[0.0], [1.2], [np.nan], []])
def test_bad_shares_are_refused(shares):
    with pytest.raises(ValueError, match="share"):
        inc.random_ratings(10, shares, 2, seed=0)


def test_share_keeping_nothing_is_refused():
    with pytest.raises(ValueError, match="keeps no unit"):
        inc.random_ratings(10, [0.01], 2, seed=0)


def test_bad_inputs_are_refused(test_frame):
    with pytest.raises(KeyError, match="no 'item' column"):
        inc.random_items(test_frame.drop(columns="item"), [0.5], 2, seed=0)
    with pytest.raises(ValueError, match="empty"):
        inc.random_ratings(0, [0.5], 2, seed=0)
    with pytest.raises(ValueError, match="missing"):
        inc.random_users(np.array([1.0, np.nan]), [0.5], 2, seed=0)
    with pytest.raises(ValueError, match="n_samples"):
        inc.random_ratings(10, [0.5], 0, seed=0)


def _tiny_eval_setup():
    from recmeta.metrics import Judgments, Runs

    rng = np.random.default_rng(21)
    users, items = np.arange(12), np.arange(30)
    test = pd.DataFrame(
        [(u, i, float(rng.integers(1, 6))) for u in users for i in rng.choice(items, 8, replace=False)],
        columns=["user", "item", "rating"],
    )
    j = Judgments.from_frame(test, threshold=4)
    runs = pd.DataFrame(
        [
            (f"s{s}", u, i, float(-r))
            for s in range(3)
            for u in users
            for r, i in enumerate(rng.permutation(items)[:10])
        ],
        columns=["system", "user", "item", "score"],
    )
    return j, Runs.from_frame(runs, j), runs


def test_score_masks_equal_evaluating_the_masked_frame():
    from recmeta.metrics import Judgments, aggregate, score_matrix

    j, runs, _ = _tiny_eval_setup()
    frame = j.to_frame()
    masks = inc.random_ratings(frame, [0.6, 0.3], 2, seed=5)
    metrics = ["P@5", "nDCG@10", "bpref@10"]
    got = inc.score_masks(j, runs, masks, metrics)
    assert got.shape == (4, 3, 3)
    for k, keep in enumerate(masks.keep):
        sub = Judgments.from_frame(frame[keep], threshold=4, users=j.users, items=j.items,
                                   max_grade=j.max_grade)
        for m, name in enumerate(metrics):
            np.testing.assert_allclose(got[k, m], aggregate(score_matrix(sub, runs, name)))


def test_score_masks_precision_by_hand():
    j, runs, run_frame = _tiny_eval_setup()
    frame = j.to_frame()
    masks = inc.random_users(frame, [0.5], 1, seed=2)
    got = inc.score_masks(j, runs, masks, ["P@5"])[0, 0]
    kept = frame[masks.keep[0]]
    relevant = set(map(tuple, kept.loc[kept["rating"] >= 4, ["user", "item"]].to_numpy()))
    evaluated = {u for u, _ in relevant}
    top = run_frame.sort_values("score", ascending=False).groupby(["system", "user"]).head(5)
    for s, name in enumerate(runs.systems):
        per_user = [
            sum((u, i) in relevant for i in top.loc[(top.system == name) & (top.user == u), "item"]) / 5
            for u in sorted(evaluated)
        ]
        assert got[s] == pytest.approx(np.mean(per_user))


def test_score_masks_refuses_misaligned_masks():
    j, runs, _ = _tiny_eval_setup()
    with pytest.raises(ValueError, match="to_frame"):
        inc.score_masks(j, runs, np.ones((2, 5), dtype=bool), ["P@5"])
