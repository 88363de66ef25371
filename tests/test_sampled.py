"""Sampled metrics and corrections (Krichene & Rendle 2020), checked against independent answers.

References used here: exact rational pmfs (math.comb, fractions), scipy's own distributions,
simulations that sample actual item sets, the metric engine on explicit rankings, brute-force
active-set enumeration for the constrained least squares, and the paper's Tables 1 and 2.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta.sampled import (
    apply_correction,
    correction,
    exact_metrics,
    expected_evaluation,
    expected_metric,
    expected_value,
    m_curves,
    metric_value,
    order_probability,
    pairwise_agreement,
    parse_estimator,
    parse_rank_metric,
    rank_curves,
    rank_pmf,
    sample_ranks,
    sampled_evaluation,
    simulate_item_sampling,
    smallest_reliable_m,
    summarise,
)

# The running example of Krichene & Rendle (2020), §3.2: n = 10,000 items, five users each.
TOY = {"A": [100, 100, 100, 100, 100], "B": [40, 40, 8437, 9266, 4482], "C": [212, 2, 743, 5342, 1548]}
TOY_METRICS = ["AUC", "AP", "NDCG", "Recall@10"]
# Table 1 (exact) and Table 2 (m = 99, mean ± sd over 1,000 repetitions), as printed.
TABLE1 = {
    "A": [0.990, 0.010, 0.150, 0.000],
    "B": [0.555, 0.010, 0.122, 0.000],
    "C": [0.843, 0.101, 0.208, 0.200],
}
TABLE2 = {
    "A": [(0.990, 0.004), (0.630, 0.129), (0.724, 0.097), (1.000, 0.000)],
    "B": [(0.555, 0.014), (0.336, 0.073), (0.444, 0.054), (0.400, 0.000)],
    "C": [(0.843, 0.014), (0.325, 0.050), (0.460, 0.039), (0.567, 0.092)],
}


def exact_pmf(r: int, n: int, m: int, replace: bool) -> list[Fraction]:
    """p(r̃ = i | r), i = 1..m+1, in exact rational arithmetic."""
    if replace:
        p = Fraction(r - 1, n - 1)
        return [math.comb(m, x) * p**x * (1 - p) ** (m - x) for x in range(m + 1)]
    total = math.comb(n - 1, m)
    return [Fraction(math.comb(r - 1, x) * math.comb(n - r, m - x), total) for x in range(m + 1)]


def exact_pmf_matrix(n: int, m: int, replace: bool) -> np.ndarray:
    return np.array([[float(v) for v in exact_pmf(r, n, m, replace)] for r in range(1, n + 1)])


# --------------------------------------------------------------------------------------------
# Metrics of a single relevant item


@pytest.mark.parametrize("n", [2, 7, 20])
def test_metric_value_matches_the_metric_engine(n):
    """Eqs. 7–13 equal the general metrics of the metric engine on explicit one-relevant lists."""
    from recmeta.metrics import score_rankings

    grades = np.zeros((n, n))
    grades[np.arange(n), np.arange(n)] = 1  # row r−1: the relevant item at rank r
    ranks = np.arange(1, n + 1)
    k = min(3, n)
    engine = score_rankings(grades, ["AUC", "RR", f"AP@{n}", f"nDCG@{n}", f"P@{k}", f"R@{k}", f"nDCG@{k}", f"AP@{k}"])
    np.testing.assert_allclose(metric_value("AUC", ranks, n), engine["AUC"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(metric_value("AP", ranks, n), engine["RR"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(metric_value("AP", ranks, n), engine[f"AP@{n}"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(metric_value("NDCG", ranks, n), engine[f"nDCG@{n}"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(metric_value(f"Precision@{k}", ranks, n), engine[f"P@{k}"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(metric_value(f"Recall@{k}", ranks, n), engine[f"R@{k}"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(metric_value(f"NDCG@{k}", ranks, n), engine[f"nDCG@{k}"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(metric_value(f"AP@{k}", ranks, n), engine[f"AP@{k}"], rtol=0, atol=1e-15)


def test_metric_value_by_hand():
    assert metric_value("AUC", 1, 5) == 1.0 and metric_value("AUC", 5, 5) == 0.0
    assert metric_value("AUC", 3, 5) == 0.5
    assert metric_value("NDCG", 3, 5) == 0.5  # 1 / log2(4)
    assert metric_value("AP@2", 3, 5) == 0.0 and metric_value("AP@3", 3, 5) == pytest.approx(1 / 3)
    assert metric_value("Precision@4", 2, 5) == 0.25
    assert metric_value("RR", 4, 5) == 0.25 and metric_value("HR@4", 4, 5) == 1.0


@pytest.mark.parametrize(
    "bad", ["Recall", "AUC@10", "NDCG@0", "bpref", "nDCG(gain=exp)@10", "F1@10", "foo"]
)
def test_metric_names_fail_clearly(bad):
    with pytest.raises(ValueError, match="metric"):
        parse_rank_metric(bad)


@pytest.mark.parametrize(
    "names",
    [
        ("Recall@10", "R@10", "recall_10", "HR@10", "Success@10"),
        ("NDCG@10", "nDCG@10", "ndcg_cut_10", "ndcg@10"),
        ("Precision@5", "P@5", "P_5"),
        ("AP", "RR", "MRR", "recip_rank", "map"),
    ],
)
def test_one_registry_reads_every_spelling_of_a_measure(names):
    """The engine's registry names a measure once: its spellings give one metric here."""
    parsed = {parse_rank_metric(n) for n in names}
    assert len(parsed) == 1 and parsed.pop().name == names[0]


def test_bad_ranks_fail_clearly():
    with pytest.raises(ValueError, match="1..n"):
        metric_value("AP", [0, 1], 5)
    with pytest.raises(ValueError, match="integers"):
        metric_value("AP", [1.5], 5)
    with pytest.raises(ValueError, match="at least 2"):
        rank_pmf(1, 1, 1)
    with pytest.raises(ValueError, match="without replacement"):
        rank_pmf(3, 10, 10, replace=False)
    with pytest.raises(ValueError, match="at least 1"):
        rank_pmf(3, 10, 0)


