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

from recmeta.recommenders.components.itemcf import ItemCFScorer, cooccurrence, similarity
from recmeta.recommenders.components.plsa import PLSAScorer, em_step, log_likelihood
from recmeta.recommenders.components.random import RandomScorer, pair_uniform

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


@pytest.mark.parametrize(
    ("q", "k", "kp"),
    [(3.0, None, None), (1.0, None, 10), (2.0, 5, None), (1.0, 3, 7), (0.5, 40, 35), (1.5, 60, 2)],
)
def test_itemcf_similarity_is_the_elementwise_definition_to_the_last_digit(q, k, kp):
    """The compiled eqs. 27-29 against a plain loop over the dense co-occurrence: the same
    floats, tie-breaks (smaller item first) included. k or k' above 32 takes the sorting path;
    sparse binary data makes many equal similarities."""
    rng = np.random.default_rng(11)
    x = (rng.random((120, 70)) < 0.25).astype(float)
    x[:, 5] = 0.0  # an item nobody rated
    n = x.sum(0)
    co = x.T @ x
    base = np.zeros_like(co)
    for a, b in itertools.product(range(70), repeat=2):
        if a != b and co[a, b] > 0:
            base[a, b] = co[a, b] / np.sqrt(n[a] * n[b])
    s = np.where(base > 0, base**q, 0.0)  # eq. 27's power as numpy takes it

    def top(row, kk):  # the kk largest stored entries, ties by smaller item
        stored = [j for j in range(70) if row[j] > 0]
        return set(sorted(stored, key=lambda j: (-row[j], j))[:kk] if kk else stored)

    expect = np.zeros_like(s)
    for a in range(70):
        keep = [b for b in sorted(top(s[a], kp)) if a in top(s[:, b], k)]
        norm = 0.0
        for b in keep:  # summed in column order
            norm += s[a, b] * s[a, b]
        for b in keep:
            expect[a, b] = s[a, b] / np.sqrt(norm)
    got = similarity(sp.csr_array(x), q=q, k=k, k_prime=kp)
    assert got.has_sorted_indices
    dense = got.toarray()
    assert np.array_equal(dense, expect)
    assert got.nnz == np.count_nonzero(expect)
    assert len(np.unique(s[s > 0])) < np.count_nonzero(s) / 4  # ties were there to break


def _binary(rng, shape, density):
    return sp.csr_array((rng.random(shape) < density).astype(float))


@pytest.mark.parametrize(
    ("shape", "density"), [((120, 70), 0.25), ((40, 500), 0.02), ((300, 30), 0.6), ((5, 8), 0.0)]
)
def test_cooccurrence_is_scipys_product_with_sorted_columns(shape, density):
    """The compiled co-occurrence against scipy's ``x.T @ x`` then ``sort_indices``: the same
    row pointers, columns and counts. The second case takes the sorting path (few columns a
    row), the third the reading-off path; the last has no entry; an empty column and an empty
    row are in every case."""
    x = _binary(np.random.default_rng(3), shape, density).toarray()
    x[:, 1] = 0.0
    x[2, :] = 0.0
    x = sp.csr_array(x)
    ref = x.T @ x
    ref.sort_indices()
    got = cooccurrence(x)
    assert got.has_sorted_indices
    for a, b in ((got.indptr, ref.indptr), (got.indices, ref.indices), (got.data, ref.data)):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_cooccurrence_counts_every_stored_entry_as_scipy_does():
    # a matrix with an entry stored twice: scipy's product counts it twice, and so does this
    x = sp.csr_array((np.ones(4), np.array([0, 0, 1, 1]), np.array([0, 3, 4])), shape=(2, 3))
    assert not x.has_canonical_format
    ref = x.T @ x
    ref.sort_indices()
    got = cooccurrence(x)
    assert np.array_equal(got.toarray(), ref.toarray())
    assert got.toarray()[0, 0] == 4.0


@pytest.mark.parametrize(("q", "k", "kp"), [(3.0, None, None), (1.0, None, 10), (1.0, 3, 7)])
def test_itemcf_scores_are_scipys_sums_to_the_last_digit(q, k, kp):
    """score_matrix sums each row as scipy's sparse product ``h @ s''.T`` does (over the
    user's items in order), so the scores equal that product's, divided as eq. 30 says."""
    rng = np.random.default_rng(7)
    dense = (rng.random((60, 90)) < 0.15).astype(float)
    u, i = np.nonzero(dense)
    ds = _ds(list(zip(u + 1, i + 1, strict=True)))
    s = ItemCFScorer(q=q, k=k, k_prime=kp)
    s.train(ds)
    users = np.array([0, 7, 3, ds.user_count - 1, 7])
    h = s.ui_[users]
    num = (h @ s.similarity_.T).toarray()
    den = s.row_sums_
    expect = np.divide(num, den, out=np.zeros(num.shape), where=den > 0)
    expect[np.diff(h.indptr) == 0] = np.nan
    assert np.array_equal(s.score_matrix(users), expect, equal_nan=True)


