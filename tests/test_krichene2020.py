"""The sampled-metrics chapter's package (recmeta.papers.krichene2020): the paper's numbers, the
claims and their verdict logic, checked on the running example and on synthetic runs whose answers are known.
"""

from __future__ import annotations

import functools
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest

from recmeta import papers, sampled
from recmeta.ledger import prose
from recmeta.papers import krichene2020 as kr

ROOT = Path(__file__).resolve().parents[1]


def test_ledger_is_registered_with_enough_distinct_claims():
    ledger = papers.get("sampled-metrics")
    assert ledger is kr.LEDGER
    assert len(ledger) >= 25
    assert len(set(ledger.ids)) == len(ledger)
    assert all(c.id.startswith("krichene2020.") and c.source for c in ledger)


def test_printed_tables_are_consistent_with_the_papers_own_statements():
    # §6.3: under the rank estimate Recall@10 and NDCG@10 are identical (Table 3 prints the same numbers)
    for s in "XYZ":
        assert kr.TABLE3["Recall@10"][s][2] == kr.TABLE3["NDCG@10"][s][2]
    # §6.2: exact Z > Y > X on the top-heavy metrics, sampled Recall reversed
    for m in kr.TOP_HEAVY:
        assert kr.paper_order(m) == "Z > Y > X"
    assert kr.paper_order("Recall@10", 1) == "X > Y > Z"
    # Table 4 has 12 rows of 7 estimators, counts out of 100
    rows = [v for pair in kr.TABLE4.values() for v in pair.values()]
    assert len(rows) == 12 and all(len(r) == 7 and all(0 <= x <= 100 for x in r) for r in rows)
    # the example's Table 1 holds what its text says: A best on AUC, C on the rest
    assert max(kr.TABLE1, key=lambda s: kr.TABLE1[s][0]) == "A"
    assert all(max(kr.TABLE1, key=lambda s: kr.TABLE1[s][i]) == "C" for i in (1, 2, 3))


def test_order_text_groups_values_within_the_tolerance():
    assert kr.order_text({"B": 0.01009, "A": 0.01, "C": 0.1}, tol=0.0005) == "C > B ≈ A"
    assert kr.order_key("C > B ≈ A") == kr.order_key("C > A ≈ B") != kr.order_key("C > A > B")
    assert kr.order_text({"X": 3, "Y": 2, "Z": 1}) == "X > Y > Z"


# The expensive inputs are built once per test session (functools.cache) and shared by the
# module fixtures of this file and of test_krichene2020_verdicts.py, which imports them; no test
# changes them.
@functools.cache
def _toy_results():
    toy = kr.ToyInputs(kr.TOY_RANKS, kr.TOY_N, kr.TOY_M, True)
    sim = sampled.sampled_evaluation(
        {k: np.array(v) for k, v in kr.TOY_RANKS.items()},
        kr.TOY_N,
        kr.TOY_M,
        list(kr.TOY_METRICS),
        ["sampled"],
        repetitions=300,
        seed=5,
        progress=False,
    )
    return MappingProxyType({"toy": toy, "toy_sampled": sim, "settings": kr.Settings(499, 0.95, 0)})


@pytest.fixture(scope="module")
def toy_results():
    return _toy_results()


@pytest.mark.parametrize(
    "claim",
    [
        "table1",
        "example.best",
        "table2.means",
        "table2.sd",
        "s4.2.ap-reversed",
        "s4.2.only-auc",
        "fig2.ap-small-m",
        "fig2.ap-200",
        "fig2.ap-500",
        "fig2.ap-large",
        "s4.4.4.m1",
    ],
)
def test_the_running_example_reproduces(toy_results, claim):
    out = kr.LEDGER["krichene2020." + claim].outcome(toy_results)
    assert out.verdict == papers.Verdict.AGREES, out.reason


def test_table2_claim_catches_a_wrong_m(toy_results):
    wrong = dict(toy_results, toy=kr.ToyInputs(kr.TOY_RANKS, kr.TOY_N, 50, True))
    out = kr.LEDGER["krichene2020.table2.means"].outcome(wrong)
    assert out.verdict == papers.Verdict.NOT_REPRODUCED and "m = 50" in out.reason


