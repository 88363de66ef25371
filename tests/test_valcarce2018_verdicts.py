"""The robustness chapter's verdicts mean what they say (issue: verdicts, kinds, margins, orders).

Each test names the defect it guards against; the planted results come from the chapter's main
test module.
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest
from scipy import stats

from recmeta.ledger import Estimate, Verdict, every_sign, format_order, order_groups, some
from recmeta.papers import valcarce2018 as v
from recmeta.papers.valcarce2018 import estimates, rules

from .test_valcarce2018 import MEASURES, _planted

A, D, I, N = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED
G = Verdict.NOT_GRADED


def _e(x: float, h: float = 0.01) -> Estimate:
    return Estimate(x, x - h, x + h)


# ---- settings and kinds ------------------------------------------------------------------------


def test_every_claim_declares_its_setting():
    unknown = [c.id for c in v.LEDGER if not c.setting_known]
    assert unknown == []


def test_no_legacy_value_rule_left_in_the_package():
    for mod in (v.claims, v.claims_cutoffs, v.claims_metrics, v.rules, v.values, v.estimates):
        assert "legacy_value_rule" not in inspect.getsource(mod), mod.__name__


VALUE_CLAIMS = [
    *(f"valcarce2018.tab3.ml1m.{m.lower()}" for m in v.METRICS),
    "valcarce2018.fig1.ndcg-5-100",
    "valcarce2018.s6.p-5-100",
    "valcarce2018.s6.r-5-100",
    "valcarce2018.fig5.ap-ndcg",
    "valcarce2018.fig5.p-rr",
    "valcarce2018.fig5.ap-infap",
]


def test_magnitudes_of_ml1m_are_shown_not_graded_on_other_data_and_graded_on_ml1m():
    # the paper's DP of precision on ML-1M, planted tightly inside its margin, with the quick
    # profile's 599 resamples (with 60, a BC end at 0.975 already lies beyond the replicates)
    r = _planted(dp={"P": 2.6 * 15 / 210}, dp_noise=0.001, n_boot=599)
    other = v.LEDGER.evaluate(r, dataset="ml-100k", profile="quick").set_index("claim")
    same = v.LEDGER.evaluate(r, dataset="ml-1m", profile="quick").set_index("claim")
    for claim in VALUE_CLAIMS:
        assert other.at[claim, "rule"] == "value", claim
        assert other.at[claim, "kind"] == "transfer" and other.at[claim, "verdict"] == G.value
        assert same.at[claim, "kind"] == "replication"
        assert same.at[claim, "verdict"] != G.value
        assert other.at[claim, "margin"] > 0
    assert same.at["valcarce2018.tab3.ml1m.p", "verdict"] == A.value
    # a graded agreement has its whole interval inside paper ± margin
    row = same.loc["valcarce2018.tab3.ml1m.p"]
    assert 2.6 - row["margin"] <= row["low"] and row["high"] <= 2.6 + row["margin"]


def test_margins_are_declared_with_their_rounding_and_reason():
    assert v.TAU_MARGIN.rounding == 0.005 and v.TAU_MARGIN.total == pytest.approx(0.03)
    assert v.DP_MARGIN.rounding == 0.05 and v.DP_MARGIN.total == pytest.approx(0.15)
    # the DP margin stays under the smallest gap Table 3 reads as an order (P 2.6, MAP 2.8)
    ml1m = np.sort(v.PAPER_TABLE3.loc["ML-1M"].to_numpy())
    assert 2 * v.DP_MARGIN.substantive <= np.diff(ml1m).min() + 1e-12
    for m in (v.TAU_MARGIN, v.DP_MARGIN):
        assert m.reason and "paper" in m.reason


# ---- "every" means all, under Holm ---------------------------------------------------------------


def test_all_deeper_dp_is_not_decided_by_a_majority():
    # six metrics clearly more discriminative at @100, MRR clearly less: a majority agrees,
    # but the statement says every metric
    r = _planted(dp={**dict.fromkeys(v.METRICS, 1.0), "RR": 5.0}, dp_noise=0.001, n_boot=400)
    out = v.LEDGER["valcarce2018.fig4.all-deeper-dp"].outcome(r)
    assert out.verdict is D and "MRR" in out.reason and out.rule.startswith("every")
    r = _planted(dp=dict.fromkeys(v.METRICS, 1.0), dp_noise=0.001, n_boot=400)
    assert v.LEDGER["valcarce2018.fig4.all-deeper-dp"].outcome(r).verdict is A
    # with 60 resamples no p-value can pass Holm's first step 0.05/7: open, and the reason says so
    r = _planted(dp=dict.fromkeys(v.METRICS, 1.0), dp_noise=0.001, n_boot=60)
    out = v.LEDGER["valcarce2018.fig4.all-deeper-dp"].outcome(r)
    assert out.verdict is I and "more resamples" in out.reason


def test_all_deeper_robust_needs_every_metric_established():
    # every metric more robust at @100 (0.95) than at @5 (0.7) except MRR, planted at 0.7: its
    # difference is not established, so "every" is open, whatever the majority
    claim = v.LEDGER["valcarce2018.fig2.all-deeper-robust"]
    robust = {**dict.fromkeys(v.METRICS, 0.95), "RR": 0.7}
    out = claim.outcome(_planted(robust=robust, n_boot=400))
    assert out.verdict is I and "MRR" in out.reason
    assert out.ours.value == pytest.approx(0.0, abs=0.01)  # the weakest part is ours
    full = claim.outcome(_planted(robust=dict.fromkeys(v.METRICS, 0.95), n_boot=400))
    assert full.verdict is A
    worse = {**dict.fromkeys(v.METRICS, 0.95), "RR": 0.5}
    out = claim.outcome(_planted(robust=worse, n_boot=400))
    assert out.verdict is D
    # 60 resamples cannot pass Holm's first step over 7 metrics: open, and the reason says so
    out = claim.outcome(_planted(robust=dict.fromkeys(v.METRICS, 0.95), n_boot=60))
    assert out.verdict is I and "more resamples" in out.reason


def test_sparsity_intervals_carry_the_users_not_only_the_masks():
    # the per-mask τ are nearly equal (spread 0.005), the two-level replicates spread wide
    # (users): the interval is that of the replicates, not a t interval over the masks
    r = _planted(robust={"P": 0.9}, n_boot=400)
    r["sparsity_boot"] = r["sparsity_boot"] + np.random.default_rng(3).normal(
        0, 0.05, r["sparsity_boot"].shape
    ) * (np.asarray([1.0, 0.5, 0.1]) < 1)[None, :, None]
    est = v.robustness_estimate(r, "sparsity", "P@100", share=0.5)
    reps = r["sparsity_boot"][:, 1, MEASURES.index("P@100")]
    # the BC interval of those replicates about the point (Efron 1987): quantiles at
    # Φ(2 z0 ∓ 1.96), z0 = Φ⁻¹(share of replicates below the point)
    z0 = stats.norm.ppf((reps < est.value).mean())
    ends = stats.norm.cdf(2 * z0 + np.array([-1.959964, 1.959964]))
    assert (est.low, est.high) == pytest.approx(tuple(np.quantile(reps, ends)))
    assert est.high - est.low > 0.15  # ± 2 × 0.05, far wider than the masks' spread
    assert "two-level" in est.method or "users and masks" in est.method
    curves = v.sparsity_curves(r).set_index(["measure", "share"])
    assert curves.at[("P@100", 0.5), "low"] == pytest.approx(est.low)


def test_every_sign_on_hand_made_draws_and_the_resolution_note():
    rng = np.random.default_rng(0)
    up = estimates.Draws(0.1, 0.1 + rng.normal(0, 0.01, 999), "a")
    flat = estimates.Draws(0.0, rng.normal(0, 0.01, 999), "b")
    down = estimates.Draws(-0.1, -0.1 + rng.normal(0, 0.01, 999), "c")

    def every(parts, shift=0.0):
        return every_sign({k: estimates.sign_part(d, shift) for k, d in parts.items()}, "positive")

    assert every({"a": up, "a2": up}).verdict is A
    assert every({"a": up, "b": flat}).verdict is I
    assert every({"a": up, "c": down}).verdict is D
    # 99 replicates: no p-value below 1/100, above Holm's first step 0.05/7
    few = estimates.Draws(0.1, 0.1 + rng.normal(0, 0.01, 99), "few")
    out = every({f"m{k}": few for k in range(7)})
    assert out.verdict is I and "more resamples" in out.reason
    # a threshold: τ 0.95 with replicates around it, above 0.9 and not above 0.95
    tau = estimates.Draws(0.95, 0.95 + rng.normal(0, 0.01, 999), "τ")
    assert every({"x": tau}, shift=0.9).verdict is A
    assert every({"x": tau}, shift=0.95).verdict is I


def test_half_above_09_is_a_conjunction_under_holm():
    out = v.LEDGER["valcarce2018.fig6.half-above-0.9"].outcome(
        _planted(robust=dict.fromkeys(v.METRICS, 0.95), n_boot=400)
    )
    assert out.verdict is A and out.rule.startswith("every")
    # the weakest metric is ours: MRR planted at 0.92, the others at 0.95
    out = v.LEDGER["valcarce2018.fig6.half-above-0.9"].outcome(
        _planted(robust={**dict.fromkeys(v.METRICS, 0.95), "RR": 0.92}, n_boot=400)
    )
    assert out.verdict is A and out.ours.value == pytest.approx(0.92, abs=0.01)


# ---- statements and rules match ------------------------------------------------------------------


def test_deep_above_09_is_a_librarything_beeradvocate_statement():
    claim = v.LEDGER["valcarce2018.s6.deep-above-0.9"]
    assert claim.paper_dataset == "LibraryThing, BeerAdvocate"
    out = claim.outcome(_planted())
    assert out.verdict is N and out.ours is not None  # our share is still shown
    row = v.LEDGER.evaluate(_planted(), dataset="ml-100k", profile="quick").set_index("claim")
    assert row.at["valcarce2018.s6.deep-above-0.9", "verdict"] == N.value


def test_bpref_least_also_tests_infap_and_mrr_next():
    claim = "valcarce2018.fig6.bpref-least"
    # bpref last, infAP and MRR above it: the whole sentence holds
    paper = {"bpref": 0.5, "infAP": 0.6, "RR": 0.62, "P": 0.9, "nDCG": 0.88, "R": 0.85,
             "AP": 0.8}
    assert v.LEDGER[claim].outcome(_planted(robust=paper)).verdict is A
    # bpref last, but infAP and MRR among the most robust: "(infAP and MRR next)" fails
    wrong = {**paper, "infAP": 0.95, "RR": 0.97}
    out = v.LEDGER[claim].outcome(_planted(robust=wrong))
    assert out.verdict is D and "infAP" in out.reason


def test_monte_carlo_errors_follow_from_the_two_sided_error_within_the_printed_rounding():
    frame = v.LEDGER.evaluate({}, dataset="ml-100k", profile="quick").set_index("claim")
    p05, p01 = frame.loc["valcarce2018.s4.mc-error-p05"], frame.loc["valcarce2018.s4.mc-error-p01"]
    assert p05["kind"] == p01["kind"] == "derivation"
    # margins: half a unit of the printed digit, nothing more (an exact formula)
    assert p05["margin"] == pytest.approx(0.0005) and p01["margin"] == pytest.approx(0.000005)
    # a two-sided p taken as twice a one-sided share: 2·√((p/2)(1 − p/2)/B)
    se05, se01 = (2 * math.sqrt(p / 2 * (1 - p / 2) / 1e5) for p in (0.05, 0.01))
    assert p05["ours"] == pytest.approx(se05) and p01["ours"] == pytest.approx(se01)
    # the verdicts are those of the margins, computed independently here
    assert abs(se05 - 0.001) <= 0.0005 and p05["verdict"] == Verdict.HOLDS.value
    assert abs(se01 - 0.00045) <= 0.000005 and p01["verdict"] == Verdict.HOLDS.value
    # the one-sided reading would miss the printed 0.00045 by more than its rounding
    assert abs(math.sqrt(0.01 * 0.99 / 1e5) - 0.00045) > 0.000005
    assert "√(p(1−p)/B)" in p01["reason"]


def test_levels_of_tau_read_on_ml1m_are_graded_on_ml1m_only():
    # the paper's own Fig. 5 puts the smallest τ between metrics at 0.71 on ML-1M and 0.90 on
    # LibraryThing: a level is a magnitude of the data
    assert v.PAPER_FIG5["ML-1M"].to_numpy().min() == 0.71
    assert v.PAPER_FIG5["LibraryThing"].to_numpy().min() == 0.90
    for claim, rule in (("valcarce2018.fig1.ndcg-min", "every sign"),
                        ("valcarce2018.s6.most-above-0.85", "threshold"),
                        ("valcarce2018.fig5.some-below-0.8", "some sign")):
        other = v.LEDGER[claim].outcome(_planted())
        same = v.LEDGER[claim].outcome(_planted(dataset="ml-1m"))
        assert other.verdict is G and other.ours is not None, claim
        assert same.verdict in (A, D, I) and same.rule == other.rule == rule
    # planted: every τ among metrics is 1 (one system order), so "some below 0.8" differs on
    # ML-1M, once the resamples allow Holm over the 21 pairs (1/(B + 1) ≤ 0.05/21: B ≥ 420)
    r = _planted(dataset="ml-1m", n_boot=500)
    assert v.LEDGER["valcarce2018.fig5.some-below-0.8"].outcome(r).verdict is D


# ---- minima: part by part under Holm, not an interval of the minimum ----------------------------


def test_a_bootstrap_of_the_minimum_would_favour_below_where_parts_tested_one_by_one_do_not():
    # two pairs of metrics with τ 0.82 and 0.83, each with replicates spread ± 0.03: the
    # minimum of the replicates lies below the smaller true τ, so a percentile interval of the
    # minimum reaches below 0.8, towards "some τ below 0.8"; tested pair by pair, neither pair
    # is shown below 0.8, and the reason names the closest
    rng = np.random.default_rng(1)
    reps = {"a–b": 0.82 + rng.normal(0, 0.03, 2000), "c–d": 0.83 + rng.normal(0, 0.03, 2000)}
    low_of_min = np.quantile(np.minimum(reps["a–b"], reps["c–d"]), 0.025)
    assert low_of_min < 0.8 - 0.02
    parts = {k: estimates.sign_part(estimates.Draws(float(np.median(x)), x, k), 0.8)
             for k, x in reps.items()}
    out = some({k: p.estimate for k, p in parts.items()},
               {k: p.p_negative for k, p in parts.items()},
               {k: p.p_positive for k, p in parts.items()}, what="pairs below 0.8")
    assert out.verdict is I and "a–b" in out.reason


def test_minimum_claims_are_tested_part_by_part():
    r = _planted(dataset="ml-1m", n_boot=500)
    out = v.LEDGER["valcarce2018.fig1.ndcg-min"].outcome(r)
    # planted: one system order at every cut-off, τ = 1 for all 3 pairs: every pair above 0.895
    assert out.rule == "every sign" and out.verdict is A
    assert "3 parts" in out.reason
    out = v.LEDGER["valcarce2018.fig5.some-below-0.8"].outcome(r)
    assert out.rule == "some sign" and out.verdict is D  # every τ is 1: none below 0.8
    # DP: @5 and @50 (≤ 50) against @100: two pairs, each established from its own replicates
    r = _planted(dp=dict.fromkeys(v.METRICS, 1.0), dp_noise=0.001, n_boot=400)
    out = v.LEDGER["valcarce2018.fig4.ndcg-above-50"].outcome(r)
    assert out.rule == "every sign" and out.verdict is A and "2 parts" in out.reason
    r = _planted(dp=dict.fromkeys(v.METRICS, 3.5), dp_noise=0.001, n_boot=400)
    out = v.LEDGER["valcarce2018.fig4.ndcg-above-50"].outcome(r)
    assert out.verdict is D  # DP@100 3.5 above the shallow cut-offs' 3.0
    for mod in (v.estimates, v.claims_cutoffs, v.claims_metrics):
        assert "basic_estimate" not in inspect.getsource(mod)


# ---- orders --------------------------------------------------------------------------------------

#: DP on an implicit MovieLens snapshot, as the chapter once showed it: Recall 0.49 with a wide
#: interval, MRR 0.0655 with a tight one, P, MAP and nDCG near 0
IMPLICIT_DP = {
    "P": Estimate(0.01, 0.0, 0.05),
    "MAP": Estimate(0.012, 0.0, 0.05),
    "nDCG": Estimate(0.015, 0.0, 0.05),
    "Recall": Estimate(0.49, 0.0, 1.2),
    "MRR": Estimate(0.0655, 0.06, 0.07),
}


def _established(order: str, ests: dict[str, Estimate]) -> bool:
    """Every "<" of an ascending order separates every member on its left from every member on
    its right by the intervals."""
    groups = [g.split(" ≈ ") for g in order.split(" < ")]
    for i in range(len(groups) - 1):
        left = [n for g in groups[: i + 1] for n in g]
        right = [n for g in groups[i + 1 :] for n in g]
        if not max(ests[n].high for n in left) < min(ests[n].low for n in right):
            return False
    return True


def test_the_dp_order_sentence_is_never_contradicted_by_its_table():
    # the former writer printed "P ≈ MAP ≈ nDCG ≈ Recall < MRR": every item overlapping the best
    # first, then the rest joined with "<", although Recall's DP 0.49 lies above MRR's 0.0655
    out = rules.worded_order(IMPLICIT_DP, "nDCG", higher_is_better=False, best="most")
    assert "Recall < MRR" not in out.detail
    assert _established(out.detail, IMPLICIT_DP)
    assert out.detail == format_order(IMPLICIT_DP, descending=False)
    # the sentence the chapter prints comes from the same ledger row
    r = _planted(dp={"nDCG": 0.1, "P": 0.1})
    frame = v.LEDGER.evaluate(r, dataset="ml-100k", profile="quick")
    ests = estimates.dp_estimate  # the chapter's estimates, to check the printed order
    d = {v.LABELS[m]: ests(r, f"{m}@100", floor=0.0) for m in v.METRICS}
    text = v.text.metric_dp_order(frame)
    assert text == format_order(d, descending=False)
    assert _established(text, d)


def test_short_order_cuts_groups_not_items():
    ests = {f"x{k}": _e(float(k), 0.001) for k in range(10)}
    ests["y"] = _e(5.0, 0.001)  # tied with x5
    out = rules.worded_order(ests, "x9", best="best")
    cut = rules.short_order(out, ests, keep=3)
    groups = order_groups(ests)
    assert cut.detail.startswith(" > ".join(" ≈ ".join(g) for g in groups[:3]))
    assert cut.detail.endswith("…")


def test_every_order_sentence_of_the_text_module_comes_from_format_order():
    src = inspect.getsource(v.text)
    # no hand-made order: no "<" or ">" joined by hand
    assert not re.search(r"""["'] [<>] ["']\.join""", src)
    assert "top_set" not in src
    for mod in (v.rules, v.claims_cutoffs, v.claims_metrics):
        assert "top_set" not in inspect.getsource(mod)
        assert '.replace(" > ", " < ")' not in inspect.getsource(mod)
