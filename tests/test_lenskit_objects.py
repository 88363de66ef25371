"""LensKit's own objects wherever recmeta takes data: the Dataset, ItemListCollection and
ItemList that lenskit.data, lenskit.splitting and lenskit.batch return, on ML-100K."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmeta import data
from recmeta.compare import compare

FAST = {"n_permutations": 1000, "n_bootstrap": 200, "n_tukey": 0, "n_random": 3}


@pytest.fixture(scope="module")
def lenskit_run(ml100k):
    """LensKit's way: its own MovieLens loader on the cache, a split, two pipelines, batch."""
    from lenskit import batch
    from lenskit.basic import BiasScorer, PopScorer
    from lenskit.data import load_movielens
    from lenskit.pipeline import topn_pipeline
    from lenskit.splitting import SampleN, crossfold_users

    ds = load_movielens(data.cache_dir() / "ml-100k")
    split = next(iter(crossfold_users(ds, 5, SampleN(5, rng=1), rng=2)))
    recs = {}
    for name, scorer in (("pop", PopScorer()), ("bias", BiasScorer())):
        pipe = topn_pipeline(scorer, n=20)
        pipe.train(split.train)
        recs[name] = batch.recommend(pipe, split.test.keys(), n=20, n_jobs=1)
    return ds, split, recs


def test_dataset_loads_as_the_ratings_frame(ml100k, lenskit_run):
    ds, _, _ = lenskit_run
    mine = data.load(ds).sort_values(["user", "item"], ignore_index=True)
    pd.testing.assert_frame_equal(mine, ml100k.sort_values(["user", "item"], ignore_index=True))
    back = data.load(data.to_lenskit(ml100k)).sort_values(["user", "item"], ignore_index=True)
    pd.testing.assert_frame_equal(back, mine)


def test_split_parts_load(lenskit_run):
    ds, split, _ = lenskit_run
    train, test = data.load(split.train), data.load(split.test)
    assert len(train) + len(test) == ds.interaction_count
    assert test.groupby("user").size().eq(5).all() and len(test) == 5 * test["user"].nunique()
    assert not set(zip(train.user, train.item)) & set(zip(test.user, test.item))
    one = {u: split.test.lookup(u) for u in list(split.test.keys())[:3]}
    frame = data.load({k.user_id: v for k, v in one.items()})
    assert len(frame) == 15 and frame["user"].nunique() == 3
    with pytest.raises(data.DataError, match="single ItemList does not say whose"):
        data.load(next(iter(one.values())))


def test_compare_takes_the_split_and_batch_output(lenskit_run):
    _, split, recs = lenskit_run
    report = compare(recs, split.test, ["P@10", "RR"], threshold=4, train=split.train, **FAST)
    # the same comparison through plain frames, as LensKit's own converters give them
    test_df = split.test.to_df().rename(columns={"user_id": "user", "item_id": "item"})
    train_df = split.train.interaction_table(format="pandas", original_ids=True)
    frames = {k: v.to_df() for k, v in recs.items()}
    by_frame = compare(frames, test_df, ["P@10", "RR"], threshold=4, train=train_df, **FAST)
    pd.testing.assert_frame_equal(report.summary, by_frame.summary)
    pd.testing.assert_frame_equal(report.references, by_frame.references)
    # P@10 of each system by hand: relevant (rating >= 4) test items in the first 10, over 10
    relevant = test_df[test_df["rating"] >= 4]
    users = np.sort(relevant["user"].unique())
    rel = set(zip(relevant["user"], relevant["item"]))
    for name, ilc in recs.items():
        top = ilc.to_df().sort_values(["user_id", "rank"]).groupby("user_id").head(10)
        hits = pd.Series([(u, i) in rel for u, i in zip(top["user_id"], top["item_id"])],
                         index=top["user_id"]).groupby(level=0).sum()
        expected = hits.reindex(users, fill_value=0).to_numpy() / 10
        got = report.summary.query("metric == 'P@10' and system == @name")["mean"].item()
        assert got == pytest.approx(expected.mean(), abs=1e-12)
        assert report.scores["P@10"][report.systems.index(name)] == pytest.approx(expected)


