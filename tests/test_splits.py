"""Split invariants: partition, no leakage, determinism, sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmeta.data import DataError, splits


def _keys(df: pd.DataFrame) -> set[tuple[int, int]]:
    return set(zip(df["user"], df["item"]))


def _assert_partition(full: pd.DataFrame, s: splits.Split) -> None:
    assert len(s.train) + len(s.test) == len(full)
    assert not (_keys(s.train) & _keys(s.test)), "a rating is in both parts"
    assert _keys(s.train) | _keys(s.test) == _keys(full)
    both = pd.concat([s.train, s.test]).sort_values(["user", "item"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(both, full.sort_values(["user", "item"]).reset_index(drop=True))


def test_holdout_per_user(ml100k):
    s = splits.holdout_per_user(ml100k, 0.2, seed=7)
    _assert_partition(ml100k, s)
    n = ml100k.groupby("user").size()
    t = s.test.groupby("user").size().reindex(n.index, fill_value=0)
    assert (t == np.minimum(np.rint(0.2 * n), n - 1)).all()
    assert len(s.test) / len(ml100k) == pytest.approx(0.2, abs=0.005)
    assert set(s.test["user"]) <= set(s.train["user"])
    again = splits.holdout_per_user(ml100k, 0.2, seed=7)
    pd.testing.assert_frame_equal(again.test, s.test)
    other = splits.holdout_per_user(ml100k, 0.2, seed=8)
    assert _keys(other.test) != _keys(s.test)


def test_holdout_is_random_within_user():
    # one user, 1000 ratings: every rating should be drawn about equally often
    df = pd.DataFrame({"user": 1, "item": np.arange(10), "rating": 3.0})
    hits = np.zeros(10)
    for seed in range(400):
        hits[splits.holdout_per_user(df, 0.3, seed=seed).test["item"]] += 1
    assert hits.sum() == 400 * 3
    assert np.all(np.abs(hits / 400 - 0.3) < 0.1)


def test_coin_flip(ml100k):
    s = splits.coin_flip(ml100k, 0.2, seed=1)
    _assert_partition(ml100k, s)
    # binomial sd of the test share is about 0.0013; 5 sd tolerance
    assert len(s.test) / len(ml100k) == pytest.approx(0.2, abs=0.0065)
    pd.testing.assert_frame_equal(splits.coin_flip(ml100k, 0.2, seed=1).test, s.test)


def test_kfold(ml100k):
    folds = splits.kfold(ml100k, 5, seed=3)
    assert len(folds) == 5
    for f in folds:
        _assert_partition(ml100k, f)
        assert len(f.test) == 20_000
    tests = [_keys(f.test) for f in folds]
    assert set().union(*tests) == _keys(ml100k)
    assert sum(len(t) for t in tests) == len(ml100k)  # disjoint


def test_leave_last_out(ml100k):
    s = splits.leave_last_out(ml100k)
    _assert_partition(ml100k, s)
    assert s.test["user"].is_unique and len(s.test) == 943
    latest = ml100k.groupby("user")["timestamp"].max()
    assert (s.test.set_index("user")["timestamp"] == latest.loc[s.test["user"]]).all()
    # nothing in train is later than the user's test rating
    merged = s.train.merge(s.test[["user", "timestamp"]], on="user", suffixes=("", "_test"))
    assert (merged["timestamp"] <= merged["timestamp_test"]).all()


def test_leave_last_out_tie_and_small_users():
    df = pd.DataFrame({"user": [1, 1, 1, 2], "item": [5, 9, 7, 1], "rating": 4.0, "timestamp": [10, 20, 20, 5]})
    s = splits.leave_last_out(df)
    assert s.test[["user", "item"]].values.tolist() == [[1, 9]]  # tie at t=20: larger item id
    assert 2 in set(s.train["user"])  # a single rating stays in train


def test_bad_split_arguments():
    df = pd.DataFrame({"user": [1], "item": [1], "rating": [1.0]})
    with pytest.raises(ValueError, match="test_fraction"):
        splits.holdout_per_user(df, 1.5)
    with pytest.raises(DataError, match="timestamp"):
        splits.leave_last_out(df)
    with pytest.raises(DataError, match="empty"):
        splits.coin_flip(df.iloc[:0], 0.5)
    with pytest.raises(ValueError, match="k must"):
        splits.kfold(df, 5)
