"""The assessing-ranking-metrics study: fold pooling, the study's scorer, masks, claims.

Independent checks: the metric engine on judgments rebuilt from the kept rows (itself tested
against trec_eval) for the study's scorer on random subsets; pytrec_eval for the paper's infAP;
folds evaluated one at a time for the pooling; hand-worked examples for the nine metrics, the
per-user pooling and the claims.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmeta.metaeval import incompleteness
from recmeta.metrics import Judgments, Runs, aggregate, score_matrices
from recmeta.papers import valcarce2020 as v20


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
    return score_matrices(judgments, runs, v20.measures(k))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [100, 10])
def test_study_scorer_equals_the_engine_on_rebuilt_judgments(seed, k):
    rng = np.random.default_rng(seed)
    test, frame = random_fold(rng)
    study = v20.pool_folds([test], [frame], threshold=4, max_grade=5)
    j, r = study.judgments, study.runs
    scorer = v20.scorer(study, k, infap="trec_eval")
    keeps = [None, rng.random(j.n_entries) < 0.6, rng.random(j.n_entries) < 0.2]
    for keep in keeps:
        mine = scorer.score(keep)
        kept = j if keep is None else Judgments.from_frame(
            j.to_frame()[keep], j.threshold, users=j.users, items=j.items, max_grade=j.max_grade)
        ref = engine(kept, r, k)
        for name in v20.measures(k):
            a, b = mine[name], ref[name]
            assert np.array_equal(np.isnan(a), np.isnan(b)), name
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=name)


def test_nine_metrics_by_hand():
    # one user, relevant items a (5) and b (4), judged non-relevant c (2); list: x c a y b
    test = pd.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "rating": [5.0, 4.0, 2.0]})
    run = pd.DataFrame({"system": "s", "user": 1, "item": list("xcayb"), "rank": [1, 2, 3, 4, 5]})
    study = v20.pool_folds([test], [run], threshold=4, max_grade=5)
    got = v20.scorer(study, 5, infap="trec_eval").score()
    v = {m: float(got[f"{m}@5"][0, 0]) for m in v20.METRICS}
    assert v["P"] == pytest.approx(2 / 5)
    assert v["R"] == pytest.approx(1.0)
    assert v["F1"] == pytest.approx(2 * 0.4 * 1 / 1.4)
    assert v["AP"] == pytest.approx((1 / 3 + 2 / 5) / 2)
    dcg = 2 / np.log2(3) + 5 / np.log2(4) + 4 / np.log2(6)
    idcg = 5 + 4 / np.log2(3) + 2 / np.log2(4)
    assert v["nDCG"] == pytest.approx(dcg / idcg)
    assert v["RR"] == pytest.approx(1 / 3)
    g = lambda r: (2**r - 1) / 32
    err = g(2) / 2 + (1 - g(2)) * g(5) / 3 + (1 - g(2)) * (1 - g(5)) * g(4) / 5
    assert v["ERR"] == pytest.approx(err)
    # bpref: one judged non-relevant above each relevant item, min(|N|, |R|) = 1
    assert v["bpref"] == pytest.approx(0.0)
    # trec_eval's infAP: judged items above c (rank 3): 1 of 2; above b (rank 5): 2 of 4
    eps = 1e-5
    e3 = 1 / 3 + (2 / 3) * (1 / 2) * (0 + eps) / (1 + 2 * eps)
    e5 = 1 / 5 + (4 / 5) * (2 / 4) * (1 + eps) / (2 + 2 * eps)
    assert v["infAP"] == pytest.approx((e3 + e5) / 2)
    # the paper's eq. 11 (default): every ranked item pooled, the precision above estimated
    # from the judged ones: 1/3 + (2/3)(0 + eps)/(1 + 2eps) and 1/5 + (4/5)(1 + eps)/(2 + 2eps)
    pooled = float(v20.scorer(study, 5).score()["infAP@5"][0, 0])
    p3 = 1 / 3 + (2 / 3) * (0 + eps) / (1 + 2 * eps)
    p5 = 1 / 5 + (4 / 5) * (1 + eps) / (2 + 2 * eps)
    assert pooled == pytest.approx((p3 + p5) / 2)


def test_scorer_refuses_bad_cutoffs():
    rng = np.random.default_rng(3)
    test, frame = random_fold(rng, n_users=5)
    study = v20.pool_folds([test], [frame], threshold=4)
    with pytest.raises(ValueError, match="cut-off"):
        v20.scorer(study, 0)
    with pytest.raises(ValueError, match="infap"):
        v20.scorer(study, infap="paper")


@pytest.mark.parametrize("seed", [0, 4])
def test_pooled_infap_is_trec_eval_with_unrated_items_pooled_but_unjudged(seed):
    """Valcarce et al. (2020, eq. 11) = trec_eval's infAP with every ranked unrated item at -1."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(seed)
    test, frame = random_fold(rng, n_users=25)
    study = v20.pool_folds([test], [frame], threshold=4)
    j = study.judgments
    keep = rng.random(j.n_entries) < 0.7
    got = v20.scorer(study).score(keep)["infAP@100"][0]
    kept = study.test[keep]
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
    users = study.topics["user"].to_numpy()
    for code, u in enumerate(users):
        if np.isnan(got[code]):
            continue
        assert got[code] == pytest.approx(ref[str(u)]["infAP"], abs=1e-9), u