# --------------------------------------------------------------------------------------------
# The law of the sampled rank


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize(("n", "m"), [(2, 1), (9, 4), (25, 24), (40, 7)])
def test_rank_pmf_equals_exact_rational_pmf(n, m, replace):
    got = rank_pmf(np.arange(1, n + 1), n, m, replace)
    np.testing.assert_allclose(got, exact_pmf_matrix(n, m, replace), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize(("n", "m"), [(10_000, 100), (10_000, 9_999), (3_706, 1_000)])
def test_rank_pmf_keeps_all_mass_on_large_problems(n, m, replace):
    ranks = np.r_[1:40, 40:n:97, n - 40 : n + 1]
    pmf = rank_pmf(ranks, n, m, replace)
    np.testing.assert_allclose(pmf.sum(axis=1), 1.0, rtol=0, atol=1e-13)
    # and the mean is 1 + m (r − 1)/(n − 1) for both laws (§4.4.1)
    mean = pmf @ np.arange(1, m + 2)
    np.testing.assert_allclose(mean, 1 + m * (ranks - 1) / (n - 1), rtol=1e-12)


def test_rank_pmf_without_replacement_matches_scipy():
    n, m = 300, 40
    ranks = np.array([1, 2, 17, 150, 299, 300])
    want = stats.hypergeom.pmf(np.arange(m + 1)[None, :], n - 1, ranks[:, None] - 1, m)
    np.testing.assert_allclose(rank_pmf(ranks, n, m, replace=False), want, rtol=1e-11, atol=1e-300)


@pytest.mark.parametrize("replace", [True, False])
def test_rank_pmf_matches_simulated_item_sampling(replace):
    """Sample actual item sets from the n − 1 negatives and count those ranked above r."""
    n, m, draws = 30, 6, 20_000
    rng = np.random.default_rng(11)
    for r in (1, 2, 12, 30):
        negatives = np.delete(np.arange(1, n + 1), r - 1)  # positions of the irrelevant items
        if replace:
            picks = rng.choice(negatives, size=(draws, m), replace=True)
        else:
            picks = rng.permuted(np.broadcast_to(negatives, (draws, n - 1)), axis=1)[:, :m]
        sampled = 1 + (picks < r).sum(axis=1)
        counts = np.bincount(sampled - 1, minlength=m + 1)
        p = rank_pmf(r, n, m, replace)
        # 5 binomial sd per cell, plus 3 counts of slack for cells with tiny p
        assert np.all(np.abs(counts - draws * p) <= 5 * np.sqrt(draws * p * (1 - p)) + 3), (r, counts, p)


@pytest.mark.parametrize("replace", [True, False])
def test_simulate_item_sampling_agrees_with_the_rank_law(replace):
    n, m, draws = 40, 12, 20_000
    for r in (1, 9, 40):
        sampled = simulate_item_sampling(r, n, m, draws, seed=r, replace=replace)
        counts = np.bincount(sampled - 1, minlength=m + 1)
        p = rank_pmf(r, n, m, replace)
        assert np.all(np.abs(counts - draws * p) <= 5 * np.sqrt(draws * p * (1 - p)) + 3), (r, counts, p)
    full = simulate_item_sampling(7, 10, 9, 5, replace=False)  # every negative sampled: r̃ = r
    np.testing.assert_array_equal(full, 7)


@pytest.mark.parametrize("replace", [True, False])
def test_sample_ranks_follows_rank_pmf_and_is_seeded(replace):
    n, m = 500, 50
    ranks = np.array([1, 5, 250, 500])
    a = sample_ranks(ranks, n, m, repetitions=40_000, seed=3, replace=replace)
    assert a.shape == (40_000, 4)
    np.testing.assert_array_equal(a, sample_ranks(ranks, n, m, repetitions=40_000, seed=3, replace=replace))
    pmf = rank_pmf(ranks, n, m, replace)
    values = np.arange(1, m + 2)
    mean = pmf @ values
    sd = np.sqrt(pmf @ values**2 - mean**2)
    se = sd / np.sqrt(a.shape[0])
    assert np.all(np.abs(a.mean(axis=0) - mean) <= 5 * se + 1e-12)
    assert a.min() >= 1 and a.max() <= m + 1


# --------------------------------------------------------------------------------------------
# Expected metrics: closed forms against the summation (eq. 16)

CLOSED = ["AUC", "AP", "Recall@1", "Recall@10", "Precision@5", "Recall@200"]


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("metric", CLOSED)
@pytest.mark.parametrize(("n", "m"), [(10_000, 1), (10_000, 99), (10_000, 1_000), (10_000, 9_999), (50, 49)])
def test_closed_forms_equal_summation(metric, n, m, replace):
    ranks = np.arange(1, n + 1) if n < 100 else np.r_[1:60, 60:n:53, n - 60 : n + 1]
    closed = expected_metric(metric, ranks, n, m, replace)
    summed = expected_metric(metric, ranks, n, m, replace, closed_form=False)
    np.testing.assert_allclose(closed, summed, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("metric", ["AUC", "AP", "NDCG", "Recall@3", "Precision@2", "NDCG@3", "AP@2"])
def test_expected_metric_equals_exact_rational_expectation(metric, replace):
    n, m = 12, 5
    ranks = np.arange(1, n + 1)
    values = metric_value(metric, np.arange(1, m + 2), m + 1)
    want = [float(sum(p * Fraction(float(v)) for p, v in zip(exact_pmf(r, n, m, replace), values))) for r in ranks.tolist()]
    np.testing.assert_allclose(expected_metric(metric, ranks, n, m, replace), want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("replace", [True, False])
def test_sampled_auc_is_unbiased(replace):
    n = 1_000
    ranks = np.arange(1, n + 1)
    for m in (1, 10, 999):
        summed = expected_metric("AUC", ranks, n, m, replace, closed_form=False)
        np.testing.assert_allclose(summed, metric_value("AUC", ranks, n), rtol=0, atol=1e-13)


@pytest.mark.parametrize("metric", ["AP", "NDCG", "NDCG@10", "Recall@1", "AP@3", "Precision@1"])
def test_m_equal_one_collapses_to_an_affine_function_of_rank(metric):
    """§4.4.4: E[M(r̃)] = (n − r)/(n − 1) (M(1) − M(2)) + M(2), i.e. a rescaled exact AUC."""
    n = 2_000
    ranks = np.arange(1, n + 1)
    m1, m2 = metric_value(metric, [1, 2], 2)
    want = metric_value("AUC", ranks, n) * (m1 - m2) + m2
    for replace in (True, False):
        np.testing.assert_allclose(expected_metric(metric, ranks, n, 1, replace), want, rtol=0, atol=1e-14)


def test_expected_value_checks_its_vector():
    with pytest.raises(ValueError, match=r"shape \(m \+ 1,\)"):
        expected_value(np.ones(5), [1, 2], 10, 5)


# --------------------------------------------------------------------------------------------
# The paper's toy example


def test_table1_exact_metrics():
    got = exact_metrics(TOY, 10_000, TOY_METRICS).set_index(["system", "metric"])["value"]
    for system, row in TABLE1.items():
        for metric, printed in zip(TOY_METRICS, row):
            assert round(got[(system, metric)], 3) == pytest.approx(printed, abs=1e-12), (system, metric)


@pytest.mark.parametrize("replace", [True, False])
def test_table2_expectations_within_two_standard_errors(replace):
    """Analytic E[metric] vs the paper's Monte-Carlo mean over 1,000 repetitions.

    Allowed gap: 2 standard errors 2·sd/√1000 (sd widened by its print rounding, 0.0005) plus the
    rounding of the printed mean (0.0005).
    """
    got = expected_evaluation(TOY, 10_000, 99, TOY_METRICS, ["sampled"], replace=replace)
    got = got.set_index(["system", "metric"])["value"]
    for system, row in TABLE2.items():
        for metric, (mean, sd) in zip(TOY_METRICS, row):
            allowed = 2 * (sd + 0.0005) / math.sqrt(1000) + 0.0005
            assert abs(got[(system, metric)] - mean) <= allowed, (system, metric, got[(system, metric)], mean)


def test_toy_example_orderings_flip_under_sampling():
    """§4.2: exact AP ranks C first; sampled AP (m = 99) ranks C last and A first."""
    exact = exact_metrics(TOY, 10_000, ["AP"]).set_index("system")["value"]
    sampled = expected_evaluation(TOY, 10_000, 99, ["AP"], ["sampled"]).set_index("system")["value"]
    assert exact.idxmax() == "C" and sampled.idxmin() == "C" and sampled.idxmax() == "A"


# --------------------------------------------------------------------------------------------
# Corrections


def weighted_bias(values: np.ndarray, P: np.ndarray, w: np.ndarray, M: np.ndarray) -> float:
    return float(w @ (P @ values - M) ** 2)


def test_rank_estimate_by_hand():
    # n = 8, m = 3: r̂ = 1 + 7 (r̃ − 1)/3 = 1, 3.33, 5.67, 8 → floors 1, 3, 5, 8
    np.testing.assert_allclose(correction("AP", 8, 3, "rank-estimate"), [1, 1 / 3, 1 / 5, 1 / 8])
    np.testing.assert_allclose(correction("AUC", 8, 3, "rank-estimate"), [1, 5 / 7, 3 / 7, 0])
    # m = n − 1: the rank estimate is the sampled rank itself
    np.testing.assert_allclose(correction("NDCG", 30, 29, "rank-estimate"), metric_value("NDCG", np.arange(1, 31), 30))


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("metric", ["AP", "NDCG@3", "Recall@2"])
def test_least_squares_equals_numpy_on_a_small_system(metric, replace):
    n, m = 9, 4
    P = exact_pmf_matrix(n, m, replace)
    M = metric_value(metric, np.arange(1, n + 1), n)
    prior = np.arange(n, 0, -1) / (n * (n + 1) / 2)  # a non-uniform prior
    for given, w in ((None, np.full(n, 1 / n)), (prior, prior)):
        want = np.linalg.lstsq(np.sqrt(w)[:, None] * P, np.sqrt(w) * M, rcond=None)[0]
        got = correction(metric, n, m, "least-squares", prior=given, replace=replace)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("gamma", [1.0, 0.1, 0.01])
def test_bias_variance_equals_an_augmented_least_squares(gamma, replace):
    """Eq. 24 written as one least-squares system: bias rows plus one row per (r, r̃) for the variance."""
    n, m = 9, 4
    P = exact_pmf_matrix(n, m, replace)
    w = np.full(n, 1 / n)
    M = metric_value("NDCG", np.arange(1, n + 1), n)
    rows, rhs = [np.sqrt(w)[:, None] * P], [np.sqrt(w) * M]
    for r in range(n):
        for i in range(m + 1):
            e = np.zeros(m + 1)
            e[i] = 1.0
            rows.append((np.sqrt(gamma * w[r] * P[r, i]) * (e - P[r]))[None, :])
            rhs.append(np.zeros(1))
    want = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0]
    got = correction("NDCG", n, m, "bv", gamma=gamma, replace=replace)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


def test_bias_variance_with_gamma_one_is_the_posterior_mean():
    n, m = 200, 10
    P = exact_pmf_matrix(n, m, True)
    M = metric_value("AP", np.arange(1, n + 1), n)
    posterior = P / P.sum(axis=0)  # uniform prior: p(r | r̃) ∝ p(r̃ | r)
    np.testing.assert_allclose(correction("AP", n, m, "bv", gamma=1.0), posterior.T @ M, rtol=1e-10)


def brute_force_monotone_ls(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """min ‖Ax − b‖ over non-increasing x: try every set of tied neighbours, keep the best feasible."""
    k = A.shape[1]
    best, best_x = np.inf, None
    for ties in itertools.product([False, True], repeat=k - 1):
        block = np.r_[0, np.cumsum(~np.array(ties))]  # block index of each coordinate
        B = np.zeros((k, block[-1] + 1))
        B[np.arange(k), block] = 1.0
        y = np.linalg.lstsq(A @ B, b, rcond=None)[0]
        x = B @ y
        if np.all(np.diff(x) <= 1e-12):
            obj = float(np.sum((A @ x - b) ** 2))
            if obj < best:
                best, best_x = obj, x
    return best_x


@pytest.mark.parametrize("replace", [True, False])
@pytest.mark.parametrize("metric", ["AP", "NDCG", "Recall@2", "AP@3"])
def test_cls_equals_brute_force(metric, replace):
    n, m = 10, 5
    P = exact_pmf_matrix(n, m, replace)
    w = np.full(n, 1 / n)
    M = metric_value(metric, np.arange(1, n + 1), n)
    A, b = np.sqrt(w)[:, None] * P, np.sqrt(w) * M
    got = correction(metric, n, m, "cls", replace=replace)
    assert np.all(np.diff(got) <= 1e-12)
    np.testing.assert_allclose(got, brute_force_monotone_ls(A, b), rtol=1e-7, atol=1e-9)


def test_cls_constraint_binds_and_beats_the_uncorrected_metric():
    """Least squares oscillates and CLS does not; CLS has no less bias than least squares and less
    than the uncorrected metric (itself a feasible non-increasing vector) and the rank estimate."""
    from recmeta.sampled import correction_system

    n, m = 2_000, 20
    P, w, M = correction_system("AP", n, m)
    ls = correction("AP", n, m, "least-squares")
    cls = correction("AP", n, m, "cls")
    raw = metric_value("AP", np.arange(1, m + 2), m + 1)
    assert np.any(np.diff(ls) > 0)
    assert np.all(np.diff(cls) <= 1e-12)
    assert weighted_bias(ls, P, w, M) <= weighted_bias(cls, P, w, M) + 1e-15
    assert weighted_bias(cls, P, w, M) < weighted_bias(raw, P, w, M)
    assert weighted_bias(cls, P, w, M) < weighted_bias(correction("AP", n, m, "rank-estimate"), P, w, M)


def test_lower_gamma_means_lower_bias():
    from recmeta.sampled import correction_system

    P, w, M = correction_system("NDCG@10", 3_000, 100)
    bias = [weighted_bias(correction("NDCG@10", 3_000, 100, "bv", gamma=g), P, w, M) for g in (1, 0.1, 0.01, 0.001)]
    assert all(a > b for a, b in zip(bias, bias[1:]))


def test_correction_arguments_fail_clearly():
    with pytest.raises(ValueError, match="gamma > 0"):
        correction("AP", 10, 3, "bv")
    with pytest.raises(ValueError, match="gamma only applies"):
        correction("AP", 10, 3, "cls", gamma=0.1)
    with pytest.raises(ValueError, match="unknown correction method"):
        correction("AP", 10, 3, "BV")
    with pytest.raises(ValueError, match="sum to 1"):
        correction("AP", 10, 3, "cls", prior=np.ones(10))
    with pytest.raises(ValueError, match="length n"):
        correction("AP", 10, 3, "cls", prior=np.ones(9) / 9)


def test_apply_correction_indexes_by_sampled_rank():
    values = np.array([1.0, 0.5, 0.25])
    np.testing.assert_array_equal(apply_correction(values, np.array([[1, 3], [2, 2]])), [[1.0, 0.25], [0.5, 0.5]])
    with pytest.raises(ValueError, match="same m"):
        apply_correction(values, np.array([4]))
    with pytest.raises(ValueError, match="integers"):
        apply_correction(values, np.array([1.0]))


# --------------------------------------------------------------------------------------------
# Repeated sampled evaluation


def test_parse_estimator():
    assert parse_estimator("BV 0.1").gamma == 0.1 and parse_estimator("BV 0.1").method == "bv"
    assert parse_estimator("cls").method == "cls" and parse_estimator("sampled").method is None
    with pytest.raises(ValueError, match="BV <gamma>"):
        parse_estimator("BV")
    with pytest.raises(ValueError, match="unknown estimator"):
        parse_estimator("isotonic")


def test_sampled_evaluation_means_match_expectations():
    rng = np.random.default_rng(5)
    n, m, users = 400, 30, 300
    ranks = {"X": rng.integers(1, n + 1, users), "Y": np.minimum(rng.geometric(0.02, users), n)}
    ests = ["sampled", "rank-estimate", "cls", "BV 0.1"]
    metrics = ["AP", "Recall@5", "AUC"]
    sim = sampled_evaluation(ranks, n, m, metrics, ests, repetitions=400, seed=1, progress=False)
    again = sampled_evaluation(ranks, n, m, metrics, ests, repetitions=400, seed=1, progress=False)
    pd.testing.assert_frame_equal(sim, again)
    summary = summarise(sim).set_index(["system", "metric", "estimator"])
    expected = expected_evaluation(ranks, n, m, metrics, ests).set_index(["system", "metric", "estimator"])["value"]
    expected = expected.reindex(summary.index)
    assert expected.notna().all()
    se = summary["sd"] / np.sqrt(400)
    gap = (summary["mean"] - expected).abs()
    assert (gap <= 5 * se + 1e-12).all(), pd.concat([gap, se], axis=1)


def test_sampled_evaluation_with_per_user_n():
    n = np.array([50, 60, 70, 80])
    ranks = {"S": np.array([1, 10, 70, 3])}
    sim = sampled_evaluation(ranks, n, 49, ["AUC", "AP"], ["sampled", "rank-estimate"], repetitions=3, progress=False)
    assert set(sim["estimator"]) == {"sampled", "rank-estimate"} and len(sim) == 12
    with pytest.raises(ValueError, match="1..n"):
        sampled_evaluation({"S": np.array([51, 1, 1, 1])}, n, 10, ["AP"], ["sampled"], repetitions=1, progress=False)


def test_pairwise_agreement_counts_correct_orders():
    frame = pd.DataFrame(
        {
            "system": ["X"] * 4 + ["Y"] * 4,
            "metric": "AP",
            "estimator": "sampled",
            "repetition": [0, 1, 2, 3] * 2,
            "value": [0.1, 0.3, 0.2, 0.5, 0.2, 0.2, 0.1, 0.6],
        }
    )
    exact = pd.DataFrame({"system": ["X", "Y"], "metric": "AP", "value": [0.01, 0.02]})
    got = pairwise_agreement(frame, exact)
    # exact: X < Y. Repetitions: X<Y yes, X>Y no, X>Y no, X<Y yes → 2 of 4
    assert got.loc[0, "pair"] == "X vs Y" and got.loc[0, "agreement"] == 0.5


# --------------------------------------------------------------------------------------------
# Curves and order probabilities


def test_rank_curves_and_m_curves_frames():
    curves = rank_curves(["AP", "Recall@10"], np.arange(1, 101), 1_000, [None, 10])
    assert set(curves["m"]) == {"exact", "10"} and len(curves) == 400
    exact_ap = curves.query("metric == 'AP' and m == 'exact'")["value"].to_numpy()
    np.testing.assert_allclose(exact_ap, 1 / np.arange(1, 101))
    mc = m_curves(TOY, 10_000, [1, 99], ["AUC"], ["sampled"])
    # sampled AUC is unbiased for every m (§4.4.1): equal to Table 1's exact AUC
    ex = exact_metrics(TOY, 10_000, ["AUC"]).set_index("system")["value"]
    for m in (1, 99):
        got = mc.query("m == @m").set_index("system")["value"]
        np.testing.assert_allclose(got[ex.index], ex, atol=1e-14)


@pytest.mark.parametrize(("estimator", "m"), [("sampled", 100), ("BV 0.1", 20), ("rank-estimate", 40)])
def test_order_probability_matches_simulation(estimator, m):
    rng = np.random.default_rng(0)
    n, users, reps = 500, 200, 1_000
    a = np.minimum(rng.geometric(0.03, users), n)
    b = np.where(rng.random(users) < 0.3, rng.integers(1, 6, users), rng.integers(1, n + 1, users))
    p = order_probability(a, b, n, m, "AP", estimator)
    sim = sampled_evaluation({"a": a, "b": b}, n, m, ["AP"], [estimator], repetitions=reps, seed=4, progress=False)
    share = pairwise_agreement(sim, exact_metrics({"a": a, "b": b}, n, ["AP"]))["agreement"].iloc[0]
    # sampling error of the simulated share, plus 0.02 for the normal approximation
    assert abs(p - share) <= 4 * np.sqrt(max(p * (1 - p), 1e-4) / reps) + 0.02, (p, share)


def test_smallest_reliable_m_scans_for_the_last_failure():
    rng = np.random.default_rng(0)
    n, users = 500, 200
    a = np.minimum(rng.geometric(0.03, users), n)
    b = np.where(rng.random(users) < 0.3, rng.integers(1, 6, users), rng.integers(1, n + 1, users))
    ms = [5, 20, 60, 100, 200, 499]
    probs = [order_probability(a, b, n, m, "AP", "rank-estimate") for m in ms]
    got = smallest_reliable_m(a, b, n, ms, "AP", "rank-estimate")
    first_ok = next(i for i in range(len(ms)) if all(p >= 0.95 for p in probs[i:]))
    assert got == ms[first_ok]
    assert smallest_reliable_m(a, b, n, [5, 20], "AP", "sampled") is None


# --------------------------------------------------------------------------------------------
# True ranks from candidate scores


def test_true_ranks_match_a_sorted_reference():
    from recmeta.sampled import true_ranks

    rng = np.random.default_rng(8)
    rows = []
    for user in range(30):
        items = rng.choice(np.arange(1, 200), size=rng.integers(2, 40), replace=False)
        scores = np.round(rng.normal(size=items.size), 1)  # many ties
        scores[rng.random(items.size) < 0.15] = np.nan
        rows += [(user, int(i), float(s)) for i, s in zip(items, scores)]
    scores = pd.DataFrame(rows, columns=["user", "item", "score"])
    held = scores.groupby("user").sample(1, random_state=1)[["user", "item"]].sample(frac=1, random_state=2)
    got = true_ranks(scores, held, ties="trec_eval")
    for (user, item), rank, n in zip(held.itertuples(index=False), got["rank"], got["n"]):
        cand = scores[scores["user"] == user]
        # slow reference: Python sort with key (NaN last, score descending, item text descending)
        order = sorted(
            cand.itertuples(index=False),
            key=lambda c: (math.isnan(c.score), -c.score if not math.isnan(c.score) else 0.0, [-ord(ch) for ch in str(c.item)] + [1]),
        )
        assert [c.item for c in order].index(item) + 1 == rank and len(cand) == n


def test_true_ranks_refuse_bad_input():
    from recmeta.sampled import true_ranks

    scores = pd.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "score": [0.5, 0.2, 0.1]})
    with pytest.raises(ValueError, match="not among"):
        true_ranks(scores, pd.DataFrame({"user": [1, 2], "item": [10, 99]}))
    with pytest.raises(ValueError, match="one held-out item per user"):
        true_ranks(scores, pd.DataFrame({"user": [1, 1], "item": [10, 11]}))
    got = true_ranks(scores, pd.DataFrame({"user": [2, 1], "item": [10, 11]}))
    assert got["rank"].tolist() == [1, 2] and got["n"].tolist() == [1, 2]


def test_order_probabilities_equal_the_pairwise_function():
    from recmeta.sampled import order_probabilities

    rng = np.random.default_rng(0)
    n, users = 500, 200
    runs = {"a": np.minimum(rng.geometric(0.03, users), n), "b": rng.integers(1, n + 1, users),
            "c": np.where(rng.random(users) < 0.3, rng.integers(1, 6, users), rng.integers(1, n + 1, users))}
    table = order_probabilities(runs, n, [20, 100], ["AP", "Recall@5"], ["sampled", "BV 0.1", "rank-estimate"])
    assert len(table) == 2 * 3 * 2 * 3
    for row in table.sample(6, random_state=0).itertuples():
        a, b = row.pair.split(" vs ")
        want = order_probability(runs[a], runs[b], n, row.m, row.metric, row.estimator)
        assert row.probability == pytest.approx(want, abs=1e-12)


def test_candidate_pairs_are_the_unrated_training_items():
    from recmeta.sampled import candidate_pairs

    train = pd.DataFrame({"user": [1, 1, 2, 3], "item": [10, 20, 20, 30]})
    got = candidate_pairs(train, [2, 1])
    want = {(2, 10), (2, 30), (1, 30)}
    assert set(map(tuple, got[["user", "item"]].to_numpy().tolist())) == want and len(got) == 3
    with pytest.raises(ValueError, match="no training data"):
        candidate_pairs(train, [4])


def test_reliable_m_takes_the_m_after_the_last_failure():
    from recmeta.sampled import reliable_m

    probs = pd.DataFrame({
        "m": [10, 50, 100, 10, 50, 100],
        "pair": ["a vs b"] * 3 + ["a vs c"] * 3,
        "metric": "AP", "estimator": "sampled",
        "probability": [0.99, 0.5, 0.97, 0.2, 0.96, 0.90],
    })
    got = reliable_m(probs, 0.95)
    assert got[("a vs b", "AP", "sampled")] == 100 and np.isnan(got[("a vs c", "AP", "sampled")])


# --------------------------------------------------------------------------------------------
# Tie rules


def _tie_example():
    # one user, held-out item 3 scored 0.5 like items 2 and 4; item 1 above, item 5 below
    scores = pd.DataFrame({"user": 7, "item": [1, 2, 3, 4, 5], "score": [0.9, 0.5, 0.5, 0.5, 0.1]})
    return scores, pd.DataFrame({"user": [7], "item": [3]})


@pytest.mark.parametrize(("ties", "rank"), [("pessimistic", 4), ("optimistic", 2), ("trec_eval", 3), ("expected", 3.0)])
def test_tie_rules_on_a_hand_worked_block(ties, rank):
    from recmeta.sampled import true_ranks

    scores, held = _tie_example()
    got = true_ranks(scores, held, ties=ties).iloc[0]
    # by item id as text, descending: "4" comes before "3", "2" after it
    assert (got["above"], got["tied"], got["id_above"], got["n"]) == (1, 2, 1, 5)
    assert got["rank"] == rank


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic", "trec_eval", "expected"])
def test_tie_rules_are_the_metric_engine_rules(ties):
    """One held-out item among tied candidates: the sampled rules give the engine's values."""
    from recmeta.metrics import Judgments, Runs, score_matrices
    from recmeta.metrics._options import TIES
    from recmeta.sampled import TIE_RULES, span_metric, true_ranks

    assert set(TIE_RULES) <= set(TIES)
    scores, held = _tie_example()
    r = true_ranks(scores, held, ties=ties).iloc[0]
    lo, hi = (np.array([r["above"] + 1]), np.array([r["above"] + r["tied"] + 1]))
    if ties != "expected":
        lo = hi = np.array([int(r["rank"])])
    j = Judgments.from_frame(held.assign(rating=1.0), threshold=1)
    runs = Runs.from_frame(scores, j, system="s")
    engine = score_matrices(j, runs, ["RR", "R@3", "P@3", "nDCG(gain=binary)@3"], ties=ties)
    for ours, theirs in (("AP", "RR"), ("Recall@3", "R@3"), ("Precision@3", "P@3"),
                         ("NDCG@3", "nDCG(gain=binary)@3")):
        assert span_metric(ours, lo, hi, np.array([5]))[0] == pytest.approx(engine[theirs][0, 0])


def test_the_old_name_of_trec_eval_order_is_explained():
    from recmeta.sampled import check_ties

    with pytest.raises(ValueError, match="'id' is now 'trec_eval'"):
        check_ties("id")
    with pytest.raises(ValueError, match="not offered for one held-out item"):
        check_ties("item_id")


def test_expected_tie_rule_averages_the_metric_over_the_block():
    from recmeta.sampled import span_metric, tie_span

    lo, hi = tie_span(np.array([1]), np.array([2]), np.array([1]), "expected")
    assert (lo[0], hi[0]) == (2, 4)
    assert span_metric("AP", lo, hi, np.array([5]))[0] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert span_metric("Recall@3", lo, hi, np.array([5]))[0] == pytest.approx(2 / 3)
    assert span_metric("AUC", lo, hi, np.array([5]))[0] == pytest.approx(np.mean([(5 - r) / 4 for r in (2, 3, 4)]))


def test_nan_scores_tie_with_each_other_below_every_number():
    from recmeta.sampled import true_ranks

    scores = pd.DataFrame({"user": 1, "item": [1, 2, 3, 4], "score": [np.nan, -5.0, np.nan, np.nan]})
    got = true_ranks(scores, pd.DataFrame({"user": [1], "item": [3]}), ties="pessimistic").iloc[0]
    assert (got["above"], got["tied"], got["rank"]) == (1, 2, 4)
    got = true_ranks(scores, pd.DataFrame({"user": [1], "item": [2]}), ties="pessimistic").iloc[0]
    assert (got["above"], got["tied"], got["rank"]) == (0, 0, 1)


def test_tie_blocks_report_sizes():
    from recmeta.sampled import tie_blocks

    got = tie_blocks({"Z": np.array([0, 3, 9, 0]), "X": np.zeros(4, dtype=int)}).set_index("system")
    assert got.loc["Z", "tied users"] == 2 and got.loc["Z", "median block"] == 7 and got.loc["Z", "largest block"] == 10
    assert got.loc["X", "tied users"] == 0 and got.loc["Z", "share"] == 0.5


def test_unknown_tie_rule_fails_clearly():
    from recmeta.sampled import true_ranks

    scores, held = _tie_example()
    with pytest.raises(ValueError, match="tie rule"):
        true_ranks(scores, held, ties="random")


# --------------------------------------------------------------------------------------------
# Shared negatives on real candidates


def _synthetic_scores(seed: int = 0, users: int = 40, items: int = 60):
    """Three systems' scores for every (user, item); Z scores most items 0 (big tie blocks),
    "copy" repeats X exactly."""
    rng = np.random.default_rng(seed)
    u, i = np.meshgrid(np.arange(users), np.arange(items), indexing="ij")
    base = rng.normal(size=u.shape)
    frames = {
        "X": base + 0.3 * rng.normal(size=u.shape),
        "Y": np.round(base + rng.normal(size=u.shape), 1),
        "Z": np.where(rng.random(u.shape) < 0.6, 0.0, base),
    }
    frames["copy"] = frames["X"]
    scores = {k: pd.DataFrame({"user": u.ravel(), "item": i.ravel(), "score": v.ravel()}) for k, v in frames.items()}
    held = pd.DataFrame({"user": np.arange(users), "item": rng.integers(0, items, users)})
    return scores, held


def test_standing_counts_every_candidate_once():
    from recmeta.sampled import standing, true_ranks

    scores, held = _synthetic_scores()
    st = standing(scores, held)
    assert np.all(st.cells.sum(axis=1) == st.n - 1)
    for s, name in enumerate(st.systems):
        code = st.patterns[:, s]
        np.testing.assert_array_equal(st.cells[:, code == 3].sum(axis=1), st.above[s])
        np.testing.assert_array_equal(st.cells[:, (code == 1) | (code == 2)].sum(axis=1), st.tied[s])
        ref = true_ranks(scores[name], held, ties="trec_eval")
        np.testing.assert_array_equal(st.ranks("trec_eval")[name], ref["rank"])
    assert st.tied[st.systems.index("Z")].max() > 10


def _item_level_draws(scores, held, m, reps, seed, replace):
    """Brute force: draw actual candidate items per user and rank each system's held-out item among them."""
    rng = np.random.default_rng(seed)
    out = {k: np.zeros((reps, len(held)), dtype=int) for k in scores}
    for row, (user, item) in enumerate(held.itertuples(index=False)):
        cand = {k: f[f["user"] == user].set_index("item")["score"] for k, f in scores.items()}
        others = cand["X"].index.to_numpy()
        others = others[others != item]
        if replace:
            pick = rng.integers(0, others.size, size=(reps, m))
        else:
            pick = np.argsort(rng.random((reps, others.size)), axis=1)[:, :m]
        for k, c in cand.items():
            above = c.loc[others].to_numpy() >= c.loc[item]  # pessimistic: ties count as above
            out[k][:, row] = 1 + above[pick].sum(axis=1)
    return out


@pytest.mark.parametrize("replace", [True, False])
def test_class_counts_have_the_law_of_item_draws(replace):
    """The joint law of the sampled ranks (pessimistic ties) from class counts equals that of drawing
    the items themselves: means, variances and the X–Z covariance agree within Monte-Carlo error."""
    from recmeta.sampled import draw_counts, standing, tie_span

    scores, held = _synthetic_scores(users=6, items=30)
    st = standing(scores, held)
    m, reps = 10, 4000
    c = draw_counts(st, m, reps, seed=3, replace=replace)
    lo, _ = tie_span(c["above"], c["tied"], c["id_above"], "pessimistic")
    fast = {k: lo[s] for s, k in enumerate(st.systems)}
    slow = _item_level_draws(scores, held, m, 1500, seed=4, replace=replace)
    for k in ("X", "Z"):
        a, b = fast[k].astype(float), slow[k].astype(float)
        se = np.sqrt(a.var(axis=0) / a.shape[0] + b.var(axis=0) / b.shape[0]) + 1e-9
        assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) <= 4.5 * se + 1e-9), k
        assert np.allclose(a.var(axis=0), b.var(axis=0), rtol=0.25, atol=0.05), k
    cov_f = np.mean((fast["X"] - fast["X"].mean(0)) * (fast["Z"] - fast["Z"].mean(0)), axis=0)
    cov_s = np.mean((slow["X"] - slow["X"].mean(0)) * (slow["Z"] - slow["Z"].mean(0)), axis=0)
    assert np.allclose(cov_f, cov_s, atol=0.25 + 0.2 * np.abs(cov_s).max())


