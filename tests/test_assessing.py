"""The assessing-ranking-metrics study: fold pooling, the judged-position scorer, masks, claims.

Independent checks: the metric engine (itself tested against trec_eval) for every value of the
judged-position scorer, on random runs and random subsets of the judgments; folds evaluated one
at a time for the pooling; hand-worked examples for the per-user pooling and the claims.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmeta import agreement, assessing, incompleteness
from recmeta.metrics import Judgments, Runs, aggregate, score_matrices


def random_fold(rng: np.random.Generator, n_users=40, n_items=60, depth=30, systems=4,
                user_offset=0):
    """A random test frame (grades 1-5, some users without any relevant item) and runs."""
    rows = []
    for u in range(n_users):
        items = rng.choice(n_items, rng.integers(1, 15), replace=False)
        grades = rng.integers(1, 6, items.size).astype(float)
        if u % 7 == 0:
            grades = np.minimum(grades, 3.0)  # no relevant item: excluded from the means
        rows.append(pd.DataFrame({"user": u + user_offset, "item": items, "rating": grades}))
    test = pd.concat(rows, ignore_index=True)
    runs = []
    for s in range(systems):
        for u in range(n_users):
            if u % 11 == 5 and s == 1:
                continue  # an empty list: every metric scores 0
            n = rng.integers(1, depth + 1)
            items = rng.choice(n_items + 10, n, replace=False)  # some never judged
            runs.append(pd.DataFrame({"system": f"s{s}", "user": u + user_offset, "item": items,
                                      "score": -np.arange(n, dtype=float)}))
    return test, pd.concat(runs, ignore_index=True)


def engine(judgments, runs, k):
    return score_matrices(judgments, runs, assessing.measures(k))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [100, 10])
def test_hit_scorer_equals_the_engine(seed, k):
    rng = np.random.default_rng(seed)
    test, frame = random_fold(rng)
    j = Judgments.from_frame(test, threshold=4, max_grade=5)
    r = Runs.from_frame(frame, j)
    scorer = assessing.HitScorer(j, r, k, infap="trec")
    keeps = [None, rng.random(j.n_entries) < 0.6, rng.random(j.n_entries) < 0.2]
    for keep in keeps:
        mine = scorer.score(keep)
        ref = engine(j if keep is None else j.subset(keep), r, k)
        for m in assessing.METRICS:
            a, b = mine[m], ref[f"{m}@{k}"]
            assert np.array_equal(np.isnan(a), np.isnan(b)), m
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=m)


def test_hit_scorer_by_hand():
    # one user, relevant items a (5) and b (4), judged non-relevant c (2); list: x c a y b
    test = pd.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "rating": [5.0, 4.0, 2.0]})
    j = Judgments.from_frame(test, threshold=4, max_grade=5)
    run = pd.DataFrame({"system": "s", "user": 1, "item": list("xcayb"), "rank": [1, 2, 3, 4, 5]})
    got = assessing.HitScorer(j, Runs.from_frame(run, j), 5, infap="trec").score()
    v = {m: float(got[m][0, 0]) for m in assessing.METRICS}
    assert v["P"] == pytest.approx(2 / 5)
    assert v["R"] == pytest.approx(1.0)
    assert v["F1"] == pytest.approx(2 * 0.4 * 1 / 1.4)
    assert v["AP"] == pytest.approx((1 / 3 + 2 / 5) / 2)
    dcg = 2 / np.log2(3) + 5 / np.log2(4) + 4 / np.log2(6)
    idcg = 5 + 4 / np.log2(3) + 2 / np.log2(4)
    assert v["nDCG"] == pytest.approx(dcg / idcg)
    assert v["RR"] == pytest.approx(1 / 3)
    g = lambda r: (2**r - 1) / 32  # noqa: E731
    err = g(2) / 2 + (1 - g(2)) * g(5) / 3 + (1 - g(2)) * (1 - g(5)) * g(4) / 5
    assert v["ERR"] == pytest.approx(err)
    # bpref: one judged non-relevant above each relevant item, min(|N|, |R|) = 1
    assert v["bpref"] == pytest.approx(0.0)
    eps = 1e-5
    e3 = 1 / 3 + (2 / 3) * (1 / 2) * (0 + eps) / (1 + 2 * eps)
    e5 = 1 / 5 + (4 / 5) * (2 / 4) * (1 + eps) / (2 + 2 * eps)
    assert v["infAP"] == pytest.approx((e3 + e5) / 2)


def test_hit_scorer_refuses_bad_masks():
    rng = np.random.default_rng(3)
    test, frame = random_fold(rng, n_users=5)
    j = Judgments.from_frame(test, threshold=4)
    scorer = assessing.HitScorer(j, Runs.from_frame(frame, j))
    with pytest.raises(ValueError, match="one flag per test row"):
        scorer.score(np.ones(j.n_entries + 1, dtype=bool))
    with pytest.raises(ValueError, match="one flag per test row"):
        scorer.score(np.ones(j.n_entries))
    with pytest.raises(ValueError, match="cut-off"):
        assessing.HitScorer(j, Runs.from_frame(frame, j), 0)
    with pytest.raises(ValueError, match="infap"):
        assessing.HitScorer(j, Runs.from_frame(frame, j), infap="paper")


@pytest.mark.parametrize("seed", [0, 4])
def test_pooled_infap_is_trec_eval_with_unrated_items_pooled_but_unjudged(seed):
    """Valcarce et al. (2020, eq. 11) = trec_eval's infAP with every ranked unrated item at -1."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(seed)
    test, frame = random_fold(rng, n_users=25)
    j = Judgments.from_frame(test, threshold=4)
    r = Runs.from_frame(frame, j)
    keep = rng.random(j.n_entries) < 0.7
    got = assessing.HitScorer(j, r, 100).score(keep)["infAP"][0]
    kept = j.to_frame()[keep]
    s0 = frame[frame["system"] == "s0"]
    qrels = {str(u): {str(i): int(g) for i, g in zip(g_["item"], g_["rating"])}
             for u, g_ in kept.groupby("user")}
    for u, g_ in s0.groupby("user"):
        q = qrels.setdefault(str(u), {})
        for i in g_["item"]:
            q.setdefault(str(i), -1)  # ranked, unrated: pooled but unjudged
    run = {str(u): {str(i): float(sc) for i, sc in zip(g_["item"], g_["score"])}
           for u, g_ in s0.groupby("user")}
    # trec_eval breaks score ties by docno; the scores here are distinct within a list
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"infAP"}, relevance_level=4).evaluate(run)
    for code, u in enumerate(j.users):
        if np.isnan(got[code]):
            continue
        assert got[code] == pytest.approx(ref[str(u)]["infAP"], abs=1e-9), u