def test_recall_threshold_is_computed_from_the_law():
    m = kr.recall_consistent_from(kr.ToyInputs(kr.TOY_RANKS, kr.TOY_N, kr.TOY_M, True))
    # independent check with scipy: at m the expected recall of B is within 0.0005 of A's (both 0 exactly)
    from scipy import stats

    def recall(r, mm):
        return np.mean(stats.binom.cdf(9, mm, (np.array(r) - 1) / (kr.TOY_N - 1)))

    assert abs(recall(kr.TOY_RANKS["B"], m) - recall(kr.TOY_RANKS["A"], m)) <= 0.0005
    assert abs(recall(kr.TOY_RANKS["B"], m - 100) - recall(kr.TOY_RANKS["A"], m - 100)) > 0.0005


def _synthetic_standing(seed=0, users=300, items=400):
    """X, Y, Z with known exact orders: Z best at the top but scoring most items 0 (tie blocks),
    X spread out and never excellent, Y between."""
    rng = np.random.default_rng(seed)
    u, i = np.meshgrid(np.arange(users), np.arange(items), indexing="ij")
    target = rng.integers(0, items, users)
    is_t = i == target[:, None]
    noise = rng.normal(size=u.shape)
    frames = {
        "X": np.where(is_t, 1.2, 0.0) + noise,
        "Y": np.where(is_t, 1.8, 0.0) + 1.3 * noise,
        "Z": np.where(rng.random(u.shape) < 0.7, 0.0, np.where(is_t, 3.0, 0.0) + noise),
    }
    scores = {
        k: pd.DataFrame({"user": u.ravel(), "item": i.ravel(), "score": v.ravel()})
        for k, v in frames.items()
    }
    held = pd.DataFrame({"user": np.arange(users), "item": target})
    return sampled.standing(scores, held)


@functools.cache
def _real_results():
    st = _synthetic_standing()
    study = kr.study_from_standing(
        "synthetic",
        st,
        m=20,
        repetitions=30,
        seed=1,
        ms=[5, 40],
        estimators=["sampled", "rank-estimate", "BV 1", "BV 0.1", "BV 0.01"],
    )
    return MappingProxyType(
        {**_toy_results(), "real": study, "real_order": study.order, "real_multi": None}
    )


@functools.cache
def _tie_frames():
    return MappingProxyType(
        kr.by_tie_rule(
            _real_results(), list(sampled.TIE_RULES), dataset="synthetic", profile="quick"
        )
    )


@pytest.fixture(scope="module")
def real_results():
    return _real_results()


@pytest.fixture(scope="module")
def tie_frames():
    """The ledger on the synthetic study under every tie rule, each rule evaluated once
    (kr.by_tie_rule); the study's own rule's frame is the ledger evaluated on the results."""
    return _tie_frames()


@pytest.fixture(scope="module")
def tie_table(real_results, tie_frames):
    """The verdicts of the real-data claims under every tie rule, read off the frames."""
    return kr.tie_dependence(
        real_results,
        list(sampled.TIE_RULES),
        dataset="synthetic",
        profile="quick",
        frames=tie_frames,
    )


# a claim of the example, an exact-data claim, a Holm conjunction and a claim of the order
# study (which runs under the chapter's rule only)
_SOME = ("table1", "s6.2.exact-order.ap", "s6.2.sampled-recall", "fig6.bv", "fig5.z-worst")


@pytest.mark.parametrize("claim", _SOME)
def test_frames_by_tie_rule_are_the_ledger_under_each_rule(real_results, tie_frames, claim):
    cid = kr.PREFIX + claim
    for rule in sampled.TIE_RULES:
        row = kr.LEDGER.row(
            cid, kr.under_ties(real_results, rule), dataset="synthetic", profile="quick"
        )
        got = tie_frames[rule].set_index("claim").loc[cid]
        for key in ("verdict", "reason", "rule", "ours_text", "method"):
            assert got[key] == row[key], (rule, key)
        for key in ("ours", "low", "high", "margin"):
            want = np.nan if row[key] is None else row[key]
            assert got[key] == pytest.approx(want, nan_ok=True), (rule, key)
    assert tie_frames[real_results["real"].ties]["tie_sensitive"].isna().all()


def test_by_tie_rule_and_the_readers_check_their_rules(real_results, tie_frames):
    with pytest.raises(ValueError, match="at least one tie rule"):
        kr.by_tie_rule(real_results, [], dataset="synthetic", profile="quick")
    with pytest.raises(ValueError, match="lack the tie rules"):
        kr.tie_dependence(
            real_results,
            list(sampled.TIE_RULES),
            dataset="synthetic",
            profile="quick",
            frames={"expected": tie_frames["expected"]},
        )
    with pytest.raises(ValueError, match="tie"):
        kr.by_tie_rule(real_results, ["random"], dataset="synthetic", profile="quick")