def test_shared_negatives_are_the_same_items_for_every_system():
    """A system and its exact copy get the same sampled rank in every repetition when negatives are
    shared, and not when each system draws its own; X and Z move together only when shared."""
    from recmeta.sampled import draw_counts, standing

    scores, held = _synthetic_scores()
    st = standing(scores, held)
    x, cp = st.systems.index("X"), st.systems.index("copy")
    shared = draw_counts(st, 20, 50, seed=1, shared=True)
    np.testing.assert_array_equal(shared["above"][x], shared["above"][cp])
    np.testing.assert_array_equal(shared["tied"][x], shared["tied"][cp])
    own = draw_counts(st, 20, 50, seed=1, shared=False)
    assert np.any(own["above"][x] != own["above"][cp])
    # the counts are a draw of m items: never more than m above, tied or below
    assert np.all(shared["above"] + shared["tied"] <= 20)


def test_draw_counts_without_replacement_respects_the_class_sizes():
    from recmeta.sampled import draw_counts, standing

    scores, held = _synthetic_scores(users=10, items=12)
    st = standing(scores, held)
    c = draw_counts(st, 11, 30, seed=0, replace=False)  # m = n − 1: every other candidate is drawn
    np.testing.assert_array_equal(c["above"], np.broadcast_to(st.above[:, None, :], c["above"].shape))
    np.testing.assert_array_equal(c["tied"], np.broadcast_to(st.tied[:, None, :], c["tied"].shape))
    with pytest.raises(ValueError, match="without replacement"):
        draw_counts(st, 12, 1, replace=False)


