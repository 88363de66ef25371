"""Expected precision formulas (Bellogín et al. 2017, eqs. 2–5, §6.2) against Monte-Carlo runs.

Every closed form is checked against a simulated random or non-personalised recommender over many
seeds: the formula must fall within three standard errors of the Monte-Carlo mean. Eqs. 3–4
average over random rating splits and assume the users' training items are a negligible part of
the candidates, so they are checked on sparse synthetic data; one test records how eq. 3 fails
when that assumption does not hold, and the exact expectation of a fixed ranking is checked
against simulation on those dense data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recmeta.data import popularity as pop
from recmeta.protocols import (
    Protocol,
    attach_scores,
    expectations as E,
    target_metrics,
    target_sets,
    uniform_test_split,
)

PRIOR = {1.0: 0.1, 2.0: 0.15, 3.0: 0.3, 4.0: 0.25, 5.0: 0.2}


def small_data(seed: int = 0) -> pd.DataFrame:
    return pop.simulate_ratings(120, 90, 1500, 1.0, PRIOR, c1=1.0, c2=10.0, seed=seed)


def within_ci(samples: np.ndarray, value: float, z: float = 3.0) -> bool:
    se = samples.std(ddof=1) / np.sqrt(len(samples))
    return abs(samples.mean() - value) <= z * se


def random_scores(sets: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    return sets.assign(score=rng.random(len(sets)))


# -- simple identities ---------------------------------------------------------------------------


def test_harmonic_size_and_density() -> None:
    assert E.harmonic_target_size([100, 100]) == 100
    assert E.harmonic_target_size([1, 3]) == pytest.approx(1.5)
    assert E.relevance_density(600, 30, 100) == pytest.approx(0.2)
    assert E.random_precision_ar(0.2, 600, 30, 100) == pytest.approx(0.04)  # σδ
    assert E.random_precision_1r(100) == 0.01
    with pytest.raises(ValueError):
        E.harmonic_target_size([0, 3])


def test_eq3_with_the_mean_item_reduces_to_eq4() -> None:
    # a random ranking puts an item of average popularity |PR|/|I| at every rank: eq. 3 -> eq. 4
    n_pos, n_items, n_users, t, sigma = 5000, 400, 300, 380.0, 0.2
    counts = np.full(10, n_pos / n_items)
    assert E.nonpersonalised_precision_ar(counts, sigma, n_items, n_users, t) == pytest.approx(
        E.random_precision_ar(sigma, n_pos, n_users, t)
    )


# -- eq. 4: random recommendation in AR ------------------------------------------------------------


@pytest.mark.parametrize(
    ("candidates", "sigma", "n"), [("AI", 0.2, 10), ("TI", 0.2, 5), ("AI", 0.4, 1)]
)
def test_eq4_random_ar_precision_matches_monte_carlo(candidates, sigma, n) -> None:
    df = small_data()
    tau = 4.0
    n_pos = int((df["rating"] >= tau).sum())
    n_users = df["user"].nunique()
    rng = np.random.default_rng(42)
    measured, formula = [], []
    for _ in range(40):
        is_test = rng.random(len(df)) < sigma
        sets = target_sets(
            df[~is_test],
            df[is_test],
            Protocol(candidates, "AR", "AN", threshold=tau, ar_users="all"),
        )
        measured.append(target_metrics(random_scores(sets, rng), n)["P"].mean())
        t = E.harmonic_target_size(sets.groupby("set").size())
        formula.append(E.random_precision_ar(sigma, n_pos, n_users, t))
    assert within_ci(np.array(measured), float(np.mean(formula)))


# -- ρ: exact expectation of random precision given the target sets (§4.2) ----------------------


@pytest.mark.parametrize(
    "protocol",
    [
        Protocol("TI", "AR", "AN", threshold=4.0),
        Protocol("AI", "AR", "NN", 20, threshold=4.0),
        Protocol("TI", "1R", "NN", 19, threshold=4.0),
        Protocol("AI", "1R", "NN", 9, threshold=4.0, percentiles=3),
    ],
    ids=lambda p: p.name,
)
def test_random_precision_rho_matches_monte_carlo(protocol) -> None:
    df = small_data(1)
    is_test = np.random.default_rng(0).random(len(df)) < 0.25
    sets = target_sets(df[~is_test], df[is_test], protocol, seed=3)
    rng = np.random.default_rng(7)
    from recmeta.protocols import protocol_mean

    draws = np.array(
        [protocol_mean(target_metrics(random_scores(sets, rng), 5)) for _ in range(150)]
    )
    assert within_ci(draws, E.random_precision(sets))
    # the counting pass on grouped sets is pandas' group means, to the bit
    g = sets.groupby("set")
    by_pandas = float(g["relevant"].mean().groupby(g["stratum"].first()).mean().mean())
    assert E.random_precision(sets) == by_pandas
    shuffled = sets.sample(frac=1.0, random_state=2)  # not grouped: the pandas path
    assert E.random_precision(shuffled) == by_pandas


# -- eq. 5: random recommendation in 1R ------------------------------------------------------------


@pytest.mark.parametrize(("n_nonrelevant", "n"), [(9, 1), (9, 5), (49, 10)])
def test_eq5_random_1r_precision_is_one_over_t(n_nonrelevant, n) -> None:
    df = small_data(2)
    rng = np.random.default_rng(5)
    draws = []
    for seed in range(25):
        is_test = rng.random(len(df)) < 0.3
        sets = target_sets(
            df[~is_test],
            df[is_test],
            Protocol("AI", "1R", "NN", n_nonrelevant, threshold=4.0),
            seed=seed,
        )
        draws.append(target_metrics(random_scores(sets, rng), n)["P"].mean())
    assert within_ci(np.array(draws), E.random_precision_1r(n_nonrelevant + 1))


# -- eq. 3 and its uniform-split form: a non-personalised ranking -------------------------------
# An independent simulator: a dense users × items rating matrix, coin-flip (or uniform-test)
# splits, and one fixed ranking of all items; a user's list is that ranking minus her training
# items (the AN target set), cut at n.


def dense(df: pd.DataFrame, n_items: int, tau: float) -> tuple[np.ndarray, np.ndarray]:
    users = np.unique(df["user"])
    m = np.zeros((len(users), n_items))
    m[np.searchsorted(users, df["user"]), df["item"].to_numpy() - 1] = df["rating"]
    return m > 0, m >= tau


def precision_fixed_ranking(
    included: np.ndarray, relevant: np.ndarray, n: int
) -> tuple[float, float]:
    """P@n of the ranking 'item 1 first, item 2 second, ...' within each user's target set."""
    top = included & (np.cumsum(included, axis=1) <= n)
    return (top & relevant).sum(axis=1).mean() / n, E.harmonic_target_size(included.sum(axis=1))