def test_real_claims_evaluate_with_intervals(real_results, tie_frames):
    frame = tie_frames[real_results["real"].ties]
    assert len(frame) == len(kr.LEDGER)
    by = frame.set_index("claim")
    # the several-items study is absent: not reproduced, with the reason
    assert by.loc["krichene2020.s8.several-items", "verdict"] == "not reproduced here"
    # rank estimate, one n: Recall@10 and NDCG@10 coincide exactly (n = 400, m = 20: (n − 1)/m ≥ 10)
    assert by.loc["krichene2020.s6.3.rank-estimate-recall-ndcg", "verdict"] == "holds"
    # sampled AUC is unbiased, so it keeps the exact order when the exact AUCs are far apart
    assert by.loc["krichene2020.s6.2.auc-consistent", "verdict"] in ("agrees", "inconclusive")
    # every sampled-order claim carries an interval from the repetitions
    row = by.loc["krichene2020.s6.2.sampled-recall"]
    assert np.isfinite(row["low"]) and np.isfinite(row["high"]) and "repetitions" in row["method"]


def test_order_claims_follow_the_signs_of_their_intervals(real_results):
    study = real_results["real"]
    ex = study.exact_means()
    out = kr.LEDGER["krichene2020.s6.2.exact-order.ap"].outcome(real_results)
    d_zy = kr.exact_diff(study, "AP", "Z", "Y", real_results["settings"])
    d_yx = kr.exact_diff(study, "AP", "Y", "X", real_results["settings"])
    if d_zy.low > 0 and d_yx.low > 0:
        assert out.verdict == papers.Verdict.AGREES
    elif d_zy.high < 0 or d_yx.high < 0:
        assert out.verdict == papers.Verdict.DIFFERS
    else:
        assert out.verdict == papers.Verdict.INCONCLUSIVE
    assert d_zy.value == pytest.approx(ex.loc["AP", "Z"] - ex.loc["AP", "Y"])


def test_exact_part_is_computed_once_per_inputs(real_results):
    """exact_part keeps its result per inputs (the differences by content): a repeated call
    returns it, it equals the parts computed directly, and a tie rule that changes the
    differences computes anew."""
    from dataclasses import replace

    from recmeta.ledger.every import SignPart
    from recmeta.metaeval.bootstrap import bootstrap_sums
    from recmeta.papers.krichene2020 import claims

    s, study = real_results["settings"], real_results["real"]
    claims._EXACT_PARTS.clear()
    first = claims.exact_part(study, "AP", "Z", "Y", s)
    assert claims.exact_part(study, "AP", "Z", "Y", s) is first
    assert claims.exact_part(replace(study), "AP", "Z", "Y", s) is first  # equal arrays, new study
    d = claims.exact_user(study, "AP", "Z") - claims.exact_user(study, "AP", "Y")
    _, reps = bootstrap_sums(
        np.column_stack([d, np.ones_like(d)]),
        lambda x: x[:, 0] / x[:, 1],
        n_resamples=s.n_resamples,
        seed=s.seed,
    )
    assert first == SignPart.from_replicates(kr.exact_diff(study, "AP", "Z", "Y", s), reps)
    # Z ties many items: under the pessimistic rule its per-user AP, and so the part, change
    other = replace(study, ties="pessimistic")
    assert not np.array_equal(
        claims.exact_user(other, "AP", "Z"), claims.exact_user(study, "AP", "Z")
    )
    moved = claims.exact_part(other, "AP", "Z", "Y", s)
    assert moved.estimate.value < first.estimate.value
    # the labels are part of the key: the reversed pair is its own part, of the opposite sign
    back = claims.exact_part(study, "AP", "Y", "Z", s)
    assert back.estimate.value == pytest.approx(-first.estimate.value)
    assert "Y − Z" in back.estimate.method


def test_tie_rule_changes_z_and_is_reported(real_results, tie_table):
    study = real_results["real"]
    auc = {rule: study.exact_means(rule).loc["AUC", "Z"] for rule in sampled.TIE_RULES}
    assert auc["pessimistic"] < auc["expected"] < auc["optimistic"]
    # ties are last under the pessimistic rule: a tied held-out item sits in the worst bucket
    z = study.standing.systems.index("Z")
    tied_users = study.standing.tied[z] > 0
    worst = kr.worst_bucket(study.ranks("pessimistic")["Z"], study.standing.n)
    assert worst[tied_users & (study.standing.above[z] == 0)].all()
    table = tie_table
    assert set(sampled.TIE_RULES) <= set(table.columns) and table["depends on ties"].dtype == bool
    assert "krichene2020.fig5.z-worst" in table.index


