"""The trial harness of the statistical-biases chapter: trials over splits, their per-set rows
and cache, and the systems as scorers (Bellogín et al. 2017, §3–§6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta import recommenders
from recmeta.papers.bellogin2017.trials import (
    _ScoreTable,
    TrialCache,
    liked_scorer,
    mean_rating_scorer,
    oracle_scorer,
    random_scorer,
    remove_test_ratings,
    roster_scorer,
    split_sets,
    summarise,
    trials,
)
from recmeta.protocols import Protocol, item_scores, random_scores, target_sets

from .test_protocols import TEST, TRAIN, build, toy_ratings


def test_trials_report_formula_rho_and_lemma_bounds() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        [
            (u, i, float(rng.integers(1, 6)))
            for u in range(60)
            for i in rng.choice(120, 25, replace=False)
        ],
        columns=["user", "item", "rating"],
    )
    scorers = {"rnd": lambda train, sets: random_scores(sets, 5)}
    r = trials(
        df,
        Protocol("AI", "1R", "NN", 19, threshold=4, shared_nonrelevant=True),
        scorers,
        seeds=[0, 1],
    )
    assert len(r) == 2 and np.allclose(r["formula"], 1 / 20) and np.allclose(r["rho"], 1 / 20)
    assert (r["lower"] <= r["P"] + 1e-12).all() and (r["P"] <= r["upper"] + 1e-12).all()
    ar = trials(df, Protocol("AI", "AR", "AN", threshold=4, ar_users="all"), scorers, removed=0.5)
    n_pos = int((df["rating"] >= 4).sum())
    assert ar["formula"].iloc[0] == pytest.approx(0.2 * 0.5 * n_pos / (60 * ar["t"].iloc[0]))


@pytest.mark.parametrize(
    "protocol",
    [
        Protocol("TI", "1R", "NN", 9, threshold=4),
        Protocol("AI", "AR", "AN", threshold=4),
        Protocol("AI", "1R", "NN", 2, threshold=4, percentiles=4),
    ],
)
def test_split_summary_counts_as_pandas_does(protocol: Protocol) -> None:
    # the candidates and the mean rating count of the non-relevant items, by pandas itself
    df = toy_ratings(seed=7, users=50, items=90, per_user=18)
    for seed, removed, head in ((0, 0.0, 0.0), (1, 0.5, 0.1)):
        _, _, sets, common = split_sets(df, protocol, seed, removed=removed, head=head)
        non = sets.loc[~sets["relevant"].to_numpy(dtype=bool), "item"]
        counts = df["item"].value_counts()
        assert len(non) and common["candidates"] > 1
        assert common["nonrelevant popularity"] == float(counts.reindex(non).mean())
        assert common["candidates"] == sets["item"].nunique()


def test_roster_scorer_scores_candidates_through_the_cached_runs(tmp_path) -> None:
    pytest.importorskip("lenskit")
    rng = np.random.default_rng(2)
    df = pd.DataFrame(
        [
            (u, i, float(rng.integers(1, 6)))
            for u in range(1, 31)
            for i in rng.choice(np.arange(1, 61), 15, replace=False)
        ],
        columns=["user", "item", "rating"],
    )
    is_test = rng.random(len(df)) < 0.2
    train, test = df[~is_test], df[is_test]
    sets = target_sets(train, test, Protocol("AI", "1R", "NN", 10, threshold=4), seed=0)
    scorer = roster_scorer("pop", dataset="toy", root=tmp_path)
    got = scorer(train, sets, split_seed=0)
    assert len(list(tmp_path.rglob("*.parquet"))) == 1  # one cached run for the split
    # LensKit's popularity scorer ranks like the training counts (independent check)
    counts = train["item"].value_counts()
    known = got["item"].isin(counts.index)
    assert got.loc[~known, "score"].isna().all()
    r = got.loc[known]
    assert stats.spearmanr(
        r["score"], counts.reindex(r["item"]).to_numpy()
    ).statistic == pytest.approx(1.0)
    again = scorer(train, sets, split_seed=0)
    pd.testing.assert_frame_equal(got, again)
    # the in-memory table answers as the left join of the pairs on the cached run does
    run = pd.read_parquet(next(tmp_path.rglob("*.parquet")))
    pairs = sets[["user", "item"]].drop_duplicates().sort_values(["user", "item"])
    joined = pairs.reset_index(drop=True).merge(run[["user", "item", "score"]], how="left")
    pd.testing.assert_frame_equal(got, joined)
    # another training frame on the same split seed is another run, not the kept table
    other = train.iloc[1:]
    fresh = scorer(other, sets, split_seed=0)
    assert len(list(tmp_path.rglob("*.parquet"))) == 2
    counts = other["item"].value_counts()
    r = fresh.loc[fresh["item"].isin(counts.index)]
    assert stats.spearmanr(
        r["score"], counts.reindex(r["item"]).to_numpy()
    ).statistic == pytest.approx(1.0)
    # back to the first frame on the same seed: its table is still in memory, no run is read
    before = dict(recommenders.RUN_COUNTS)
    pd.testing.assert_frame_equal(scorer(train, sets, split_seed=0), got)
    assert recommenders.RUN_COUNTS == before
    # with room for one table, each frame in turn is read from the run cache again
    one = roster_scorer("pop", dataset="toy", root=tmp_path, keep=1)
    one(train, sets, split_seed=0)
    one(other, sets, split_seed=0)
    pd.testing.assert_frame_equal(one(train, sets, split_seed=0), got)
    assert recommenders.RUN_COUNTS["cached"] == before["cached"] + 3
    with pytest.raises(ValueError, match="keep must be >= 1"):
        roster_scorer("pop", dataset="toy", keep=0)


def test_score_table_keeps_float32_scores_exactly_and_others_as_they_are() -> None:
    users, items = np.array([1, 2]), np.array([10, 20, 30])
    grid = {"user": np.repeat(users, 3), "item": np.tile(items, 2)}
    rounded = np.float32([0.1, 1 / 3, 2.5, np.nan, -7.25, 1e-8]).astype(np.float64)
    for score, stored in ((rounded, np.float32), (rounded + 1e-12, np.float64)):
        table = _ScoreTable.of(pd.DataFrame({**grid, "score": score}), users, items)
        assert table.table.dtype == stored
        got = table.lookup(np.array([2, 1, 2, 3]), np.array([30, 20, 10, 10]))
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, [score[5], score[1], score[3], np.nan])


def test_score_table_of_a_whole_grid_equals_the_table_of_its_pairs_in_any_order() -> None:
    rng = np.random.default_rng(4)
    users, items = np.array([3, 5, 8, 13]), np.array([2, 4, 6, 8, 10])
    grid = pd.DataFrame({"user": np.repeat(users, 5), "item": np.tile(items, 4)})
    run = grid.assign(score=rng.random(20).astype(np.float32).astype(np.float64))
    whole = _ScoreTable.of(run, users, items)  # in grid order: reshaped
    shuffled = _ScoreTable.of(run.sample(frac=1.0, random_state=1), users, items)
    np.testing.assert_array_equal(whole.table, shuffled.table)
    part = _ScoreTable.of(run.iloc[1:], users, items)  # one pair short: placed pair by pair
    assert np.isnan(part.table[0, 0]) and np.isnan(part.table).sum() == 1
    np.testing.assert_array_equal(part.table.ravel()[1:], whole.table.ravel()[1:])


def test_random_scorer_draws_a_new_system_per_split_and_remove_test_ratings() -> None:
    s = build("AI", "AR", "AN")
    per_split, fixed = random_scorer(3), random_scorer(3, per_split=False)
    a = per_split(TRAIN, s, split_seed=0)["score"].to_numpy()
    b = per_split(TRAIN, s, split_seed=1)["score"].to_numpy()
    assert not np.allclose(a, b)
    np.testing.assert_array_equal(fixed(TRAIN, s)["score"], random_scores(s, 3)["score"])
    kept = remove_test_ratings(TEST, 0.5, seed=0)
    assert len(kept) == 3 and kept.merge(TEST).shape[0] == 3  # a subset of the test rows
    with pytest.raises(ValueError, match="fraction"):
        remove_test_ratings(TEST, 1.0)


# -- per-set rows, the cache, the engine's options, 1R-AN read off AR-AN ------------------------


def test_trials_per_set_rows_summarise_to_the_split_rows_and_the_cache_changes_nothing() -> None:
    df = toy_ratings(6)
    scorers = {
        "pop": lambda train, sets: item_scores(
            sets,
            train["item"].value_counts().reindex(sets["item"].unique(), fill_value=0).astype(float),
        ),
        "rnd": lambda train, sets: random_scores(sets, 2),
    }
    p = Protocol("TI", "1R", "NN", 9, threshold=4, percentiles=2, short_pool="shrink")
    rows = trials(df, p, scorers, seeds=[0, 1])
    per = trials(df, p, scorers, seeds=[0, 1], per_set=True)
    back = summarise(per).set_index(["seed", "system"]).sort_index()
    rows = rows.set_index(["seed", "system"]).sort_index()
    np.testing.assert_allclose(back["P"], rows["P"])
    np.testing.assert_allclose(back["rho"], rows["rho"])
    cache = TrialCache()
    first = trials(df, p, scorers, seeds=[0, 1], per_set=True, cache=cache)
    again = trials(
        df,
        p,
        {"rnd": scorers["rnd"], "pop": scorers["pop"]},
        seeds=[0, 1],
        per_set=True,
        cache=cache,
    )
    pd.testing.assert_frame_equal(first, per)
    pd.testing.assert_frame_equal(
        again.sort_values(["seed", "system", "set"]).reset_index(drop=True),
        per.sort_values(["seed", "system", "set"]).reset_index(drop=True),
    )
    assert len(cache.results) == 4 and len(cache.sets) <= cache.keep_sets


def test_trials_adds_engine_metrics_per_set() -> None:
    df = toy_ratings(7)
    per = trials(
        df,
        Protocol("AI", "AR", "AN", threshold=4, ar_users="all"),
        {"rnd": lambda train, sets: random_scores(sets, 2)},
        n=5,
        per_set=True,
        metrics=["P@5", "R@5"],
    )
    has = per["P@5"].notna()
    # same ranking rule
    np.testing.assert_allclose(per.loc[has, "P@5"], per.loc[has, "P"], atol=1e-12)
    assert per.loc[~has, "P"].eq(0).all()  # the engine leaves out the sets without a relevant item
    assert per.loc[has, "R@5"].between(0, 1).all() and per.loc[~has, "R@5"].isna().all()


def test_nonpersonalised_scorers_hand_example() -> None:
    s = build("TI", "AR", "AN")  # sets of u1 {3, 4, 5}, u2 {1, 4, 5}, u3 {3, 4, 5}
    liked = liked_scorer(4)(TRAIN, s).set_index(["user", "item"])["score"]
    # |PR_train|: item 1: 1 (u1 rated 5), item 2: 1, item 3: 1, items 4, 5: 0;
    # ties broken by |R_train|
    assert liked[(2, 1)] > liked[(2, 4)] and liked[(1, 3)] > liked[(1, 5)]
    mean = mean_rating_scorer(damping=0)(TRAIN, s).set_index(["user", "item"])["score"]
    assert mean[(2, 1)] == pytest.approx(4.0)  # item 1: ratings 5 and 3
    # no training rating: the global mean
    assert mean[(1, 5)] == pytest.approx(TRAIN["rating"].mean())
    oracle = oracle_scorer(TRAIN, s).set_index(["user", "item"])["score"]
    # relevant in test: item 3 (u1), 4 (u1), 1 (u2), 5 (u2)
    assert oracle[(1, 3)] == 1 and oracle[(3, 3)] == 1 and oracle[(2, 4)] == 1
    with pytest.raises(ValueError, match="damping"):
        mean_rating_scorer(-1)
