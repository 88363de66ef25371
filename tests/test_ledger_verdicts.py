"""Kinds of evidence, orders written as groups, conjunctions under Holm, tie sensitivity."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from recmeta.ledger import (
    DERIVED,
    Estimate,
    Kind,
    Ledger,
    Margin,
    Outcome,
    Verdict,
    dataset_identity,
    every,
    format_order,
    kind_of,
    order_groups,
    order_rule,
    sign_rule,
    value_rule,
)
from recmeta.ledger.kinds import paper_datasets

E = Estimate


def test_dataset_identity_and_paper_datasets():
    assert dataset_identity("ml-1m") == "ML-1M" and dataset_identity("ml-100k") == "ML-100K"
    assert dataset_identity("ml-latest-small") == "ml-latest-small"
    # a file is one's own data, whatever its name says
    assert dataset_identity("some/where/ml-1m.csv").startswith("own data")
    assert paper_datasets("ML-1M, LibraryThing") == {"ML-1M", "LibraryThing"}
    assert paper_datasets("ML-1M (also LibraryThing, BeerAdvocate)") == {
        "ML-1M", "LibraryThing", "BeerAdvocate"}
    assert paper_datasets("ML-1M-shaped simulation") == frozenset()
    assert paper_datasets("toy (n = 10,000)") == frozenset()


def test_kind_follows_from_the_datasets():
    assert kind_of(DERIVED, None, "ml-1m") is Kind.DERIVATION
    assert kind_of("ML-1M", None, "ml-1m") is Kind.REPLICATION
    assert kind_of("ML-1M", None, "ml-100k") is Kind.TRANSFER
    assert kind_of("ML-1M", None, "data/ml-1m-partial/ratings.csv") is Kind.TRANSFER
    # a data-free setting replicates on any data; a data-free quantity on named data transfers
    assert kind_of("toy (n = 10,000)", "the paper's own toy example", "ml-100k") is Kind.REPLICATION
    assert kind_of("ML-1M", "a property of the metric", "ml-100k") is Kind.TRANSFER
    # an unnamed setting without a reason cannot be a replication
    assert kind_of("toy", None, "ml-100k") is Kind.TRANSFER


def _led() -> Ledger:
    led = Ledger("kinds-demo")
    m = Margin(0.005, 0.05, "hand-made")

    @led.claim("d.identity", statement="MAP equals MRR with one relevant item", source="eq. 1",
               paper_dataset=DERIVED, rule="identity", needs=("x",))
    def _(r):
        return value_rule(0.0, E.exact(r["x"]), m, label="MAP − MRR")

    @led.claim("d.value", statement="a value", source="Tab. 1", paper_value=0.5,
               paper_dataset="ML-1M", rule="value", needs=("x",))
    def _(r):
        return value_rule(0.5, E(0.9, 0.85, 0.95), m)

    @led.claim("d.free", statement="a data-free value", source="Tab. 2", paper_value=0.5,
               paper_dataset="ML-1M", rule="value", needs=("x",),
               data_free="the quantity is a property of the metric")
    def _(r):
        return value_rule(0.5, E(0.9, 0.85, 0.95), m)

    @led.claim("d.sign", statement="a sign", source="§3", paper_dataset="ML-1M", rule="sign",
               needs=("x",))
    def _(r):
        return sign_rule(E(r["x"] + 0.1, r["x"] + 0.05, r["x"] + 0.2), "positive")

    return led


def test_derivations_hold_or_fail_and_transfer_magnitudes_are_not_graded():
    frame = _led().evaluate({"x": 0.0}, dataset="ml-100k", profile="quick").set_index("claim")
    assert frame.loc["d.identity", ["kind", "verdict"]].tolist() == ["derivation", "holds"]
    assert frame.loc["d.value", ["kind", "verdict"]].tolist() == ["transfer", "shown, not graded"]
    # a quantity declared data-free is graded by value across datasets
    assert frame.loc["d.free", ["kind", "verdict"]].tolist() == ["transfer", "differs"]
    assert bool(frame.loc["d.free", "data_free"]) and not bool(frame.loc["d.value", "data_free"])
    assert frame.loc["d.sign", ["kind", "verdict"]].tolist() == ["transfer", "agrees"]
    failing = _led().evaluate({"x": 1.0}, dataset="ml-1m", profile="quick").set_index("claim")
    assert failing.loc["d.identity", "verdict"] == "fails"
    assert failing.loc["d.value", ["kind", "verdict"]].tolist() == ["replication", "differs"]
    assert failing.loc["d.value", "margin"] == pytest.approx(0.055)
    assert failing["tie_sensitive"].isna().all()


def test_tie_sensitivity_compares_the_verdicts_under_other_rules():
    frame = _led().evaluate({"x": 0.0}, dataset="ml-100k", profile="quick",
                            tie_variants={"optimistic": {"x": 0.0}, "pessimistic": {"x": -1.0}})
    sens = frame.set_index("claim")["tie_sensitive"]
    assert sens["d.sign"] and sens["d.identity"]  # both change at x = -1
    assert not sens["d.value"] and not sens["d.free"]


def test_order_groups_cut_only_where_every_member_is_clearly_apart():
    est = {"a": E(0.9, 0.8, 1.0), "b": E(0.7, 0.55, 0.85), "c": E(0.6, 0.5, 0.65),
           "d": E(0.3, 0.2, 0.4)}
    # a overlaps b, b overlaps c: one group; c is clearly above d
    assert order_groups(est) == [["a", "b", "c"], ["d"]]
    assert format_order(est) == "a ≈ b ≈ c > d"
    assert format_order(est, descending=False) == "d < c ≈ b ≈ a"
    # a wide interval low in the order keeps the groups above it together with it
    wide = {"a": E(0.9, 0.85, 0.95), "b": E(0.5, 0.45, 0.55), "z": E(0.2, 0.0, 0.9)}
    assert order_groups(wide) == [["a", "b", "z"]]
    # a point estimate is never clearly apart
    assert order_groups({"a": E(0.9, 0.85, 0.95), "p": E.point(0.1)}) == [["a", "p"]]
    # the case that once printed "P ≈ MAP ≈ nDCG ≈ Recall < MRR" over Recall's 0.49
    dp = {"P": E(0.05, 0.04, 0.055), "MRR": E(0.0655, 0.06, 0.07), "Recall": E(0.49, 0.45, 0.53)}
    assert format_order(dp, descending=False) == "P < MRR < Recall"
    # every ">" printed is established: check on random intervals
    rng = np.random.default_rng(1)
    for _ in range(200):
        centres = rng.uniform(0, 1, 6)
        halves = rng.uniform(0, 0.2, 6)
        est = {f"s{i}": E(c, c - h, c + h) for i, (c, h) in enumerate(zip(centres, halves))}
        groups = order_groups(est)
        assert sorted(sum(groups, [])) == sorted(est)
        for upper, lower in zip(groups, groups[1:]):
            assert all(est[u].low > est[v].high for u in upper for v in lower)


def test_order_rule_uses_the_groups():
    est = {"P": E(0.9, 0.8, 1.0), "R": E(0.7, 0.55, 0.85), "N": E(0.6, 0.5, 0.65)}
    out = order_rule(est, "N")
    # N does not overlap P, but the chain P ≈ R ≈ N leaves them in one group: not a difference
    assert out.verdict is Verdict.INCONCLUSIVE and out.detail == "P ≈ R ≈ N"
    assert out.rule == "order"
    assert order_rule({"P": E(0.9, 0.8, 1.0), "R": E(0.3, 0.2, 0.4)}, "R").verdict is Verdict.DIFFERS


def _part(low, high):
    return sign_rule(E((low + high) / 2, low, high), "positive")


def test_every_is_holm_over_the_parts():
    parts = {k: _part(0.01, 0.02) for k in "abc"}
    p_right = {"a": 0.001, "b": 0.02, "c": 0.03}
    p_wrong = {k: 1 - p for k, p in p_right.items()}
    # Holm: 0.001 < 0.05/3, 0.02 < 0.05/2, 0.03 < 0.05: all rejected
    assert multipletests(list(p_right.values()), 0.05, "holm")[0].all()
    out = every(parts, p_right, p_wrong)
    assert out.verdict is Verdict.AGREES and out.rule == "every sign"
    # 0.02 against 0.05/3 fails the first step once the smallest is 0.02: not every part shown
    out = every(parts, {"a": 0.02, "b": 0.02, "c": 0.02}, p_wrong)
    assert out.verdict is Verdict.INCONCLUSIVE
    # one part going the other way after correction: differs
    out = every(parts, {"a": 0.001, "b": 0.9999, "c": 0.001}, {"a": 0.999, "b": 0.0001, "c": 0.999})
    assert out.verdict is Verdict.DIFFERS and out.reason.startswith("b ")
    with pytest.raises(ValueError, match="p-value"):
        every(parts, {"a": 0.1}, p_wrong)


def test_every_verdict_has_a_meaning_and_outcomes_name_their_rule():
    from recmeta.ledger import MEANING

    assert set(MEANING) == set(Verdict)
    with pytest.raises(ValueError, match="rule"):
        Outcome(Verdict.AGREES, None, "why", rule=" ")


def test_sign_pvalues_from_replicates():
    from recmeta.metaeval.bootstrap import sign_pvalues

    reps = np.r_[np.full(98, 0.1), -0.1, 0.0]
    # point 0.1: 2 replicates below it and 98 tied (counted half): share 0.51, z0 = Φ⁻¹(0.51)
    p_pos, p_neg = sign_pvalues(reps, point=0.1)
    z0 = stats.norm.ppf(0.51)
    # tails Φ(Φ⁻¹(#{θ* ≤ 0}/B) ∓ 2 z0), counted as Monte-Carlo p-values (1 + B t)/(B + 1)
    up = stats.norm.cdf(stats.norm.ppf(2 / 100) - 2 * z0)
    down = stats.norm.cdf(stats.norm.ppf(99 / 100) + 2 * z0)
    assert p_pos == pytest.approx((1 + 100 * up) / 101)
    assert p_neg == pytest.approx((1 + 100 * down) / 101)
    with pytest.raises(ValueError, match="finite"):
        sign_pvalues([0.1, np.nan], point=0.1)


def test_half_unit_reads_the_printed_digits():
    from recmeta.ledger import half_unit

    assert half_unit("0.90") == pytest.approx(0.005) and half_unit(0.9) == pytest.approx(0.05)
    assert half_unit(100) == pytest.approx(0.5) and half_unit("7.0") == pytest.approx(0.05)
    assert half_unit(0.0077) == pytest.approx(0.00005) and half_unit(2.6) == pytest.approx(0.05)
    assert half_unit(1e-5) == pytest.approx(5e-6)
    assert Margin.printed("0.90", 0.01, "r").total == pytest.approx(0.015)


def test_every_claim_of_the_book_declares_its_setting():
    """A derivation, a dataset the papers name, or a data-free setting with its reason: the
    kind of every verdict follows from it (no claim is a transfer for want of a declaration)."""
    from recmeta import papers

    ledgers = papers.ledgers()
    assert len(ledgers) == 5
    undeclared = [c.id for led in ledgers.values() for c in led if not c.setting_known]
    assert undeclared == []
    # the ML-1M claims replicate on ML-1M, and on no other release
    ml1m = [c for led in ledgers.values() for c in led if "ML-1M" in paper_datasets(c.paper_dataset)]
    assert ml1m and all(c.kind("ml-1m") is Kind.REPLICATION for c in ml1m)
    assert all(c.kind("ml-100k") is not Kind.REPLICATION or c.data_free for c in ml1m)
