"""Target-set protocols on tiny hand-checked data (Bellogín et al. 2017, Table 3 and §6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta.protocols import (
    Protocol,
    attach_scores,
    candidate_pairs,
    engine_metrics,
    evaluate_systems,
    item_scores,
    lemma_bounds,
    one_r_an_metrics,
    protocol_mean,
    random_scores,
    rank_in_sets,
    shared_pairs,
    target_metrics,
    target_sets,
    uniform_test_size,
    uniform_test_split,
)
from recmeta.protocols import scoring

# Items 1..7 (item 7 has no rating at all); relevant means rating >= 4.
#   train  u1: 1(5) 2(2)     u2: 2(4) 3(5)     u3: 1(3) 6(5)
#   test   u1: 3(5) 4(4) 5(1)  u2: 1(5) 5(4)   u3: 4(2)
# PR_test: u1 {3, 4}, u2 {1, 5}, u3 {}.  Test items (TI): {1, 3, 4, 5}.
# Pools 𝒞 ∖ PR_test(u) ∖ R_train(u):
#   AI: u1 {5, 6, 7}, u2 {4, 6, 7}, u3 {2, 3, 4, 5, 7}
#   TI: u1 {5},       u2 {4},       u3 {3, 4, 5}
TRAIN = pd.DataFrame(
    {"user": [1, 1, 2, 2, 3, 3], "item": [1, 2, 2, 3, 1, 6], "rating": [5.0, 2, 4, 5, 3, 5]}
)
TEST = pd.DataFrame(
    {"user": [1, 1, 1, 2, 2, 3], "item": [3, 4, 5, 1, 5, 4], "rating": [5.0, 4, 1, 5, 4, 2]}
)
ITEMS = np.arange(1, 8)


def contents(sets: pd.DataFrame) -> list[tuple[int, list[int], list[int]]]:
    """(user, relevant items, non-relevant items) of every set, in set order."""
    out = []
    for _, d in sets.groupby("set"):
        out.append(
            (
                int(d["user"].iloc[0]),
                sorted(d.loc[d.relevant, "item"]),
                sorted(d.loc[~d.relevant, "item"]),
            )
        )
    return out


def build(c, r, nn, n=None, seed=0, **kw) -> pd.DataFrame:
    return target_sets(
        TRAIN, TEST, Protocol(c, r, nn, n, threshold=4, **kw), items=ITEMS, seed=seed
    )


# -- the eight combinations ---------------------------------------------------------------------


def test_ai_an_ar() -> None:
    assert contents(build("AI", "AR", "AN")) == [
        (1, [3, 4], [5, 6, 7]),
        (2, [1, 5], [4, 6, 7]),
        (3, [], [2, 3, 4, 5, 7]),
    ]


def test_ti_an_ar() -> None:
    assert contents(build("TI", "AR", "AN")) == [
        (1, [3, 4], [5]),
        (2, [1, 5], [4]),
        (3, [], [3, 4, 5]),
    ]


def test_ai_an_1r() -> None:
    assert contents(build("AI", "1R", "AN")) == [
        (1, [3], [5, 6, 7]),
        (1, [4], [5, 6, 7]),
        (2, [1], [4, 6, 7]),
        (2, [5], [4, 6, 7]),
    ]


def test_ti_an_1r() -> None:
    assert contents(build("TI", "1R", "AN")) == [
        (1, [3], [5]),
        (1, [4], [5]),
        (2, [1], [4]),
        (2, [5], [4]),
    ]


def test_ti_nn_1r_with_full_pools_is_exact() -> None:
    # |N_u| = 1 equals the TI pools of u1 and u2 (u3 has no relevant item, hence no 1R set)
    assert contents(build("TI", "1R", "NN", 1)) == [
        (1, [3], [5]),
        (1, [4], [5]),
        (2, [1], [4]),
        (2, [5], [4]),
    ]


def test_ai_nn_1r_with_full_pools_is_exact() -> None:
    assert contents(build("AI", "1R", "NN", 3)) == contents(build("AI", "1R", "AN"))


@pytest.mark.parametrize("seed", range(5))
def test_ti_nn_ar(seed) -> None:
    got = contents(build("TI", "AR", "NN", 1, seed=seed))
    assert got[:2] == [(1, [3, 4], [5]), (2, [1, 5], [4])]
    user, rel, non = got[2]
    assert user == 3 and rel == [] and len(non) == 1 and set(non) <= {3, 4, 5}


@pytest.mark.parametrize("seed", range(5))
def test_ai_nn_ar(seed) -> None:
    got = contents(build("AI", "AR", "NN", 3, seed=seed))
    assert got[:2] == [(1, [3, 4], [5, 6, 7]), (2, [1, 5], [4, 6, 7])]
    user, rel, non = got[2]
    assert user == 3 and rel == [] and len(non) == 3 and set(non) <= {2, 3, 4, 5, 7}


def test_nn_samples_differ_across_sets_and_seeds() -> None:
    a = contents(build("AI", "1R", "NN", 1, seed=0))
    seen = {tuple(x[2][0] for x in contents(build("AI", "1R", "NN", 1, seed=s))) for s in range(20)}
    assert all(len(x[2]) == 1 for x in a)
    assert len(seen) > 1  # the draw depends on the seed
    assert {x[2][0] for x in a[:1]} <= {5, 6, 7}


def test_rating_column_keeps_judged_apart_from_unjudged() -> None:
    s = build("AI", "AR", "AN")
    u1 = s[s.user == 1].set_index("item")["rating"]
    assert u1[3] == 5.0 and u1[4] == 4.0 and u1[5] == 1.0  # item 5: judged non-relevant
    assert np.isnan(u1[6]) and np.isnan(u1[7])  # unjudged
    assert (s["stratum"] == 0).all()
    assert s.dtypes["set"] == np.int64 and s.dtypes["relevant"] == np.dtype(bool)


def test_ar_users_all_adds_users_without_test_ratings() -> None:
    train = pd.concat(
        [TRAIN, pd.DataFrame({"user": [4], "item": [2], "rating": [5.0]})], ignore_index=True
    )
    s = target_sets(
        train, TEST, Protocol("TI", "AR", "AN", threshold=4, ar_users="all"), items=ITEMS
    )
    assert contents(s)[-1] == (4, [], [1, 3, 4, 5])
    s_test = target_sets(train, TEST, Protocol("TI", "AR", "AN", threshold=4), items=ITEMS)
    assert s_test["user"].unique().tolist() == [1, 2, 3]


# -- NN sampling is uniform ---------------------------------------------------------------------


def test_nn_sampling_is_uniform_over_the_pool() -> None:
    # one user with 300 relevant test items among 400; the pool is the 100 other items
    items = np.arange(400)
    test = pd.DataFrame({"user": 0, "item": items[:300], "rating": 5.0})
    train = pd.DataFrame({"user": 1, "item": items, "rating": 1.0})
    s = target_sets(train, test, Protocol("AI", "1R", "NN", 10, threshold=4), seed=11)
    non = s.loc[~s.relevant, "item"]
    assert len(non) == 3000 and non.between(300, 399).all()
    assert not s.duplicated(["set", "item"]).any()  # without replacement
    counts = non.value_counts().reindex(np.arange(300, 400), fill_value=0)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_shared_nonrelevant_reuses_one_sample_per_user() -> None:
    items = np.arange(50)
    test = pd.DataFrame({"user": 0, "item": items[:20], "rating": 5.0})
    train = pd.DataFrame({"user": 1, "item": items, "rating": 1.0})
    s = target_sets(
        train, test, Protocol("AI", "1R", "NN", 5, threshold=4, shared_nonrelevant=True), seed=2
    )
    negs = {tuple(sorted(d.loc[~d.relevant, "item"])) for _, d in s.groupby("set")}
    assert len(negs) == 1 and len(next(iter(negs))) == 5
    s2 = target_sets(train, test, Protocol("AI", "1R", "NN", 5, threshold=4), seed=2)
    assert len({tuple(sorted(d.loc[~d.relevant, "item"])) for _, d in s2.groupby("set")}) > 1


def test_nn_raises_when_the_pool_is_too_small() -> None:
    with pytest.raises(ValueError, match="pool of user 1 .* holds only 1 items"):
        build("TI", "1R", "NN", 2)


def test_short_pool_shrink_takes_the_whole_pool() -> None:
    # TI pools have one item for u1 and u2, so |N_u| = 2 shrinks to the pool: the AN sets
    assert contents(build("TI", "1R", "NN", 2, short_pool="shrink")) == contents(
        build("TI", "1R", "AN")
    )
    got = contents(build("AI", "AR", "NN", 4, short_pool="shrink", seed=3))
    assert got[:2] == [(1, [3, 4], [5, 6, 7]), (2, [1, 5], [4, 6, 7])]  # pools of 3 < 4: all taken
    assert len(got[2][2]) == 4 and set(got[2][2]) <= {2, 3, 4, 5, 7}


# -- P1R, -10% head ---------------------------------------------------------------------------


def test_p1r_samples_within_the_relevant_items_percentile() -> None:
    # popularity |R(i)| over train+test: 1:3, 2:2, 3:2, 4:2, 5:2, 6:1, 7:0
    # m = 2 over 7 items by rank (1, 2, 3, 4 | 5, 6, 7): stratum 0 = {1, 2, 3, 4}, 1 = {5, 6, 7}
    s = build("AI", "1R", "AN", percentiles=2)
    got = {
        (int(d.user.iloc[0]), int(d.loc[d.relevant, "item"].iloc[0])): (
            int(d.stratum.iloc[0]),
            sorted(d.loc[~d.relevant, "item"]),
        )
        for _, d in s.groupby("set")
    }
    assert got == {
        (1, 3): (0, []),  # u1's pool in stratum 0: {1..4} minus train {1, 2} minus PR_test {3, 4}
        (1, 4): (0, []),
        (2, 1): (0, [4]),  # {1..4} minus {2, 3} minus {1, 5}
        (2, 5): (1, [6, 7]),
    }


def test_p1r_mean_averages_percentiles() -> None:
    per_set = pd.DataFrame({"set": [0, 1, 2], "stratum": [0, 0, 1], "P": [0.1, 0.3, 0.0]})
    assert protocol_mean(per_set) == pytest.approx((0.2 + 0.0) / 2)
    with pytest.raises(ValueError, match="1R only"):
        Protocol("TI", "AR", "AN", percentiles=10)


def test_exclude_items_removes_them_from_test_and_candidates() -> None:
    s = target_sets(
        TRAIN, TEST, Protocol("AI", "AR", "AN", threshold=4), items=ITEMS, exclude_items=[1, 5]
    )
    assert not s["item"].isin([1, 5]).any()
    # u2's test ratings (items 1 and 5) are all removed, so u2 has no AR set
    assert contents(s) == [(1, [3, 4], [6, 7]), (3, [], [2, 3, 4, 7])]


# -- uniform test profiles (§6.2) -------------------------------------------------------------


def test_uniform_test_size_hand_example() -> None:
    # counts 10 8 6 4 2, |R| = 30, sigma |R| = 9; eta_k = floor(0.8 c) = 8 6 4 3 1;
    # k eta_k = 8 12 12 12 5 -> largest k with k eta_k >= 9 is 4, eta = 3
    assert uniform_test_size(np.array([4, 10, 2, 8, 6]), sigma=0.3, epsilon=0.2) == (4, 3)
    with pytest.raises(ValueError, match="lower sigma"):
        uniform_test_size(np.array([2, 2, 2]), sigma=0.9, epsilon=0.5)


def test_uniform_test_split_gives_every_target_item_eta_test_ratings() -> None:
    rng = np.random.default_rng(0)
    counts = np.array([40, 30, 25, 20, 12, 8, 5, 3, 1])
    item = np.repeat(np.arange(len(counts)), counts)
    user = np.concatenate([rng.choice(100, c, replace=False) for c in counts])
    df = pd.DataFrame(
        {"user": user, "item": item, "rating": rng.integers(1, 6, len(item)).astype(float)}
    )
    sp = uniform_test_split(df, sigma=0.2, epsilon=0.2, seed=1)
    zeta, eta = uniform_test_size(counts, 0.2, 0.2)
    assert (len(sp.items), sp.eta) == (zeta, eta)
    per_item = sp.test["item"].value_counts()
    assert set(per_item.index) == set(sp.items) and (per_item == eta).all()
    assert len(sp.test) / len(df) >= 0.2
    tr_counts = sp.train["item"].value_counts()
    assert (tr_counts.reindex(sp.items) >= 0.2 * pd.Series(counts).reindex(sp.items)).all()
    whole = pd.concat([sp.train, sp.test]).sort_values(["user", "item"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(whole, df.sort_values(["user", "item"]).reset_index(drop=True))


# -- scoring and the 1R average (eq. 1) --------------------------------------------------------


def test_target_metrics_hand_example_and_eq1_average() -> None:
    s = build("TI", "1R", "AN")  # sets: (u1:3,5) (u1:4,5) (u2:1,4) (u2:5,4)
    scores = pd.DataFrame(
        {
            "user": [1, 1, 1, 2, 2, 2],
            "item": [3, 4, 5, 1, 4, 5],
            "score": [0.9, 0.1, 0.5, 0.2, 0.2, 0.8],
        }
    )
    per_set = target_metrics(attach_scores(s, scores), n=1)
    # u1/3 ranked first: hit; u1/4 below 5: miss;
    # u2/1 ties with 4 at 0.2 -> item 1 first (smaller id): hit; u2/5: hit
    assert per_set["P"].tolist() == [1.0, 0.0, 1.0, 1.0]
    np.testing.assert_allclose(per_set["nDCG"], [1.0, 0.0, 1.0, 1.0])
    # eq. 1: mean over the 4 positive test ratings
    assert protocol_mean(per_set) == pytest.approx(0.75)
    per_set2 = target_metrics(attach_scores(s, scores), n=2)
    np.testing.assert_allclose(per_set2["P"], [0.5, 0.5, 0.5, 0.5])
    np.testing.assert_allclose(per_set2["nDCG"], [1.0, 1 / np.log2(3), 1.0, 1.0])


def test_target_metrics_agree_with_trec_eval_in_ar() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(5)
    n_users, n_items = 30, 60
    rows = [
        (u, i, float(rng.integers(1, 6)))
        for u in range(n_users)
        for i in rng.choice(n_items, 15, replace=False)
    ]
    df = pd.DataFrame(rows, columns=["user", "item", "rating"])
    is_test = rng.random(len(df)) < 0.3
    train, test = df[~is_test], df[is_test]
    s = target_sets(train, test, Protocol("AI", "AR", "AN", threshold=4), items=np.arange(n_items))
    s["score"] = rng.random(len(s))
    per_set = target_metrics(s, n=10, gain="rating").set_index("user")
    qrels = {
        str(u): {str(i): int(r) for i, r in zip(d["item"], d["rating"], strict=True)}
        for u, d in s[s.relevant].groupby("user")
    }
    run = {
        str(u): {str(i): float(x) for i, x in zip(d["item"], d["score"], strict=True)}
        for u, d in s.groupby("user")
        if str(u) in qrels
    }
    res = pytrec_eval.RelevanceEvaluator(qrels, {"P_10", "ndcg_cut_10"}).evaluate(run)
    for u, m in res.items():
        assert per_set.loc[int(u), "P"] == pytest.approx(m["P_10"], abs=1e-12)
        assert per_set.loc[int(u), "nDCG"] == pytest.approx(m["ndcg_cut_10"], abs=1e-12)
    assert len(res) > 10


def test_scores_missing_pairs_raise_or_rank_last() -> None:
    s = build("TI", "1R", "AN")
    pairs = candidate_pairs(s)
    assert pairs.values.tolist() == [[1, 3], [1, 4], [1, 5], [2, 1], [2, 4], [2, 5]]
    partial = pairs.iloc[:-1].assign(score=1.0)  # (2, 5) unscored
    with pytest.raises(ValueError, match="no score"):
        attach_scores(s, partial)
    scored = attach_scores(s, partial, missing="last")
    per_set = target_metrics(scored, n=1)
    assert per_set["P"].tolist() == [1.0, 1.0, 1.0, 0.0]


def test_pairs_shared_by_systems_give_the_frames_computed_apart(monkeypatch) -> None:
    """Inside shared_pairs, candidate_pairs of the frame is computed once and scores for
    exactly those pairs are joined by each row's pair: the same frames as without it, for 1R
    sets whose rows repeat pairs, AR sets whose rows are the pairs, scores with NaN, and scores
    for other pairs (joined by search, as outside)."""
    rng = np.random.default_rng(3)
    users = np.repeat(np.arange(60), 12)
    train = pd.DataFrame({"user": users, "item": rng.integers(0, 40, len(users)),
                          "rating": rng.integers(1, 6, len(users)).astype(float)})
    train = train.drop_duplicates(["user", "item"]).reset_index(drop=True)
    test = train.sample(frac=0.3, random_state=1)
    train = train.drop(test.index).reset_index(drop=True)
    test = test.reset_index(drop=True)
    searched: list[int] = []
    lookup = scoring._lookup
    monkeypatch.setattr(scoring, "_lookup", lambda *a: searched.append(1) or lookup(*a))
    for p in (Protocol("TI", "1R", "NN", 5, threshold=4), Protocol("AI", "AR", "AN", threshold=4)):
        sets = target_sets(train, test, p, items=np.arange(40), seed=2)
        plain = candidate_pairs(sets)
        nan = random_scores(sets, 1)
        nan.loc[::7, "score"] = np.nan
        other = random_scores(sets, 2).iloc[::2].reset_index(drop=True)
        systems = [random_scores(sets, 5), nan, other]
        apart = [attach_scores(sets, s, missing="last") for s in systems]
        searched.clear()
        with shared_pairs(sets):
            pd.testing.assert_frame_equal(candidate_pairs(sets), plain)
            pd.testing.assert_frame_equal(random_scores(sets, 5), systems[0])
            together = [attach_scores(sets, s, missing="last") for s in systems[:2]]
            # the shared pairs' scores were gathered; only the other pairs were searched
            assert searched == []
            together.append(attach_scores(sets, systems[2], missing="last"))
            assert searched == [1]
            assert candidate_pairs(sets.copy()).equals(plain)  # another frame: computed
        for a, b in zip(apart, together, strict=True):
            pd.testing.assert_frame_equal(a, b)
        if p.relevant == "1R":
            assert len(plain) < len(sets)  # rows repeat pairs


def test_only_plain_numpy_numbers_count_as_numeric_ids() -> None:
    assert scoring._numeric(pd.Series([1, 2])) and scoring._numeric(pd.Series([1.0, 2.0]))
    assert not scoring._numeric(pd.Series([1.0, np.nan]))
    for other in (pd.Series(["a", "b"]), pd.Series([1, 2], dtype="Int64"),
                  pd.Series(["a", "b"], dtype=object)):
        assert not scoring._numeric(other), other.dtype


def test_pairs_shared_for_text_ids_are_computed_once_and_joined_as_outside(monkeypatch) -> None:
    sets = pd.DataFrame({"set": [0, 0, 1, 1], "user": ["a", "a", "a", "b"],
                         "item": ["x", "y", "x", "y"], "relevant": [True, False, True, False]})
    scores = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"],
                           "score": [0.3, 0.1, 0.7]})
    apart = attach_scores(sets, scores)
    made = []
    pairs_and_rows = scoring._pairs_and_rows
    monkeypatch.setattr(scoring, "_pairs_and_rows",
                        lambda *a, **k: made.append(1) or pairs_and_rows(*a, **k))
    with shared_pairs(sets):
        assert candidate_pairs(sets).values.tolist() == [["a", "x"], ["a", "y"], ["b", "y"]]
        assert candidate_pairs(sets).equals(candidate_pairs(sets))
        pd.testing.assert_frame_equal(attach_scores(sets, scores), apart)
    assert made == [1]  # once, on entering the block


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="share"):
        target_sets(TRAIN, TRAIN, Protocol(threshold=4))
    with pytest.raises(ValueError, match="lacks column 'rating'"):
        target_sets(TRAIN.drop(columns="rating"), TEST, Protocol(threshold=4))
    with pytest.raises(ValueError, match="duplicate"):
        target_sets(TRAIN, pd.concat([TEST, TEST.iloc[:1]]), Protocol(threshold=4))
    with pytest.raises(ValueError, match="NN needs"):
        Protocol("TI", "1R", "NN", None)


def test_item_and_random_scores_feed_evaluate_systems() -> None:
    s = build("TI", "1R", "AN")  # sets: (u1:3,5) (u1:4,5) (u2:1,4) (u2:5,4)
    pop = pd.Series({1: 3.0, 3: 2.0, 4: 2.0, 5: 1.0})
    scores = item_scores(s, pop)
    assert scores["score"].tolist() == [2.0, 2.0, 1.0, 3.0, 2.0, 1.0]
    # P@1 per set: 3>5 hit, 4>5 hit, 1>4 hit, 4>5 miss -> eq. 1 mean 3/4
    table = evaluate_systems(s, {"pop": scores, "rnd": random_scores(s, seed=1)}, n=1).set_index(
        "system"
    )
    assert table.loc["pop", "P@1"] == pytest.approx(0.75)
    assert 0.0 <= table.loc["rnd", "P@1"] <= 1.0
    r1, r2 = random_scores(s, seed=1), random_scores(s.iloc[::-1], seed=1)
    pd.testing.assert_frame_equal(r1, r2)  # a pair's random score does not depend on the others
    with pytest.raises(ValueError, match="no score"):
        item_scores(s, pop.drop(5))


def test_engine_metrics_agree_with_target_metrics_in_1r() -> None:
    rng = np.random.default_rng(4)
    df = pd.DataFrame(
        [
            (u, i, float(rng.integers(1, 6)))
            for u in range(40)
            for i in rng.choice(80, 20, replace=False)
        ],
        columns=["user", "item", "rating"],
    )
    is_test = rng.random(len(df)) < 0.3
    sets = target_sets(
        df[~is_test], df[is_test], Protocol("AI", "1R", "NN", 20, threshold=4), seed=1
    )
    systems = {"rnd": random_scores(sets, seed=3)}
    ours = evaluate_systems(sets, systems, n=5).set_index("system")
    engine = engine_metrics(sets, systems, ["P@5", "bpref"], threshold=4).set_index("metric")[
        "value"
    ]
    assert engine["P@5"] == pytest.approx(ours.loc["rnd", "P@5"], abs=1e-12)
    assert 0.0 <= engine["bpref"] <= 1.0


def toy_ratings(
    seed: int = 4, users: int = 40, items: int = 80, per_user: int = 20
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        [
            (u, i, float(rng.integers(1, 6)))
            for u in range(users)
            for i in rng.choice(items, per_user, replace=False)
        ],
        columns=["user", "item", "rating"],
    )


@pytest.mark.parametrize("candidates", ["AI", "TI"])
def test_one_r_an_metrics_equal_the_built_1r_an_sets(candidates) -> None:
    df = toy_ratings()
    is_test = np.random.default_rng(1).random(len(df)) < 0.3
    train, test = df[~is_test], df[is_test]
    ar = target_sets(train, test, Protocol(candidates, "AR", "AN", threshold=4))
    one = target_sets(train, test, Protocol(candidates, "1R", "AN", threshold=4))
    scores = random_scores(ar, 3).assign(score=lambda d: (d["score"] * 4).round())  # many ties
    got = one_r_an_metrics(attach_scores(ar, scores), 3)
    want = target_metrics(attach_scores(one, scores), 3)
    np.testing.assert_allclose(got["P"], want["P"])
    np.testing.assert_allclose(got["nDCG"], want["nDCG"])
    np.testing.assert_array_equal(got["user"], want["user"])
    np.testing.assert_array_equal(got["size"], one.groupby("set").size().to_numpy())


def test_target_metrics_do_not_depend_on_row_order() -> None:
    df = toy_ratings(5)
    is_test = np.random.default_rng(2).random(len(df)) < 0.3
    sets = target_sets(df[~is_test], df[is_test], Protocol("AI", "AR", "AN", threshold=4))
    scored = attach_scores(
        sets, random_scores(sets, 1).assign(score=lambda d: (d["score"] * 3).round())
    )
    a = target_metrics(scored, 5, gain="rating")
    b = target_metrics(scored.sample(frac=1.0, random_state=0), 5, gain="rating")
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("relevant", ["AR", "1R"])
def test_engine_metrics_per_set_whatever_the_row_order_and_with_ranks_given(relevant) -> None:
    # sets as target_sets orders them (grouped by set), the same rows shuffled, and the ranks
    # handed over as trials does: one per-set table, each set with its user and stratum
    df = toy_ratings(9, items=120, per_user=30)
    is_test = np.random.default_rng(4).random(len(df)) < 0.3
    strata = {"percentiles": 3, "short_pool": "shrink"} if relevant == "1R" else {}
    p = Protocol("TI", relevant, "NN", 15, threshold=4, **strata)
    sets = target_sets(df[~is_test], df[is_test], p, seed=2)
    assert sets["set"].nunique() > sets["user"].nunique() or relevant == "AR"
    systems = {"a": random_scores(sets, 1), "b": item_scores(sets, df["item"].value_counts())}
    names = ["P@5", "bpref", "nDCG@5"]
    key = ["system", "set", "metric"]
    got = engine_metrics(sets, systems, names, 4, per_set=True)
    got = got.sort_values(key).reset_index(drop=True)
    shuffled = engine_metrics(
        sets.sample(frac=1.0, random_state=1), systems, names, 4, per_set=True
    )
    pd.testing.assert_frame_equal(got, shuffled.sort_values(key).reset_index(drop=True))
    ranks = {k: rank_in_sets(attach_scores(sets, v)) for k, v in systems.items()}
    given = engine_metrics(sets, systems, names, 4, per_set=True, ranks=ranks)
    pd.testing.assert_frame_equal(got, given.sort_values(key).reset_index(drop=True))
    first = sets.groupby("set")[["user", "stratum"]].first()
    np.testing.assert_array_equal(got["user"], first.loc[got["set"], "user"])
    np.testing.assert_array_equal(got["stratum"], first.loc[got["set"], "stratum"])
    assert got["stratum"].nunique() == 3 or relevant == "AR"


def test_engine_metrics_depth_and_judged_options() -> None:
    df = toy_ratings(8, items=200, per_user=40)
    is_test = np.random.default_rng(3).random(len(df)) < 0.3
    sets = target_sets(df[~is_test], df[is_test], Protocol("AI", "AR", "AN", threshold=4))
    sys_ = {
        "a": random_scores(sets, 1),
        "b": random_scores(sets, 2).assign(score=lambda d: d["score"].round(1)),
    }
    names = ["P@10", "R@10", "bpref", "infAP", "AP", "RR", "nDCG@10"]
    full = engine_metrics(sets, sys_, names, 4)
    for depth in ("judged", None):
        np.testing.assert_allclose(
            engine_metrics(sets, sys_, names, 4, depth=depth)["value"], full["value"]
        )
    cut = engine_metrics(sets, sys_, ["P@10", "nDCG@10"], 4, depth=10)
    np.testing.assert_allclose(
        cut["value"], engine_metrics(sets, sys_, ["P@10", "nDCG@10"], 4)["value"]
    )
    # grades from the relevant items only: nDCG with rating gains equals target_metrics' rating gain
    lin = engine_metrics(sets, {"a": sys_["a"]}, ["nDCG(gain=linear)@10"], 4, judged="relevant")[
        "value"
    ].iloc[0]
    ours = target_metrics(attach_scores(sets, sys_["a"]), 10, gain="rating")
    rel_sets = sets.groupby("set")["relevant"].any()
    assert lin == pytest.approx(ours.set_index("set").loc[rel_sets[rel_sets].index, "nDCG"].mean())
    with pytest.raises(ValueError, match="judged"):
        engine_metrics(sets, sys_, ["P@10"], 4, judged="some")


@pytest.mark.parametrize("relevant", ["AR", "1R"])
def test_partial_ranks_agree_with_the_full_sort_above_the_depth(relevant) -> None:
    from recmeta.protocols import rank_in_sets

    df = toy_ratings(9, users=60, items=300, per_user=40)
    is_test = np.random.default_rng(4).random(len(df)) < 0.3
    p = (
        Protocol("AI", "AR", "AN", threshold=4)
        if relevant == "AR"
        else Protocol("TI", "1R", "NN", 30, threshold=4)
    )
    sets = target_sets(df[~is_test], df[is_test], p)
    scored = attach_scores(
        sets, random_scores(sets, 1).assign(score=lambda d: (d["score"] * 6).round())
    )
    full = rank_in_sets(scored)
    # independent: a pandas sort by (set, score desc, item)
    ref = scored.sort_values(["set", "score", "item"], ascending=[True, False, True])
    ref_rank = ref.groupby("set").cumcount().reindex(scored.index).to_numpy()
    np.testing.assert_array_equal(full, ref_rank)
    for depth in (1, 5, 10):
        part = rank_in_sets(scored, depth=depth)
        top = full < depth
        np.testing.assert_array_equal(part[top], full[top])
        assert (part[~top] >= depth).all()


def test_target_metrics_rank_ties_as_the_engine_item_id_rule() -> None:
    """The ranks protocols hand to the engine are its ties="item_id" order: building the runs from
    the scores with that rule (the engine sorting) gives the same values, and trec_eval's rule
    other ones."""
    from recmeta.metrics import Judgments, Runs, score_matrices

    df = toy_ratings(9)
    is_test = np.random.default_rng(4).random(len(df)) < 0.3
    sets = target_sets(df[~is_test], df[is_test], Protocol("AI", "AR", "AN", threshold=4))
    scored = attach_scores(
        sets, random_scores(sets, 5).assign(score=lambda d: (d["score"] * 3).round())
    )
    ours = target_metrics(scored, 5, gain="rating").set_index("set")
    rel = scored[scored["relevant"]]
    j = Judgments.from_frame(rel[["set", "item", "rating"]], 4, user_col="set")
    by_engine = {}
    for rule in ("item_id", "trec_eval"):
        runs = Runs.from_frame(
            scored[scored["set"].isin(j.users)], j, user_col="set", system="s", ties=rule
        )
        by_engine[rule] = score_matrices(j, runs, ["P@5", "nDCG@5"])
    got = ours.loc[j.users]
    np.testing.assert_allclose(got["P"], by_engine["item_id"]["P@5"][0], atol=1e-12)
    np.testing.assert_allclose(got["nDCG"], by_engine["item_id"]["nDCG@5"][0], atol=1e-12)
    assert not np.allclose(got["nDCG"], by_engine["trec_eval"]["nDCG@5"][0])  # ties matter here


@pytest.mark.parametrize("ids", ["int", "str"])
def test_pairs_scores_and_lemma_follow_their_pandas_definitions(ids) -> None:
    """candidate_pairs, attach_scores and lemma_bounds take numpy paths on numeric ids; the
    pandas operations they stand for (drop_duplicates, sort, left merge) give the same frames."""
    rng = np.random.default_rng(11)
    df = pd.DataFrame(
        [
            (u, i, float(rng.integers(1, 6)))
            for u in range(1, 41)
            for i in rng.choice(np.arange(1, 81), 20, replace=False)
        ],
        columns=["user", "item", "rating"],
    )
    if ids == "str":
        df["user"], df["item"] = df["user"].map("u{:03d}".format), df["item"].map("i{:03d}".format)
    test_rows = rng.random(len(df)) < 0.25
    train, test = df[~test_rows], df[test_rows]
    p = Protocol("AI", "1R", "NN", 9, threshold=4, shared_nonrelevant=True)
    sets = target_sets(train, test, p, seed=3, items=df["item"].unique())
    pairs = candidate_pairs(sets)
    want = sets[["user", "item"]].drop_duplicates().sort_values(["user", "item"])
    pd.testing.assert_frame_equal(pairs, want.reset_index(drop=True))
    # scores for most pairs (the others rank last), with ties
    scores = pairs.sample(frac=0.8, random_state=1).sort_values(["user", "item"])
    scores = scores.assign(score=rng.integers(0, 5, len(scores)).astype(float))
    got = attach_scores(sets, scores, missing="last")
    merged = sets.merge(scores, on=["user", "item"], how="left")
    merged["score"] = merged["score"].fillna(-np.inf)
    pd.testing.assert_frame_equal(got, merged)
    lower, value, upper = lemma_bounds(got, 5)
    # the lemma's bounds from their definition: ranks of each user's union of sets
    union = got.drop_duplicates(["user", "item"]).sort_values(
        ["user", "score", "item"], ascending=[True, False, True]
    )
    union["rank"] = union.groupby("user").cumcount()
    m = 5 + union.groupby("user")["relevant"].transform("sum") - 1
    n_pos = int(got["relevant"].sum())
    assert lower == pytest.approx((union["relevant"] & (union["rank"] < 5)).sum() / (5 * n_pos))
    assert upper == pytest.approx((union["relevant"] & (union["rank"] < m)).sum() / (5 * n_pos))
    assert value == pytest.approx(target_metrics(got, 5)["P"].mean())
    bad = got.copy()
    twice = bad.duplicated(["user", "item"], keep=False).to_numpy()
    bad.loc[np.flatnonzero(twice)[0], "score"] += 0.5
    with pytest.raises(ValueError, match="different scores"):
        lemma_bounds(bad, 5)


@pytest.mark.parametrize("depth", [None, 1, 3, 50])
@pytest.mark.parametrize("grouped", [True, False])
def test_rank_in_sets_is_the_lexsort_reading_on_ties_infinities_and_uneven_sets(
    depth, grouped
) -> None:
    """The compiled per-set sort against one lexsort by (set, score desc, item): exact ranks
    everywhere without a depth; with one, exact below it and the depth itself for the rows
    scoring below their set's depth-th largest score (sets of 0 to 12 rows, -inf scores)."""
    from recmeta.protocols import rank_in_sets

    rng = np.random.default_rng(3 if depth is None else depth)
    sizes = rng.integers(0, 13, size=30)
    s = np.repeat(np.arange(30) * 2, sizes)  # set ids with gaps; empty sets have no rows
    item = np.concatenate([np.sort(rng.choice(100, k, replace=False)) for k in sizes])
    score = np.round(rng.random(len(s)) * 4)
    score[rng.random(len(s)) < 0.1] = -np.inf
    frame = pd.DataFrame({"set": s, "item": item, "score": score})
    if not grouped:
        frame = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    s, item, score = (frame[c].to_numpy() for c in ("set", "item", "score"))
    order = np.lexsort((item, -score, s))
    full = np.empty(len(s), dtype=np.int64)
    full[order] = np.arange(len(s)) - np.searchsorted(s[order], s[order], side="left")
    got = rank_in_sets(frame, depth=depth)
    if depth is None or not grouped:
        np.testing.assert_array_equal(got, full)
        return
    # the depth-th largest score of each set larger than depth: rows below it get depth
    floor = (
        pd.Series(score)
        .groupby(s)
        .transform(lambda x: np.sort(x.to_numpy())[::-1][depth - 1] if len(x) > depth else -np.inf)
    )
    want = np.where(score < floor.to_numpy(), depth, full)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="depth"):
        rank_in_sets(frame, depth=0)