def test_tables_beside_the_paper(real_results):
    study = real_results["real"]
    t3 = kr.table3_frame(study)
    assert ("AP", "Z", "paper") in t3.index and ("AP", "Z", "ours") in t3.index
    assert t3.loc[("Recall@10", "X", "paper"), "exact"] == "7.60"
    t4 = kr.table4_frame(study)
    assert t4.loc[("X vs Y", "AP", "paper"), "BV 0.1"] == 68
    f5 = kr.fig5_frame(study)
    assert list(f5.index) == ["Z in the worst bucket", "X in the top 100", "X in the bottom half"]
    assert f5.loc["X in the top 100", "paper share"] == pytest.approx(2310 / 6040)


def test_the_chapter_types_no_result_numbers():
    text = (ROOT / "notebooks" / "sampled-metrics.md").read_text()
    found = prose.typed_numbers(text)
    assert not found, "\n".join(str(f) for f in found)
    assert "kr.report(results" in text and "execution.finish()" in text
    assert "second_dataset" in text and "ties =" in text


# ----------------------------------------------------------------------------- settings and text
def test_settings_resolve_the_profiles_defaults_and_keep_given_values():
    quick = kr.Settings.resolve("quick", dataset="ml-100k", second_dataset="ml-latest-small")
    full = kr.Settings.resolve("full", dataset="ml-100k")
    assert (quick.toy_repetitions, quick.real_repetitions, quick.n_resamples) == (200, 20, 1999)
    assert (full.toy_repetitions, full.real_repetitions, full.n_resamples) == (1000, 100, 9999)
    assert quick.fig6_ms == (10, 30, 100, 300) and quick.quick and not full.quick
    given = kr.Settings.resolve(
        "quick",
        dataset="d",
        toy_repetitions=7,
        fig6_ms=[5, 50],
        bootstrap_resamples=99,
        seed=3,
        gammas=[1, 0.5],
    )
    assert (given.toy_repetitions, given.fig6_ms, given.n_resamples, given.seed) == (
        7,
        (5, 50),
        99,
        3,
    )
    assert given.estimators == ["sampled", "rank-estimate", "cls", "BV 1", "BV 0.5"]
    # the same data once is enough
    assert kr.Settings.resolve("quick", dataset="d", second_dataset="d").second_dataset is None
    with pytest.raises(ValueError, match="tie"):
        kr.Settings.resolve("quick", dataset="d", ties="random")
    with pytest.raises(ValueError, match="profile"):
        kr.Settings.resolve("fast", dataset="d")


def test_verdict_sentences_come_from_the_ledger(toy_results):
    from recmeta.papers.krichene2020 import text

    out = kr.LEDGER["krichene2020.table1"].outcome(toy_results)
    said = text.verdict(toy_results, "table1")
    assert said.startswith(f"**{out.verdict.value}**: ") and out.reason.rstrip(".") in said
    assert text.verdict(toy_results, "krichene2020.table1") == said
    # a claim whose results are absent says so, with the reason
    assert "not reproduced here" in text.verdict(toy_results, "s6.2.sampled-recall")
    t1 = text.table1_text(toy_results)
    assert "A on AUC" in t1 and "C on AP" in t1 and "C on Recall@10" in t1
    m = kr.recall_consistent_from(toy_results["toy"])
    assert f"m = {m:,}" in text.fig2_text(toy_results)
    cfg = kr.Settings.resolve("quick", dataset="ml-100k", second_dataset="ml-latest-small")
    head = text.profile_text(cfg, 100)
    assert "**quick**" in head and "ml-100k and ml-latest-small." in head and "1,999" in head


def test_law_check_and_closed_forms_against_scipy():
    from scipy import stats

    law, tv = kr.law_check([10, 200], 1000, 50, 4000, seed=1)
    sums = law.groupby(["law", "true rank"])["simulated"].sum()
    assert np.allclose(sums, 1.0) and len(tv) == 4 and (tv["total variation"] >= 0).all()
    with_rep = law[(law["law"] == "with replacement") & (law["true rank"] == 200)]
    binom = stats.binom.pmf(with_rep["sampled rank"] - 1, 50, 199 / 999)
    assert np.allclose(with_rep["formula"], binom)
    # the simulation is within a few times the noise of the formula
    assert (tv["total variation"] < 4 * tv["expected from noise"]).all()
    assert kr.laws_apart([10, 200], 1000, 50) > 0
    checks = kr.closed_form_checks(2000, (1, 99))
    assert len(checks) == 2 * 4 * 2 and checks["max |closed form − sum|"].max() < 1e-9