def test_dense_simulator_agrees_with_the_protocol_pipeline() -> None:
    df = small_data(3)
    is_test = np.random.default_rng(1).random(len(df)) < 0.2
    train, test = df[~is_test], df[is_test]
    sets = target_sets(
        train,
        test,
        Protocol("AI", "AR", "AN", threshold=4.0, ar_users="all"),
        items=np.arange(1, 91),
    )
    scores = pd.DataFrame(
        {"user": sets["user"], "item": sets["item"], "score": -sets["item"].astype(float)}
    )
    pipeline = target_metrics(attach_scores(sets, scores.drop_duplicates()), 5)["P"].mean()
    rated, liked = dense(df, 90, 4.0)
    users = np.unique(df["user"])
    in_test = np.zeros_like(rated)
    in_test[np.searchsorted(users, test["user"]), test["item"].to_numpy() - 1] = True
    direct, _ = precision_fixed_ranking(~(rated & ~in_test), liked & in_test, 5)
    assert pipeline == pytest.approx(direct, abs=1e-12)


def test_eq3_nonpersonalised_ar_precision_matches_monte_carlo_on_sparse_data() -> None:
    # ~2,300 active users with 1.3 ratings each; the most rated item reaches ~1.5 % of them, so
    # training items rarely push a user's list down (the residual bias is ~1 %, under the CI)
    n_items, sigma, n = 200, 0.2, 5
    df = pop.simulate_ratings(
        6000, n_items, 3000, 0.5, {2.0: 0.6, 5.0: 0.4}, c1=0.0, c2=5.0, seed=0
    )
    rated, liked = dense(df, n_items, 4.0)
    positive = liked.sum(axis=0)  # |PR(i)|; items are numbered by popularity rank
    rng = np.random.default_rng(0)
    measured, formula = [], []
    for _ in range(300):
        in_test = rated & (rng.random(rated.shape) < sigma)
        p, t = precision_fixed_ranking(~(rated & ~in_test), liked & in_test, n)
        measured.append(p)
        formula.append(
            E.nonpersonalised_precision_ar(positive[:n], sigma, n_items, rated.shape[0], t)
        )
    assert within_ci(np.array(measured), float(np.mean(formula)))