def test_shared_evaluation_means_match_the_law_of_the_sampled_rank():
    """With integer ranks (pessimistic ties) the mean over repetitions matches eq. 16's exact
    expectation for every estimator, and AUC stays unbiased."""
    from recmeta.sampled import exact_from_standing, shared_evaluation, standing

    scores, held = _synthetic_scores(users=80, items=200)
    st = standing(scores, held)
    ests = ["sampled", "rank-estimate", "BV 0.1"]
    sim = shared_evaluation(st, 15, ["AP", "Recall@5", "AUC"], ests, repetitions=300, seed=2, ties="pessimistic")
    summary = sampled_summary = summarise(sim.drop(columns="ties")).set_index(["system", "metric", "estimator"])
    ranks = st.ranks("pessimistic")
    want = expected_evaluation(ranks, st.n, 15, ["AP", "Recall@5", "AUC"], ests, fit_n=int(np.rint(st.n.mean())))
    want = want.set_index(["system", "metric", "estimator"])["value"].reindex(summary.index)
    se = summary["sd"] / np.sqrt(300)
    assert ((summary["mean"] - want).abs() <= 5 * se + 1e-12).all()
    exact = exact_from_standing(st, ["AUC"], "pessimistic").set_index("system")["value"]
    auc = sampled_summary.xs(("AUC", "sampled"), level=("metric", "estimator"))
    assert (np.abs(auc["mean"] - exact.reindex(auc.index)) <= 5 * auc["sd"] / np.sqrt(300)).all()


