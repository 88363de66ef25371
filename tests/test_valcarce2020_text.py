"""The assessing-ranking-metrics chapter's settings, tables and sentences (Valcarce et al. 2020).

The profile's defaults and their overrides; each sentence checked against values computed here
by other means (hand-built frames, or the study's own frames read directly); the tables' shapes
and values on a small pooled study.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from recmeta.book.costs import Size
from recmeta.ledger import Estimate, format_estimate, format_order, top_set
from recmeta.papers import valcarce2020 as v20
from recmeta.papers.valcarce2020 import text
from recmeta.recommenders import roster

# ---- settings --------------------------------------------------------------------------------


def test_settings_resolve_the_profiles_defaults():
    q = v20.Settings.resolve("quick")
    assert q.quick and q.k == 5 and q.folds == [0, 1]
    assert q.systems == ["random", "pop", "bias", "kr-x", "wrmf-50", "ease-250"]
    assert q.shares == [1.0, 0.75, 0.5, 0.25, 0.1]
    assert q.popular_shares == [1.0, 0.95, 0.9, 0.85, 0.8]
    assert (q.n_samples, q.n_permutations, q.n_boot, q.second_samples) == (5, 2_000, 1_000, 3)
    assert q.second_systems == ["random", "pop", "bias", "kr-x", "wrmf-50"]
    f = v20.Settings.resolve("full", k=4)
    assert not f.quick and f.folds == [0, 1, 2, 3]
    assert f.systems == [n for n in roster.names() if n not in ("flexmf-warp", "iknn-50")]
    # 100 % down to 5 % by 5 points, then 1 %: the paper's grid
    assert len(f.shares) == 21 and f.shares[0] == 1.0 and f.shares[-2:] == [0.05, 0.01]
    np.testing.assert_allclose(np.diff(f.shares[:-1]), -0.05)
    assert len(f.popular_shares) == 21 and f.popular_shares[-1] == pytest.approx(0.8)
    assert (f.n_samples, f.n_permutations, f.n_boot, f.second_samples) == (50, 100_000, 1_000, 10)
    assert len(f.second_systems) == 9
    assert q.boot_masks is None and f.boot_masks == 10


def test_settings_keep_what_is_given_and_refuse_bad_values():
    s = v20.Settings.resolve("full", systems=["pop"], folds=[3], shares=[1.0, 0.5],
                             popular_shares=[1.0, 0.9], n_samples=2, n_permutations=10,
                             n_boot=7, second_systems=["bias"], second_folds=[2],
                             second_samples=1)
    assert (s.systems, s.folds, s.shares, s.popular_shares) == (["pop"], [3], [1.0, 0.5],
                                                                [1.0, 0.9])
    assert (s.n_samples, s.n_permutations, s.n_boot) == (2, 10, 7)
    assert (s.second_systems, s.second_folds, s.second_samples) == (["bias"], [2], 1)
    assert s.scheme_shares == {"ratings": [1.0, 0.5], "items": [1.0, 0.5],
                               "popular": [1.0, 0.9], "users": [1.0, 0.5],
                               "large-users": [1.0, 0.5]}
    with pytest.raises(ValueError, match="profile 'fast'"):
        v20.Settings.resolve("fast")
    with pytest.raises(ValueError, match="systems must not be empty"):
        v20.Settings.resolve("quick", systems=[])


def test_settings_cost_plans_are_the_studys():
    s = v20.Settings.resolve("quick")
    size = Size(users=943, items=1682, ratings=100_000)
    direct = v20.cost_plan(size, s.systems, folds=s.folds, shares=s.scheme_shares,
                           n_samples=s.n_samples, n_permutations=s.n_permutations)
    assert s.cost_plan(size).steps == direct.steps
    second = v20.cost_plan(size, s.second_systems, folds=s.second_folds, shares=s.scheme_shares,
                           n_samples=s.second_samples, n_permutations=s.n_permutations)
    assert s.second_cost_plan(size).steps == second.steps


def test_profile_note_states_the_sizes():
    s = v20.Settings.resolve("quick")
    note = text.profile_note(s)
    assert note.startswith("This page ran the **quick** profile: 6 systems, fold(s) 0, 1 of 5; ")
    assert "5 shares from 100% down to 10%" in note
    assert "5 shares of items from 100% down to 80%" in note
    assert "5 random masks per share; 2,000 permutations per test; 1000 bootstrap" in note
    assert "The paper used 21 systems, 5 folds, 50 samples per share and 100,000" in note


# ---- sentences from hand-built frames ----------------------------------------------------------


def ledger_frame(verdicts: list[str], kinds: list[str] | None = None) -> pd.DataFrame:
    return pd.DataFrame({
        "claim": [f"c{i}" for i in range(len(verdicts))],
        "statement": [f"Claim {i}" for i in range(len(verdicts))],
        "source": "§1", "paper_value": "P", "paper_dataset": "ML-1M", "ours": np.nan,
        "low": np.nan, "high": np.nan, "ours_text": "", "method": "",
        "kind": kinds or ["transfer"] * len(verdicts),
        "verdict": verdicts, "reason": [f"because {i}" for i in range(len(verdicts))],
        "dataset": "ml-100k", "profile": "quick"})


def test_tally_and_differences():
    frame = ledger_frame(["agrees", "differs", "agrees", "inconclusive", "not reproduced here",
                          "differs", "holds", "shown, not graded"],
                         ["transfer"] * 6 + ["derivation", "transfer"])
    assert text.tally(frame, "ml-100k", "quick") == (
        "On ml-100k (quick profile), of 8 claims: derivations (1): 1 hold; transfers (7): "
        "2 agree, 2 differ, 1 inconclusive, 1 shown, not graded, 1 not reproduced here.")
    d = text.differences(frame)
    lines = d.split("\n")
    assert lines[0] == "The claims our results contradict, with the ledger's reason:"
    assert lines[2:] == ["- *Claim 1* (§1): **differs**: because 1.",
                         "- *Claim 5* (§1): **differs**: because 5."]
    assert text.differences(ledger_frame(["agrees"])) == "No claim is contradicted by our results."


def test_causes_name_the_weak_systems_and_the_quick_step():
    curves = pd.DataFrame({"scheme": ["ratings", "popular"], "aggregate": ["mean", "gmean"],
                           "metric": ["P@100", "RR@100"], "share": [0.5, 0.8],
                           "tau": [0.9, 0.4]})
    quick = text.causes(["random", "pop", "wrmf-50", "ease-250"], "ml-100k", True,
                        curves).split("\n")
    assert len(quick) == 5 and all(line.startswith("- **") for line in quick)
    assert "weak baselines (random, pop: random" in quick[1]
    # 2 weak of 4 systems: 4 of the 6 pairs cross, so τ >= (8 - 6)/6 if they keep their order
    assert "the 4 pairs of a weak baseline and another system" in quick[1]
    assert "= 0.33" in quick[1]
    assert ("The lowest mean τ of any curve here is 0.400 (GMRR, most popular items removed, "
            "80% kept).") in quick[1]
    assert "ml-100k is run instead" in quick[2]
    assert "hurts more" not in "\n".join(quick)  # no outcome presumed
    # four systems: six pairs, one swapped pair moves τ by 2/6
    assert f"moves τ by {2 / 6:.2f}:" in quick[4]
    full = text.causes(["wrmf-50", "ease-250"], "ml-latest-small", False).split("\n")
    assert len(full) == 4 and full[1].startswith("- **Systems.** Our 2 systems differ from")


def test_dp_order_never_prints_an_order_its_intervals_contradict():
    """The order sentence once named the best DP and every metric overlapping it as "lowest",
    then the rest: Recall, whose wide interval overlapped the best, was listed among the lowest
    with DP 0.49 while MRR, at 0.0655 and clear of the best, was not."""
    est = {"nDCG": Estimate(0.01, 0.0, 0.02), "RR": Estimate(0.0655, 0.05, 0.08),
           "R": Estimate(0.49, 0.0, 1.0), "P": Estimate(2.0, 1.9, 2.1)}
    # the former rule: the best and everything overlapping it, so Recall but not MRR
    assert top_set(est, higher_is_better=False) == ("nDCG", "R")
    said = text.dp_order(est)
    names = re.findall(r"nDCG|MRR|Recall|P\b", said.split(":", 1)[1])
    values = {"nDCG": 0.01, "MRR": 0.0655, "Recall": 0.49, "P": 2.0}
    # every metric is named, in increasing DP
    assert names == sorted(values, key=values.get)
    # "<" only between groups the intervals separate: Recall overlaps everything below P
    assert said.endswith("nDCG ≈ MRR ≈ Recall < P.")


def test_rating_removal_reads_the_change_table():
    change = pd.DataFrame({"full": [0.1, 0.5, 0.2, 0.3, 0.4, 0.6],
                           "50% kept": [0.05, 0.2, 0.1, 0.3, 0.3, 0.6],
                           "10% kept": [0.01, 0.6, 0.01, 0.01, 0.01, 0.01]},
                          index=["P", "Recall", "MRR", "ERR", "nDCG", "bpref"])
    change["relative change at the middle share"] = change["50% kept"] / change["full"] - 1
    got = text.rating_removal(change, [1.0, 0.75, 0.5, 0.1])
    assert got.startswith("From the full test set to 50% of the ratings, mean precision changes "
                          "by -50.0%, recall by -60.0%, MRR by -50.0%, ERR by +0.0% and nDCG by "
                          "-25.0%. ")
    assert "At 10%, the mean of Recall is *above* its full value." in got
    assert "bpref" not in got
    change.loc["bpref", "10% kept"] = 0.9
    assert "the mean of Recall, bpref is *above*" in text.rating_removal(change, [1.0, 0.5, 0.1])
    assert "For bpref a likely reason" in text.rating_removal(change, [1.0, 0.5, 0.1])


def test_precision_line_counts_the_shares_inside_the_band():
    ep = pd.DataFrame({"share": [1.0, 0.5, 0.25], "observed": [1.0, 0.6, 0.4],
                       "low": [1.0, 0.55, 0.3], "high": [1.0, 0.65, 0.45],
                       "expected": [1.0, 0.6, 0.5]})
    got = text.precision_line(ep)
    assert got.startswith("At 25% of the ratings the observed ratio is 0.400 [0.300, 0.450], the "
                          "naive line gives 0.250 and the expectation with dropping topics 0.500.")
    # below 1: the expectation is inside the band at share 0.5 only, the naive line nowhere
    assert got.endswith("Over the 2 shares below the full test set, the band contains the "
                        "corrected expectation at 1 and the naive line at 0.")


def test_datasets_and_verdict_changes():
    table = pd.DataFrame({"a": {"ratings per user": 100.0, "test ratings per user and fold": 20.0,
                                "density": 0.06},
                          "b": {"ratings per user": 160.0, "test ratings per user and fold": 8.0,
                                "density": 0.02}})
    assert text.datasets(table, "a", "b") == (
        "b has more ratings per user than a (160 against 100), fewer test ratings per user in "
        "each fold (8.0 against 20.0) and is sparser (2.00% against 6.00% of the user–item "
        "pairs rated).")
    first, second = ledger_frame(["agrees", "differs"]), ledger_frame(["agrees", "inconclusive"])
    side = v20.verdicts_side_by_side(first, second, "a", "b")
    assert side.columns.tolist() == ["claim", "source", "a", "b"]
    assert text.verdict_changes(side) == ("The verdict changes between the two datasets for 1 "
                                          "of 2 claims: Claim 1 (differs → inconclusive).")
    assert text.verdict_changes(v20.verdicts_side_by_side(first, first, "a", "b")).endswith(
        "for 0 of 2 claims.")


def test_middle_share():
    assert v20.tables.middle_share([1.0, 0.75, 0.5, 0.25]) == 0.5
    assert v20.tables.middle_share([1.0, 0.8, 0.3]) == 0.3
    with pytest.raises(ValueError, match="no share below 1"):
        v20.tables.middle_share([1.0])


# ---- tables and sentences on a small study -----------------------------------------------------


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(11)
    tests, runs = [], []
    for _ in range(2):
        rows, lists = [], []
        for u in range(50):
            items = rng.choice(70, rng.integers(3, 12), replace=False)
            rows.append(pd.DataFrame({"user": u, "item": items,
                                      "rating": rng.integers(1, 6, items.size) * 1.0}))
            for s in range(4):
                good = items[rng.random(items.size) < 0.25 * s]
                rest = rng.choice(np.setdiff1d(np.arange(80), good), 20 - good.size,
                                  replace=False)
                lists.append(pd.DataFrame({"system": f"s{s}", "user": u,
                                           "item": np.r_[good, rest], "rank": np.arange(1, 21)}))
        tests.append(pd.concat(rows))
        runs.append(pd.concat(lists))
    study = v20.pool_folds(tests, runs, threshold=4, max_grade=5)
    shares = [1.0, 0.5, 0.2]
    res = v20.run(study, shares={s: shares for s in v20.SCHEMES}, n_samples=3, seed=2,
                  n_permutations=200, cutoff=20)
    return study, res, res.ledger_inputs(n_boot=20), shares


def test_tables_on_a_small_study(small):
    _, res, inputs, shares = small
    labels = [v20.label(m) for m in res.measures]
    dp = v20.dp_table(res, inputs, 0.05)
    assert dp.index.tolist() == labels
    np.testing.assert_allclose(dp["DP (users)"],
                               res.pvalues.groupby("metric", sort=False)["p"].sum())
    sig = [int((res.pvalues.loc[res.pvalues.metric == m, "p"] <= 0.05).sum()) for m in res.measures]
    assert dp["pairs with p ≤ 0.05"].tolist() == sig
    change = v20.change_table(res, shares)
    assert change.columns.tolist() == ["full", "50% kept", "20% kept",
                                       "relative change at the middle share"]
    a = res.absolute
    p_half = a[(a.scheme == "ratings") & (a["aggregate"] == "mean") & (a.share == 0.5)
               & (a.metric == "P@20")]["value"].item()
    assert change.loc["P", "50% kept"] == pytest.approx(p_half)
    assert change.loc["P", "full"] == pytest.approx(res.reference["mean"]["P@20"].mean())
    area = v20.area_table(res)
    assert area.index.tolist() == labels and area.shape == (9, 10)
    s = res.summary()
    got = s[(s.scheme == "items") & (s["aggregate"] == "gmean") & (s.metric == "RR@20")]
    assert area.loc["MRR", ("gmean", "items")] == pytest.approx(got["mean_tau"].item())
    means = res.means_table()
    assert means.columns[:9].tolist() == labels and means.columns[9] == "GP"
    assert (np.diff(means["nDCG"].to_numpy()) <= 0).all()


def test_sentences_on_a_small_study(small):
    study, res, inputs, _ = small
    trec = v20.scorer(study, 20, infap="trec_eval")
    gaps = v20.scorer_check(study, trec, share=0.4, seed=1)
    assert gaps.index.tolist() == ["full test sets", "40% of the ratings"]
    # the pass over judged positions is the engine's: every gap is zero
    assert gaps.drop(columns=v20.tables.INFAP_GAP).to_numpy().max() == pytest.approx(0, abs=1e-12)
    said = text.scorer_check(gaps, 0.4)
    assert "random 40% of the ratings: 0.0e+00 over the nine metrics" in said
    judged = text.judged(study, trec, 20)
    assert judged.startswith(f"{len(study.topics):,} topics (50 users over 2 fold(s))")
    est = v20.judged_estimate(v20.judged_share(study, 20))
    assert format_estimate(est) in judged
    dp_est = v20.tables.dp_estimates(inputs)
    order = format_order({v20.label(m): e for m, e in zip(res.measures, dp_est.values())},
                         descending=False)
    power = text.discriminative_power(res, inputs)
    assert power.startswith("6 system pairs (the paper: 210).")
    assert f"lowest first (≈: intervals overlapping; <: separated): {order}." in power
    assert "GF1" in text.gf1_apart(inputs) and "lowest first" in text.gf1_apart(inputs)
    assert "τ(MAP, GMAP) = " in text.arith_geo(res, inputs)
    gp_gf1 = res.tau("gmean").loc["P@20", "F1@20"]
    assert f"Our τ(GP, GF1) is {gp_gf1:.2f}." in text.arith_geo(res, inputs)
    half = res.curves[(res.curves.share == 0.5) & (res.curves.scheme == "ratings")
                      & (res.curves["aggregate"] == "mean")]
    assert f"{half.tau.min():.3f}" in text.half_ratings(res)
    res_no_half = v20.Results(**{**res.__dict__, "curves": res.curves[res.curves.share != 0.5]})
    assert text.half_ratings(res_no_half) == "The grid of shares has no point at one half."
