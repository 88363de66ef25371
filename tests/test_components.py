"""recmeta's LensKit components against hand-worked cases and slow references."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from lenskit.data import ItemList, from_interactions_df
from lenskit.pipeline import topn_pipeline
from lenskit.training import TrainingOptions

from recmeta.components.itemcf import ItemCFScorer, similarity
from recmeta.components.plsa import PLSAScorer, em_step, log_likelihood
from recmeta.components.random import RandomScorer, pair_uniform

R6, R3 = np.sqrt(6.0), np.sqrt(3.0)


def _ds(pairs):
    df = pd.DataFrame(pairs, columns=["user", "item"]).assign(rating=4.0)
    return from_interactions_df(df, user_col="user", item_col="item", rating_col="rating")


@pytest.fixture(scope="module")
def tiny():
    """Users 1–4 and items 1–4 (a, b, c, d): 1:{a,b} 2:{a,b,c} 3:{b,c} 4:{c,d}.

    Item counts a=2, b=3, c=3, d=1; co-counts ab=2, ac=1, bc=2, cd=1, so the cosines are
    ab = 2/√6, ac = 1/√6, bc = 2/3, cd = 1/√3 and ad = bd = 0.
    """
    return _ds([(1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 2), (3, 3), (4, 3), (4, 4)])


def _scores(scorer, ds):
    return scorer.score_matrix(np.arange(ds.user_count))


# ---------------------------------------------------------------- item CF (Krichene & Rendle)
def test_itemcf_eq30_by_hand(tiny):
    s = ItemCFScorer(q=1)
    s.train(tiny)
    m = _scores(s, tiny)
    ab, ac, bc, cd = 2 / R6, 1 / R6, 2 / 3, 1 / R3
    assert m[0, 2] == pytest.approx((ac + bc) / (ac + bc + cd))  # user 1, item c
    assert m[0, 3] == pytest.approx(0.0)  # d's only neighbour c is not in user 1's history
    assert m[3, 0] == pytest.approx(ac / (ab + ac))  # user 4, item a = 1/3
    assert m[3, 1] == pytest.approx(bc / (ab + bc))


def test_itemcf_q_sharpens(tiny):
    s = ItemCFScorer(q=3)
    s.train(tiny)
    assert _scores(s, tiny)[3, 0] == pytest.approx(1 / 9)  # (1/√6)³ / ((2/√6)³ + (1/√6)³)


def test_itemcf_row_neighbourhood_k_prime(tiny):
    # k'=1: a keeps b, b keeps a, c keeps b (2/3 > 1/√3 > 1/√6), d keeps c
    s = ItemCFScorer(q=1, k_prime=1)
    s.train(tiny)
    m = _scores(s, tiny)
    assert m[3, 0] == 0.0 and m[3, 1] == 0.0
    assert m[0, 2] == pytest.approx(1.0)
    assert s.similarity_.nnz == 4


def test_itemcf_column_neighbourhood_k(tiny):
    # k=1: keep (i, j) iff i is j's nearest item: N(a)=b, N(b)=a, N(c)=b, N(d)=c
    s = ItemCFScorer(q=1, k=1)
    s.train(tiny)
    m = _scores(s, tiny)
    assert m[3, 1] == pytest.approx((2 / 3) / (2 / R6 + 2 / 3))  # row b = {a, c}
    assert m[0, 3] == 0.0  # row d is empty: score 0
    assert m[0, 2] == 0.0  # row c = {d}


def test_itemcf_similarity_rows_unit_norm_and_no_self(tiny):
    x = tiny.interactions().matrix().scipy(layout="csr")
    s = similarity(x, q=2)
    assert np.all(s.diagonal() == 0)
    norms = np.sqrt(np.asarray(s.multiply(s).sum(axis=1)).ravel())
    assert np.allclose(norms, 1.0)


def test_itemcf_slow_reference_random():
    rng = np.random.default_rng(5)
    dense = (rng.random((30, 12)) < 0.3).astype(float)
    u, i = np.nonzero(dense)
    ds = _ds(list(zip(u + 1, i + 1)))
    x = ds.interactions().matrix().scipy(layout="csr").toarray()
    q, k, kp = 2.0, 4, 3
    n = x.sum(0)
    sim = np.zeros((12, 12))
    for a, b in itertools.product(range(12), repeat=2):
        if a != b and n[a] and n[b]:
            sim[a, b] = ((x[:, a] * x[:, b]).sum() / np.sqrt(n[a] * n[b])) ** q

    def nbrs(row, kk):  # k most similar, ties by smaller index, similarity > 0
        order = sorted(range(12), key=lambda j: (-row[j], j))
        return {j for j in order[:kk] if row[j] > 0}

    sp2 = np.zeros_like(sim)
    for a, b in itertools.product(range(12), repeat=2):
        if sim[a, b] > 0 and b in nbrs(sim[a], kp) and a in nbrs(sim[b], k):
            sp2[a, b] = sim[a, b]
    expect = np.zeros_like(x)
    for uu in range(x.shape[0]):
        for a in range(12):
            den = sp2[a].sum()
            expect[uu, a] = (sp2[a] * x[uu]).sum() / den if den > 0 else 0.0
    s = ItemCFScorer(q=q, k=k, k_prime=kp)
    s.train(ds)
    got = _scores(s, ds)
    empty = x.sum(1) == 0
    assert np.allclose(got[~empty], expect[~empty])


def test_itemcf_call_matches_matrix(tiny):
    s = ItemCFScorer(q=3, k_prime=2)
    s.train(tiny)
    m = _scores(s, tiny)
    pipe = topn_pipeline(s, n=10)
    pipe.train(tiny)
    for u in (1, 4):
        items = ItemList(item_ids=[4, 3, 2, 1, 99])
        got = pipe.run("scorer", query=u, items=items)
        row = dict(zip(got.ids(), got.scores()))
        assert np.isnan(row[99])  # unknown item
        for i in (1, 2, 3, 4):
            assert row[i] == pytest.approx(m[u - 1, i - 1])


# ---------------------------------------------------------------- pLSA (Hofmann 2004)
def _em_loop(n, theta, phi, beta):
    """Slow E/M steps written from the definitions."""
    U, Z = theta.shape
    I = phi.shape[0]
    t_new, p_new = np.zeros((U, Z)), np.zeros((I, Z))
    for u in range(U):
        for i in range(I):
            if n[u, i] == 0:
                continue
            w = (theta[u] * phi[i]) ** beta
            qz = w / w.sum()
            t_new[u] += n[u, i] * qz
            p_new[i] += n[u, i] * qz
    return t_new / t_new.sum(1, keepdims=True), p_new / p_new.sum(0, keepdims=True)


@pytest.mark.parametrize("beta", [1.0, 0.75])
def test_plsa_em_step_matches_loop(beta):
    rng = np.random.default_rng(2)
    n = (rng.random((9, 7)) < 0.5) * rng.integers(1, 4, (9, 7))
    n[:, 0] = 1  # every user has an interaction
    theta = rng.random((9, 3)) + 0.1
    phi = rng.random((7, 3)) + 0.1
    theta /= theta.sum(1, keepdims=True)
    phi /= phi.sum(0, keepdims=True)
    t, p = em_step(sp.csr_array(n.astype(float)), theta, phi, beta)
    t_ref, p_ref = _em_loop(n, theta, phi, beta)
    assert np.allclose(t, t_ref) and np.allclose(p, p_ref)


def test_plsa_one_topic_is_popularity(tiny):
    # Z = 1: P(i|z) = n_i / N after one EM step, whatever the start (a=2, b=3, c=3, d=1 of 9)
    s = PLSAScorer(topics=1, iterations=1)
    s.train(tiny, TrainingOptions(rng=0))
    assert np.allclose(s.phi_[:, 0], [2 / 9, 3 / 9, 3 / 9, 1 / 9])
    assert np.allclose(_scores(s, tiny), np.tile([2 / 9, 3 / 9, 3 / 9, 1 / 9], (4, 1)))


def test_plsa_likelihood_never_decreases_and_seeded():
    rng = np.random.default_rng(3)
    u, i = np.nonzero(rng.random((40, 25)) < 0.2)
    ds = _ds(list(zip(u, i)))
    a, b, c = (PLSAScorer(topics=4, iterations=15) for _ in range(3))
    a.train(ds, TrainingOptions(rng=7))
    b.train(ds, TrainingOptions(rng=7))
    c.train(ds, TrainingOptions(rng=8))
    ll = np.array(a.log_likelihood_)
    assert np.all(np.diff(ll) >= -1e-9)
    counts = ds.interactions().matrix().scipy(layout="csr").astype(float)
    assert ll[-1] == pytest.approx(log_likelihood(counts, a.theta_, a.phi_))
    assert np.array_equal(a.theta_, b.theta_) and not np.allclose(a.theta_, c.theta_)
    assert np.allclose(a.theta_.sum(1), 1) and np.allclose(a.phi_.sum(0), 1)


def test_plsa_separates_two_communities():
    # users 0-9 take items 0-9 only, users 10-19 items 10-19 only
    pairs = [(u, i) for u in range(10) for i in range(10) if (u + i) % 3]
    pairs += [(u + 10, i + 10) for u, i in pairs]
    ds = _ds(pairs)
    s = PLSAScorer(topics=2, iterations=100)
    s.train(ds, TrainingOptions(rng=1))
    m = _scores(s, ds)
    own = np.r_[m[:10, :10].ravel(), m[10:, 10:].ravel()]
    other = np.r_[m[:10, 10:].ravel(), m[10:, :10].ravel()]
    assert own.min() > 50 * other.max()


# ---------------------------------------------------------------- random scorer
def test_random_scores_depend_only_on_pair():
    a = pair_uniform(3, np.int64(5), np.arange(1000))
    b = pair_uniform(3, np.int64(5), np.arange(1000)[::-1])[::-1]
    assert np.array_equal(a, b)
    assert not np.array_equal(a, pair_uniform(4, np.int64(5), np.arange(1000)))
    assert 0 <= a.min() and a.max() < 1
    big = pair_uniform(0, np.arange(200)[:, None], np.arange(500)[None, :]).ravel()
    assert abs(big.mean() - 0.5) < 0.01  # 1e5 draws: sd of the mean ≈ 0.0009
    assert np.unique(big).size == big.size


def test_random_scorer_component(tiny):
    s = RandomScorer(seed=9)
    got = s(query=2, items=ItemList(item_ids=[3, 1]))
    # LensKit item lists hold scores as float32
    expect = pair_uniform(9, np.int64(2), np.array([3, 1])).astype(np.float32)
    assert np.array_equal(got.scores(), expect)
    with pytest.raises(TypeError, match="integer item ids"):
        pair_uniform(0, np.int64(1), np.array(["a"]))