def test_trec_infap_without_a_pool_is_ap():
    rng = np.random.default_rng(5)
    test, frame = random_fold(rng)
    j = Judgments.from_frame(test, threshold=4)
    got = assessing.HitScorer(j, Runs.from_frame(frame, j), infap="trec").score()
    np.testing.assert_allclose(got["infAP"], got["AP"], atol=1e-4)


@pytest.fixture(scope="module")
def two_folds():
    rng = np.random.default_rng(7)
    t0, r0 = random_fold(rng, n_users=30)
    t1, r1 = random_fold(rng, n_users=25)  # users 0..24 again: every one of them in both folds
    return [t0, t1], [r0, r1]


def test_pooled_topics_score_as_each_fold_alone(two_folds):
    tests, frames = two_folds
    study = assessing.pool_folds(tests, frames, threshold=4, max_grade=5)
    assert len(study.topics) == 30 + 25 and study.n_folds == 2
    pooled = engine(study.judgments, study.runs, 100)
    for f, (t, fr) in enumerate(zip(tests, frames)):
        j = Judgments.from_frame(t, threshold=4, max_grade=5)
        alone = engine(j, Runs.from_frame(fr, j), 100)
        cols = np.flatnonzero(study.topics["fold"].to_numpy() == f)
        users = study.topics["user"].to_numpy()[cols]
        order = j.users.get_indexer(users)
        for m, v in alone.items():
            np.testing.assert_array_equal(pooled[m][:, cols], v[:, order], err_msg=m)
    # the pooled test frame is the judged rows, with the dataset's ids and the fold
    back = study.test.merge(pd.concat([t.assign(fold=f) for f, t in enumerate(tests)]),
                            on=["fold", "user", "item"], suffixes=("", "_src"))
    assert len(back) == len(study.test) == sum(map(len, tests))
    np.testing.assert_array_equal(back["rating"], back["rating_src"])


def test_pooled_mean_is_the_mean_over_all_topics(two_folds):
    tests, frames = two_folds
    study = assessing.pool_folds(tests, frames, threshold=4, max_grade=5)
    scorer = assessing.HitScorer(study.judgments, study.runs, infap="trec")
    keep = incompleteness.random_ratings(study.test, [1.0, 0.5], 2, seed=1).keep
    got = assessing.score_masks(scorer, keep)
    for j in range(keep.shape[0]):
        mats = engine(study.judgments.subset(keep[j]), study.runs, 100)
        for m, name in enumerate(assessing.measures()):
            for how in ("mean", "gmean"):
                np.testing.assert_allclose(got[how][j, m], aggregate(mats[name], how), rtol=1e-9)