def test_eq3_underestimates_popularity_when_profiles_are_dense() -> None:
    # eq. 3 takes p(i in T_u) = |T_u|/|C| for every item; a popular item is absent from many target
    # sets (its raters hold it in training), and given that it is shown it is more often relevant,
    # so on dense data with a steep popularity curve the measured precision far exceeds the formula
    n_items, sigma, n = 300, 0.2, 10
    df = pop.simulate_ratings(
        400, n_items, 12_000, 1.0, {2.0: 0.6, 5.0: 0.4}, c1=0.0, c2=5.0, seed=0
    )
    rated, liked = dense(df, n_items, 4.0)
    rng = np.random.default_rng(0)
    measured, formula = [], []
    for _ in range(30):
        in_test = rated & (rng.random(rated.shape) < sigma)
        p, t = precision_fixed_ranking(~(rated & ~in_test), liked & in_test, n)
        measured.append(p)
        formula.append(
            E.nonpersonalised_precision_ar(liked.sum(axis=0)[:n], sigma, n_items, rated.shape[0], t)
        )
    assert np.mean(measured) > 1.2 * np.mean(formula)


def test_uniform_split_nonpersonalised_precision_matches_monte_carlo() -> None:
    # sparse again (the most rated item reaches ~2 % of the active users), as eq. 3 assumes
    n_items, n = 200, 5
    df = pop.simulate_ratings(
        20_000, n_items, 8000, 0.5, {2.0: 0.5, 5.0: 0.5}, c1=2.0, c2=5.0, seed=1
    )
    users = np.unique(df["user"])
    rated, liked = dense(df, n_items, 4.0)
    ratio = liked.sum(axis=0) / rated.sum(axis=0)
    measured, formula = [], []
    for seed in range(80):
        sp = uniform_test_split(df, sigma=0.2, epsilon=0.2, seed=seed)
        in_test = np.zeros_like(rated)
        in_test[np.searchsorted(users, sp.test["user"]), sp.test["item"].to_numpy() - 1] = True
        in_t = np.zeros(n_items, dtype=bool)
        in_t[sp.items - 1] = True  # TI: 𝒞 = T
        p, t = precision_fixed_ranking(in_t[None, :] & ~(rated & ~in_test), liked & in_test, n)
        measured.append(p)
        sigma_real = len(sp.test) / len(df)
        top = np.flatnonzero(in_t)[:n]  # the ranking's first n items of T
        formula.append(
            E.nonpersonalised_precision_uniform(ratio[top], sigma_real, len(df), len(users), t)
        )
    assert within_ci(np.array(measured), float(np.mean(formula)))