@pytest.mark.parametrize("kind", ["grouped", "ties", "unordered", "nan-item", "one-row"])
def test_set_codes_compiled_pass_equals_the_numpy_reading(kind) -> None:
    """Numeric columns take a compiled pass; object columns the numpy comparisons: the same
    set ids, codes and verdict on grouped rows, equal items, rows out of order and NaN items."""
    from recmeta.protocols import set_codes

    rng = np.random.default_rng(len(kind))
    sizes = rng.integers(1, 9, size=400)
    s = np.repeat(np.sort(rng.choice(5000, 400, replace=False)), sizes)
    item = np.concatenate([np.sort(rng.integers(0, 50, k)) for k in sizes]).astype(float)
    if kind == "ties":
        item = np.round(item / 10)
    elif kind == "unordered":
        s[[100, 900]] = s[[900, 100]]
    elif kind == "nan-item":
        item[500] = np.nan
    elif kind == "one-row":
        s, item = s[:1], item[:1]
    fast = set_codes(s, item)
    slow = set_codes(s.astype(object), item.astype(object))
    assert fast[2] == slow[2] == (kind in ("grouped", "ties", "one-row"))
    np.testing.assert_array_equal(fast[0], slow[0].astype(s.dtype))
    np.testing.assert_array_equal(fast[1], slow[1].astype(np.int64))
    # the codes number the sets in their order of appearance, from 0
    np.testing.assert_array_equal(fast[0][fast[1]], s)