def test_expected_ties_score_the_mean_over_the_sampled_block():
    """Under the expected rule a sampled rank span [lo, hi] scores the mean of the estimator over it."""
    from recmeta.sampled import span_mean

    v = np.array([1.0, 0.5, 0.25, 0.125])
    np.testing.assert_allclose(span_mean(v, np.array([1, 2, 4]), np.array([3, 2, 4])), [1.75 / 3, 0.5, 0.125])
    with pytest.raises(ValueError, match="spans"):
        span_mean(v, np.array([0]), np.array([2]))


def test_order_study_and_the_reliability_criterion():
    from recmeta.sampled import order_study, reliable_from_study, standing

    scores, held = _synthetic_scores(users=60, items=80)
    st = standing({k: scores[k] for k in ("X", "Z")}, held)
    study, means = order_study(st, [5, 40], ["AUC"], ["sampled"], repetitions=30, seed=0, with_means=True)
    assert set(study["m"]) == {5, 40} and (study["low"] <= study["probability"]).all()
    assert set(means["system"]) == {"X", "Z"}
    frame = pd.DataFrame({
        "m": [10, 50, 100] * 3, "pair": ["a vs b"] * 3 + ["a vs c"] * 3 + ["b vs c"] * 3, "metric": "AP",
        "estimator": "sampled", "probability": [0.5, 0.97, 0.99, 0.2, 0.5, 0.6, 0.9, 0.96, 0.97],
        "low": [0.3, 0.96, 0.98, 0.1, 0.3, 0.4, 0.8, 0.90, 0.951],
        "high": [0.7, 0.99, 1.0, 0.3, 0.7, 0.8, 0.97, 0.99, 0.99],
    })
    got = reliable_from_study(frame, 0.95).set_index("pair")["verdict"]
    assert got["a vs b"] == "reliable from m = 50"
    assert got["a vs c"] == "never on the grid"
    assert got["b vs c"] == "unclear between m = 10 and m = 100"