# -- eq. 2: the lemma ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [1, 3, 10])
def test_lemma_bounds_hold_for_every_ranking_with_shared_nonrelevant(seed, n) -> None:
    df = small_data(seed)
    rng = np.random.default_rng(seed)
    is_test = rng.random(len(df)) < 0.3
    sets = target_sets(
        df[~is_test],
        df[is_test],
        Protocol("AI", "1R", "NN", 15, threshold=4.0, shared_nonrelevant=True),
        seed=seed,
    )
    # a personalised-looking score: a user-item hash, identical across the user's target sets
    pairs = sets[["user", "item"]].drop_duplicates()
    # with ties
    pairs = pairs.assign(score=np.random.default_rng(seed + 100).random(len(pairs)).round(1))
    lower, value, upper = E.lemma_bounds(attach_scores(sets, pairs), n)
    assert lower <= value + 1e-12 and value <= upper + 1e-12
    assert lower < upper


def test_lemma_bounds_hand_example() -> None:
    # one user, PR_test = {a, b}, N_u = {x, y}; ranking a > x > b > y
    sets = pd.DataFrame(
        {
            "set": [0, 0, 0, 1, 1, 1],
            "user": 1,
            "item": [1, 3, 4, 2, 3, 4],  # a=1, b=2, x=3, y=4
            "relevant": [True, False, False, True, False, False],
            "stratum": 0,
            "score": [4.0, 3.0, 1.0, 2.0, 3.0, 1.0],
        }
    )
    # n = 1: 1R sets {a,x,y} -> a first (hit), {b,x,y} -> x first (miss): 1R-P@1 = 1/2
    # AR on {a,b,x,y}: top-1 = a -> lower = 1 / (1·2);
    # m_u = 1 + 2 - 1 = 2, top-2 = a, x -> upper = 1/2
    assert E.lemma_bounds(sets, 1) == pytest.approx((0.5, 0.5, 0.5))
    # n = 2: 1R: {a,x,y} hit, {b,x,y}: x, b -> hit => 1R-P@2 = (1/2 + 1/2)/2 = 1/2
    # lower: top-2 of AR = a, x -> 1 hit / (2·2) = 1/4; m_u = 3: a, x, b -> 2 hits / 4 = 1/2
    assert E.lemma_bounds(sets, 2) == pytest.approx((0.25, 0.5, 0.5))


def test_top_positive_counts_reads_each_sets_top_items() -> None:
    scored = pd.DataFrame(
        {
            "set": [0, 0, 0, 1, 1, 1],
            "item": [1, 2, 3, 1, 2, 4],
            "score": [0.1, 0.9, 0.5, 0.7, 0.7, 0.2],
        }
    )
    counts = pd.Series({1: 10.0, 2: 20.0, 3: 30.0})
    # set 0: 2, 3 ; set 1: 1 and 2 tie -> item 1 first
    np.testing.assert_array_equal(E.top_positive_counts(scored, 2, counts), [[20, 30], [10, 20]])
    np.testing.assert_array_equal(
        E.top_positive_counts(scored, 3, counts), [[20, 30, 10], [10, 20, 0]]
    )
    with pytest.raises(ValueError, match="at least"):
        E.top_positive_counts(scored, 4, counts)


def test_lemma_bounds_reject_scores_that_depend_on_the_set() -> None:
    sets = pd.DataFrame(
        {
            "set": [0, 0, 1, 1],
            "user": 1,
            "item": [1, 3, 2, 3],
            "relevant": [True, False, True, False],
            "stratum": 0,
            "score": [1.0, 0.5, 1.0, 0.7],
        }  # item 3 scored 0.5 in set 0, 0.7 in set 1
    )
    with pytest.raises(ValueError, match="different scores"):
        E.lemma_bounds(sets, 1)


# -- the proof of eq. 2, step by step -----------------------------------------------------------