def test_compare_takes_a_mapping_of_item_lists(lenskit_run):
    _, split, recs = lenskit_run
    lists = {name: {k.user_id: il for k, il in ilc.items()} for name, ilc in recs.items()}
    a = compare(lists, split.test, ["RR"], threshold=4, **FAST)
    b = compare(recs, split.test, ["RR"], threshold=4, **FAST)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    with pytest.raises(TypeError, match="name the system"):
        compare(lists["pop"], split.test, ["RR"], threshold=4, **FAST)


def test_splits_take_a_dataset(lenskit_run):
    from recmeta.data import splits

    ds, _, _ = lenskit_run
    frame = data.load(ds)
    a, b = splits.holdout_per_user(ds, 0.2, seed=3), splits.holdout_per_user(frame, 0.2, seed=3)
    pd.testing.assert_frame_equal(a.test, b.test)
    assert len(a.train) + len(a.test) == ds.interaction_count
    assert len(splits.kfold(ds, 5, seed=1)) == 5
    with pytest.raises(data.DataError, match="got list"):
        splits.coin_flip([1, 2], 0.5)


def test_sample_records_split_into_compare(lenskit_run):
    from lenskit.splitting import sample_records

    ds, _, recs = lenskit_run
    split = sample_records(ds, 2_000, rng=5)
    train_df = split.train.interaction_table(format="pandas", original_ids=True)
    a = compare(recs, split.test, ["P@10"], threshold=4, train=split.train, **FAST)
    b = compare(recs, split.test, ["P@10"], threshold=4, train=train_df, **FAST)
    pd.testing.assert_frame_equal(a.references, b.references)
    assert set(a.references["reference"]) == {"random", "popularity"}
    assert len(data.load(split.test)) == 2_000


@pytest.mark.parametrize(
    "kind", ["ranked", "scored", "ranked-only", "string-ids", "renamed", "nan-scores", "empty"]
)
def test_item_lists_equal_lenskits_from_df(kind):
    """recmeta.compare.item_lists builds what ``ItemListCollection.from_df`` builds: the same
    keys (with their types) in the same order, and per list the same items, scores, ranks and
    order; only faster (one sort, not a pandas group per user)."""
    import warnings

    from lenskit.data import ItemListCollection

    from recmeta.compare.inputs import item_lists

    rng = np.random.default_rng(3)
    n = 3000
    f = pd.DataFrame(
        {"user": rng.integers(0, 90, n), "item": rng.integers(0, 500, n), "score": rng.random(n)}
    )
    f = f.sort_values(["user", "score"], ascending=[True, False])
    f["rank"] = f.groupby("user").cumcount() + 1
    f = f.sample(frac=1, random_state=1)  # rows of a user not together, nor in rank order
    user, item = "user", "item"
    if kind == "scored":
        f = f.drop(columns="rank")
    elif kind == "ranked-only":
        f = f.drop(columns="score")
    elif kind == "string-ids":
        f = f.assign(user="u" + f["user"].astype(str), item="i" + f["item"].astype(str))
    elif kind == "renamed":
        f, user, item = f.rename(columns={"user": "uid", "item": "iid"}), "uid", "iid"
    elif kind == "nan-scores":
        f = f.assign(score=f["score"].where(rng.random(n) > 0.1))
    elif kind == "empty":
        f = f.iloc[:0]
    keep = [c for c in (user, item, "rank", "score") if c in f.columns]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "ranks do not begin with 1" for shuffled rows
        ref = ItemListCollection.from_df(
            f[keep].rename(columns={user: "user_id", item: "item_id"}), "user_id"
        )
        mine = item_lists(f, user_col=user, item_col=item)
    assert type(mine) is type(ref) and mine.key_fields == ref.key_fields
    assert len(mine) == len(ref) == f[user].nunique()
    for (k1, a), (k2, b) in zip(ref.items(), mine.items(), strict=True):
        assert k1 == k2 and type(k1[0]) is type(k2[0])
        assert a.ordered == b.ordered and np.array_equal(a.ids(), b.ids())
        for x, y in ((a.scores(), b.scores()), (a.ranks(), b.ranks())):
            assert (x is None) == (y is None)
            if x is not None:
                assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)


def test_item_lists_refuse_rows_without_a_user():
    from recmeta.compare.inputs import item_lists

    f = pd.DataFrame({"user": [1.0, np.nan], "item": [3, 4], "score": [0.5, 0.2]})
    with pytest.raises(ValueError, match="a user for every row"):
        item_lists(f)