def test_trec_infap_without_a_pool_is_ap():
    rng = np.random.default_rng(5)
    test, frame = random_fold(rng)
    j = Judgments.from_frame(test, threshold=4)
    got = score_matrices(j, Runs.from_frame(frame, j), ["infAP@100", "AP@100"])
    np.testing.assert_allclose(got["infAP@100"], got["AP@100"], atol=1e-4)


@pytest.fixture(scope="module")
def two_folds():
    rng = np.random.default_rng(7)
    t0, r0 = random_fold(rng, n_users=30)
    t1, r1 = random_fold(rng, n_users=25)  # users 0..24 again: every one of them in both folds
    return [t0, t1], [r0, r1]


def test_pooled_topics_score_as_each_fold_alone(two_folds):
    tests, frames = two_folds
    study = v20.pool_folds(tests, frames, threshold=4, max_grade=5)
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
    study = v20.pool_folds(tests, frames, threshold=4, max_grade=5)
    scorer = v20.scorer(study, infap="trec_eval")
    keep = incompleteness.random_ratings(study.test, [1.0, 0.5], 2, seed=1).keep
    got = scorer.means(keep, aggregates=("mean", "gmean"))
    for j in range(keep.shape[0]):
        mats = engine(study.judgments.subset(keep[j]), study.runs, 100)
        for m, name in enumerate(v20.measures()):
            for how in ("mean", "gmean"):
                np.testing.assert_allclose(got[how][j, m], aggregate(mats[name], how), rtol=1e-9)


def test_pool_folds_refuses_mismatched_folds(two_folds):
    tests, frames = two_folds
    with pytest.raises(ValueError, match="one of each per fold"):
        v20.pool_folds(tests, frames[:1], threshold=4)
    other = frames[1].assign(system=frames[1]["system"].replace("s0", "zz"))
    with pytest.raises(ValueError, match="same systems"):
        v20.pool_folds(tests, [frames[0], other], threshold=4)
    with pytest.raises(ValueError, match="lacks column"):
        v20.pool_folds([tests[0].drop(columns="rating"), tests[1]], frames, threshold=4)
    with pytest.raises(ValueError, match="empty"):
        v20.pool_folds([tests[0].iloc[:0], tests[1]], frames, threshold=4)


@pytest.mark.parametrize("share", [0.1, 0.37, 0.5, 0.93])
def test_item_and_user_schemes_keep_exact_shares_across_folds(two_folds, share):
    tests, frames = two_folds
    study = v20.pool_folds(tests, frames, threshold=4)
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
    got, users = v20.per_user(m, topics)
    assert list(users) == [7, 9]  # user 8 is evaluated in no fold
    np.testing.assert_allclose(got, [[0.5, 0.5], [0.3, 0.1]])
    with pytest.raises(ValueError, match="topics"):
        v20.per_user(m[:, :3], topics)


def test_labels():
    assert v20.measures(100)[:3] == ["P@100", "R@100", "F1@100"]
    assert v20.label("RR@100") == "MRR"
    assert v20.label("AP@100", "gmean") == "GMAP"
    with pytest.raises(ValueError, match="unknown metric"):
        v20.label("AUC")
    with pytest.raises(ValueError, match="unknown metric"):
        v20.measures(10, ["P", "MAP"])


