"""The robustness chapter's study and ledger (Valcarce et al. 2018), and the helpers it added."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta.ledger import Estimate, Verdict, prose
from recmeta.metaeval import bootstrap, significance
from recmeta.metrics import Judgments, Runs, aggregate, score_matrices
from recmeta.papers import valcarce2018 as v

ROOT = Path(__file__).resolve().parents[1]
A, D, I, N = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED


# ---- helpers added to agreement and significance ------------------------------------------------


def test_resample_counts_and_weighted_means_equal_explicit_resampling():
    rng = np.random.default_rng(3)
    x = rng.random((2, 3, 40))
    x[:, :, 5] = np.nan  # a user without a score, skipped as nanmean does
    counts = bootstrap.resample_counts(40, 25, seed=7)
    assert counts.shape == (25, 40) and (counts.sum(axis=1) == 40).all()
    got = bootstrap.weighted_means(x, counts)
    assert got.shape == (25, 2, 3)
    for b in range(25):
        users = np.repeat(np.arange(40), counts[b])  # the resample, built explicitly
        np.testing.assert_allclose(got[b], np.nanmean(x[:, :, users], axis=-1), atol=1e-12)
    assert not np.array_equal(counts[0], counts[1])
    np.testing.assert_array_equal(bootstrap.resample_counts(40, 25, seed=7), counts)
    with pytest.raises(ValueError, match="same users"):
        bootstrap.weighted_means(x, counts[:, :-1])
    # rows scoring different users (one more NaN in one row) take the general path
    y = x.copy()
    y[0, 1, 7] = np.nan
    got = bootstrap.weighted_means(y, counts)
    for b in range(25):
        users = np.repeat(np.arange(40), counts[b])
        np.testing.assert_allclose(got[b], np.nanmean(y[:, :, users], axis=-1), atol=1e-12)
    # the rows that score the same users get the same bits either way (exact counts)
    np.testing.assert_array_equal(got[:, 1], bootstrap.weighted_means(x, counts)[:, 1])


def test_exact_permutation_p_by_hand_and_against_scipy():
    # observed |1 + 1| = 2 is reached by (+,+) and (-,-): 2 of 4 sign vectors
    assert significance.exact_permutation_p([1.0, 1.0]) == pytest.approx(0.5)
    # |1 + 2 + 3| = 6 only when all signs agree: 2 of 8
    assert significance.exact_permutation_p([1.0, 2.0, 3.0]) == pytest.approx(0.25)
    rng = np.random.default_rng(11)
    x, y = rng.random(10), rng.random(10) + 0.2
    ref = stats.permutation_test((x, y), lambda a, b: np.mean(a - b), permutation_type="samples",
                                 n_resamples=np.inf, alternative="two-sided").pvalue
    assert significance.exact_permutation_p(x - y) == pytest.approx(ref, abs=1e-12)
    with pytest.raises(ValueError, match="too large"):
        significance.exact_permutation_p(np.ones(21))


def test_bootstrap_t_pvalues_equal_ttest_rel_on_the_resampled_users():
    rng = np.random.default_rng(5)
    scores = rng.random((3, 30)) + np.array([[0.0], [0.05], [0.3]])
    scores[2, :] = scores[0, :] + 0.01  # a pair whose difference has no spread
    counts = bootstrap.resample_counts(30, 6, seed=2)
    got = significance.bootstrap_t_pvalues(scores, counts)
    ia, ib = significance.system_pairs(3)
    for b in range(6):
        users = np.repeat(np.arange(30), counts[b])
        for k, (i, j) in enumerate(zip(ia, ib)):
            if (i, j) == (0, 2):
                assert got[b, k] == 0.0  # constant non-zero difference: scipy gives NaN, we 0
            else:
                ref = stats.ttest_rel(scores[i, users], scores[j, users]).pvalue
                assert got[b, k] == pytest.approx(ref, rel=1e-9)
    np.testing.assert_allclose(significance.bootstrap_dp_t(scores, counts), got.sum(axis=1))
    same = np.vstack([scores[0], scores[0]])
    assert significance.bootstrap_t_pvalues(same, counts)[:, 0].tolist() == [1.0] * 6


# ---- the paper's values -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(v.PAPER_FIG5))
def test_fig5_transcription_is_a_correlation_matrix(name):
    m = v.PAPER_FIG5[name].to_numpy()
    np.testing.assert_array_equal(m, m.T)  # a misread cell would break the symmetry
    np.testing.assert_array_equal(np.diag(m), 1.0)
    assert list(v.PAPER_FIG5[name].index) == list(v.METRICS)


def test_fig1_and_table3_transcription():
    m = v.PAPER_FIG1.to_numpy()
    np.testing.assert_array_equal(m, m.T)
    assert m.min() == pytest.approx(v.PAPER_NDCG_CUTOFF_MIN)  # "all the correlations are at least 0.9"
    assert v.PAPER_TABLE3.shape == (3, 7) and v.PAPER_PAIRS == 210
    # §7: "nDCG and precision (in this order)" lead on ML-1M; MRR is last there
    ml1m = v.PAPER_TABLE3.loc["ML-1M"].sort_values()
    assert list(ml1m.index[:2]) == ["nDCG", "P"] and ml1m.index[-1] == "RR"


def test_ledger_covers_every_figure_and_table3():
    ids = v.LEDGER.ids
    assert len(ids) >= 20 and len(set(ids)) == len(ids)
    sources = " ".join(c.source for c in v.LEDGER)
    for fig in range(1, 9):
        assert f"Fig. {fig}" in sources, fig
    assert "Table 3" in sources
    rows = {c.paper_dataset for c in v.LEDGER if c.source.endswith("Table 3")}
    assert {"ML-1M", "LibraryThing", "BeerAdvocate"} <= rows


# ---- the ledger on planted results ----------------------------------------------------------------

CUT = [5, 50, 100]
MEASURES = [f"{m}@{k}" for m in v.METRICS for k in CUT]
SYSTEMS = [f"s{k}" for k in range(6)]
B = 599  # the quick profile's resamples: with fewer, a 95 % BC end of skewed replicates is open


def _planted(robust=None, popular=None, dp=None, seed=0, dp_noise=0.01, n_boot=B,
             dataset="ml-100k"):
    """Results whose robustness (mean τ) and DP per metric at @100 are planted; the rest is plain."""
    rng = np.random.default_rng(seed)
    robust = {**{m: 0.8 for m in v.METRICS}, **(robust or {})}
    popular = {**{m: 0.8 for m in v.METRICS}, **(popular or {})}
    dp = {**{m: 2.0 for m in v.METRICS}, **(dp or {})}
    base = np.arange(len(SYSTEMS), dtype=float)
    means = np.stack([base + 0.01 * rng.random(len(SYSTEMS)) for _ in MEASURES])  # measures × systems
    level = lambda table, ms: table[ms.split("@")[0]] if ms.endswith("@100") else 0.7
    shares, samples = [1.0, 0.5, 0.1], 4
    rows = []
    for j, (p, s) in enumerate(itertools.product(shares, range(samples))):
        for ms in MEASURES:
            tau = 1.0 if p == 1.0 else level(robust, ms) + rng.normal(0, 0.005)
            rows.append({"mask": j, "share": p, "sample": s, "kept_rows": p, "measure": ms, "tau": tau})
    sparsity = pd.DataFrame(rows)
    sboot = np.array([[[1.0 if p == 1.0 else level(robust, ms) + rng.normal(0, 0.005) for ms in MEASURES]
                       for p in shares] for _ in range(n_boot)])
    pshares = [1.0, 0.9, 0.8]
    prow = [{"mask": j, "share": p, "sample": 0, "kept_rows": p, "measure": ms,
             "tau": 1.0 if p == 1.0 else level(popular, ms)} for j, p in enumerate(pshares) for ms in MEASURES]
    pboot = np.array([[[1.0 if p == 1.0 else level(popular, ms) + rng.normal(0, 0.005) for ms in MEASURES]
                       for p in pshares] for _ in range(n_boot)])
    # a bootstrap's replicates are centred on the value they resample (no planted bias): each
    # share's replicates are moved to the mean τ over its masks
    point = sparsity.groupby(["share", "measure"])["tau"].mean()
    for i, p in enumerate(shares):
        for k, ms in enumerate(MEASURES):
            sboot[:, i, k] += point[(p, ms)] - sboot[:, i, k].mean()
    dps = pd.Series({ms: dp[ms.split("@")[0]] if ms.endswith("@100") else 3.0 for ms in MEASURES})
    return {
        "dataset": dataset, "systems": SYSTEMS, "metrics": list(v.METRICS), "cutoffs": CUT, "deep": 100, "measures": MEASURES,
        "n_pairs": 15, "degenerate": {},
        "system_means": pd.DataFrame(means.T, index=SYSTEMS, columns=MEASURES),
        "boot_means": means[None] + rng.normal(0, 0.001, (n_boot, *means.shape)),
        "sparsity": sparsity, "popularity": pd.DataFrame(prow), "popularity_boot": pboot,
        "sparsity_boot": sboot,
        "dp": dps, "dp_t": dps.copy(),
        "dp_t_boot": pd.DataFrame(dps.to_numpy()[None] + rng.normal(0, dp_noise, (n_boot, len(MEASURES))), columns=MEASURES),
        "significant": pd.Series(14, index=MEASURES),
        "mc_check": {"measure": "nDCG@100", "a": "s0", "b": "s1", "users": 12, "exact": 0.2, "mc": 0.201,
                     "se": 0.004, "n_permutations": 10_000},
        "metric_check": {"gaps": {f"{m}@{k}": 0.0 for m in v.METRICS for k in (5, 100)}, "users": 50,
                         "systems": len(SYSTEMS), "cutoffs": [5, 100]},
        "data": {"users": 943, "items": 1682, "ratings": 100_000, "density": 0.063, "gini": 0.6},
    }


def _verdict(results, claim):
    return Verdict(v.LEDGER[claim].outcome(results).verdict)


@pytest.mark.parametrize("claim, planted, expected", [
    # precision most robust to sparsity: planted first, tied with nDCG, planted last
    ("valcarce2018.s7.p-most-robust", {"robust": {"P": 0.99}}, A),
    ("valcarce2018.s7.p-most-robust", {"robust": {"P": 0.95, "nDCG": 0.95}}, I),
    ("valcarce2018.s7.p-most-robust", {"robust": {"P": 0.5, "R": 0.9}}, D),
    # MRR least robust to popularity (an order read from the bottom)
    ("valcarce2018.fig7.mrr-least", {"popular": {"RR": 0.3}}, A),
    ("valcarce2018.fig7.mrr-least", {"popular": {"RR": 0.3, "AP": 0.3}}, I),
    ("valcarce2018.fig7.mrr-least", {"popular": {"RR": 0.99}}, D),
    # nDCG most discriminative (lowest DP)
    ("valcarce2018.tab3.ndcg-best", {"dp": {"nDCG": 0.1}}, A),
    ("valcarce2018.tab3.ndcg-best", {"dp": {"nDCG": 0.1, "P": 0.1}}, I),
    ("valcarce2018.tab3.ndcg-best", {"dp": {"nDCG": 5.0}}, D),
    # nDCG and precision lead together
    ("valcarce2018.tab3.ndcg-p-lead", {"dp": {"nDCG": 0.1, "P": 0.3}}, A),
    ("valcarce2018.tab3.ndcg-p-lead", {"dp": {"nDCG": 0.1, "P": 2.0}}, I),
    ("valcarce2018.tab3.ndcg-p-lead", {"dp": {"nDCG": 5.0, "P": 6.0}}, D),
    # every metric above 0.9 at half of the ratings
    # (400 resamples: Holm's first step over 7 metrics needs 1/(B + 1) <= 0.05/7)
    ("valcarce2018.fig6.half-above-0.9", {"robust": {m: 0.95 for m in v.METRICS}, "n_boot": 400}, A),
    ("valcarce2018.fig6.half-above-0.9", {"robust": {**{m: 0.95 for m in v.METRICS}, "RR": 0.9},
                                          "n_boot": 400}, I),
    ("valcarce2018.fig6.half-above-0.9", {"n_boot": 400}, D),
    # deeper cut-offs more robust to popularity (planted @100 levels against 0.7 at @5)
    ("valcarce2018.fig3.ndcg-deeper-robust", {"popular": {"nDCG": 0.9}}, A),
    ("valcarce2018.fig3.ndcg-deeper-robust", {"popular": {"nDCG": 0.7}}, I),
    ("valcarce2018.fig3.ndcg-deeper-robust", {"popular": {"nDCG": 0.5}}, D),
    # the paper's DP of precision on ML-1M (2.6 ± 0.15), ours rescaled from 15 to 210 pairs:
    # inside the margin with a tight interval; the same value with a wide interval is
    # inconclusive (a wider interval never agrees more); outside the margin
    ("valcarce2018.tab3.ml1m.p", {"dp": {"P": 2.6 * 15 / 210}, "dp_noise": 0.001}, A),
    ("valcarce2018.tab3.ml1m.p", {"dp": {"P": 2.6 * 15 / 210}, "dp_noise": 0.05}, I),
    ("valcarce2018.tab3.ml1m.p", {"dp": {"P": 1.0}}, D),
])
def test_planted_results_give_the_expected_verdict(claim, planted, expected):
    assert _verdict(_planted(**planted), claim) is expected


def test_the_whole_ledger_evaluates_on_planted_results():
    frame = v.LEDGER.evaluate(_planted(robust={"P": 0.99}), dataset="ml-100k", profile="quick")
    assert len(frame) == len(v.LEDGER)
    assert set(frame["verdict"]) <= {x.value for x in Verdict}
    nr = frame[frame["verdict"] == N.value]
    assert (nr["paper_dataset"].str.contains("LibraryThing|BeerAdvocate")).all()
    assert nr["reason"].str.contains("no LibraryThing|no BeerAdvocate").all()
    assert frame.set_index("claim").at["valcarce2018.s4.monte-carlo", "verdict"] == Verdict.HOLDS.value


def test_implicit_data_leave_bpref_claims_not_reproduced():
    r = _planted(dp={"bpref": 0.01})
    r["degenerate"] = {"bpref": "no judged non-relevant item", "infAP": "no judged non-relevant item"}
    for claim in ("valcarce2018.tab3.ml1m.bpref", "valcarce2018.fig6.bpref-least", "valcarce2018.tab3.bpref-poor",
                  "valcarce2018.fig5.ap-infap"):
        out = v.LEDGER[claim].outcome(r)
        assert out.verdict is N and "non-relevant" in out.reason
    # orders drop the two metrics and say so; bpref's planted low DP no longer wins
    out = v.LEDGER["valcarce2018.tab3.ndcg-best"].outcome(r)
    assert "bpref" not in (out.detail or "") and "left out" in out.reason


def test_rules_on_hand_made_estimates():
    e = lambda x, h=0.01: Estimate(x, x - h, x + h)
    assert v.rules.group_rule({"a": e(3), "b": e(2), "c": e(1)}, ["a", "b"]).verdict is A
    assert v.rules.group_rule({"a": e(3), "b": e(2), "c": e(1.995)}, ["a", "b"]).verdict is I
    assert v.rules.group_rule({"a": e(3), "b": e(1), "c": e(2)}, ["a", "b"]).verdict is D
    outs = {"x": v.rules.threshold_rule(e(0.95), 0.9, "above", "τ"), "y": v.rules.threshold_rule(e(0.8), 0.9, "above", "τ"),
            "z": v.rules.threshold_rule(e(0.91), 0.9, "above", "τ")}
    assert [o.verdict for o in outs.values()] == [A, D, I]
    assert {o.rule for o in outs.values()} == {"threshold"}


# ---- the study on a real subset --------------------------------------------------------------------

FAST = ["pop", "random", "ease-250", "wrmf-50"]
SMALL = {"cutoffs": [5, 10, 50, 100], "sparsity_shares": [1.0, 0.5, 0.1], "n_samples": 3,
             "popularity_shares": [1.0, 0.9, 0.8], "n_permutations": 500, "n_bootstrap": 40, "seed": 1}


@pytest.fixture(scope="module")
def subset(ml100k):
    users = np.sort(ml100k["user"].unique())[:300]
    return ml100k[ml100k["user"].isin(users)].reset_index(drop=True)


@pytest.fixture(scope="module")
def small_study(subset, tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("RECMETA_CACHE", str(tmp_path_factory.mktemp("runs")))
    try:
        yield v.study(subset, FAST, dataset="ml-100k-300", **SMALL)
    finally:
        mp.undo()


def test_study_returns_what_the_claims_need(small_study):
    r = small_study
    assert r["systems"] == FAST and r["n_pairs"] == 6 and r["deep"] == 100
    needs = {n for c in v.LEDGER for n in c.needs}
    assert needs <= set(r), needs - set(r)
    assert r["system_means"].shape == (4, 7 * 4)
    assert r["boot_means"].shape == (40, 28, 4)
    np.testing.assert_allclose(np.diag(r["tau_metrics"]), 1.0)
    sp = v.sparsity_curves(r)
    assert np.allclose(sp.loc[sp["share"] == 1.0, "tau"], 1.0)  # the full test set agrees with itself
    assert len(r["sparsity"]) == 3 * 3 * 28
    # two-level replicates: resamples × shares × measures; the full test set is τ = 1 in every
    # replicate; elsewhere the replicates centre near the mean τ over the masks, and vary
    sb = r["sparsity_boot"]
    assert sb.shape == (40, 3, 28)
    np.testing.assert_array_equal(sb[:, 0], 1.0)
    point = r["sparsity"].groupby(["share", "measure"], sort=False)["tau"]
    at_half = point.mean().loc[0.5].reindex(r["measures"]).to_numpy()
    assert np.nanmean(np.abs(np.nanmean(sb[:, 1], axis=0) - at_half)) < 0.1
    assert np.nanmean(np.nanstd(sb[:, 2], axis=0)) > 0
    kept = r["popularity"].drop_duplicates("mask").sort_values("share", ascending=False)["kept_rows"]
    assert kept.is_monotonic_decreasing and kept.iloc[-1] < 0.8  # popular items hold many ratings
    assert (r["dp"] >= 0).all() and (r["dp"] <= r["n_pairs"]).all()
    frame = v.LEDGER.evaluate(r, dataset="ml-100k-300", profile="quick")  # strict: no claim fails
    tested = frame[frame["verdict"] != N.value]
    assert len(tested) >= 30 and tested["reason"].str.len().gt(0).all()
    assert not r["degenerate"]


def test_study_scores_match_the_engine_and_infap_is_eq8(small_study, subset):
    from recmeta.data import splits

    r = small_study
    # an independent recomputation with the metric engine (trec_eval semantics) on the same split
    split = splits.holdout_per_user(subset, 0.2, seed=0)
    j = Judgments.from_frame(split.test, threshold=4)
    from recmeta import recommenders
    from recmeta.recommenders import roster

    frame = recommenders.make(roster.systems(FAST), split.train, dataset="ml-100k-300", split="holdout-0.2", seed=0,
                      depth=100, root=None)
    run = Runs.from_frame(frame, j)
    mats = score_matrices(j, run, ["AP@100", "P@10", "infAP@100", "nDCG@50"])
    for m in ("AP@100", "P@10", "nDCG@50"):
        np.testing.assert_allclose(r["system_means"][m].to_numpy(), aggregate(mats[m]), atol=1e-9)
    # trec_eval's infAP equals AP; eq. 8's does not
    np.testing.assert_allclose(aggregate(mats["infAP@100"]), aggregate(mats["AP@100"]), atol=1e-4)
    assert r["infap"]["trec_gap_max"] < 1e-4
    assert r["infap"]["pooled_gap_mean"] > 0.01
    assert not np.allclose(r["system_means"]["infAP@100"], r["system_means"]["AP@100"], atol=1e-3)


def test_pooled_infap_by_hand():
    # one user; relevant items a, c; the list a, x (unrated), c: eq. 8 counts x as pooled but
    # unjudged: E[P@3] = 1/3 + (2/3)(1 + ε)/(1 + 2ε); AP counts x as non-relevant: P@3 = 2/3
    from recmeta.metrics import score_matrix

    test = pd.DataFrame({"user": [1, 1], "item": ["a", "c"], "rating": [5.0, 4.0]})
    j = Judgments.from_frame(test, threshold=4)
    run = Runs.from_frame(pd.DataFrame({"system": "s", "user": 1, "item": ["a", "x", "c"],
                                        "score": [3.0, 2.0, 1.0]}), j)
    eps = 1e-5
    hand = (1.0 + 1 / 3 + (2 / 3) * (1 + eps) / (1 + 2 * eps)) / 2
    assert score_matrix(j, run, "infAP@100", infap="pooled")[0, 0] == pytest.approx(hand)
    assert score_matrix(j, run, "infAP@100")[0, 0] == pytest.approx((1 + 2 / 3) / 2, abs=1e-5)


def test_study_on_implicit_feedback(subset, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RECMETA_CACHE", str(tmp_path_factory.mktemp("runs-implicit")))
    clicks = subset.drop(columns=["rating"])
    r = v.study(clicks, FAST + ["bias"], dataset="clicks-300", **SMALL)
    assert r["implicit"] and r["left_out"] == ["bias"] and r["n_nonrelevant"] == 0
    assert set(r["degenerate"]) == {"bpref", "infAP"}
    frame = v.LEDGER.evaluate(r, dataset="clicks-300", profile="quick").set_index("claim")
    assert frame.at["valcarce2018.tab3.ml1m.bpref", "verdict"] == N.value
    assert "non-relevant" in frame.at["valcarce2018.tab3.ml1m.bpref", "reason"]
    assert frame.at["valcarce2018.tab3.ml1m.p", "verdict"] != N.value


# ---- the chapter ------------------------------------------------------------------------------------


def test_chapter_has_no_typed_result_numbers():
    found = prose.typed_numbers((ROOT / "notebooks" / "robustness.md").read_text())
    assert not found, "\n".join(str(f) for f in found)


# ---- settings, tables and text ----------------------------------------------------------------------


def test_settings_resolve_each_profile():
    from recmeta.metaeval import incompleteness
    from recmeta.recommenders import roster

    full = v.Settings.resolve("full")
    assert full.systems == tuple(roster.names()) and full.n_samples == 50
    assert full.n_permutations == 100_000 and full.n_bootstrap == 1000
    assert len(full.sparsity_shares) == 20 and len(full.popularity_shares) == 21  # §5's grids
    np.testing.assert_allclose(full.sparsity_shares, incompleteness.sparsity_shares())
    quick = v.Settings.resolve("quick", n_samples=None, depth=50, threshold=None)
    assert quick.systems == v.QUICK_SYSTEMS and quick.n_samples == 5 and quick.depth == 50
    assert quick.threshold is None  # None is passed on where the profile has no default
    assert v.Settings.resolve("quick", systems=["pop", "bias", "random"]).systems == ("pop", "bias",
                                                                                      "random")
    second = quick.second("quick")
    assert second.n_samples == 3 and second.sparsity_shares == (1.0, 0.5, 0.05)
    # the second dataset's quick run leaves out EASE (its solve is cubic in the items), only it
    assert "ease-250" in quick.systems and v.QUICK_SECOND_SKIPS == ("ease-250",)
    assert second.systems == tuple(s for s in quick.systems if s != "ease-250")
    assert quick.second("full") == quick
    # the quick resamples let Holm's first step pass over Fig. 4's 30 pairs of cut-offs (the
    # largest graded conjunction), and over the 7 metrics; both datasets draw as many
    assert 1 / (quick.n_bootstrap + 1) <= 0.05 / 30 < 1 / quick.n_bootstrap
    assert second.n_bootstrap == quick.n_bootstrap
    assert second.n_permutations == quick.n_permutations and full.second("full") == full
    # the two-level bootstrap takes 10 of the 50 masks per share in the full profile, all 5 in
    # the quick one; a bad bound is refused before any work
    assert full.boot_masks == 10 and quick.boot_masks is None
    assert full.study_kwargs()["boot_masks"] == 10
    with pytest.raises(ValueError, match="boot_masks"):
        v.analyse(None, None, boot_masks=0)
    kwargs = quick.study_kwargs()
    assert "systems" not in kwargs and kwargs["cutoffs"] == list(v.CUTOFFS)
    import inspect
    assert set(kwargs) <= set(inspect.signature(v.study).parameters)
    with pytest.raises(ValueError, match="unknown profile"):
        v.Settings.resolve("fast")
    with pytest.raises(TypeError, match="unknown setting"):
        v.Settings.resolve("quick", n_sample=3)
    with pytest.raises(TypeError, match="must be a list"):
        v.Settings.resolve("quick", systems="pop")


def test_tables_of_the_small_study(small_study):
    r = small_study
    scores = v.tables.system_scores(r)
    assert list(scores.columns) == ["P@100", "Recall@100", "MAP@100", "nDCG@100", "MRR@100",
                                    "bpref@100", "infAP@100"]
    assert scores["nDCG@100"].is_monotonic_decreasing
    low = v.tables.lowest_cutoff_taus(r)
    for m in v.METRICS:  # the lowest τ off the diagonal, found independently
        t = r["tau_cutoffs"][m].to_numpy()
        assert low.at[v.LABELS[m], "lowest τ"] == pytest.approx(t[~np.eye(len(t), dtype=bool)].min())
    by_test = v.tables.dp_by_test(r)
    np.testing.assert_allclose(by_test["permutation"], r["dp"][v.tables.deep_measures(r)])
    t3 = v.tables.table3(r, v.summary(r))
    np.testing.assert_allclose(t3["DP"], r["dp"][v.tables.deep_measures(r)])
    np.testing.assert_allclose(t3[f"DP × 210/{r['n_pairs']}"], t3["DP"] * 210 / r["n_pairs"])
    assert t3.at["MRR", "paper: ML-1M"] == 15.5
    dp = v.tables.dp_by_cutoff(r)
    assert len(dp) == 7 * 4 and (dp["low"] <= dp["DP"] + 1e-12).all()


def test_text_of_the_small_study(small_study):
    r = small_study
    ledger = v.LEDGER.evaluate(r, dataset="ml-100k-300", profile="quick")
    row = ledger.set_index("claim").loc["valcarce2018.s6.p-5-100"]
    cited = v.text.cite(ledger, "s6.p-5-100", v.text.PAPER)
    assert f"**{row['verdict']}**" in cited and "0.76 ± 0.030 (ML-1M)" in cited
    facts = v.text.data_facts(r)
    assert f"{r['n_evaluated']:,} of the {r['n_users']:,} test users" in facts
    assert f"{len(FAST)} systems against the paper's 21" in facts
    dp = v.tables.dp_by_cutoff(r)
    texts = [facts, v.text.infap(r), v.text.cutoff_agreement(r, ledger), v.text.masks(r),
             v.text.cutoff_robustness(ledger), v.text.monte_carlo(r, ledger),
             v.text.cutoff_dp(r, ledger, dp), v.text.metric_agreement(r, ledger),
             v.text.metric_robustness(ledger), v.text.metric_dp(r, ledger),
             v.text.second_dataset(r, ledger, ledger), v.text.differences(r),
             v.text.tally({"a": ledger})]
    for t in texts:
        assert t and "{" not in t and "nan" not in t.lower().replace("nanmean", ""), t
    assert "9 random test sets and 3 popularity test sets" in v.text.masks(r)  # 3 shares × 3
    graded = ~ledger["verdict"].isin([N.value, Verdict.NOT_GRADED.value])
    tested = int((graded & (ledger["kind"] != "derivation")).sum())
    assert f"Of the {tested} empirical claims graded on both datasets, {tested} get" in \
        v.text.second_dataset(r, ledger, ledger)
    assert v.text.tally({"a": ledger}).startswith(f"On a, the {len(ledger)} claims:")
    from recmeta.metaeval.significance import monte_carlo_se
    assert monte_carlo_se(0.05, 100_000) == pytest.approx(np.sqrt(0.05 * 0.95 / 1e5))
    assert monte_carlo_se(0.05, 100_000, doubled=True) == pytest.approx(np.sqrt(0.05 * 1.95 / 1e5))
    with pytest.raises(KeyError, match="no claim"):
        v.text.cite(ledger, "fig9.none")