def test_lemma_ranks_hand_example_and_the_reversed_step() -> None:
    # one user, PR_test = {a, b}, N_u = {x, y}; ranking a > x > b > y
    # (as test_lemma_bounds_hand_example)
    sets = pd.DataFrame(
        {
            "set": [0, 0, 0, 1, 1, 1],
            "user": 1,
            "item": [1, 3, 4, 2, 3, 4],
            "relevant": [True, False, False, True, False, False],
            "stratum": 0,
            "score": [4.0, 3.0, 1.0, 2.0, 3.0, 1.0],
        }
    )
    r = E.lemma_ranks(sets).set_index("item")
    # a: rank 1 in {a,x,y} and 1 in {a,x,b,y}; b: rank 2 in {b,x,y} and 3 in the union
    assert (r.loc[1, "own"], r.loc[1, "union"], r.loc[2, "own"], r.loc[2, "union"]) == (1, 1, 2, 3)
    assert (r["relevant"] == 2).all()
    # the printed step own >= union + |PR| - 1 fails for both; the step the bound needs holds
    assert not (r["own"] >= r["union"] + r["relevant"] - 1).any()
    assert (r["union"] <= r["own"] + r["relevant"] - 1).all()


@pytest.mark.parametrize("seed", range(4))
def test_lemma_steps_on_random_data(seed) -> None:
    df = small_data(seed)
    is_test = np.random.default_rng(seed).random(len(df)) < 0.3
    sets = target_sets(
        df[~is_test],
        df[is_test],
        Protocol("AI", "1R", "NN", 15, threshold=4.0, shared_nonrelevant=True),
        seed=seed,
    )
    pairs = sets[["user", "item"]].drop_duplicates()
    pairs = pairs.assign(score=np.random.default_rng(seed).random(len(pairs)).round(1))
    r = E.lemma_ranks(attach_scores(sets, pairs))
    assert (r["own"] <= r["union"]).all() and (r["union"] <= r["own"] + r["relevant"] - 1).all()
    printed = r["own"] >= r["union"] + r["relevant"] - 1
    # the printed inequality holds exactly for users with a single relevant test item
    np.testing.assert_array_equal(printed, r["relevant"] == 1)


# -- ρ, eq. 4 and what eq. 4 leaves out ---------------------------------------------------------


def test_random_precision_terms_decompose_rho() -> None:
    # two users: u1 has 2 relevant of 4 items, u2 1 relevant of 10 (and u2 has a larger set)
    sets = pd.DataFrame(
        {
            "set": [0] * 4 + [1] * 10,
            "relevant": [True, True, False, False] + [True] + [False] * 9,
            "stratum": 0,
        }
    )
    t = E.random_precision_terms(sets, sigma=0.5, n_positive=6, n_users=2)
    assert t["rho"] == pytest.approx((2 / 4 + 1 / 10) / 2)
    assert t["product"] == pytest.approx(1.5 * (1 / 4 + 1 / 10) / 2)
    assert t["cov"] == pytest.approx(t["rho"] - t["product"]) and t["cov"] > 0
    assert t["eq4"] == pytest.approx(0.5 * 6 / 2 * (1 / 4 + 1 / 10) / 2)  # σ|PR|/|U| · avg 1/|T_u|
    assert t["eq4"] + t["split"] + t["cov"] == pytest.approx(t["rho"])
    # percentile sets (several strata, whether within one set or across sets) are refused
    for strata in ([0, 1] * 7, [0] * 4 + [1] * 10):
        with pytest.raises(ValueError, match="one stratum"):
            E.random_precision_terms(sets.assign(stratum=strata))


@pytest.mark.parametrize("candidates", ["AI", "TI"])
def test_random_precision_an_without_building_the_sets(candidates) -> None:
    df = small_data(4)
    is_test = np.random.default_rng(2).random(len(df)) < 0.2
    train, test = df[~is_test], df[is_test]
    items = np.arange(1, 100)  # nine items nobody rated
    sets = target_sets(
        train, test, Protocol(candidates, "AR", "AN", threshold=4.0, ar_users="all"), items=items
    )
    assert E.random_precision_an(train, test, 4.0, candidates, items=items) == pytest.approx(
        E.random_precision(sets)
    )