def test_robustness_summary_ranks():
    rows = []
    for pos, metric in enumerate(["P", "nDCG", "RR"]):
        for share in (1.0, 0.5):
            rows.append({"scheme": "ratings", "aggregate": "mean", "metric": f"{metric}@100",
                         "share": share, "tau": 1.0 if share == 1.0 else 0.95 - 0.02 * pos})
    s = v20.robustness_summary(pd.DataFrame(rows)).set_index("metric")
    assert s.loc["P@100", "rank"] == 1 and s.loc["RR@100", "rank"] == 3
    assert s.loc["P@100", "mean_tau"] == pytest.approx((1.0 + 0.95) / 2)


def test_robustness_summary_weights_an_uneven_grid_by_the_trapezoid_rule():
    # shares 1, 0.5, 0.1, 0.01 (uneven); tau 1, 0.9, 0.6, 0.2
    # area = [(1 + 0.9)/2 * 0.5 + (0.9 + 0.6)/2 * 0.4 + (0.6 + 0.2)/2 * 0.09] / 0.99
    shares = [1.0, 0.5, 0.1, 0.01]
    tau = [1.0, 0.9, 0.6, 0.2]
    by_hand = (0.475 + 0.3 + 0.036) / 0.99
    curves = pd.DataFrame({"scheme": "ratings", "aggregate": "mean", "metric": "P@100",
                           "share": shares, "tau": tau})
    got = v20.robustness_summary(curves)["mean_tau"].iloc[0]
    assert got == pytest.approx(by_hand, rel=1e-12)
    assert got != pytest.approx(np.mean(tau))  # a plain mean over the points is not the area
    # the same from numpy's trapezoid, and in any row order
    assert got == pytest.approx(np.trapezoid(tau[::-1], shares[::-1]) / 0.99)
    shuffled = curves.sample(frac=1.0, random_state=3)
    assert v20.robustness_summary(shuffled)["mean_tau"].iloc[0] == pytest.approx(by_hand)
    w = v20.trapezoid_weights(shares)
    np.testing.assert_allclose(w, [0.25 / 0.99, 0.45 / 0.99, 0.245 / 0.99, 0.045 / 0.99])
    assert v20.trapezoid_weights([0.7]).tolist() == [1.0]
    with pytest.raises(ValueError, match="distinct"):
        v20.trapezoid_weights([1.0, 1.0])


def per_mask_taus(values, scheme="ratings", aggregate="mean", metric="P@100"):
    """A per-mask τ frame from {share: [τ of each sample]}."""
    rows = [{"scheme": scheme, "aggregate": aggregate, "metric": metric, "share": s, "sample": j,
             "tau": t} for s, ts in values.items() for j, t in enumerate(ts)]
    return pd.DataFrame(rows)


def test_area_estimate_band_is_the_t_interval_of_a_weighted_sum():
    from scipy import stats

    values = {1.0: [1, 1, 1], 0.6: [0.9, 0.8, 0.85], 0.2: [0.7, 0.5, 0.65]}
    e = v20.area_estimate(per_mask_taus(values), scheme="ratings", metric="P@100", n_systems=5)
    w = np.array([0.2 / 0.8, 0.4 / 0.8, 0.2 / 0.8])  # shares 0.2, 0.6, 1.0 sorted ascending
    means = np.array([np.mean(values[0.2]), np.mean(values[0.6]), 1.0])
    v = np.array([np.var(values[0.2], ddof=1), np.var(values[0.6], ddof=1), 0.0])
    a = w ** 2 * v / 3
    df = a.sum() ** 2 / np.sum(a[a > 0] ** 2 / 2)
    half = stats.t.ppf(0.975, df) * np.sqrt(a.sum())
    assert e.value == pytest.approx(w @ means)
    assert (e.low, e.high) == (pytest.approx(w @ means - half), pytest.approx(w @ means + half))