def test_itemcf_scores_by_blocks_and_after_retraining():
    """The transposed similarity kept between blocks of users belongs to the last training:
    blocks scored one after the other equal one call, and a model trained again on other data
    scores as a model trained on that data alone."""
    rng = np.random.default_rng(8)
    a, b = (_ds(list(zip(*np.nonzero(rng.random((40, 30)) < p), strict=True))) for p in (0.2, 0.3))
    s = ItemCFScorer(q=2.0)
    s.train(a)
    users = np.arange(a.user_count)
    whole = s.score_matrix(users)
    blocks = [s.score_matrix(users[:15]), s.score_matrix(users[15:])]
    assert np.array_equal(np.vstack(blocks), whole)
    s.train(b)
    fresh = ItemCFScorer(q=2.0)
    fresh.train(b)
    users = np.arange(b.user_count)
    assert np.array_equal(s.score_matrix(users), fresh.score_matrix(users), equal_nan=True)
    assert not np.array_equal(s.score_matrix(users[:5]), whole[:5], equal_nan=True)


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


def test_plsa_training_reuses_the_likelihood_terms_and_stays_bit_equal():
    # training passes each iteration's likelihood terms to the next E-step (β = 1); the model
    # must equal, to the bit, the plain loop of em_step and log_likelihood from the same start
    rng = np.random.default_rng(5)
    u, i = np.nonzero(rng.random((30, 20)) < 0.3)
    ds = _ds(list(zip(u, i)))
    for beta in (1.0, 0.8):
        s = PLSAScorer(topics=3, iterations=6, beta=beta)
        s.train(ds, TrainingOptions(rng=4))
        counts = ds.interactions().matrix().scipy(layout="csr").astype(float)
        start = TrainingOptions(rng=4).random_generator()
        theta = start.random((counts.shape[0], 3)) + 0.5
        phi = start.random((counts.shape[1], 3)) + 0.5
        theta /= theta.sum(axis=1, keepdims=True)
        phi /= phi.sum(axis=0, keepdims=True)
        ll = []
        for _ in range(6):
            theta, phi = em_step(counts, theta, phi, beta)
            ll.append(log_likelihood(counts, theta, phi))
        assert np.array_equal(s.theta_, theta) and np.array_equal(s.phi_, phi)
        assert s.log_likelihood_ == ll


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
def _splitmix_uniform(seed: int, user: int, item: int) -> float:
    """The documented hash in Python integers, masked to 64 bits (the reference)."""
    m, phi = 2**64 - 1, 0x9E3779B97F4A7C15

    def mix(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        return z ^ (z >> 31)

    h = mix((seed * phi + phi) & m)
    h = mix(((h ^ (user & m)) * phi + phi) & m)
    h = mix(((h ^ (item & m)) * phi + phi) & m)
    return (h >> 11) * 2.0**-53


def test_random_scores_are_the_documented_hash_compiled_or_broadcast():
    rng = np.random.default_rng(7)
    users = rng.integers(-(2**62), 2**62, 3_000)  # negative ids wrap as uint64 does
    items = rng.integers(0, 2**31, 3_000).astype(np.int32)
    for seed in (0, 3, 2**40 + 1):
        same_shape = pair_uniform(seed, users, items)
        want = [_splitmix_uniform(seed, int(u), int(i)) for u, i in zip(users, items, strict=True)]
        assert same_shape.tolist() == want
        grid = pair_uniform(seed, users[:40, None], items[None, :50])  # broadcast
        want_grid = [
            [_splitmix_uniform(seed, int(u), int(i)) for i in items[:50]] for u in users[:40]
        ]
        assert grid.tolist() == want_grid
        one = pair_uniform(seed, np.int64(users[0]), items[:5])  # a scalar user
        assert one.tolist() == want[:1] + [
            _splitmix_uniform(seed, int(users[0]), int(i)) for i in items[1:5]
        ]
    square = pair_uniform(1, users[:60].reshape(6, 10), items[:60].reshape(6, 10))
    assert square.shape == (6, 10)
    assert square.ravel().tolist() == pair_uniform(1, users[:60], items[:60]).tolist()
    both = pair_uniform(2, np.int64(users[1]), np.int32(items[1]))  # two scalars: a scalar
    assert np.ndim(both) == 0 and float(both) == _splitmix_uniform(2, int(users[1]), int(items[1]))


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


# ---------------------------------------------------------------- k-NN block scoring
def _knn(kind, ds, **config):
    from lenskit.knn import ItemKNNScorer, UserKNNScorer

    s = (ItemKNNScorer if kind == "item" else UserKNNScorer)(**config)
    s.train(ds)
    return s


def _block(kind, s, ds, users=None):
    from recmeta.recommenders.components import knn

    users = np.arange(ds.user_count) if users is None else np.asarray(users)
    f = knn.item_knn_scores if kind == "item" else knn.user_knn_scores
    return f(s, ds, users)


def test_item_knn_implicit_by_hand(tiny):
    # implicit item k-NN weights are the cosines of the binary item columns (see ``tiny``)
    s1 = _knn("item", tiny, max_nbrs=1, feedback="implicit")
    m1 = _block("item", s1, tiny)
    _ab, ac, bc, cd = 2 / R6, 1 / R6, 2 / 3, 1 / R3
    assert m1[0, 2] == pytest.approx(bc, rel=1e-6)  # user 1 {a, b}, item c: best of ac, bc
    assert np.isnan(m1[0, 3])  # d is similar to neither a nor b
    assert m1[3, 0] == pytest.approx(ac, rel=1e-6)  # user 4 {c, d}, item a: only c
    assert m1[3, 1] == pytest.approx(bc, rel=1e-6)
    m2 = _block("item", _knn("item", tiny, max_nbrs=2, feedback="implicit"), tiny)
    assert m2[0, 2] == pytest.approx(ac + bc, rel=1e-6)
    assert m2[1, 3] == pytest.approx(cd, rel=1e-6)  # user 2 {a, b, c}, item d: only c
    m3 = _block("item", _knn("item", tiny, max_nbrs=2, min_nbrs=2, feedback="implicit"), tiny)
    assert np.isnan(m3[1, 3]) and m3[0, 2] == pytest.approx(ac + bc, rel=1e-6)


def test_user_knn_implicit_by_hand(tiny):
    # unit user vectors: x1 = (1,1,0,0)/√2, x2 = (1,1,1,0)/√3, x3 = (0,1,1,0)/√2, x4 = (0,0,1,1)/√2;
    # user 1's query q = (1,1,0,0): w12 = 2/√3, w13 = 1/√2, w14 = 0 (no neighbour)
    w12, w13 = 2 / R3, 1 / np.sqrt(2)
    m1 = _block("user", _knn("user", tiny, max_nbrs=1, feedback="implicit"), tiny)
    assert m1[0, 2] == pytest.approx(w12, rel=1e-6)  # item c, rated by 2, 3, 4: best is 2
    assert np.isnan(m1[0, 3])  # item d: only user 4, not a neighbour
    m2 = _block("user", _knn("user", tiny, max_nbrs=2, feedback="implicit"), tiny)
    assert m2[0, 2] == pytest.approx(w12 + w13, rel=1e-6)
    assert m2[0, 0] == pytest.approx(w12, rel=1e-6)  # item a: user 1 is not their own neighbour


def _item_knn_reference(s, ds):
    """Item k-NN from the definitions, one (user, item) at a time: LensKit's stored weights,
    the max_nbrs largest kept (smaller item number first among ties)."""
    S = s.sim_matrix.to_scipy().toarray()
    cfg = s.config
    field = "rating" if cfg.explicit else None
    ui = ds.interactions().matrix().scipy(field, layout="csr")
    out = np.full((ds.user_count, ds.item_count), np.nan)
    for u in range(ds.user_count):
        hist = ui.indices[ui.indptr[u]:ui.indptr[u + 1]]
        vals = ui.data[ui.indptr[u]:ui.indptr[u + 1]]
        for i in range(ds.item_count):
            nb = sorted((-S[j, i], j, v) for j, v in zip(hist, vals) if S[j, i] > 0)[:cfg.max_nbrs]
            if not nb or len(nb) < cfg.min_nbrs:
                continue
            w = np.array([-x[0] for x in nb])
            if cfg.explicit:
                r = np.array([x[2] - s.item_means[x[1]] for x in nb])
                out[u, i] = s.item_means[i] + (w * r).sum() / w.sum()
            else:
                out[u, i] = w.sum()
    return out


def _user_knn_reference(s, ds):
    """User k-NN from the definitions: weights x_v · q_u, the max_nbrs largest (float32) among
    the neighbours who rated the item, smaller user number first among ties."""
    cfg = s.config
    X = s.user_vectors.toarray()
    R = s.user_ratings.to_scipy().toarray() if cfg.explicit else None
    ui = ds.interactions().matrix().scipy("rating" if cfg.explicit else None, layout="csr")
    struct = ds.interactions().matrix().scipy(None, layout="csr").toarray() > 0
    out = np.full((ds.user_count, ds.item_count), np.nan)
    for u in range(ds.user_count):
        q = np.zeros(ds.item_count)
        cols = ui.indices[ui.indptr[u]:ui.indptr[u + 1]]
        vals = np.asarray(ui.data[ui.indptr[u]:ui.indptr[u + 1]], dtype=np.float32)
        mean = np.float32(vals.mean()) if cfg.explicit else 0.0
        q[cols] = (vals - mean) if cfg.explicit else 1.0
        w = (X @ q).astype(np.float32)
        w[u] = 0
        for i in range(ds.item_count):
            nb = sorted((-w[v], v) for v in range(ds.user_count)
                        if w[v] >= cfg.min_sim and struct[v, i])[:cfg.max_nbrs]
            if not nb or len(nb) < cfg.min_nbrs:
                continue
            ww = np.array([-x[0] for x in nb], dtype=np.float64)
            if cfg.explicit:
                r = np.array([R[x[1], i] for x in nb])
                out[u, i] = mean + (ww * r).sum() / ww.sum()
            else:
                out[u, i] = ww.sum()
    return out


@pytest.fixture(scope="module")
def tied():
    """24 users × 10 items, ratings on a 3-point scale: many exactly equal similarities."""
    rng = np.random.default_rng(8)
    mask = rng.random((24, 10)) < 0.45
    mask[:, 0] = True
    u, i = np.nonzero(mask)
    df = pd.DataFrame({"user": u + 1, "item": i + 1, "rating": rng.integers(1, 4, len(u)) + 2.0})
    return from_interactions_df(df, user_col="user", item_col="item", rating_col="rating")


@pytest.mark.parametrize("kind", ["item", "user"])
@pytest.mark.parametrize("feedback", ["implicit", "explicit"])
@pytest.mark.parametrize("k,min_nbrs", [(1, 1), (3, 1), (3, 2), (50, 1)])
def test_knn_block_scores_match_the_definition(tied, kind, feedback, k, min_nbrs):
    s = _knn(kind, tied, max_nbrs=k, min_nbrs=min_nbrs, feedback=feedback)
    got = _block(kind, s, tied)
    ref = (_item_knn_reference if kind == "item" else _user_knn_reference)(s, tied)
    assert got.dtype == np.float32
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    assert np.allclose(got, ref, rtol=2e-6, atol=2e-6, equal_nan=True)
    assert np.isfinite(got).mean() > 0.5  # the check is not vacuous
    sub = _block(kind, s, tied, users=[5, 2])  # any subset, in any order: the same rows
    assert np.array_equal(sub, got[[5, 2]], equal_nan=True)


def test_knn_tie_keeps_the_smaller_item_number():
    """Explicit item k-NN with weights set by hand: user 2 rated a = 5, b = 1, c = 3, and a and
    b are equally similar to d (0.5, c: 0.25). With max_nbrs = 1 the tie keeps a."""
    from lenskit.data.matrix import SparseRowArray

    rows = [(1, 1, 3.0), (1, 2, 3.0), (2, 1, 5.0), (2, 2, 1.0), (2, 3, 3.0), (3, 2, 4.0),
            (3, 3, 2.0), (4, 3, 4.0), (4, 4, 2.0)]
    df = pd.DataFrame(rows, columns=["user", "item", "rating"])
    ds = from_interactions_df(df, user_col="user", item_col="item", rating_col="rating")
    a, b, c, d = ds.items.numbers([1, 2, 3, 4])
    S = np.zeros((4, 4), dtype=np.float32)
    S[a, d] = S[b, d] = 0.5
    S[c, d] = 0.25
    mu = {a: 4.0, b: 8 / 3, c: 3.0, d: 2.0}  # the items' training means
    u2 = ds.users.number(2)
    for k, expect in [(1, mu[d] + (5 - mu[a])),
                      (2, mu[d] + (0.5 * (5 - mu[a]) + 0.5 * (1 - mu[b])) / 1.0),
                      (3, mu[d] + (0.5 * (5 - mu[a]) + 0.5 * (1 - mu[b]) + 0.25 * (3 - mu[c]))
                       / 1.25)]:
        s = _knn("item", ds, max_nbrs=k, feedback="explicit")
        assert np.allclose(s.item_means[[a, b, c, d]], [mu[a], mu[b], mu[c], mu[d]])
        s.sim_matrix = SparseRowArray.from_scipy(sp.csr_array(S))
        got = _block("item", s, ds, users=[u2])[0, d]
        assert got == pytest.approx(expect, rel=1e-6), k


def test_knn_scores_equal_lenskit_on_movielens(ml100k):
    """Against LensKit's own per-user scoring, for every (user, item) of a 120-user slice: equal
    wherever no tie at the max_nbrs-th neighbour can matter (implicit feedback: everywhere)."""
    from lenskit.pipeline import topn_pipeline

    from recmeta.data import to_lenskit

    ds = to_lenskit(ml100k.loc[ml100k["user"] <= 120])
    items = ItemList(item_ids=ds.items.ids())
    users = np.arange(0, ds.user_count, 3)
    for kind, feedback, k in [("item", "implicit", 20), ("item", "explicit", 20),
                              ("user", "implicit", 30), ("user", "explicit", 30)]:
        s = _knn(kind, ds, max_nbrs=k, feedback=feedback)
        pipe = topn_pipeline(s, n=10)
        pipe.train(ds)
        got = _block(kind, s, ds, users)
        lk = np.stack([pipe.run("scorer", query=uid, items=items).scores()
                       for uid in ds.users.ids(users)])
        assert np.array_equal(np.isnan(got), np.isnan(lk)), (kind, feedback)
        close = np.isclose(got, lk, rtol=1e-5, atol=1e-5) | np.isnan(lk)
        if feedback == "implicit" or kind == "user":
            assert close.all(), (kind, feedback, np.nanmax(np.abs(got - lk)))
        else:  # explicit item k-NN: a differing score must come with a tie at the k-th weight
            S = s.sim_matrix.to_scipy().toarray()
            ui = ds.interactions().matrix().scipy(None, layout="csr")
            for r, i in zip(*np.nonzero(~close)):
                u = users[r]
                w = np.sort(S[ui.indices[ui.indptr[u]:ui.indptr[u + 1]], i])[::-1]
                assert len(w) > k and w[k - 1] == w[k], (u, i)
            assert close.mean() > 0.99


def test_item_knn_too_large_for_dense_matrices_is_left_to_lenskit(tiny, monkeypatch):
    from recmeta.recommenders.components import knn

    s = _knn("item", tiny, max_nbrs=2, feedback="implicit")
    assert knn.item_matrices_bytes(4) == 4 * 4 * (4 + 2)  # float32 weights + int16 ranks
    assert knn.item_matrices_bytes(40_000) == 40_000**2 * (4 + 4)  # int32 ranks past 32,766
    assert knn.knn_scorer(s, tiny) is not None
    monkeypatch.setattr(knn, "DENSE_BYTES", 95)
    with pytest.warns(UserWarning, match="above its cap.*RECMETA_KNN_DENSE_GB="):
        assert knn.knn_scorer(s, tiny) is None
    # the environment variable raises the cap again (in GiB), and a bad value is refused
    monkeypatch.setenv(knn.ENV_DENSE, "0.5")
    assert knn.dense_cap() == 1 << 29 and knn.knn_scorer(s, tiny) is not None
    monkeypatch.setenv(knn.ENV_DENSE, "1e-7")  # 107 bytes: the 96 needed fit
    assert knn.knn_scorer(s, tiny) is not None
    monkeypatch.setenv(knn.ENV_DENSE, "1e-8")  # 10 bytes: they do not
    with pytest.warns(UserWarning):
        assert knn.knn_scorer(s, tiny) is None
    for bad in ("lots", "-1"):
        monkeypatch.setenv(knn.ENV_DENSE, bad)
        with pytest.raises(ValueError, match="RECMETA_KNN_DENSE_GB"):
            knn.dense_cap()
    assert knn.knn_scorer(PLSAScorer(), tiny) is None  # not a k-NN scorer