def test_example_tables_against_direct_computations(toy_results):
    toy = toy_results["toy"]
    exact, beside = kr.table1_frame(toy)
    assert (
        exact.loc["C", "Recall@10"] == pytest.approx(0.2) and ("paper (Table 1)", "AUC") in beside
    )
    # at m = 1, Recall@1 of the sampled list is P(r̃ = 1) = AUC_n(r): the exact AUC itself
    collapse = kr.collapse_table(toy, ["Recall@1", "AP"], exact["AUC"])
    assert np.allclose(collapse["Recall@1"], exact["AUC"], atol=1e-14)
    table2, summary = kr.table2_frame(toy, toy_results["toy_sampled"])
    assert list(table2.index.get_level_values("metric").unique()) == list(kr.TOY_METRICS)
    assert table2.loc[("AUC", "A"), "paper (Table 2)"] == "0.990 ± 0.004"
    laws = kr.laws_table(toy)
    assert np.allclose(laws["difference"], laws["without"] - laws["with"])
    ls = kr.least_squares_at_paper_size(True, 0.1)
    assert ls["bv_gap"] < 1e-6 and ls["ls"][1] > ls["ridge"][1]
    vectors, curves = kr.fig4_frames(1000, 20, ["sampled", "BV 0.1"], True)
    terms, rises, close = kr.fig4_summary(vectors, curves, 1000, 20, True)
    assert rises["sampled"] == 0 and set(close) == {"sampled", "BV 0.1"}
    assert (
        terms.loc["BV 0.1", "weighted squared bias"] < terms.loc["sampled", "weighted squared bias"]
    )


def test_the_real_data_sentences(real_results, tie_frames):
    from recmeta.papers.krichene2020 import text

    study = real_results["real"]
    assert f"{study.users:,} users ranked" in text.study_text(study)
    assert "users of Z" in text.ties_text(study)
    t3 = text.table3_text(real_results)
    assert "**" in t3 and "the paper: Z > Y > X on all three" in t3
    assert "Z's worst bucket" in text.fig5_text(real_results)
    assert "Z's exact AUC" in text.tie_rules_text(study)
    change, z = kr.independent_change(study, kr.table4_frame(study))
    assert len(z) == len(study.systems) * len(study.metrics) * len(study.estimators)
    assert "Monte-Carlo standard errors" in text.independent_text(study, change, z)
    reliable = sampled.reliable_from_study(study.order, 0.95)
    counted = kr.reliable_counts(reliable)
    assert (counted.sum(axis=1) <= len(reliable)).all()
    assert "Level 0.95" in text.reliable_text(reliable, counted, 0.95, study)
    assert "skipped" in text.multi_study_text(real_results)
    frame = tie_frames[study.ties]
    assert text.tally_text(frame, "synthetic").startswith(f"On synthetic: {len(kr.LEDGER)} claims")
    assert "0 verdicts differ" in text.datasets_differ_text(frame, frame, "a", "b")
    assert "claims on real data" in text.real_claims_text(frame, study)
    assert "**synthetic**" in text.second_dataset_text(real_results)


def test_several_items_approximation_and_its_sentence():
    from recmeta.papers.krichene2020 import text

    users = {"spread": np.array([3, 40, 300]), "clustered": np.arange(50, 55)}
    table = kr.multi_approximation(users, 500, 30, 2000, 0, True)
    assert set(table.index.get_level_values("metric")) >= {"Hit@10", "AUC"}
    # linearity: the additive metrics' means agree within Monte-Carlo noise (the larger sd of
    # the two: a rare event the draws never show leaves the simulated sd at 0)
    add = table.drop(index="Hit@10", level="metric")
    se = np.maximum(add["simulated sd"], add["independent sd"]) / np.sqrt(2000)
    assert ((add["simulated mean"] - add["independent mean"]).abs() <= 5 * se + 1e-12).all()
    said = text.multi_approximation_text(table, 500, 30, 2000)
    assert "2,000 simulated draws per user" in said and "Hit@10" in said


def test_dependence_sentence_lists_the_claims_that_move(tie_table):
    from recmeta.papers.krichene2020 import text

    table = tie_table
    said = text.dependence_text(table, "pessimistic")
    moved = int(table["depends on ties"].sum())
    if moved:
        assert f"{moved} of {len(table)} verdicts change" in said
    else:
        assert f"None of the {len(table)} verdicts" in said