def test_area_difference_is_paired_on_the_same_masks():
    a = per_mask_taus({1.0: [1, 1], 0.5: [0.9, 0.7]}, metric="A")
    b = per_mask_taus({1.0: [1, 1], 0.5: [0.85, 0.65]}, metric="B")  # A - B = 0.05 on each mask
    taus = pd.concat([a, b])
    d = v20.area_estimate(taus, scheme="ratings", metric="A", minus={"metric": "B"}, n_systems=5)
    assert d.value == pytest.approx(0.025) and d.width == pytest.approx(0.0)  # no spread: exact
    # unpaired (another scheme, independent masks), the two spreads add up
    c = per_mask_taus({1.0: [1, 1], 0.5: [0.85, 0.65]}, scheme="items", metric="A")
    u = v20.area_estimate(pd.concat([a, c]), scheme="ratings", metric="A",
                                minus={"scheme": "items"}, n_systems=5)
    assert u.value == pytest.approx(0.025) and u.width > 0.1


def test_deterministic_curves_tie_within_one_swapped_pair():
    det = per_mask_taus({1.0: [1.0], 0.8: [0.8]})  # one mask per share
    e = v20.area_estimate(det, scheme="ratings", metric="P@100", n_systems=5)
    # one swapped pair of 5 systems moves tau by 2/10; the band is half of that on each side
    assert v20.tau_resolution(5) == pytest.approx(0.1)
    assert (e.value, e.low, e.high) == (pytest.approx(0.9), pytest.approx(0.8), pytest.approx(1.0))
    s = v20.robustness_summary(
        pd.DataFrame({"scheme": "x", "aggregate": "mean", "metric": "m", "share": [1.0, 0.8],
                      "tau": [1.0, 0.8], "sd": np.nan, "samples": 1}), n_systems=5).iloc[0]
    assert (s["low"], s["high"]) == (pytest.approx(0.8), pytest.approx(1.0))


def simulate_precision(n_relevant, n_other, hits, k, share, n_masks, seed):
    """Mean P@k over the topics left with a relevant item, on random subsets of the ratings."""
    topic = np.repeat(np.arange(len(n_relevant)), np.asarray(n_relevant) + np.asarray(n_other))
    relevant = np.concatenate([np.r_[np.ones(r, bool), np.zeros(o, bool)]
                               for r, o in zip(n_relevant, n_other)])
    hit = np.concatenate([np.r_[np.arange(r) < h, np.zeros(o, bool)]
                          for r, o, h in zip(n_relevant, n_other, hits)])
    keep = incompleteness.random_ratings(topic.size, [share], n_masks, seed=seed).keep
    t = len(n_relevant)
    out = []
    for kp in keep:
        kept_rel = np.bincount(topic[kp & relevant], minlength=t)
        kept_hits = np.bincount(topic[kp & hit], minlength=t)
        evaluated = kept_rel > 0
        out.append((kept_hits[evaluated] / k).mean())
    return np.array(out), (np.asarray(hits) / k).mean()


def test_expected_precision_accounts_for_topics_that_lose_every_relevant_item():
    rng = np.random.default_rng(11)
    t = 400
    n_rel = rng.choice([1, 1, 1, 2, 3, 6], t)  # many topics with a single relevant item
    n_other = rng.integers(0, 8, t)
    hits = rng.binomial(n_rel, 0.5)
    for share in (0.2, 0.5):
        sims, full = simulate_precision(n_rel, n_other, hits, 10, share, 3000, seed=2)
        observed = sims.mean() / full
        se = sims.std(ddof=1) / np.sqrt(sims.size) / full
        expected = v20.expected_precision_ratio(n_rel, share, n_ratings=int((n_rel + n_other).sum()))
        assert abs(observed - expected) < 4 * se + 2e-3, (share, observed, expected)
        # the naive p ignores the topics that drop out of the mean, and is far off
        assert observed - share > 20 * se
    # independent thinning: π_t = 1 - (1 - p)^R; a single topic type is exact, q / π
    assert v20.expected_precision_ratio([1, 1, 1], 0.3) == pytest.approx(1.0)
    assert v20.expected_precision_ratio([2], 0.5) == pytest.approx(0.5 / 0.75)
    # exact-count sampling of K = round(pN) of N ratings: hypergeometric, by hand for N=4, K=2
    # P(both relevant ratings of a topic with R=2 removed) = C(2,2)/C(4,2) = 1/6
    assert v20.expected_precision_ratio([2], 0.5, n_ratings=4) == pytest.approx(0.5 / (5 / 6))
    with pytest.raises(ValueError, match="counts"):
        v20.expected_precision_ratio([0, 1], 0.5)


