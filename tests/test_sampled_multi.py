"""Sampled metrics with several relevant items per user (recmeta.sampled.multi).

Independent references: exact enumeration of every sample of negatives on small cases (fractions),
metrics computed from the explicit sampled ranking by a slow loop written here, the single-item
laws of recmeta.sampled, and Monte-Carlo simulation. The independence approximation
(Krichene & Rendle 2020, §8) is checked where it is exact (marginals, means of additive metrics)
and measured where it is not (Hit@k, variances).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from recmeta.sampled import (
    expected_metric,
    expected_multi_metric,
    multi_metric_moments,
    multi_metric_values,
    multi_rank_pmf,
    simulate_multi_ranks,
)

METRICS = ["Recall@2", "Recall@4", "Precision@3", "AP", "AP@2", "AP@4", "NDCG", "NDCG@3", "AUC", "Hit@1", "Hit@2"]


def _slow_metric(metric: str, labels: list[int]) -> float:
    """The metric of a binary relevance list (top first), by a plain loop."""
    name, _, cut = metric.partition("@")
    k = int(cut) if cut else len(labels)
    R = sum(labels)
    if name == "Recall":
        return sum(labels[:k]) / R
    if name == "Precision":
        return sum(labels[:k]) / k
    if name == "Hit":
        return float(any(labels[:k]))
    if name == "AP":  # eq. 5: precision at each relevant position within the top k, over min(R, k)
        hits, total = 0, 0.0
        for pos, rel in enumerate(labels[:k], start=1):
            if rel:
                hits += 1
                total += hits / pos
        return total / min(R, k)
    if name == "AUC":  # eq. 2: share of (relevant, non-relevant) pairs in the right order
        pairs = [(a, b) for a, la in enumerate(labels) for b, lb in enumerate(labels) if la and not lb]
        return sum(a < b for a, b in pairs) / len(pairs)
    dcg = sum(rel / math.log2(pos + 1) for pos, rel in enumerate(labels[:k], start=1))
    idcg = sum(1 / math.log2(pos + 1) for pos in range(1, min(R, k) + 1))
    return dcg / idcg


def _enumerate(ranks: list[int], n: int, m: int, replace: bool) -> dict[tuple[int, ...], Fraction]:
    """Exact joint law of the sampled ranks: every equally likely sample of negatives."""
    negatives = [p for p in range(1, n + 1) if p not in ranks]  # true ranks of non-relevant items
    draws = itertools.product(negatives, repeat=m) if replace else itertools.combinations(negatives, m)
    counts: Counter[tuple[int, ...]] = Counter()
    for draw in draws:
        order = sorted(list(draw) + list(ranks))  # ties impossible: relevant ranks are not drawn
        counts[tuple(i + 1 for i, p in enumerate(order) if p in ranks)] += 1
    total = sum(counts.values())
    return {s: Fraction(c, total) for s, c in counts.items()}


def _labels(s: tuple[int, ...], length: int) -> list[int]:
    return [1 if pos in s else 0 for pos in range(1, length + 1)]


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("ranks", [[2, 5], [1, 2, 6], [3, 4]])
def test_marginals_match_exact_enumeration(ranks, replace):
    n, m = 8, 3
    law = _enumerate(ranks, n, m, replace)
    pmf = multi_rank_pmf(np.array(ranks), n, m, replace)
    for j in range(len(ranks)):
        exact = np.zeros(m + 1)
        for s, p in law.items():
            exact[s[j] - (j + 1)] += float(p)
        np.testing.assert_allclose(pmf[j], exact, atol=1e-12)


@pytest.mark.parametrize("replace", [True, False])
def test_expected_metrics_against_enumeration(replace):
    ranks, n, m = [3, 4, 7], 9, 3
    law = _enumerate(ranks, n, m, replace)
    for metric in METRICS:
        exact = sum(float(p) * _slow_metric(metric, _labels(s, m + len(ranks))) for s, p in law.items())
        assert expected_multi_metric(metric, np.array(ranks), n, m, replace, method="exact") == pytest.approx(exact, abs=1e-12)
        approx = expected_multi_metric(metric, np.array(ranks), n, m, replace)
        if metric == "Hit@1":
            assert approx == pytest.approx(exact, abs=1e-12)  # only the first item can be on top
        elif metric == "Hit@2":
            assert approx > exact + 0.03  # the product of marginals overstates any-hit
        else:
            assert approx == pytest.approx(exact, abs=1e-12)  # additive: linearity makes it exact
        values = multi_metric_values(metric, np.array(list(law)), m)
        slow = [_slow_metric(metric, _labels(s, m + len(ranks))) for s in law]
        np.testing.assert_allclose(values, slow, atol=1e-12)


@pytest.mark.parametrize("replace", [True, False])
def test_simulator_matches_joint_enumeration(replace):
    ranks, n, m, reps = [2, 5, 6], 9, 3, 40_000
    law = _enumerate(ranks, n, m, replace)
    draws = simulate_multi_ranks(np.array(ranks), n, m, repetitions=reps, seed=3, replace=replace)
    assert draws.shape == (reps, 3)
    seen = Counter(map(tuple, draws.tolist()))
    assert set(seen) <= set(law)
    for s, p in law.items():
        sd = math.sqrt(float(p) * (1 - float(p)) / reps)
        assert abs(seen[s] / reps - float(p)) < 5 * sd + 1e-9


@pytest.mark.parametrize("replace", [True, False])
def test_single_relevant_item_reduces_to_single_item_law(replace):
    r = np.array([1, 7, 40, 200])
    n, m = 300, 50
    for metric in ["Recall@10", "AP", "NDCG", "NDCG@10"]:
        single = expected_metric(metric, r, n, m, replace)
        multi = [expected_multi_metric(metric, np.array([x]), n, m, replace) for x in r]
        np.testing.assert_allclose(multi, single, rtol=1e-10, atol=1e-14)
    hit = [expected_multi_metric("Hit@10", np.array([x]), n, m, replace) for x in r]
    np.testing.assert_allclose(hit, expected_metric("Recall@10", r, n, m, replace), atol=1e-12)


@pytest.mark.parametrize("replace", [True, False])
def test_means_against_simulation_on_movielens_scale(replace):
    """ML-100K scale (n = 1682, m = 100): additive metrics agree with simulation within MC error."""
    ranks, n, m, reps = np.array([5, 40, 41, 300, 900]), 1682, 100, 100_000
    s = simulate_multi_ranks(ranks, n, m, repetitions=reps, seed=11, replace=replace)
    for metric in ["Recall@10", "Precision@10", "AP", "NDCG", "NDCG@10"]:
        v = multi_metric_values(metric, s)
        assert expected_multi_metric(metric, ranks, n, m, replace) == pytest.approx(v.mean(), abs=5 * v.std() / math.sqrt(reps))


def test_hit_bias_small_when_spread_large_when_clustered():
    """Independence is harmless for Hit@k when one item dominates, badly off for a cluster."""
    n, m, reps = 1682, 100, 100_000
    spread = np.array([3, 800, 1500])  # the top item decides any-hit; the others never reach the top 10
    clustered = np.arange(150, 160)  # ten adjacent items: their sampled ranks move together
    for ranks, small in ((spread, True), (clustered, False)):
        sim = multi_metric_values("Hit@10", simulate_multi_ranks(ranks, n, m, repetitions=reps, seed=5)).mean()
        exact = expected_multi_metric("Hit@10", ranks, n, m, method="exact")
        approx = expected_multi_metric("Hit@10", ranks, n, m)
        assert exact == pytest.approx(sim, abs=0.005)
        if small:
            assert abs(approx - sim) < 0.005
        else:
            assert approx - sim > 0.2


def test_independence_understates_variance_of_additive_metrics():
    ranks, n, m, reps = np.arange(150, 160), 1682, 100, 100_000
    s = simulate_multi_ranks(ranks, n, m, repetitions=reps, seed=9)
    for metric in ["AP", "NDCG", "Recall@10"]:
        var_sim = multi_metric_values(metric, s).var()
        _, var_ind = multi_metric_moments(metric, ranks, n, m)
        assert var_ind < 0.5 * var_sim
    # a single relevant item: no covariance, the variance is exact
    s1 = simulate_multi_ranks(np.array([40]), n, m, repetitions=reps, seed=9)
    _, var1 = multi_metric_moments("AP", np.array([40]), n, m)
    assert var1 == pytest.approx(multi_metric_values("AP", s1).var(), rel=0.03)


def test_bad_input_is_rejected_with_a_clear_message():
    with pytest.raises(ValueError, match="ambiguous"):
        expected_multi_metric("HR@10", np.array([1, 2]), 10, 3)
    with pytest.raises(ValueError, match="distinct"):
        multi_rank_pmf(np.array([2, 2]), 10, 3)
    with pytest.raises(ValueError, match="1..n"):
        multi_rank_pmf(np.array([0, 2]), 10, 3)
    with pytest.raises(ValueError, match="no non-relevant"):
        multi_rank_pmf(np.array([1, 2]), 2, 1)
    with pytest.raises(ValueError, match="without replacement"):
        simulate_multi_ranks(np.array([1, 2]), 5, 4, replace=False)
    with pytest.raises(ValueError, match="cut-off"):
        expected_multi_metric("Recall", np.array([1, 2]), 10, 3)
    with pytest.raises(ValueError, match="method"):
        expected_multi_metric("AP", np.array([1, 2]), 10, 3, method="exactly")
    with pytest.raises(ValueError, match="strictly increasing"):
        multi_metric_values("AP", np.array([[2, 1]]))


# --------------------------------------------------------------------------------------------
# Per-item corrections (§8) and real candidates with several held-out items


def test_item_corrections_with_one_item_are_the_single_item_corrections():
    from recmeta.sampled import correction, item_corrections

    N, m = 300, 20  # N negatives: a single relevant item among N + 1 items
    for method, gamma in (("rank-estimate", None), ("bv", 0.1), ("cls", None)):
        got = item_corrections("AP", np.array([1]), N, m, method, gamma)[0, 0]
        np.testing.assert_allclose(got, correction("AP", N + 1, m, method, gamma=gamma), rtol=1e-10, atol=1e-12)


def test_item_corrections_track_each_items_exact_contribution():
    """BV per item, checked against an independent augmented least squares on the item's target, and the
    user's factor: for NDCG 1/IDCG(R), zero beyond R."""
    from recmeta.sampled import item_corrections
    from tests.test_sampled import exact_pmf_matrix

    N, m, gamma = 40, 6, 0.1
    P = exact_pmf_matrix(N + 1, m, True)  # row g: law of the negatives sampled above an item with g above it
    w = np.full(N + 1, 1 / (N + 1))
    got = item_corrections("NDCG", np.array([3, 2]), N, m, "bv", gamma)
    for R, block in zip((3, 2), got):
        idcg = sum(1 / math.log2(i + 1) for i in range(1, R + 1))
        for j in range(1, 4):
            if j > R:
                np.testing.assert_array_equal(block[j - 1], 0.0)
                continue
            target = np.array([1 / math.log2(j + g + 1) for g in range(N + 1)])  # item j's unscaled exact value
            rows, rhs = [np.sqrt(w)[:, None] * P], [np.sqrt(w) * target]
            for r in range(N + 1):
                for i in range(m + 1):
                    e = np.zeros(m + 1)
                    e[i] = 1.0
                    rows.append((np.sqrt(gamma * w[r] * P[r, i]) * (e - P[r]))[None, :])
                    rhs.append(np.zeros(1))
            want = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0] / idcg
            np.testing.assert_allclose(block[j - 1], want, rtol=1e-8, atol=1e-10)