# --------------------------------------------------------------------------------------------
# One n, the least-squares warning and the ridge variant


def test_rank_estimate_recall_equals_ndcg_at_10_with_one_n():
    n, m = 1_574, 100  # (n − 1)/m ≥ 10: a sampled rank of 2 already estimates a rank beyond 10
    re_recall = correction("Recall@10", n, m, "rank-estimate")
    re_ndcg = correction("NDCG@10", n, m, "rank-estimate")
    np.testing.assert_array_equal(re_recall, re_ndcg)
    np.testing.assert_array_equal(re_recall, np.r_[1.0, np.zeros(m)])
    runs = {"S": np.array([1, 5, 30, 900]), "T": np.array([2, 2, 700, 1500])}
    nn = np.array([900, 1600, 1700, 2100])  # per-user n; estimators use one n (their rounded mean)
    sim = sampled_evaluation(runs, nn, m, ["Recall@10", "NDCG@10"], ["rank-estimate"], repetitions=50, progress=False)
    wide = sim.pivot_table(index=["system", "repetition"], columns="metric", values="value")
    np.testing.assert_array_equal(wide["Recall@10"], wide["NDCG@10"])


def test_least_squares_warns_when_ill_conditioned():
    import warnings

    from recmeta.sampled import IllConditionedWarning, condition_number

    with pytest.warns(IllConditionedWarning, match="ill-conditioned"):
        correction("AP", 3_706, 100, "least-squares")
    with pytest.warns(IllConditionedWarning):  # the cached result warns again
        correction("AP", 3_706, 100, "least-squares")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        correction("AP", 9, 4, "least-squares")
    # numpy's singular values of the same matrix give the same condition number
    P = exact_pmf_matrix(40, 7, True)
    A = np.sqrt(np.full(40, 1 / 40))[:, None] * P
    s = np.linalg.svd(A, compute_uv=False)
    assert condition_number(40, 7) == pytest.approx(s[0] / s[-1], rel=1e-6)