def test_eq4_underestimates_rho_when_heavy_raters_have_small_sets() -> None:
    # dense data: users who rate much have many relevant test items and small AN sets
    df = pop.simulate_ratings(200, 150, 9000, 1.0, {2.0: 0.6, 5.0: 0.4}, c1=0.0, c2=5.0, seed=2)
    users = df["user"].value_counts()
    heavy = users.index[: len(users) // 4]
    extra = pd.DataFrame(
        {
            "user": np.repeat(heavy, 40),
            "item": np.tile(np.arange(1000, 1040), len(heavy)),
            "rating": 5.0,
        }
    )
    df = pd.concat([df, extra], ignore_index=True)
    gaps = []
    for seed in range(5):
        is_test = np.random.default_rng(seed).random(len(df)) < 0.2
        sets = target_sets(
            df[~is_test], df[is_test], Protocol("AI", "AR", "AN", threshold=4.0, ar_users="all")
        )
        t = E.random_precision_terms(
            sets, 0.2, int((df["rating"] >= 4).sum()), df["user"].nunique()
        )
        gaps.append(t["cov"] / t["eq4"])
    assert min(gaps) > 0.02


# -- eq. 3 from the conditional probability, and the exact expectation of a fixed ranking ------


def test_conditional_precision_hand_example() -> None:
    # one rank, two sets showing items with |PR| = 10, |R| = 20 and |PR| = 4, |R| = 5; 100 users
    got = E.conditional_precision_ar(np.array([[10.0], [4.0]]), np.array([[20.0], [5.0]]), 0.2, 100)
    assert got == pytest.approx(((0.2 * 10) / (100 - 0.8 * 20) + (0.2 * 4) / (100 - 0.8 * 5)) / 2)
    with pytest.raises(ValueError, match="shape"):
        E.conditional_precision_ar(np.ones((2, 1)), np.ones((2, 2)), 0.2, 100)


def test_expected_precision_fixed_ranking_by_enumeration() -> None:
    # items A, B, C ranked in that order; u likes A and B, v rated C (disliked); n = 1, σ = 1/2
    r = pd.DataFrame({"user": ["u", "u", "v"], "item": ["A", "B", "C"], "rating": [5.0, 5.0, 1.0]})
    # u's splits: (A, B) in test/train: TT -> A hit, TR -> A hit, RT -> B hit, RR -> C, miss: 3/4
    # v never has a hit; the average over the two users is 3/8
    assert E.expected_precision_fixed_ranking(r, ["A", "B", "C"], 0.5, 1, 4.0) == pytest.approx(
        3 / 8
    )
    # n = 2: u: TT -> A,B (2 hits), TR -> A,C (1), RT -> B,C (1), RR -> C (0): 4/4 hits / 2 = 1/2
    assert E.expected_precision_fixed_ranking(
        r, ["A", "B", "C"], 0.5, 2, 4.0, n_users=1
    ) == pytest.approx(0.5)


def test_expected_precision_fixed_ranking_matches_monte_carlo_on_dense_data() -> None:
    # the data where eq. 3 fails (test_eq3_underestimates_popularity_when_profiles_are_dense)
    n_items, sigma, n = 300, 0.2, 10
    df = pop.simulate_ratings(
        400, n_items, 12_000, 1.0, {2.0: 0.6, 5.0: 0.4}, c1=0.0, c2=5.0, seed=0
    )
    rated, liked = dense(df, n_items, 4.0)
    rng = np.random.default_rng(1)
    measured = []
    for _ in range(60):
        in_test = rated & (rng.random(rated.shape) < sigma)
        p, _ = precision_fixed_ranking(~(rated & ~in_test), liked & in_test, n)
        measured.append(p)
    exact = E.expected_precision_fixed_ranking(df, np.arange(1, n_items + 1), sigma, n, 4.0)
    assert within_ci(np.array(measured), exact)
    # while eq. 3 falls far short on these data (see the test above)
    eq3 = E.nonpersonalised_precision_ar(
        liked.sum(axis=0)[:n],
        sigma,
        n_items,
        rated.shape[0],
        E.harmonic_target_size(n_items - (1 - sigma) * rated.sum(axis=1)),
    )
    assert eq3 < 0.8 * exact