def _multi_scores(seed=0, users=12, items=25, k=3):
    rng = np.random.default_rng(seed)
    u, i = np.meshgrid(np.arange(users), np.arange(items), indexing="ij")
    base = rng.normal(size=u.shape)
    frames = {"X": np.round(base + rng.normal(size=u.shape), 1),  # ties between items
              "Z": np.where(rng.random(u.shape) < 0.5, 0.0, base)}  # big tie blocks at 0
    frames["copy"] = frames["X"]
    scores = {kk: pd.DataFrame({"user": u.ravel(), "item": i.ravel(), "score": v.ravel()}) for kk, v in frames.items()}
    held = pd.concat([pd.DataFrame({"user": x, "item": rng.choice(items, size=rng.integers(1, k + 1), replace=False)})
                      for x in range(users)], ignore_index=True)
    return scores, held


def _slow_order(frame: pd.DataFrame, relevant: set, ties: str) -> list[bool]:
    """Relevance labels of one user's list, sorted by a plain Python key under a tie rule."""
    def key(row):
        score = -math.inf if math.isnan(row.score) else row.score
        if ties == "pessimistic":
            tie = row.item in relevant  # relevant after tied non-relevant
        elif ties == "optimistic":
            tie = row.item not in relevant
        else:
            tie = [-ord(ch) for ch in str(row.item)] + [1]
        return (-score, tie)
    return [r.item in relevant for r in sorted(frame.itertuples(index=False), key=key)]


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "trec_eval"])
def test_multi_standing_matches_a_sorted_reference(ties):
    from recmeta.sampled import multi_exact, multi_standing

    scores, held = _multi_scores()
    ms = multi_standing(scores, held, ties)
    exact = multi_exact(ms, ["AP", "Recall@5", "AUC"])
    for ui, user in enumerate(ms.users):
        relevant = set(held.loc[held["user"] == user, "item"])
        for s, name in enumerate(ms.systems):
            labels = _slow_order(scores[name][scores[name]["user"] == user], relevant, ties)
            pos = [p for p, lab in enumerate(labels) if lab]
            g = [p - j for j, p in enumerate(pos)]  # non-relevant items before the j-th relevant one
            assert ms.g[s, ui, : len(g)].tolist() == g
            for metric in ("AP", "Recall@5", "AUC"):
                assert exact[(name, metric)][ui] == pytest.approx(_slow_metric(metric, [int(x) for x in labels]))
    assert np.all(ms.cells.sum(axis=1) == ms.n - ms.R)


