"""The ledger's generic rules on hand-worked examples: ranks among overlapping intervals, a claim
made for several cases at once (``all_of``), "A is comparable to B" (``equivalence_rule``) and the
rounding of a printed value (``half_unit``)."""

from __future__ import annotations

import pytest

from recmeta.ledger import (
    Estimate,
    Verdict,
    all_of,
    equivalence_rule,
    format_estimate,
    half_unit,
    not_reproduced,
    rank_range,
    rank_rule,
    sign_rule,
)

A, D, I, N = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED


def test_rank_range_and_rank_rule_by_hand():
    est = {"a": Estimate(0.9, 0.88, 0.92), "b": Estimate(0.87, 0.85, 0.89),  # a, b overlap
           "c": Estimate(0.5, 0.45, 0.55), "d": Estimate(0.2, 0.1, 0.3)}
    assert rank_range(est, "a") == (1, 2) and rank_range(est, "b") == (1, 2)
    assert rank_range(est, "c") == (3, 3) and rank_range(est, "d") == (4, 4)
    assert rank_range(est, "d", higher_is_better=False) == (1, 1)
    assert rank_rule(est, ["a", "b"], 1, 2).verdict is A
    assert rank_rule(est, ["a"], 1, 1).verdict is I  # tied with b at the top
    out = rank_rule(est, ["c"], 1, 2)
    assert out.verdict is D and out.reason == "c can rank 3 of 4, outside the claimed 1–2"
    assert rank_rule(est, ["c", "a"], 1, 3).verdict is A
    # a point estimate (no interval) ties with everything: c may now rank 3 or 4
    assert rank_range({**est, "e": Estimate.point(0.6)}, "c") == (3, 4)
    assert rank_rule({**est, "e": Estimate.point(0.6)}, ["c"], 3, 3).verdict is I
    with pytest.raises(ValueError):
        rank_rule(est, ["a"], 3, 2)


def test_all_of_and_equivalence_rule():
    agree = sign_rule(Estimate.exact(1.0), "positive")
    differ = sign_rule(Estimate.exact(-1.0), "positive")
    unsure = sign_rule(Estimate(0.1, -1, 1), "positive")
    assert all_of({"x": agree, "y": agree}).verdict is A
    assert all_of({"x": agree, "y": unsure}).verdict is I
    assert all_of({"x": unsure, "y": differ}).verdict is D
    assert all_of({"x": not_reproduced("no")}).verdict is N
    assert equivalence_rule(Estimate(0.001, -0.002, 0.004), 0.01).verdict is A
    assert equivalence_rule(Estimate(0.05, 0.03, 0.07), 0.01).verdict is D
    assert equivalence_rule(Estimate(0.005, -0.02, 0.03), 0.01).verdict is I
    assert equivalence_rule(Estimate.point(0.0), 0.01).verdict is I


def test_half_unit_of_the_last_printed_digit():
    assert half_unit(0.001) == pytest.approx(0.0005)
    assert half_unit(0.00045) == pytest.approx(0.000005)
    assert half_unit(0.92) == pytest.approx(0.005)


def test_all_of_names_the_first_differing_case_and_refuses_nothing():
    agree = sign_rule(Estimate.exact(1.0), "positive", label="x")
    differ = sign_rule(Estimate.exact(-1.0), "positive", label="y")
    out = all_of({"first": agree, "second": differ})
    assert out.verdict is D and out.ours is None
    assert out.reason.startswith("first agrees, second differs (second: ")
    # the cases' own results, each as the ledger formats an estimate
    assert out.detail == (f"first: {format_estimate(Estimate.exact(1.0))}; "
                          f"second: {format_estimate(Estimate.exact(-1.0))}")
    assert all_of({"a": agree, "b": agree}).reason == "holds in every case: a agrees, b agrees"
    with pytest.raises(ValueError, match="at least one"):
        all_of({})


def test_equivalence_rule_bounds_are_inclusive_and_the_margin_positive():
    assert equivalence_rule(Estimate(0.0, -0.01, 0.01), 0.01).verdict is A
    assert equivalence_rule(Estimate(-0.02, -0.03, -0.0101), 0.01).verdict is D
    out = equivalence_rule(Estimate(0.0, -0.02, 0.005), 0.01, label="gap")
    assert out.verdict is I and out.reason.startswith("gap ") and "straddles ± 0.01" in out.reason
    for bad in (0.0, -0.1):
        with pytest.raises(ValueError, match="margin must be positive"):
            equivalence_rule(Estimate(0.0, -0.01, 0.01), bad)


def test_half_unit_reads_the_printed_digits_not_the_float():
    assert half_unit(0.05) == pytest.approx(0.005)
    assert half_unit(5) == pytest.approx(0.5)
    assert half_unit(0.10) == pytest.approx(0.05)  # 0.10 prints as 0.1: its last digit is tenths