def test_cluster_means_resample_users_with_all_their_topics():
    rng = np.random.default_rng(8)
    m = rng.random((3, 12))
    m[:, [2, 7]] = np.nan  # topics without a relevant item
    m[0, 4] = 0.0  # floored in the geometric mean
    units = np.array([0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7])
    for how in ("mean", "gmean"):
        got = v20.cluster_means(m, units, np.ones((1, 8)), how)[0]
        np.testing.assert_allclose(got, aggregate(m, how))
    # unit 0 drawn twice, unit 7 not at all: its two topics count twice, topic 11 not at all
    counts = np.ones((1, 8))
    counts[0, 0], counts[0, 7] = 2, 0
    resampled = np.concatenate([m[:, :11], m[:, :2]], axis=1)
    for how in ("mean", "gmean"):
        np.testing.assert_allclose(v20.cluster_means(m, units, counts, how)[0],
                                   aggregate(resampled, how))
    with pytest.raises(ValueError, match="how"):
        v20.cluster_means(m, units, counts, "median")


def test_dp_interval_is_the_bootstrap_spread_around_the_permutation_dp():
    dp = pd.Series({"a": 1.0, "b": 0.4})
    reps = pd.DataFrame({"a": np.linspace(0.5, 0.9, 101), "b": np.full(101, 0.2)})
    base = pd.Series({"a": 0.7, "b": 0.2})
    mc = pd.Series({"a": 0.01, "b": 0.02})
    e = v20.dp_estimate(dp, reps, base, mc, "a")
    # replicates 0.5..0.9 around their base 0.7, moved to the value 1.0: 0.8..1.2, 2.5-97.5 %
    assert e.value == 1.0
    assert (e.low, e.high) == (pytest.approx(0.81 - 0.01), pytest.approx(1.19 + 0.01))
    d = v20.dp_estimate(dp, reps, base, mc, "a", minus="b")
    assert d.value == pytest.approx(0.6)
    assert (d.low, d.high) == (pytest.approx(0.41 - 0.03), pytest.approx(0.79 + 0.03))
    low = v20.dp_estimate(pd.Series({"a": 0.05, "b": 0.4}), reps, base, mc, "a")
    assert low.low == 0.0  # a DP is never negative


def test_judged_share_by_hand():
    # one user in two folds; lists x c a y b (fold 0) and a (fold 1); judged: a, b, c / a
    tests = [pd.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "rating": [5.0, 4.0, 2.0]}),
             pd.DataFrame({"user": [1], "item": ["a"], "rating": [5.0]})]
    runs = [pd.DataFrame({"system": "s", "user": 1, "item": list("xcayb"), "rank": [1, 2, 3, 4, 5]}),
            pd.DataFrame({"system": "s", "user": 1, "item": ["a"], "rank": [1]})]
    study = v20.pool_folds(tests, runs, threshold=4, max_grade=5)
    got = v20.judged_share(study, 5)
    assert got.loc[1] == pytest.approx((3 + 1) / (5 + 1))


def test_run_on_a_small_study(two_folds):
    tests, frames = two_folds
    study = v20.pool_folds(tests, frames, threshold=4, max_grade=5)
    shares = {s: [1.0, 0.5] for s in v20.SCHEMES}
    res = v20.run(study, shares=shares, n_samples=2, seed=3, n_permutations=200)
    c = res.curves
    assert set(c["scheme"]) == set(v20.SCHEMES) and set(c["aggregate"]) == {"mean", "gmean"}
    assert len(c) == 5 * 2 * 9 * 2
    # the full test set orders the systems as the reference does
    np.testing.assert_allclose(c.loc[c["share"] == 1.0, "tau"], 1.0)
    a = res.absolute[(res.absolute["share"] == 1.0) & (res.absolute["scheme"] == "ratings")]
    for agg in ("mean", "gmean"):
        got = a[a["aggregate"] == agg].set_index("metric")["value"]
        np.testing.assert_allclose(got[res.measures], res.reference[agg][res.measures].mean())
    assert len(res.pvalues) == 9 * 6 and res.dp.index.tolist() == res.measures
    assert (res.tau("gmean").to_numpy().diagonal() == 1).all()
    # one τ per mask, metric and aggregate; their means per share are the curves
    t = res.taus.groupby(["scheme", "aggregate", "metric", "share"])["tau"].mean()
    cur = res.curves.set_index(["scheme", "aggregate", "metric", "share"])["tau"]
    np.testing.assert_allclose(t.loc[cur.index], cur)
    inputs = res.ledger_inputs(n_boot=20)
    assert inputs["dp"].index.tolist() == list(v20.METRICS)
    assert inputs["dp_reps"].shape == (20, 9) and inputs["tau_among"].n_boot == 20
    np.testing.assert_allclose(inputs["tau_among"].point["mean"], res.tau("mean").to_numpy())
    np.testing.assert_allclose(inputs["tau_among"].arith_geo, res.tau_arith_geo().to_numpy())
    with pytest.raises(ValueError, match="no shares"):
        v20.run(study, shares={"ratings": [1.0]}, n_samples=2, seed=3, n_permutations=10)


