"""Judgments, runs, names and the evaluation rules (coverage, exclusion, ties, subsets)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmeta.metrics import (
    Judgments,
    JudgmentsError,
    MetricNameError,
    Runs,
    RunsError,
    evaluate,
    parse_metric,
    pivot,
    score_matrix,
    score_rankings,
)


@pytest.fixture
def small():
    test = pd.DataFrame(
        {
            "user": [1, 1, 1, 2, 2, 3],
            "item": [10, 11, 12, 10, 13, 11],
            "rating": [5.0, 2.0, 4.0, 3.0, 4.0, 1.0],
        }
    )
    j = Judgments.from_frame(test, threshold=4)
    recs = pd.DataFrame(
        {
            "system": ["a"] * 4 + ["b"] * 2,
            "user": [1, 1, 1, 3, 1, 1],
            "item": [12, 99, 10, 11, 11, 10],
            "score": [3.0, 2.0, 1.0, 1.0, 2.0, 1.0],
        }
    )
    return j, Runs.from_frame(recs, j)


def test_parse_names_and_parameters():
    assert parse_metric("P@10").name == "P" and parse_metric("P@10").k == 10
    assert parse_metric("ndcg@5").name == "nDCG"
    assert parse_metric("Recall@3").name == "R"
    assert parse_metric("RR").k is None
    spec = parse_metric("SRecall(gamma=inf)@10")
    assert spec.param("gamma") == np.inf and str(spec) == "SRecall(gamma=inf)@10"
    assert str(parse_metric("nDCG(gain=exp)@10")) == "nDCG(gain=exp)@10"
    assert str(parse_metric("nDCG@10")) == "nDCG@10"
    # an explicit gain is kept: it overrides the evaluation's gain= option
    assert str(parse_metric("nDCG(gain=linear)@10")) == "nDCG(gain=linear)@10"
    assert str(parse_metric("nDCG(gain=exponential)@10")) == "nDCG(gain=exp)@10"


@pytest.mark.parametrize("bad", ["Prec@10", "P@0", "P@x", "nDCG(gain=cubic)@10", "P(k=3)@2", ""])
def test_bad_names_list_the_known_ones(bad):
    with pytest.raises(MetricNameError) as err:
        parse_metric(bad)
    if bad in ("Prec@10", "P@0", "P@x", ""):
        assert "nDCG" in str(err.value) and "SRecall" in str(err.value)


def test_judgments_keep_judged_nonrelevant_apart_from_unjudged(small):
    j, _ = small
    assert list(j.relevant_counts()) == [2, 1, 0]
    assert list(j.judged_counts()) == [3, 2, 1]
    assert list(j.evaluable()) == [True, True, False]


@pytest.mark.parametrize(
    "frame, match",
    [
        (pd.DataFrame({"user": [1], "item": [1]}), "rating"),
        (pd.DataFrame({"user": [1, 1], "item": [1, 1], "rating": [1.0, 2.0]}), "duplicate"),
        (pd.DataFrame({"user": [1], "item": [1], "rating": [np.nan]}), "NaN"),
        (pd.DataFrame({"user": [1], "item": [1], "rating": [-1.0]}), "negative"),
        (pd.DataFrame({"user": [1], "item": [1], "rating": ["4"]}), "numeric"),
    ],
)
def test_bad_judgments_raise(frame, match):
    with pytest.raises(JudgmentsError, match=match):
        Judgments.from_frame(frame, threshold=4)


def test_bad_runs_raise(small):
    j, _ = small
    with pytest.raises(RunsError, match="twice"):
        Runs.from_frame(pd.DataFrame({"user": [1, 1], "item": [10, 10], "score": [1.0, 2.0]}),
                        j, system="s")
    with pytest.raises(RunsError, match="score"):
        Runs.from_frame(pd.DataFrame({"user": [1], "item": [10]}), j, system="s")
    with pytest.raises(RunsError, match="system"):
        Runs.from_frame(pd.DataFrame({"user": [1], "item": [10], "score": [1.0]}), j)


def test_runs_layout_and_unjudged_items(small):
    j, runs = small
    assert list(runs.systems) == ["a", "b"]
    assert runs.depth == 3
    # item 99 is not judged: it gets a code after the judged items
    assert runs.items[len(j.items)] == 99
    assert list(runs.items[runs.ranks[0, 0]]) == [12, 99, 10]
    assert (runs.ranks[0, 1] == -1).all()  # user 2 has no list from system a


def test_hand_worked_values_and_rules(small):
    j, runs = small
    res = pivot(evaluate(j, runs, ["P@2", "R@3", "AP@3", "RR"], per_user=True))
    # system a, user 1: list 12(4) 99(unjudged) 10(5); relevant {10, 12}
    assert res.loc[("a", 1), "P@2"] == pytest.approx(0.5)
    assert res.loc[("a", 1), "R@3"] == pytest.approx(1.0)
    assert res.loc[("a", 1), "AP@3"] == pytest.approx((1 + 2 / 3) / 2)
    # user 2 has relevant items but no list from a: coverage penalty 0
    assert res.loc[("a", 2), "RR"] == 0.0
    # user 3 has no relevant item: excluded
    assert 3 not in res.index.get_level_values("user")
    means = pivot(evaluate(j, runs, ["AP@3"]))
    assert means.loc["a", "AP@3"] == pytest.approx(((1 + 2 / 3) / 2 + 0) / 2)
    # system b: user 1 list 11(2) 10(5): AP = (1/2)/2
    assert means.loc["b", "AP@3"] == pytest.approx((0.25 + 0) / 2)


def test_score_ties_are_broken_by_item_text_descending():
    j = Judgments.from_frame(pd.DataFrame({"user": [1], "item": [9], "rating": [1.0]}), 1)
    # all tied: text order descending puts "9" before "10" before "1"
    runs = Runs.from_frame(
        pd.DataFrame({"user": [1, 1, 1], "item": [1, 10, 9], "score": [0.5] * 3}), j, system="s"
    )
    assert list(runs.items[runs.ranks[0, 0]]) == [9, 10, 1]
    assert score_matrix(j, runs, "RR")[0, 0] == 1.0


def test_subset_equals_rebuilding_from_the_masked_frame(small):
    rng = np.random.default_rng(3)
    n_users, n_items = 40, 30
    frame = pd.DataFrame(
        [(u, i, float(rng.integers(1, 6))) for u in range(n_users) for i in range(n_items)
         if rng.random() < 0.4],
        columns=["user", "item", "rating"],
    )
    j = Judgments.from_frame(frame, threshold=4)
    recs = pd.DataFrame(
        [(s, u, i, rng.random()) for s in "xyz" for u in range(n_users)
         for i in rng.choice(n_items + 5, 10, replace=False)],
        columns=["system", "user", "item", "score"],
    )
    runs = Runs.from_frame(recs, j)
    metrics = ["P@5", "nDCG@10", "bpref@10", "infAP@10", "muAP@10", "AUC"]
    for _ in range(3):
        mask = rng.random(j.n_entries) < 0.6
        sub = j.subset(mask)
        rebuilt = Judgments.from_frame(j.to_frame()[mask], threshold=4,
                                       users=j.users, items=j.items, max_grade=j.max_grade)
        runs2 = Runs.from_frame(recs, rebuilt)
        for m in metrics:
            np.testing.assert_allclose(score_matrix(sub, runs, m), score_matrix(rebuilt, runs2, m),
                                       equal_nan=True)
        # nested subsets compose
        mask2 = rng.random(sub.n_entries) < 0.5
        np.testing.assert_array_equal(sub.subset(mask2).to_frame().values,
                                      sub.to_frame()[mask2].values)


def test_runs_reject_other_judgments(small):
    j, runs = small
    other = Judgments.from_frame(pd.DataFrame({"user": [7], "item": [1], "rating": [5.0]}), 4)
    with pytest.raises(RunsError, match="other judgments"):
        score_matrix(other, runs, "P@1")


def test_gmean_floor_and_unknown_aggregate(small):
    j, runs = small
    g = evaluate(j, runs, ["AP@3"], aggregate="gmean")
    # system a: users 1 (0.8333) and 2 (0 -> 1e-5)
    assert g.set_index("system").loc["a", "value"] == pytest.approx(np.sqrt(5 / 6 * 1e-5))
    with pytest.raises(ValueError, match="gmean"):
        evaluate(j, runs, ["AP@3"], aggregate="median")


def test_score_rankings_for_synthetic_permutations():
    ref = np.array([3, 3, 2, 1, 0, 0], dtype=float)
    out = score_rankings(np.stack([ref, ref[::-1]]), ["muAP", "NDCNG@6", "nDCG@6"])
    assert out["muAP"][0] == pytest.approx(1.0)
    assert out["NDCNG@6"][0] == pytest.approx(1.0)
    assert out["nDCG@6"][0] == pytest.approx(1.0)
    assert (out["muAP"][1] < 1) and (out["NDCNG@6"][1] < 1)


def test_cutoff_beyond_list_length(small):
    j, runs = small
    m = score_matrix(j, runs, "P@10")
    assert m[0, 0] == pytest.approx(2 / 10)  # trec_eval divides by k, not by the list length


def test_runs_from_lenskit_item_lists():
    from lenskit.data import ItemList, ItemListCollection

    j = Judgments.from_frame(
        pd.DataFrame({"user": [1, 1, 2], "item": [5, 3, 7], "rating": [5.0, 4.0, 5.0]}), 4
    )
    scored = ItemListCollection.empty(["user_id"])
    scored.add(ItemList(item_ids=[3, 5, 9], scores=[0.9, 0.9, 0.1]), user_id=1)
    ordered = ItemListCollection.empty(["user_id"])
    ordered.add(ItemList(item_ids=[7, 2], ordered=True), user_id=2)
    runs = Runs.from_lenskit({"scored": scored, "ordered": ordered}, j)
    assert list(runs.systems) == ["scored", "ordered"]
    # tie 0.9/0.9 broken by item text descending: 5 before 3
    assert list(runs.items[runs.ranks[0, 0]]) == [5, 3, 9]
    assert list(runs.items[runs.ranks[1, 1, :2]]) == [7, 2]
    assert score_matrix(j, runs, "RR")[1, 1] == 1.0


def _runs_through_to_df(collections, judgments):
    """The runs as read through LensKit's ``to_df`` (Runs.from_lenskit's former reading)."""
    import warnings

    frames = []
    for name, coll in collections.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = coll.to_df()
        if df.empty:
            continue
        has_rank = "rank" in df.columns and df["rank"].notna().all()
        key = "rank" if has_rank else "score"
        frames.append(pd.DataFrame({"system": name, "user": df[coll.key_fields[0]].to_numpy(),
                                    "item": df["item_id"].to_numpy(),
                                    key: df[key].to_numpy(np.float64)}))
    if len({"rank" in f.columns for f in frames}) > 1:  # some ranked, some scored
        from recmeta.metrics._runs import _rank_within

        frames = [f if "rank" in f.columns else f.assign(rank=_rank_within(f)).drop(columns="score")
                  for f in frames]
    return Runs.from_frame(pd.concat(frames, ignore_index=True), judgments)


@pytest.mark.parametrize("ids", ["int", "str"])
def test_runs_from_lenskit_read_the_lists_as_lenskits_to_df_holds_them(ids):
    """Ordered lists, scored lists (with ties), a list left empty, string or integer ids: the
    runs equal those read through ``ItemListCollection.to_df``."""
    from lenskit.data import ItemList, ItemListCollection

    rng = np.random.default_rng(7)
    cast = (lambda a: np.array([f"x{v}" for v in a], dtype=object)) if ids == "str" else np.asarray
    users = cast(np.arange(1, 41))
    pairs = pd.DataFrame({"user": np.repeat(users, 6), "item": cast(rng.integers(0, 60, 240)),
                          "rating": rng.integers(1, 6, 240).astype(float)})
    j = Judgments.from_frame(pairs.drop_duplicates(["user", "item"]), 4)
    ordered, scored = ItemListCollection.empty(["user_id"]), ItemListCollection.empty(["user_id"])
    for u in users:
        items = cast(rng.choice(80, 25, replace=False))
        ordered.add(ItemList(item_ids=items, ordered=True), user_id=u)
        scored.add(ItemList(item_ids=items, scores=rng.integers(0, 5, 25) / 4), user_id=u)
    scored.add(ItemList(item_ids=cast(np.zeros(0, dtype=int))), user_id=cast([99])[0])
    for colls in ({"ordered": ordered}, {"scored": scored}, {"o": ordered, "s": scored}):
        mine, ref = Runs.from_lenskit(colls, j), _runs_through_to_df(colls, j)
        assert list(mine.systems) == list(ref.systems)
        assert mine.items.equals(ref.items) and mine.n_judged_items == ref.n_judged_items
        assert np.array_equal(mine.ranks, ref.ranks)
        assert (mine.tied is None) == (ref.tied is None)
        assert mine.tied is None or np.array_equal(mine.tied, ref.tied)


# ------------------------------------------------------------------ trec_eval's names and rules
@pytest.mark.parametrize(
    "trec, ours",
    [("P_10", "P@10"), ("P.10", "P@10"), ("recall_100", "R@100"), ("map_cut_100", "AP@100"),
     ("ndcg_cut_10", "nDCG@10"), ("success_1", "Success@1"), ("recip_rank", "RR"),
     ("map", "AP"), ("ndcg", "nDCG"), ("Rprec", "Rprec"), ("11pt_avg", "IPrec11"),
     ("num_q", "NumQ"), ("num_ret", "NumRet"), ("num_rel", "NumRel"),
     ("num_rel_ret", "NumRelRet"), ("iprec_at_recall_0.10", "IPrec(recall=0.1)"),
     ("gm_map", "gm_AP"), ("gm_bpref", "gm_bpref"), ("infAP", "infAP")],
)
def test_trec_eval_names(trec, ours):
    assert parse_metric(trec) == parse_metric(ours)
    assert str(parse_metric(ours)) == ours


def test_names_with_several_values_and_required_parameters():
    with pytest.raises(MetricNameError, match="expand_trec_names"):
        parse_metric("P.5,10")
    with pytest.raises(MetricNameError, match="recall=0.5"):
        parse_metric("IPrec@10")
    with pytest.raises(MetricNameError):
        parse_metric("IPrec(recall=1.5)")
    with pytest.raises(MetricNameError, match="geometric mean of a count"):
        parse_metric("gm_NumRet")
    assert parse_metric("gm_nDCG(gain=exp)@10").aggregate == "gmean"


def test_counts_are_summed_and_gm_names_are_geometric(small):
    j, runs = small
    res = pivot(evaluate(j, runs, ["NumRet@2", "NumRel", "NumQ", "gm_AP@3", "AP@3"]))
    # system a: user 1 list 12 99 10 (2 relevant), user 2 no list; b: user 1 list 11 10
    assert res.loc["a", "NumRet@2"] == 2 and res.loc["b", "NumRet@2"] == 2
    assert res.loc["a", "NumRel"] == 3 and res.loc["a", "NumQ"] == 2
    assert res.loc["a", "gm_AP@3"] == pytest.approx(np.sqrt(5 / 6 * 1e-5))
    assert res.loc["a", "AP@3"] == pytest.approx(5 / 12)


def test_ndcg_without_cutoff_has_the_whole_ideal():
    """Ideal over every judged item, whatever the list length (trec_eval ndcg): the user
    judged 3 relevant items and the list holds one, at rank 1; the ideal is 1 + 1/log2(3) +
    1/2, not cut at the depth of the longest list (here 1)."""
    j = Judgments.from_frame(
        pd.DataFrame({"user": [1, 1, 1], "item": [1, 2, 3], "rating": [1.0, 1.0, 1.0]}), 1)
    runs = Runs.from_frame(pd.DataFrame({"user": [1], "item": [1], "score": [1.0]}), j,
                           system="s")
    ideal = 1 + 1 / np.log2(3) + 1 / 2
    assert score_matrix(j, runs, "nDCG")[0, 0] == pytest.approx(1 / ideal)
    assert score_matrix(j, runs, "nDCG@1")[0, 0] == pytest.approx(1.0)


def test_negative_grades_are_pooled_only_when_asked():
    frame = pd.DataFrame({"user": [1, 1, 1], "item": [1, 2, 3], "rating": [2.0, -1.0, 0.0]})
    with pytest.raises(JudgmentsError, match="negative='pooled'"):
        Judgments.from_frame(frame, threshold=1)
    j = Judgments.from_frame(frame, threshold=0, negative="pooled")
    # item 2 is in the pool, not judged: neither relevant (even at τ = 0) nor judged
    assert list(j.relevant_counts()) == [2] and list(j.judged_counts()) == [2]
    runs = Runs.from_frame(pd.DataFrame({"user": [1, 1, 1], "item": [2, 9, 3],
                                         "score": [3.0, 2.0, 1.0]}), j, system="s")
    only = runs.only_judged(j)
    assert list(only.ranks[0, 0]) == [j.items.get_loc(3), -1, -1]
    assert score_matrix(j, runs, "NumRelRet")[0, 0] == 1
    assert score_matrix(j, runs, "nDCG")[0, 0] == pytest.approx((0 / np.log2(4)) / 2)


def test_users_all_scores_users_without_relevant_items(small):
    j, runs = small
    # user 3 judged item 11 with 1 (< τ = 4) and system a lists it: nothing relevant, so P and
    # AP are 0, but nDCG reads the grade as gain, as trec_eval does: 1/1 over an ideal of 1
    rel = score_matrix(j, runs, "nDCG@2")
    every = score_matrix(j, runs, "nDCG@2", users="all")
    assert np.isnan(rel[0, 2]) and every[0, 2] == pytest.approx(1.0)
    assert score_matrix(j, runs, "AP", users="all")[0, 2] == 0.0
    assert score_matrix(j, runs, "P@2", users="all")[0, 2] == 0.0
    np.testing.assert_array_equal(rel[:, :2], every[:, :2])