def test_pool_folds_refuses_mismatched_folds(two_folds):
    tests, frames = two_folds
    with pytest.raises(ValueError, match="one of each per fold"):
        assessing.pool_folds(tests, frames[:1], threshold=4)
    other = frames[1].assign(system=frames[1]["system"].replace("s0", "zz"))
    with pytest.raises(ValueError, match="same systems"):
        assessing.pool_folds(tests, [frames[0], other], threshold=4)
    with pytest.raises(ValueError, match="lacks column"):
        assessing.pool_folds([tests[0].drop(columns="rating"), tests[1]], frames, threshold=4)
    with pytest.raises(ValueError, match="empty"):
        assessing.pool_folds([tests[0].iloc[:0], tests[1]], frames, threshold=4)


@pytest.mark.parametrize("share", [0.1, 0.37, 0.5, 0.93])
def test_item_and_user_schemes_keep_exact_shares_across_folds(two_folds, share):
    tests, frames = two_folds
    study = assessing.pool_folds(tests, frames, threshold=4)
    test = study.test
    n_items, n_users = test["item"].nunique(), test["user"].nunique()
    schemes = {
        "item": [incompleteness.random_items(test, [share], 3, seed=2),
                 incompleteness.popular_items_removed(test, [share])],
        "user": [incompleteness.random_users(test, [share], 3, seed=2),
                 incompleteness.largest_users_removed(test, [share])],
    }
    for unit, masks in schemes.items():
        total = n_items if unit == "item" else n_users
        for mask in masks:
            for keep in mask.keep:
                kept = test.loc[keep, unit].unique()
                assert kept.size == int(np.floor(share * total + 0.5))
                # a kept unit keeps its ratings in every fold; a removed one loses all of them
                np.testing.assert_array_equal(keep, test[unit].isin(kept).to_numpy())
    # the most popular (most rated over all folds) items and the largest users go first
    for unit, scheme in (("item", incompleteness.popular_items_removed),
                         ("user", incompleteness.largest_users_removed)):
        keep = scheme(test, [share]).keep[0]
        size = test.groupby(unit).size()
        kept, gone = size[test.loc[keep, unit].unique()], size.drop(test.loc[keep, unit].unique())
        if len(gone):
            assert kept.max() <= gone.min()


def test_per_user_pooling_by_hand():
    topics = pd.DataFrame({"fold": [0, 0, 1, 1], "user": [7, 8, 7, 9]})
    m = np.array([[1.0, np.nan, 0.0, 0.5], [0.2, np.nan, 0.4, 0.1]])
    got, users = assessing.per_user(m, topics)
    assert list(users) == [7, 9]  # user 8 is evaluated in no fold
    np.testing.assert_allclose(got, [[0.5, 0.5], [0.3, 0.1]])
    with pytest.raises(ValueError, match="topics"):
        assessing.per_user(m[:, :3], topics)


def test_labels():
    assert assessing.measures(100)[:3] == ["P@100", "R@100", "F1@100"]
    assert assessing.label("RR@100") == "MRR"
    assert assessing.label("AP@100", "gmean") == "GMAP"
    with pytest.raises(ValueError, match="unknown metric"):
        assessing.label("AUC")
    with pytest.raises(ValueError, match="unknown metric"):
        assessing.measures(10, ["P", "MAP"])


def paper_like_summary(geo_better=True):
    """Curves built so that every claim of the paper holds (or, flipped, fails)."""
    order = ["P", "nDCG", "F1", "AP", "infAP", "bpref", "R", "ERR", "RR"]  # most robust first
    rows = []
    for scheme in ["ratings", "items", "users", "popular", "large-users"]:
        for agg in ["mean", "gmean"]:
            ranking = order
            if scheme == "large-users" and agg == "mean":
                ranking = ["RR", "ERR", "infAP", "bpref", "AP", "R", "P", "F1", "nDCG"]
            if agg == "gmean":
                ranking = [x for x in order if x not in ("F1", "RR")] + ["F1", "RR"]
            for pos, metric in enumerate(ranking):
                tau = 0.95 - 0.02 * pos
                if scheme == "large-users" and agg == "gmean" and not geo_better:
                    tau -= 0.5
                for share in (1.0, 0.5):
                    rows.append({"scheme": scheme, "aggregate": agg, "metric": f"{metric}@100",
                                 "share": share, "tau": 1.0 if share == 1.0 else tau})
    return assessing.robustness_summary(pd.DataFrame(rows))