def test_dp_tests_users_with_their_scores_averaged_over_the_folds(two_folds):
    """The paper's n is users: DP sums permutation p-values on per-user means (the main input);
    the (fold, user) topics are the sensitivity check."""
    from recmeta.metaeval import significance

    tests, frames = two_folds
    study = v20.pool_folds(tests, frames, threshold=4, max_grade=5)
    shares = {s: [1.0] for s in v20.SCHEMES}
    res = v20.run(study, shares=shares, n_samples=1, seed=5, n_permutations=500)
    topics = study.topics
    for name, m in res.matrices.items():
        # each user's mean over the folds, by hand, for the users with a relevant item
        frame = pd.DataFrame(m.T).assign(user=topics["user"].to_numpy()).dropna()
        means = frame.groupby("user").mean()
        order = [u for u in pd.unique(topics["user"]) if u in means.index]  # as first met
        by_user = means.loc[order].T.to_numpy()
        p_users = significance.permutation_test(by_user, seed=5, n_permutations=500)
        p_topics = significance.permutation_test(m[:, ~np.isnan(m).any(axis=0)], seed=5,
                                                 n_permutations=500)
        assert res.dp[name] == pytest.approx(p_users.sum())
        assert res.dp_topics[name] == pytest.approx(p_topics.sum())
    assert by_user.shape[1] < m.shape[1]  # fewer users than topics: the units differ
    assert not np.allclose(res.dp.to_numpy(), res.dp_topics.to_numpy())


def test_kfold_study_trains_once_then_reads_the_cache(ml100k, tmp_path, monkeypatch):
    from recmeta.recommenders import cached, roster

    monkeypatch.setenv("RECMETA_CACHE", str(tmp_path))
    small = ml100k[ml100k["user"] <= 60]
    systems = roster.systems(["pop", "bias"])
    first = v20.kfold_study(small, systems, dataset="ml-100k-small", k=5, folds=[1, 3],
                                  seed=4, depth=20)
    assert sorted(first.topics["fold"].unique()) == [1, 3]
    assert sorted(first.test["fold"].unique()) == [1, 3]

    def no_training(*args, **kwargs):
        raise AssertionError("a model was trained although its runs are cached")

    monkeypatch.setattr(cached, "train", no_training)
    second = v20.kfold_study(small, systems, dataset="ml-100k-small", k=5, folds=[1, 3],
                                   seed=4, depth=20)
    np.testing.assert_array_equal(first.runs.ranks, second.runs.ranks)
    with pytest.raises(ValueError, match="folds"):
        v20.kfold_study(small, systems, dataset="x", k=5, folds=[5])

    # built one system at a time, the study equals pool_folds on every system's frames at once
    from recmeta.data import splits

    parts = splits.kfold(small, 5, seed=4)
    frames = [cached.make(systems, parts[f].train, dataset="ml-100k-small", split=f"5fold-{f}",
                        seed=4, depth=20) for f in (1, 3)]
    whole = v20.pool_folds([parts[1].test, parts[3].test], frames, threshold=4,
                                 max_grade=float(small["rating"].max()))
    assert list(first.runs.systems) == list(whole.runs.systems) == ["pop", "bias"]
    assert first.runs.items.equals(whole.runs.items)
    np.testing.assert_array_equal(first.runs.ranks, whole.runs.ranks)
    np.testing.assert_array_equal(first.runs.tied, whole.runs.tied)
    assert first.judgments.users.equals(whole.judgments.users)