@pytest.mark.parametrize("lam", [1e-4, 0.5])
def test_ridge_equals_an_augmented_least_squares(lam):
    n, m = 12, 5
    P = exact_pmf_matrix(n, m, True)
    w = np.full(n, 1 / n)
    M = metric_value("NDCG", np.arange(1, n + 1), n)
    c = P.T @ w
    A = np.vstack([np.sqrt(w)[:, None] * P, np.diag(np.sqrt(lam * c))])
    b = np.r_[np.sqrt(w) * M, np.zeros(m + 1)]
    want = np.linalg.lstsq(A, b, rcond=None)[0]
    np.testing.assert_allclose(correction("NDCG", n, m, "ridge", gamma=lam), want, rtol=1e-9, atol=1e-11)
    g = lam / (1 + lam)  # BV γ is ridge λ = γ/(1 − γ), scaled by 1/(1 − γ)
    np.testing.assert_allclose(correction("NDCG", n, m, "bv", gamma=g), want / (1 - g), rtol=1e-8, atol=1e-10)
    assert parse_estimator("ridge 1e-4").method == "ridge" and parse_estimator("ridge 1e-4").gamma == 1e-4


def test_class_draws_skip_empty_binomials_and_sum_groups_exactly():
    """The chain of class draws takes from the generator only the binomials that can be
    non-zero, so its counts are those of drawing every element of the whole arrays; grouped
    counts are the sums of the classes of each group."""
    from recmeta.sampled import shared

    rng = np.random.default_rng(5)
    cells = rng.integers(0, 4, size=(40, 16)) * (rng.random((40, 16)) < 0.5)
    cells[:, 3] = 0  # a class no user has
    cells[0] = 0
    cells[0, 5] = 7  # a user with a single class: every draw of hers after it has no trials
    cells[1, 6] = 1
    # the reference: every element of the whole arrays drawn, as a plain chain of binomials
    ref_rng = np.random.default_rng(11)
    left = np.full((6, 40), 9, dtype=np.int64)
    rest = cells[:, ::-1].cumsum(axis=1)[:, ::-1]
    ref = np.zeros((6, 40, 16), dtype=np.int64)
    for k in range(16):
        if not cells[:, k].any():
            continue
        p = np.where(rest[:, k] > 0, cells[:, k] / np.maximum(rest[:, k], 1), 0.0)
        ref[:, :, k] = ref_rng.binomial(left, np.broadcast_to(p, left.shape))
        left -= ref[:, :, k]
    got = shared._sequential(cells, 9, 6, True, np.random.default_rng(11))
    assert np.array_equal(got, ref)
    assert (got.sum(axis=2) == 9).all()
    groups = rng.random((16, 5)) < 0.4
    summed = shared._sequential(cells, 9, 6, True, np.random.default_rng(11), groups=groups)
    assert np.array_equal(summed, np.einsum("ruk,kg->rug", ref, groups.astype(np.int64)))
