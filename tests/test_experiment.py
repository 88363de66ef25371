"""recmeta.compare against scipy, statsmodels, exact enumerations, hand-worked cases and simulation."""

from __future__ import annotations

import argparse
import itertools
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats
from statsmodels.stats.multitest import multipletests

from recmeta import (
    metrics as trec,  # TREC file reading and writing
    protocols,
)
from recmeta.cli import compare as cli_compare
from recmeta.compare import (
    Sampling,
    adjust,
    compact_letters,
    compare,
    compare_trec,
    detectable_difference,
    difference_intervals,
    experiment as chapter,
    item_lists,
    mean_intervals,
    pooled_difference_sd,
    popularity_runs,
    reference_values,
    smd_interval,
    text,
    tukey_hsd,
    users_needed,
)
from recmeta.compare.sampled import sample_candidates, sampled_ranks
from recmeta.metrics import Judgments, Runs


# ----------------------------------------------------------------------------- synthetic data
def _split(seed: int = 0, n_users: int = 40, n_items: int = 90):
    """Train/test ratings where every test user has a relevant (>= 4) rating.

    User ids 10.. and item ids 100.. have as many digits each, so numeric and text order agree
    (TREC files hold ids as text).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        items = rng.choice(n_items, size=rng.integers(12, 30), replace=False)
        ratings = rng.integers(1, 6, size=items.size)
        ratings[0] = 5
        for k, (i, r) in enumerate(zip(items, ratings)):
            rows.append((10 + u, 100 + int(i), int(r), k < 6))
    df = pd.DataFrame(rows, columns=["user", "item", "rating", "is_test"])
    test = df[df.is_test].drop(columns="is_test").reset_index(drop=True)
    train = df[~df.is_test].drop(columns="is_test").reset_index(drop=True)
    return train, test


def _lists(train: pd.DataFrame, test: pd.DataFrame, systems: dict[str, float], depth: int = 20,
           seed: int = 0):
    """Lists of systems that lift the relevant test items above random with strength ``w``."""
    rng = np.random.default_rng(seed)
    items = np.sort(train["item"].unique())
    liked = test[test.rating >= 4].groupby("user")["item"].apply(set)
    frames = {}
    for name, w in systems.items():
        parts = []
        for u, seen in train.groupby("user")["item"]:
            cand = np.setdiff1d(items, seen.to_numpy())
            score = rng.random(cand.size) + w * np.isin(cand, list(liked.get(u, set())))
            top = np.argsort(-score, kind="stable")[:depth]
            parts.append(pd.DataFrame({"user": u, "item": cand[top], "score": score[top]}))
        frames[name] = pd.concat(parts, ignore_index=True)
    return frames


FAST = dict(n_permutations=4000, n_bootstrap=500, n_tukey=500, n_random=5)


# ----------------------------------------------------------------------------- corrections
def test_holm_and_bh_equal_statsmodels():
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(0, 0.05, 6), rng.uniform(0, 1, 14)])
    rng.shuffle(p)
    assert np.allclose(adjust(p, "holm"), multipletests(p, method="holm")[1])
    assert np.allclose(adjust(p, "bh"), multipletests(p, method="fdr_bh")[1])
    assert np.allclose(adjust(p, "bh"), stats.false_discovery_control(p))
    with_nan = p.copy()
    with_nan[[2, 7]] = np.nan
    got = adjust(with_nan, "bh")
    ok = ~np.isnan(with_nan)
    assert np.isnan(got[[2, 7]]).all()
    assert np.allclose(got[ok], multipletests(with_nan[ok], method="fdr_bh")[1])
    with pytest.raises(ValueError, match="unknown correction"):
        adjust(p, "bonferroni")


# ----------------------------------------------------------------------------- intervals
def test_bootstrap_intervals_equal_scipy_with_the_same_seed():
    rng = np.random.default_rng(1)
    scores = rng.random((3, 150)) ** 2
    got = mean_intervals(scores, n_resamples=999, seed=11)
    for k in range(3):
        ref = stats.bootstrap((scores[k],), np.mean, n_resamples=999, rng=np.random.default_rng(11))
        assert got.at[k, "boot_low"] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
        assert got.at[k, "boot_high"] == pytest.approx(ref.confidence_interval.high, abs=1e-12)
        t = stats.t.interval(0.95, 149, loc=scores[k].mean(), scale=stats.sem(scores[k]))
        assert got.at[k, "t_low"] == pytest.approx(t[0]) and got.at[k, "t_high"] == pytest.approx(t[1])
    pairs = difference_intervals(scores, n_resamples=999, seed=5)
    d = scores[0] - scores[2]  # pair (0, 2) is the second of (0,1), (0,2), (1,2)
    ref = stats.bootstrap((d,), np.mean, n_resamples=999, rng=np.random.default_rng(5))
    assert pairs.at[1, "boot_low"] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert pairs.at[1, "mean_diff"] == pytest.approx(d.mean())
    assert pairs.at[1, "smd"] == pytest.approx(d.mean() / d.std(ddof=1))
    t = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert (pairs.at[1, "t_low"], pairs.at[1, "t_high"]) == pytest.approx(t)


def test_identical_systems_give_degenerate_but_finite_intervals():
    rng = np.random.default_rng(2)
    row = rng.random(50)
    pairs = difference_intervals(np.stack([row, row, row + 0.1]), n_resamples=200)
    first = pairs.iloc[0]
    assert first["mean_diff"] == 0 and first["boot_low"] == 0 and first["boot_high"] == 0
    assert first["smd"] == 0


def test_smd_interval_covers_the_true_effect_at_its_level():
    """Noncentral-t interval of d_z: coverage of the true μ/σ over simulated normal samples."""
    rng = np.random.default_rng(0)
    n, delta, reps = 15, 0.6, 800
    x = rng.normal(delta, 1.0, size=(reps, n))
    d = x.mean(axis=1) / x.std(axis=1, ddof=1)
    covered = 0
    for v in d:
        low, high = smd_interval(v, n, 0.95)
        covered += low <= delta <= high
    share = covered / reps
    se = np.sqrt(0.95 * 0.05 / reps)
    assert abs(share - 0.95) < 4 * se


# ----------------------------------------------------------------------------- Tukey HSD
def test_randomised_tukey_matches_exact_enumeration():
    """3 systems, 5 users: all (3!)^5 within-user shuffles enumerated."""
    scores = np.array([[0.9, 0.7, 0.8, 1.0, 0.6],
                       [0.5, 0.6, 0.4, 0.7, 0.5],
                       [0.6, 0.2, 0.5, 0.4, 0.1]])
    means = scores.mean(axis=1)
    perms = list(itertools.permutations(range(3)))
    ranges = []
    for choice in itertools.product(perms, repeat=scores.shape[1]):
        shuffled = np.stack([scores[list(p), u] for u, p in enumerate(choice)], axis=1)
        m = shuffled.mean(axis=1)
        ranges.append(m.max() - m.min())
    ranges = np.array(ranges)
    pairs = [(0, 1), (0, 2), (1, 2)]
    exact = np.array([np.mean(ranges >= abs(means[a] - means[b]) - 1e-12) for a, b in pairs])
    B = 40_000
    got = tukey_hsd(scores, seed=1, n_permutations=B)
    tol = 5 * np.sqrt(exact * (1 - exact) / B) + 2 / B
    assert np.all(np.abs(got - exact) <= tol), (got, exact)


# ----------------------------------------------------------------------------- letters
@pytest.mark.parametrize(
    "means, significant, expected",
    [
        ([3, 2, 1], [(0, 2)], ["a", "ab", "b"]),
        ([3, 2, 1], [(0, 1), (0, 2), (1, 2)], ["a", "b", "c"]),
        ([3, 2, 1], [], ["a", "a", "a"]),
        ([4, 3, 2, 1], [(0, 2), (0, 3), (1, 3)], ["a", "ab", "bc", "c"]),
        ([1, 3, 2], [(1, 0)], ["b", "a", "ab"]),
    ],
)
def test_compact_letters_hand_worked(means, significant, expected):
    k = len(means)
    sig = np.zeros((k, k), dtype=bool)
    for a, b in significant:
        sig[a, b] = sig[b, a] = True
    assert compact_letters(means, sig) == expected


# ----------------------------------------------------------------------------- sample size
def test_users_needed_reaches_the_power_in_simulation():
    sd, delta, alpha, power = 1.0, 0.4, 0.05, 0.8
    n = int(users_needed(sd, delta, alpha=alpha, power=power))
    # Sakai's (2016) normal approximation: ((z_{α/2} + z_β) / Δ)² + z_{α/2}² / 2
    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    assert abs(n - (((za + zb) / (delta / sd)) ** 2 + za**2 / 2)) < 2
    rng = np.random.default_rng(4)
    reps = 6000
    rejected = stats.ttest_1samp(rng.normal(delta, sd, (reps, n)), 0, axis=1).pvalue <= alpha
    se = np.sqrt(power * (1 - power) / reps)
    assert rejected.mean() >= power - 3 * se
    fewer = stats.ttest_1samp(rng.normal(delta, sd, (reps, n - 6)), 0, axis=1).pvalue <= alpha
    assert fewer.mean() < power
    # the inverse: with n users the detectable difference is at most Δ
    assert detectable_difference(sd, n, alpha=alpha, power=power) <= delta + 1e-9
    assert np.isinf(users_needed(1.0, 0.0)) and np.isnan(users_needed(0.0, 0.1))


def test_pooled_sd_is_the_mean_variance_of_the_pairs():
    rng = np.random.default_rng(6)
    scores = rng.random((5, 80)) + np.arange(5)[:, None] * 0.1
    variances = [np.var(scores[a] - scores[b], ddof=1) for a, b in itertools.combinations(range(5), 2)]
    assert pooled_difference_sd(scores) == pytest.approx(np.sqrt(np.mean(variances)))


# ----------------------------------------------------------------------------- references
def test_random_reference_precision_is_bellogins_rho():
    train, test = _split(seed=1)
    items = np.union1d(train["item"].unique(), test["item"].unique())
    j = Judgments.from_frame(test, threshold=4)
    ref = reference_values(j, train, ["P@5", "RR"], depth=10, n_random=3000, seed=2, items=items)
    sets = protocols.target_sets(train, test, protocols.Protocol("AI", "AR", "AN", threshold=4),
                                 items=items)
    rho = protocols.random_precision(sets)
    got = ref[(ref.metric == "P@5") & (ref.reference == "random")].iloc[0]
    assert abs(got["value"] - rho) < 4 * got["se"] + 1e-12, (got["value"], rho)
    # RR: E[1/rank of the first of r relevant among n] = Σ_{i ≤ depth} (1/i) C(n−i, r−1) / C(n, r)
    per_user = []
    for u, seen in train.groupby("user")["item"]:
        cand = np.setdiff1d(items, seen.to_numpy())
        rel = test[(test.user == u) & (test.rating >= 4)]["item"].isin(cand).sum()
        n = cand.size
        i = np.arange(1, min(10, n - rel + 1) + 1)
        per_user.append(np.sum(special.comb(n - i, rel - 1) / special.comb(n, rel) / i))
    got = ref[(ref.metric == "RR") & (ref.reference == "random")].iloc[0]
    assert abs(got["value"] - np.mean(per_user)) < 4 * got["se"], (got["value"], np.mean(per_user))


def test_popularity_reference_equals_lenskit_popscorer():
    from recmeta import recommenders
    from recmeta.recommenders import roster

    train, test = _split(seed=2)
    j = Judgments.from_frame(test, threshold=4)
    ours = popularity_runs(j, train, depth=15)
    model = recommenders.train(roster.get("pop"), train)
    theirs = recommenders.top_n(model, depth=15, progress=False)
    lk = Runs.from_frame(theirs.drop(columns="score"), j, system="pop", depth=15)
    mine = ours.to_frame().sort_values(["user", "rank"]).reset_index(drop=True)
    other = lk.to_frame().sort_values(["user", "rank"]).reset_index(drop=True)
    assert mine[["user", "item", "rank"]].equals(other[["user", "item", "rank"]])


# ----------------------------------------------------------------------------- the report
@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    train, test = _split(seed=0)
    frames = _lists(train, test, {"strong": 0.9, "middle": 0.5, "weak": 0.0})
    tmp = tmp_path_factory.mktemp("trec")
    trec.write_qrels(test, tmp / "test.qrels")
    paths = []
    for name, f in frames.items():
        trec.write_run(f, tmp / f"{name}.run", system=name)
        paths.append(tmp / f"{name}.run")
    train.to_csv(tmp / "train.csv", index=False)
    return train, test, frames, paths, tmp


def test_report_on_item_lists_equals_the_trec_file_path(experiment):
    train, test, frames, paths, tmp = experiment
    ilcs = {name: item_lists(f) for name, f in frames.items()}
    metrics = ["nDCG@10", "RR"]
    from lenskit.data import ItemListCollection

    truth = ItemListCollection.from_df(test.rename(columns={"user": "user_id", "item": "item_id"}),
                                       "user_id")
    a = compare(ilcs, truth, metrics, threshold=4, train=train, **FAST)
    b = compare_trec(paths, tmp / "test.qrels", metrics, threshold=4, train=tmp / "train.csv", **FAST)
    cols = ["mean", "t_low", "t_high", "boot_low", "boot_high", "letters"]
    sa = a.summary.set_index(["metric", "system"]).sort_index()
    sb = b.summary.set_index(["metric", "system"]).sort_index()
    pd.testing.assert_frame_equal(sa[cols], sb[cols])
    pa = a.pairs.set_index(["metric", "a", "b"]).sort_index()
    pb = b.pairs.set_index(["metric", "a", "b"]).sort_index()
    pcols = ["mean_diff", "smd", "p_permutation", "p_t", "p_wilcoxon", "p_tukey", "p_holm", "p_bh"]
    pd.testing.assert_frame_equal(pa[pcols], pb[pcols])
    pd.testing.assert_frame_equal(a.references, b.references)


def test_report_tests_agree_with_scipy(experiment):
    train, test, frames, _, _ = experiment
    rep = compare(frames, test, ["nDCG@10"], threshold=4, n_permutations=20_000, n_bootstrap=200,
                  n_tukey=200)
    M = rep.scores["nDCG@10"]
    assert M.shape == (3, test.user.nunique())
    for row in rep.pairs.itertuples():
        x, y = M[rep.systems.index(row.a)], M[rep.systems.index(row.b)]
        assert row.p_t == pytest.approx(stats.ttest_rel(x, y).pvalue)
        # scipy picks the exact or the normal-approximation p-value by the data (method="auto")
        options = [stats.wilcoxon(x, y, method=m).pvalue for m in ("exact", "approx")]
        assert any(row.p_wilcoxon == pytest.approx(o, rel=1e-9, abs=0) for o in options)
        ref = stats.permutation_test((x, y), lambda u, v: np.mean(u - v), permutation_type="samples",
                                     n_resamples=20_000, rng=np.random.default_rng(9)).pvalue
        p = (ref + row.p_permutation) / 2
        tol = 5 * np.sqrt(max(p * (1 - p), 1e-4) * 2 / 20_000) + 3e-4
        assert abs(row.p_permutation - ref) <= tol, (row.a, row.b, row.p_permutation, ref)
    holm = multipletests(rep.pairs["p_permutation"], method="holm")[1]
    assert np.allclose(rep.pairs["p_holm"], holm)
    assert (rep.pairs["significant"] == (holm <= 0.05)).all()


def test_report_tables_and_plot(experiment):
    import matplotlib

    matplotlib.use("Agg")
    train, test, frames, _, _ = experiment
    rep = compare(frames, test, ["nDCG@10", "P@5"], threshold=4, train=train, difference=0.05,
                  **FAST)
    assert rep.ranking("nDCG@10")[0] == "strong"
    md = rep.to_markdown()
    assert "random (expected)" in md and "popularity" in md and "Holm" in md
    assert md.splitlines()[2].startswith("| strong | ")  # best system first
    tex = rep.to_latex(label="tab:x")
    assert tex.startswith(r"\begin{table}") and r"\toprule" in tex and r"\label{tab:x}" in tex
    assert rep.power["users_needed"].notna().all()
    assert set(rep.to_frame().columns) >= {"metric", "system", "mean", "boot_low", "letters"}
    fig = rep.plot("P@5")
    assert fig.axes[0].get_xlabel().startswith("P@5")
    assert "random" in " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())


def test_coverage_penalty_is_counted_and_scored_zero(experiment):
    train, test, frames, _, _ = experiment
    gone = test["user"].unique()[:3]
    cut = {**frames, "weak": frames["weak"][~frames["weak"]["user"].isin(gone)]}
    rep = compare(cut, test, ["nDCG@10"], threshold=4, **FAST)
    cov = rep.coverage.set_index("system")["empty_lists"]
    assert cov["weak"] == 3 and cov["strong"] == 0
    users = list(rep.users)
    cols = [users.index(u) for u in gone]
    assert (rep.scores["nDCG@10"][rep.systems.index("weak"), cols] == 0).all()
    assert any("coverage penalty" in n for n in rep.notes)


def test_graded_test_data_need_a_threshold(experiment):
    train, test, frames, _, _ = experiment
    with pytest.raises(ValueError, match="threshold"):
        compare(frames, test, ["nDCG@10"], **FAST)


def test_cli_prints_the_report(experiment, capsys):
    _, _, _, paths, tmp = experiment
    parser = argparse.ArgumentParser()
    cli_compare.register(parser.add_subparsers(dest="command"))
    base = ["compare", *map(str, paths), "--qrels", str(tmp / "test.qrels"), "-m", "nDCG@10",
            "-m", "RR", "--threshold", "4", "--permutations", "2000", "--bootstrap", "300",
            "--tukey", "300", "--train", str(tmp / "train.csv"), "--correction", "bh"]
    args = parser.parse_args(base)
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "| strong |" in out and "p BH" in out and "Benjamini" in out and "random (expected)" in out
    args = parser.parse_args(base + ["--format", "json"])
    assert args.func(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["system"] for r in data["systems"]} == {"strong", "middle", "weak"}
    assert len(data["pairs"]) == 6


# ----------------------------------------------------------------------------- sampled candidates
def test_sampled_ranks_and_rank_estimate_by_hand():
    rng = np.random.default_rng(5)
    n_users, m, n = 60, 20, 500
    users = np.arange(1000, 1000 + n_users)
    held = pd.DataFrame({"user": users, "item": 5000 + np.arange(n_users), "rating": 5})
    j = Judgments.from_frame(held, threshold=4)
    positions = {}
    frames = []
    for name in ("a", "b"):
        pos = rng.integers(1, m + 2, size=n_users)
        positions[name] = pos
        for u, h, p in zip(users, held["item"], pos):
            items = list(rng.choice(np.arange(10, 400), size=m, replace=False))
            items.insert(p - 1, h)
            frames.append(pd.DataFrame({"system": name, "user": u, "item": items,
                                        "rank": np.arange(1, m + 2)}))
    runs = Runs.from_frame(pd.concat(frames), j)
    ranks, missing = sampled_ranks(j, runs, m)
    assert not missing.any()
    assert (ranks[0] == positions["a"]).all() and (ranks[1] == positions["b"]).all()
    rep = compare(runs, j, ["nDCG@10", "R@10"], sampled=Sampling(m=m, n=n, estimator="rank-estimate"),
                  **FAST)
    est = 1 + ((n - 1) * (positions["a"] - 1)) // m  # eq. 20
    ndcg = np.where(est <= 10, 1 / np.log2(est + 1), 0.0)
    row = rep.sampled[(rep.sampled.metric == "nDCG@10") & (rep.sampled.system == "a")].iloc[0]
    assert row["corrected"] == pytest.approx(ndcg.mean())
    plain = np.where(positions["a"] <= 10, 1 / np.log2(positions["a"] + 1), 0)
    assert row["sampled"] == pytest.approx(plain.mean())
    assert any("Sampled candidates" in note for note in rep.notes)
    # a random ranking puts the relevant item at a uniform sampled rank
    r = np.arange(1, m + 2)
    est_r = 1 + ((n - 1) * (r - 1)) // m
    assert rep.reference("R@10", "random") == pytest.approx(np.mean(est_r <= 10))
    with pytest.raises(ValueError, match="no correction"):
        compare(runs, j, ["bpref"], sampled=Sampling(m=m, n=n), **FAST)
    with pytest.raises(ValueError, match="more than m"):
        compare(runs, j, ["RR"], sampled=Sampling(m=m - 5, n=n), **FAST)


def test_sample_candidates_draws_m_new_items_per_user():
    train, test = _split(seed=3)
    held = test[test.rating >= 4].groupby("user").head(1)[["user", "item"]]
    pairs = sample_candidates(train, held, 15, seed=1)
    assert (pairs.groupby("user").size() == 16).all()
    assert not pairs.duplicated().any()
    merged = pairs.merge(train[["user", "item"]], on=["user", "item"], how="inner")
    assert merged.empty  # never a training item
    assert set(map(tuple, held.to_numpy())) <= set(map(tuple, pairs.to_numpy()))


# ----------------------------------------------------------------------------- the chapter

@pytest.fixture(scope="module")
def chapter_report():
    train, test = _split(seed=0)
    frames = _lists(train, test, {"strong": 0.9, "middle": 0.5, "weak": 0.0, "twin": 0.5})
    rep = compare(frames, test, ["nDCG@10", "RR"], threshold=4, train=train, difference=0.05,
                  **FAST)
    return rep, train, test


def test_settings_take_the_profile_default_only_for_none():
    quick = chapter.Settings.resolve("quick", n_permutations=None, n_bootstrap=77,
                                        n_tukey=0, seed=5, difference=None)
    assert quick.n_permutations == 10_000  # None: the profile's default
    assert quick.n_bootstrap == 77 and quick.n_tukey == 0 and quick.seed == 5
    assert quick.difference is None  # None is a value of difference: no sample-size question
    full = chapter.Settings.resolve("full")
    assert (full.n_permutations, full.n_bootstrap, full.n_tukey) == (100_000, 9_999, 20_000)
    assert quick.light()["n_permutations"] == 2_000 and quick.light()["seed"] == 5
    with pytest.raises(TypeError, match="unknown settings"):
        chapter.Settings.resolve("quick", n_perms=3)
    with pytest.raises(ValueError, match="profile"):
        chapter.Settings.resolve("medium")


def test_settings_options_are_compare_keywords(chapter_report):
    rep, train, test = chapter_report
    frames = _lists(train, test, {"a": 0.9, "b": 0.0})
    options = chapter.Settings.resolve("quick", n_permutations=500, n_bootstrap=100,
                                          n_tukey=100, correction="bh").options()
    out = compare(frames, test, ["RR"], threshold=4, **options)
    assert out.settings["correction"] == "bh" and out.settings["n_bootstrap"] == 100


def test_pair_tests_counts_pairs_per_metric():
    assert chapter.pair_tests(5, ["a", "b", "c"]) == 30
    assert chapter.pair_tests(1, ["a"]) == 0


def test_closest_pair_is_turned_to_the_system_ahead(chapter_report):
    rep = chapter_report[0]
    p = rep.pairs[rep.pairs["metric"] == "nDCG@10"]
    raw = p.loc[p["smd"].abs().idxmin()]
    close = chapter.closest_pair(rep, "nDCG@10")
    means = rep.summary[rep.summary["metric"] == "nDCG@10"].set_index("system")["mean"]
    assert {close["a"], close["b"]} == {raw["a"], raw["b"]}
    assert means[close["a"]] >= means[close["b"]]
    assert close["mean_diff"] == pytest.approx(abs(raw["mean_diff"]))
    assert close["mean_diff"] == pytest.approx(means[close["a"]] - means[close["b"]])
    assert close["boot_low"] <= close["boot_high"] and close["smd_low"] <= close["smd_high"]
    assert close["boot_high"] - close["boot_low"] == pytest.approx(
        raw["boot_high"] - raw["boot_low"])


def test_order_agreement_by_hand():
    side = pd.DataFrame({
        "metric": ["m"] * 3 + ["n"] * 3,
        "system": list("xyz") * 2,
        "exact": [0.3, 0.2, 0.1, 1.0, 2.0, 3.0],
        "sampled": [0.9, 0.5, 0.7, 1.0, 2.0, 3.0],  # m: y and z swapped; n: all alike
        "corrected": [0.3, 0.2, 0.2, 3.0, 2.0, 1.0],  # m: y and z tied; n: all reversed
    })
    agree = chapter.order_agreement(side)
    assert list(agree.index) == ["m", "n"]
    assert agree.loc["m"].tolist() == [3, 2, 2]
    assert agree.loc["n"].tolist() == [3, 3, 0]


def test_held_out_items_one_relevant_known_item_per_user():
    train, test = _split(seed=2)
    test = pd.concat([test, pd.DataFrame({"user": [10], "item": [999], "rating": [5]})])
    held = chapter.held_out_items(test, train, 4, seed=0)
    assert held["user"].is_unique
    assert set(held["user"]) == set(test.loc[test.rating >= 4, "user"])
    assert (held["rating"] >= 4).all() and held["item"].isin(train["item"]).all()
    assert 999 not in set(held["item"])
    again = chapter.held_out_items(test, train, 4, seed=0)
    pd.testing.assert_frame_equal(held, again)


def test_check_cutoffs_refuses_a_cutoff_beyond_the_lists():
    chapter.check_cutoffs(["nDCG@10", "RR"], 10)
    with pytest.raises(ValueError, match="depth 50"):
        chapter.check_cutoffs(["nDCG@100", "R@10"], 50)


def test_coverage_sentence_counts_users(chapter_report):
    rep, _, test = chapter_report
    extra = pd.concat([test, pd.DataFrame({"user": [9999], "item": [100], "rating": [1]})])
    line = text.coverage(rep, extra, 4)
    n_test, n_eval = extra["user"].nunique(), len(rep.users)
    assert line.startswith("Here a test rating of at least 4 is relevant.")
    assert f"{n_eval:,} of the {n_test:,} test users" in line
    assert f"the other {n_test - n_eval:,} are left out" in line
    assert "coverage penalty costs nothing" in line
    assert "implicit feedback" in text.coverage(rep, test, None)


def test_step_sentences_carry_the_reports_numbers(chapter_report):
    rep = chapter_report[0]
    refs = text.references(rep, rep.metrics).splitlines()
    assert len(refs) == 2 and refs[0].startswith("- **nDCG@10**: random ")
    rnd = rep.reference("nDCG@10", "random")
    assert f"random {rnd:.4f}" in refs[0]
    p = rep.pairs[rep.pairs["metric"] == "RR"]
    sig = text.significance(rep, rep.metrics).splitlines()[1]
    assert f"of {len(p)} pairs, {int((p['p_permutation'] <= 0.05).sum())} have" in sig
    assert f"{int((p['p_holm'] <= 0.05).sum())} remain after Holm's correction" in sig
    close = chapter.closest_pair(rep, "nDCG@10")
    pair = text.closest_pair_text(rep, "nDCG@10")
    assert pair.startswith(f"The closest pair on nDCG@10 is {close['a']} against {close['b']}")
    assert f"ahead by {close['mean_diff']:.4f}" in pair
    power = text.power(rep, rep.metrics).splitlines()
    assert len(power) == 3 and "a difference of 0.05 needs" in power[0]
    detectable = rep.power.set_index("metric").at["RR", "detectable"]
    assert f"a difference of {detectable:.4f} or more" in power[1]
    assert power[2].startswith(f"- The closest pair of step 4 ({close['a']} and {close['b']})")


def test_sampled_sentences_and_checklist(chapter_report):
    rep = chapter_report[0]
    side = pd.DataFrame({
        "metric": ["nDCG@10"] * 2, "system": ["strong", "weak"],
        "exact": [0.2, 0.1], "sampled": [0.5, 0.6], "corrected": [0.25, 0.05],
    })
    note = "Sampled candidates: a note."
    orders = text.sampled_orders(side, ["other note", note], ["nDCG@10"], "BV 0.1")
    assert orders.split("\n\n")[0] == note
    assert "orders 0 of the 1 pairs of systems as the exact metric does, the BV 0.1 " \
           "correction 1;" in orders
    levels = text.sampled_levels(side, ["nDCG@10"])
    assert "the sampled mean is 2.5 to 6 times the exact one" in levels
    assert "the corrected mean 0.5 to 1.2 times" in levels
    done = text.checklist(rep, side, dataset="toy", sampled_m=100).splitlines()
    assert done[0] == f"On toy, with 4 systems and {len(rep.users):,} evaluated users:"
    assert [int(re.match(r"(\d)\.", x).group(1)) for x in done[2:]] == [1, 2, 3, 4, 5, 6]
    assert done[-1] == ("6. **Sampling**: with 100 sampled negatives, nDCG@10 orders 0 of 1 "
                        "pairs as the exact metric.")
    n_sig = int(rep.pairs[rep.pairs["metric"] == "nDCG@10"]["significant"].sum())
    assert f"{n_sig} of 6 pairs differ significantly after Holm's correction" in done[4]


def test_cost_lines_and_listings():
    settings = chapter.Settings.resolve("quick")
    assert text.unmodelled_tests(settings) == (
        "the randomised Tukey HSD test (2,000 permutations) and the bootstrap intervals "
        "(1,000 resamples)")
    assert text.unmodelled_pipelines({"a": {}, "b": {}}) == "training your pipelines (a, b)"
    assert text.left_out([]) == ""
    assert text.left_out(["x", "y"]) == "Left out, they learn from rating values: x, y"
    assert np.isfinite(settings.alpha)


def test_own_pipelines_train_and_score_sampled_candidates():
    train, test = _split(seed=4, n_users=12, n_items=40)
    spec = {"pop": {"component": "lenskit.basic:PopScorer", "config": {}}}
    pipes = chapter.train_pipelines(spec, train, depth=5, seed=0)
    assert text.pipeline_scorers(pipes) == "pop: PopScorer"
    held = chapter.held_out_items(test, train, 4, seed=0)
    pairs = sample_candidates(train, held[["user", "item"]], 6, seed=1)
    scored = chapter.score_pipelines(pipes, pairs)["pop"]
    counts = train.groupby("item").size()
    for user in held["user"][:4]:
        df = scored.lookup(user_id=user).to_df()
        assert set(df["item_id"]) == set(pairs.loc[pairs.user == user, "item"])
        # the popularity scorer ranks the candidates as their training counts do
        order = df.sort_values("score", kind="stable")["item_id"]
        assert counts.reindex(order).fillna(0).is_monotonic_increasing
    with pytest.raises(ValueError, match="config"):
        chapter.train_pipelines({"x": {"component": "lenskit.basic:PopScorer"}}, train,
                                depth=5, seed=0)