def test_multi_shared_evaluation_means_match_the_marginal_laws():
    """Uncorrected sampled metrics: the mean over repetitions equals the exact expectation from the
    marginal laws (exact for additive metrics), and a system and its copy score alike in every repetition."""
    from recmeta.sampled import multi_shared_evaluation, multi_standing

    scores, held = _multi_scores(users=30, items=60)
    ms = multi_standing(scores, held, "pessimistic")
    reps, m = 400, 12
    sim = multi_shared_evaluation(ms, m, ["AP", "NDCG@5", "AUC"], ["sampled", "BV 0.1"], repetitions=reps, seed=1)
    for s, name in enumerate(ms.systems):
        for metric in ("AP", "NDCG@5", "AUC"):
            want = np.mean([expected_multi_metric(metric, ms.g[s, u, : ms.R[u]] + np.arange(1, ms.R[u] + 1),
                                                  int(ms.n[u]), m) for u in range(ms.R.size)])
            v = sim[(sim["system"] == name) & (sim["metric"] == metric) & (sim["estimator"] == "sampled")]["value"]
            assert abs(v.mean() - want) <= 5 * v.std() / math.sqrt(reps) + 1e-12, (name, metric)
    a = sim[sim["system"] == "X"]["value"].to_numpy()
    b = sim[sim["system"] == "copy"]["value"].to_numpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="deterministic"):
        multi_standing(scores, held, "expected")
