"""Run generation: the fast path against LensKit's per-user path, protocols, candidates, seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmeta import recommenders
from recmeta.data import splits
from recmeta.recommenders import roster
from recmeta.recommenders.roster import System

TOL = 2e-5


@pytest.fixture(scope="module")
def split(ml100k):
    """ML-100K restricted to its first 150 users, 80/20 per user."""
    small = ml100k.loc[ml100k["user"] <= 150]
    return splits.holdout_per_user(small, 0.2, seed=3)


FAST_SYSTEMS = [
    System("pop", "lenskit.basic:PopScorer", {"score": "count"}),
    System("bias", "lenskit.basic:BiasScorer", {"damping": 5.0}),
    System("wrmf", "lenskit.als:ImplicitMFScorer",
           {"embedding_size": 8, "epochs": 3, "user_embeddings": "prefer"}),
    System("bmf", "lenskit.als:BiasedMFScorer",
           {"embedding_size": 8, "epochs": 3, "damping": 5.0, "user_embeddings": "prefer"}),
    System("funk", "lenskit.funksvd:FunkSVDScorer", {"embedding_size": 8, "epochs": 5}),
    System("bsvd", "lenskit.sklearn.svd:BiasedSVDScorer", {"embedding_size": 8, "damping": 5.0}),
    System("ease", "lenskit.knn:EASEScorer", {"regularization": 50.0}),
    System("flex", "lenskit.flexmf:FlexMFImplicitScorer",
           {"embedding_size": 8, "epochs": 2, "loss": "logistic", "user_embeddings": "prefer"}),
    System("flex-exp", "lenskit.flexmf:FlexMFExplicitScorer", {"embedding_size": 8, "epochs": 2}),
    System("plsa", "recmeta.recommenders.components.plsa:PLSAScorer", {"topics": 5, "iterations": 5}),
    System("kr-z", "recmeta.recommenders.components.itemcf:ItemCFScorer", {"q": 1.0, "k_prime": 10}),
    System("random", "recmeta.recommenders.components.random:RandomScorer", {"seed": 1}),
    # k-NN: implicit feedback (ties at the k-th neighbour cannot change a score) and user k-NN
    # (its ties are rare); explicit item k-NN is compared score by score in test_components
    System("iknn-imp", "lenskit.knn:ItemKNNScorer", {"max_nbrs": 20, "feedback": "implicit"}),
    System("uknn", "lenskit.knn:UserKNNScorer", {"max_nbrs": 30, "feedback": "explicit"}),
    System("uknn-imp", "lenskit.knn:UserKNNScorer", {"max_nbrs": 30, "feedback": "implicit"}),
]


def assert_same_lists(fast: pd.DataFrame, slow: pd.DataFrame, tol: float = TOL) -> None:
    """Equal lists up to the order of (near-)tied scores.

    Per user: same length; the score at every rank agrees; where the items differ, both scores
    lie within ``tol`` of each other (a tie, or float32 rounding in LensKit's own arithmetic);
    the items scoring clearly above the last score are the same set.
    """
    assert len(fast) == len(slow)
    m = fast.merge(slow, on=["user", "rank"], suffixes=("_f", "_s"), validate="one_to_one")
    assert len(m) == len(fast)
    scale = np.maximum(1.0, np.abs(m["score_s"]))
    assert np.all(np.abs(m["score_f"] - m["score_s"]) <= tol * scale)
    for u, g in m.groupby("user"):
        last = g["score_s"].min()
        sure_f = set(g.loc[g["score_f"] > last + tol * max(1, abs(last)), "item_f"])
        sure_s = set(g.loc[g["score_s"] > last + tol * max(1, abs(last)), "item_s"])
        assert sure_f == sure_s, u
    diff = m["item_f"] != m["item_s"]
    assert diff.mean() < 0.05  # differences are the exception (ties), not the rule


@pytest.fixture(scope="module")
def trained(split):
    return {s.name: recommenders.train(s, split.train, seed=11) for s in FAST_SYSTEMS}


@pytest.mark.parametrize("name", [s.name for s in FAST_SYSTEMS])
def test_fast_path_equals_lenskit(trained, name):
    m = trained[name]
    assert recommenders.fast_scorer(m) is not None
    fast = recommenders.top_n(m, depth=20, engine="fast", block=64, progress=False)
    slow = recommenders.top_n(m, depth=20, engine="lenskit", progress=False)
    assert_same_lists(fast, slow)
    assert fast["user"].nunique() == m.data.user_count


def test_training_items_never_in_allitems_lists(trained, split):
    train_pairs = set(zip(split.train["user"], split.train["item"]))
    for name in ("pop", "kr-z"):
        for engine in ("fast", "lenskit"):
            df = recommenders.top_n(trained[name], depth=200, engine=engine, progress=False)
            assert not set(zip(df["user"], df["item"])) & train_pairs
            n_items = trained[name].data.item_count
            per_user = df.groupby("user").size()
            counts = split.train.groupby("user").size()
            # with 200 slots and few training items, every user gets a full list
            assert (per_user == np.minimum(200, n_items - counts.reindex(per_user.index))).all()
            assert (df.groupby("user")["rank"].apply(lambda r: list(r) == list(range(1, len(r) + 1)))).all()


def test_testitems_lists_hold_only_unrated_test_items(trained, split):
    test_items = set(split.test["item"])
    train_pairs = set(zip(split.train["user"], split.train["item"]))
    m = trained["bias"]
    fast = recommenders.top_n(m, depth=30, candidates="test", test=split.test, engine="fast", progress=False)
    assert set(fast["item"]) <= test_items
    assert not set(zip(fast["user"], fast["item"])) & train_pairs
    slow = recommenders.top_n(m, depth=30, candidates="test", test=split.test, engine="lenskit", progress=False)
    assert_same_lists(fast, slow)
    with pytest.raises(ValueError, match="needs the test frame"):
        recommenders.top_n(m, candidates="test")


def test_candidate_scores_exactly_the_candidates(trained, split):
    rng = np.random.default_rng(0)
    items = trained["wrmf"].data.items.ids()
    users = trained["wrmf"].data.users.ids()
    rows = [(u, i) for u in users for i in rng.choice(items, 101, replace=False)]
    pairs = pd.DataFrame(rows, columns=["user", "item"]).sample(frac=1, random_state=1)
    pairs.loc[pairs.index[:3], "item"] = 10**6  # unknown items: NaN, not dropped
    for name in ("wrmf", "kr-z", "random"):
        m = trained[name]
        fast = recommenders.score_candidates(m, pairs, engine="fast", block=50, progress=False)
        assert fast[["user", "item"]].equals(pairs[["user", "item"]].reset_index(drop=True))
        assert fast["score"].isna().sum() == (0 if name == "random" else 3)
        slow = recommenders.score_candidates(m, pairs, engine="lenskit", progress=False)
        assert np.allclose(fast["score"], slow["score"], rtol=TOL, atol=TOL, equal_nan=True)
    with pytest.raises(ValueError, match="repeat"):
        recommenders.score_candidates(m, pd.concat([pairs.head(2)] * 2))


def test_same_seed_same_lists(split):
    s = FAST_SYSTEMS[2]  # implicit ALS, random initialisation
    a = recommenders.top_n(recommenders.train(s, split.train, seed=5), depth=10, progress=False)
    b = recommenders.top_n(recommenders.train(s, split.train, seed=5), depth=10, progress=False)
    c = recommenders.top_n(recommenders.train(s, split.train, seed=6), depth=10, progress=False)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_rank_frame_tie_rule_is_text_descending():
    df = pd.DataFrame({"user": [1] * 5 + [2], "item": [9, 10, 100, 2, 3, 5],
                       "score": [0.5, 0.5, 0.5, 0.9, np.nan, 0.1]})
    out = recommenders.rank_frame(df, depth=None)
    # "9" > "2" > "100" > "10" as text; 2 has the top score; NaN (item 3) is not ranked
    assert out.loc[out.user == 1, "item"].tolist() == [2, 9, 100, 10]
    assert out.loc[out.user == 1, "rank"].tolist() == [1, 2, 3, 4]
    assert recommenders.rank_frame(df, depth=2).groupby("user").size().tolist() == [2, 1]


def test_bad_requests_raise(trained):
    m = trained["pop"]
    with pytest.raises(ValueError, match="no training data"):
        recommenders.top_n(m, users=[10**7], progress=False)
    with pytest.raises(ValueError, match="candidates must be"):
        recommenders.top_n(m, candidates="everything", progress=False)
    # ALS that re-solves each user's embedding from the history has no one-product path
    solve = System("als", "lenskit.als:ImplicitMFScorer", {"embedding_size": 4, "epochs": 1})
    with pytest.raises(ValueError, match="no fast path"):
        recommenders.top_n(recommenders.train(solve, m.train), engine="fast", progress=False)
    with pytest.raises(ValueError, match="lacks column"):
        recommenders.train(solve, m.train.drop(columns="item"))
    implicit = m.train.drop(columns="rating")  # a system that learns from ratings says so by name
    with pytest.raises(ValueError, match="'bias' learns from rating values"):
        recommenders.train(roster.get("bias"), implicit)
    assert recommenders.top_n(recommenders.train(roster.get("pop"), implicit), depth=5, progress=False)["rank"].max() == 5


def test_use_ray_without_ray_says_how_to_install(trained, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(RuntimeError, match="pip install 'recmeta\\[ray\\]'"):
        recommenders.top_n(trained["pop"], use_ray=True, progress=False)
    # Ray itself is exercised in tests/test_ray.py (slow: it starts a cluster)


def test_lists_follow_the_metric_engines_tie_rule(trained, split):
    """recmeta.metrics re-sorts a frame by score with its own tie rule; our ranks must agree."""
    from recmeta.metrics import Judgments, Runs

    df = pd.concat([recommenders.top_n(trained[n], depth=50, progress=False).assign(system=n)
                    for n in ("pop", "kr-z")])
    j = Judgments.from_frame(split.test, threshold=4)
    by_score = Runs.from_frame(df, j)
    by_rank = Runs.from_frame(df.drop(columns="score"), j)
    assert np.array_equal(by_score.ranks, by_rank.ranks)
    assert (by_score.ranks >= 0).sum() > 0


# ------------------------------------------------------------------ one system at a time
def _random_runs_frame(rng, systems, users, items, depth):
    """Lists with tied scores, unjudged items and one system with shorter lists."""
    rows = []
    for k, s in enumerate(systems):
        d = depth - 3 if k == 1 else depth
        for u in users:
            pick = rng.choice(items, size=d, replace=False)
            rows.append(pd.DataFrame({"system": s, "user": u, "item": pick,
                                      "score": rng.integers(0, 4, size=d).astype(float)}))
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("ties", ["trec_eval", "item_id"])
def test_concat_equals_one_frame(ties):
    from recmeta.metrics import Judgments, Runs

    rng = np.random.default_rng(11)
    users = np.arange(1, 31)
    judged = pd.DataFrame({"user": np.repeat(users, 4), "item": rng.integers(0, 40, 120),
                           "rating": rng.integers(1, 6, 120)}).drop_duplicates(["user", "item"])
    j = Judgments.from_frame(judged, threshold=4)
    frame = _random_runs_frame(rng, ["a", "b", "c"], users, np.arange(0, 80), 12)
    whole = Runs.from_frame(frame, j, ties=ties)
    parts = Runs.concat([Runs.from_frame(frame[frame["system"] == s], j, ties=ties)
                         for s in ["a", "b", "c"]])
    assert list(parts.systems) == list(whole.systems)
    assert parts.items.equals(whole.items) and parts.ties == whole.ties
    np.testing.assert_array_equal(parts.ranks, whole.ranks)
    np.testing.assert_array_equal(parts.tied, whole.tied)
    assert parts.tied.any()  # the check above compared some tie blocks


def test_concat_refuses_mixed_parts():
    from recmeta.metrics import Judgments, Runs, RunsError

    rng = np.random.default_rng(2)
    users = np.arange(1, 6)
    j = Judgments.from_frame(pd.DataFrame({"user": users, "item": users, "rating": 5}), threshold=4)
    other = Judgments.from_frame(pd.DataFrame({"user": users, "item": users + 1, "rating": 5}), threshold=4)
    f = _random_runs_frame(rng, ["a"], users, np.arange(20), 4)
    a = Runs.from_frame(f, j)
    with pytest.raises(RunsError, match="appears in two parts"):
        Runs.concat([a, a])
    with pytest.raises(RunsError, match="same Judgments"):
        Runs.concat([a, Runs.from_frame(f.assign(system="b"), other)])
    with pytest.raises(RunsError, match="tie rule"):
        Runs.concat([a, Runs.from_frame(f.assign(system="b"), j, ties="item_id")])
    with pytest.raises(RunsError, match="no runs"):
        Runs.concat([])


def test_make_runs_equals_make_then_from_frame(split, tmp_path):
    from recmeta.metrics import Judgments, Runs

    j = Judgments.from_frame(split.test, threshold=4)
    systems = [s for s in FAST_SYSTEMS if s.name in ("pop", "bias", "random")]
    kw = dict(dataset="ml-100k-150", split="holdout", seed=0, depth=20, root=tmp_path)
    built = recommenders.make_runs(systems, split.train, j, **kw)
    ref = Runs.from_frame(recommenders.make(systems, split.train, **kw), j)
    assert list(built.systems) == [s.name for s in systems]
    assert built.items.equals(ref.items)
    np.testing.assert_array_equal(built.ranks, ref.ranks)
    np.testing.assert_array_equal(built.tied, ref.tied)


def test_biasedsvd_depends_on_its_seed_alone(split):
    # LensKit's BiasedSVD leaves scikit-learn's randomized SVD to numpy's global generator:
    # training seeds that generator from the run's seed and restores the caller's
    s = roster.get("biasedsvd-50")
    runs = []
    for state in (1, 2):
        np.random.seed(state)
        before = np.random.get_state()[1].copy()
        model = recommenders.train(s, split.train, seed=5)
        assert np.array_equal(np.random.get_state()[1], before)  # the caller's state is kept
        runs.append(recommenders.top_n(model, depth=10, progress=False))
    pd.testing.assert_frame_equal(runs[0], runs[1])
    other = recommenders.top_n(recommenders.train(s, split.train, seed=6), depth=10,
                               progress=False)
    assert not runs[0].equals(other)
