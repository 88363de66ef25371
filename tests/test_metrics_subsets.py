"""Subsets: metrics on incomplete judgments equal the engine on judgments rebuilt from the kept rows.

The independent route rebuilds ``Judgments`` from the kept rows of ``judgments.to_frame()`` (same
user and item indices, same top grade) and evaluates them with ``score_matrices``, whose values
are checked against pytrec_eval elsewhere; the masks are random and include users who lose
every relevant item.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmeta.metaeval import incompleteness
from recmeta.metrics import GMEAN_FLOOR, Judgments, Runs, Subsets, aggregate, score_matrices
from recmeta.metrics import _kernel as K
from recmeta.metrics._plan import by_request

NAMES = [
    "P@5",
    "R@10",
    "F1@5",
    "AP@20",
    "nDCG@10",
    "nDCG",
    "RR",
    "ERR@10",
    "bpref@10",
    "infAP@10",
    "Success@3",
    "Rprec",
    "NumRet@10",
    "NumRelRet@10",
    "NumRel",
    "AUC",
    "muAP@10",
    "NDCNG@10",
    "IPrec(recall=0.3)@10",
]
EXPECTED = ["P@5", "R@10", "F1@5", "AP@20", "nDCG@10", "RR", "Success@3", "Rprec", "NDCNG@10"]


def _case(seed: int, n_users: int = 25, n_items: int = 40):
    rng = np.random.default_rng(seed)
    rows = [
        (u, i, float(rng.integers(1, 6)))
        for u in range(n_users)
        for i in range(n_items)
        if rng.random() < 0.3
    ]
    j = Judgments.from_frame(pd.DataFrame(rows, columns=["user", "item", "rating"]), threshold=4)
    recs = []
    for s in range(3):
        for u in range(n_users):
            for i in rng.choice(n_items + 20, size=rng.integers(0, 25), replace=False):
                recs.append((f"s{s}", u, int(i), float(rng.integers(0, 6))))  # many ties
    runs = Runs.from_frame(pd.DataFrame(recs, columns=["system", "user", "item", "score"]), j)
    return j, runs, rng


def _rebuilt(j: Judgments, keep: np.ndarray) -> Judgments:
    frame = j.to_frame()[keep]
    return Judgments.from_frame(
        frame, j.threshold, users=j.users, items=j.items, max_grade=j.max_grade
    )


def _masks(j: Judgments, rng, n: int = 6) -> np.ndarray:
    keep = rng.random((n, j.n_entries)) < rng.uniform(0.2, 0.9, size=(n, 1))
    # one mask takes every relevant rating of the first five users away
    rows = j.to_frame()
    gone = rows["user"].isin(j.users[:5]).to_numpy() & (rows["rating"].to_numpy() >= 4)
    keep[0] &= ~gone
    return keep


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert np.array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"infap": "pooled"},
        {"ties": "pessimistic"},
        {"ties": "optimistic"},
        {"gain": "exponential"},
        {"users": "all"},
        {"ties": "item_id"},
    ],
)
def test_scores_on_random_masks_equal_rebuilt_judgments(seed, opts):
    j, runs, rng = _case(seed)
    names = NAMES if opts.get("users") != "all" else [n for n in NAMES if n != "AUC"]
    sub = Subsets(j, runs, names, **opts)
    keep = _masks(j, rng)
    assert keep[0].sum() < j.n_entries
    for k in range(len(keep)):
        got = sub.score(keep[k])
        want = score_matrices(_rebuilt(j, keep[k]), runs, names, **opts)
        for n in names:
            _same(got[n], want[n])
    if opts.get("users") != "all":  # the users who lost every relevant item drop out
        users_lost = ~np.isnan(score_matrices(j, runs, ["P@5"])["P@5"][0, :5])
        assert users_lost.any() and np.isnan(sub.score(keep[0])["P@5"][0, :5][users_lost]).all()


@pytest.mark.parametrize("seed", range(3))
def test_expected_ties_on_random_masks(seed):
    j, runs, rng = _case(seed)
    sub = Subsets(j, runs, EXPECTED, ties="expected")
    for keep in _masks(j, rng, 4):
        got = sub.score(keep)
        want = score_matrices(_rebuilt(j, keep), runs, EXPECTED, ties="expected")
        for n in EXPECTED:
            _same(got[n], want[n])


def test_means_equal_the_engine_aggregates():
    j, runs, rng = _case(7)
    names = ["P@5", "AP@20", "nDCG@10", "RR", "infAP@10"]
    sub = Subsets(j, runs, names, infap="pooled")
    keep = _masks(j, rng, 5)
    means = sub.means(keep, aggregates=("mean", "gmean"))
    assert means["mean"].shape == (5, len(names), 3)
    for k in range(len(keep)):
        mats = score_matrices(_rebuilt(j, keep[k]), runs, names, infap="pooled")
        for m, n in enumerate(names):
            np.testing.assert_allclose(means["mean"][k, m], aggregate(mats[n], "mean"), atol=1e-12)
            np.testing.assert_allclose(
                means["gmean"][k, m], aggregate(mats[n], "gmean"), rtol=1e-12
            )


def test_each_masks_means_are_the_same_whichever_thread_takes_it():
    # the masks are dealt out to the threads in turn: any number of threads gives every mask
    # the floats of its own call, whole-user masks and the others
    j, runs, rng = _case(7)
    names = ["P@5", "AP@20", "nDCG@10", "RR"]
    sub = Subsets(j, runs, names)
    users = incompleteness.random_users(j.to_frame(), [0.7, 0.4], 2, seed=3).keep
    keep = np.vstack([_masks(j, rng, 5), users])
    alone = [sub.means(keep[k : k + 1], aggregates=("mean", "gmean")) for k in range(len(keep))]
    n_req = sub._plan.codes.shape[0]
    every = np.arange(len(keep))
    _, kept = K.whole_users(keep, sub._indptr)
    full = sub._full_values()
    for chunks in (1, 2, 3, 8):
        mean = np.full((len(keep), n_req, 3), np.nan)
        gmean = np.full_like(mean, np.nan)
        K.subset_means(keep, every, mean, gmean, sub._args(), GMEAN_FLOOR, True, chunks)
        whole_mean, whole_gmean = np.full_like(mean, np.nan), np.full_like(mean, np.nan)
        last = every[-len(users):]
        K.user_subset_means(full, kept, last, whole_mean, whole_gmean, GMEAN_FLOOR, True, chunks)
        for agg, values in (("mean", mean), ("gmean", gmean)):
            per = by_request(sub.specs, sub._unique, sub._plan, np.moveaxis(values, 0, -1))
            for m, v in enumerate(per):
                for k in range(len(keep)):
                    assert np.array_equal(v[..., k], alone[k][agg][0, m], equal_nan=True)
        assert np.array_equal(whole_mean[last], mean[last], equal_nan=True)
        assert np.array_equal(whole_gmean[last], gmean[last], equal_nan=True)


@pytest.mark.parametrize("opts", [{}, {"users": "all"}, {"ties": "pessimistic"}])
def test_masks_of_whole_users_equal_the_pass_and_the_rebuilt_judgments(opts):
    # users sampled whole: their means are read from the full evaluation, and must be the
    # pass's floats exactly (the kernel run on every mask) and the rebuilt judgments' values
    j, runs, rng = _case(11, n_users=40)
    names = ["P@5", "AP@20", "nDCG@10", "RR", "ERR@10", "infAP@10", "R@10"]
    sub = Subsets(j, runs, names, infap="pooled", **opts)
    users = incompleteness.random_users(j.to_frame(), [1.0, 0.6, 0.3], 3, seed=4).keep
    users = np.vstack([users, np.zeros(j.n_entries, dtype=bool)])  # the last keeps none
    keep = np.vstack([users, _masks(j, rng, 3)])  # whole users, then random rows
    whole, kept = K.whole_users(keep, sub._indptr)
    assert whole.tolist() == [True] * len(users) + [False] * 3
    assert kept[0].all() and not kept[len(users) - 1].any()
    got = sub.means(keep, aggregates=("mean", "gmean"))
    n_req = sub._plan.codes.shape[0]
    mean = np.full((len(keep), n_req, 3), np.nan)
    gmean = np.full_like(mean, np.nan)
    every = np.arange(len(keep))
    K.subset_means(keep, every, mean, gmean, sub._args(), GMEAN_FLOOR, True, 2)
    per = by_request(sub.specs, sub._unique, sub._plan, np.moveaxis(mean, 0, -1))
    gper = by_request(sub.specs, sub._unique, sub._plan, np.moveaxis(gmean, 0, -1))
    for m, n in enumerate(names):
        np.testing.assert_array_equal(got["mean"][:, m], per[m].T)
        np.testing.assert_array_equal(got["gmean"][:, m], gper[m].T)
    assert np.isnan(got["mean"][len(users) - 1]).all()  # no user left: no mean
    # scored a few masks at a time (whole users and random rows mixed in a chunk): score's
    for k, scores in enumerate(sub.scores(keep, chunk=3)):
        one = sub.score(keep[k])
        for n in names:
            np.testing.assert_array_equal(scores[n], one[n])
    for k in range(len(users)):
        if not keep[k].any():
            continue
        mats = score_matrices(_rebuilt(j, keep[k]), runs, names, infap="pooled", **opts)
        scores = sub.score(keep[k])
        for m, n in enumerate(names):
            _same(scores[n], mats[n])
            np.testing.assert_allclose(got["mean"][k, m], aggregate(mats[n], "mean"), atol=1e-12)
            np.testing.assert_allclose(got["gmean"][k, m], aggregate(mats[n], "gmean"), rtol=1e-12)


def test_score_without_a_mask_is_the_full_evaluation_and_masks_objects_are_read():
    j, runs, _ = _case(3)
    sub = Subsets(j, runs, NAMES)
    full = score_matrices(j, runs, NAMES)
    got = sub.score()
    for n in NAMES:
        _same(got[n], full[n])
    masks = incompleteness.random_ratings(j.to_frame(), [1.0, 0.5], 2, seed=0)
    means = sub.means(masks)["mean"]
    assert means.shape == (len(masks), len(NAMES), 3)
    np.testing.assert_allclose(means[0], np.stack([aggregate(full[n]) for n in NAMES]), atol=1e-12)


def test_judgments_that_are_a_subset_already():
    j, runs, rng = _case(5)
    part = j.subset(rng.random(j.n_entries) < 0.7)
    sub = Subsets(part, runs, ["P@5", "nDCG@10"])
    keep = rng.random(part.n_entries) < 0.5
    want = score_matrices(_rebuilt(part, keep), runs, ["P@5", "nDCG@10"])
    got = sub.score(keep)
    for n in want:
        _same(got[n], want[n])


def test_precision_by_hand():
    # one user: relevant 1, 2, 3 (grade 5), judged 4 (grade 1); the list 1 4 2 9 3
    j = Judgments.from_frame(
        pd.DataFrame({"user": 0, "item": [1, 2, 3, 4], "rating": [5.0, 5.0, 5.0, 1.0]}), threshold=4
    )
    runs = Runs.from_frame(
        pd.DataFrame({"user": 0, "item": [1, 4, 2, 9, 3], "score": [5.0, 4, 3, 2, 1]}),
        j,
        system="s",
    )
    sub = Subsets(j, runs, ["P@5", "R@5", "AP@5"])
    keep = np.array([False, True, True, True])  # item 1 loses its judgment
    got = sub.score(keep)
    assert got["P@5"][0, 0] == pytest.approx(2 / 5)  # items 2 and 3 at ranks 3 and 5
    assert got["R@5"][0, 0] == pytest.approx(1.0)  # |R| = 2 now
    assert got["AP@5"][0, 0] == pytest.approx((1 / 3 + 2 / 5) / 2)
    only_nonrel = np.array([False, False, False, True])
    assert np.isnan(sub.score(only_nonrel)["P@5"][0, 0])  # no relevant item left: excluded


def test_bad_masks_and_names_are_refused():
    j, runs, _ = _case(1)
    sub = Subsets(j, runs, ["P@5"])
    with pytest.raises(ValueError, match="one flag per row"):
        sub.score(np.ones(j.n_entries - 1, dtype=bool))
    with pytest.raises(ValueError, match="one flag per row"):
        sub.means(np.ones(j.n_entries, dtype=bool))
    with pytest.raises(ValueError, match="aggregates"):
        sub.means(np.ones((1, j.n_entries), dtype=bool), aggregates=("median",))
    with pytest.raises(ValueError, match="plain metric"):
        Subsets(j, runs, ["gm_AP@10"])
    with pytest.raises(ValueError, match="listed twice"):
        Subsets(j, runs, ["P@5", "P@5"])
    with pytest.raises(ValueError, match="with_popularity"):
        Subsets(j, runs, ["SRecall@5"])