def test_robustness_summary_ranks():
    s = paper_like_summary()
    r = s[(s["scheme"] == "ratings") & (s["aggregate"] == "mean")].set_index("metric")
    assert r.loc["P@100", "rank"] == 1 and r.loc["RR@100", "rank"] == 9
    assert r.loc["P@100", "mean_tau"] == pytest.approx((1.0 + 0.95) / 2)


def claims_inputs():
    names = assessing.measures()
    dp = dict(zip(names, [3.0, 5.0, 4.0, 2.5, 1.0, 9.0, 8.0, 6.0, 5.5]))
    scores = np.array([np.arange(6.0)] * 9)
    scores[5] = scores[6] = [0, 2, 1, 4, 3, 5]  # RR and ERR order the systems differently
    tau = agreement.tau_matrix(scores, names)
    tau_ag = dict(zip(names, [0.9, 0.9, 0.4, 0.92, 0.9, 0.3, 0.8, 0.9, 0.9]))
    return dp, tau, tau_ag


def test_check_claims_all_hold_on_paper_like_results():
    dp, tau, tau_ag = claims_inputs()
    table = assessing.check_claims(paper_like_summary(), dp, tau, tau_ag)
    assert len(table) == 10 and table["holds"].all(), table[~table["holds"]]


def test_check_claims_can_fail():
    dp, tau, tau_ag = claims_inputs()
    dp["P@100"] = 0.5  # precision now discriminates best
    table = assessing.check_claims(paper_like_summary(geo_better=False), dp, tau, tau_ag)
    failed = set(table.loc[~table["holds"], "claim"])
    assert any("nDCG discriminates best" in c for c in failed)
    assert any("Geometric means are robust" in c for c in failed)
    assert table["holds"].sum() == len(table) - 2


def test_run_on_a_small_study(two_folds):
    tests, frames = two_folds
    study = assessing.pool_folds(tests, frames, threshold=4, max_grade=5)
    shares = {s: [1.0, 0.5] for s in assessing.SCHEMES}
    res = assessing.run(study, shares=shares, n_samples=2, seed=3, n_permutations=200)
    c = res.curves
    assert set(c["scheme"]) == set(assessing.SCHEMES) and set(c["aggregate"]) == {"mean", "gmean"}
    assert len(c) == 5 * 2 * 9 * 2
    # the full test set orders the systems as the reference does
    np.testing.assert_allclose(c.loc[c["share"] == 1.0, "tau"], 1.0)
    a = res.absolute[(res.absolute["share"] == 1.0) & (res.absolute["scheme"] == "ratings")]
    for agg in ("mean", "gmean"):
        got = a[a["aggregate"] == agg].set_index("metric")["value"]
        np.testing.assert_allclose(got[res.measures], res.reference[agg][res.measures].mean())
    assert len(res.pvalues) == 9 * 6 and res.dp.index.tolist() == res.measures
    assert (res.tau("gmean").to_numpy().diagonal() == 1).all()
    assert len(res.claims()) == 10
    with pytest.raises(ValueError, match="no shares"):
        assessing.run(study, shares={"ratings": [1.0]}, n_samples=2, seed=3, n_permutations=10)


def test_kfold_study_trains_once_then_reads_the_cache(ml100k, tmp_path, monkeypatch):
    from recmeta import roster, runs

    monkeypatch.setenv("RECMETA_CACHE", str(tmp_path))
    small = ml100k[ml100k["user"] <= 60]
    systems = roster.systems(["pop", "bias"])
    first = assessing.kfold_study(small, systems, dataset="ml-100k-small", k=5, folds=[1, 3],
                                  seed=4, depth=20)
    assert sorted(first.topics["fold"].unique()) == [1, 3]
    assert sorted(first.test["fold"].unique()) == [1, 3]

    def no_training(*args, **kwargs):
        raise AssertionError("a model was trained although its runs are cached")

    monkeypatch.setattr(runs, "train", no_training)
    second = assessing.kfold_study(small, systems, dataset="ml-100k-small", k=5, folds=[1, 3],
                                   seed=4, depth=20)
    np.testing.assert_array_equal(first.runs.ranks, second.runs.ranks)
    with pytest.raises(ValueError, match="folds"):
        assessing.kfold_study(small, systems, dataset="x", k=5, folds=[5])
