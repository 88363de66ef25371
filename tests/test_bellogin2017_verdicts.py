"""Verdicts of the statistical-biases ledger that mean what they say: every claim's setting, the
derivations apart, value claims as equivalence tests with declared margins, orders written as
groups, and sentences of the chapter that read the numbers beside them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from recmeta.ledger import DERIVED, Kind, Verdict, format_number, format_order
from recmeta.papers import bellogin2017 as b17
from recmeta.papers.bellogin2017 import text, trials

from .test_bellogin2017 import settings, toy

PACKAGE = Path(b17.__file__).resolve().parent
B = "bellogin2017."


@pytest.fixture(scope="module")
def study() -> b17.Study:
    st = b17.Study(toy(), settings(), dataset="toy")
    st.run_all(table3=True)
    return st


def fake(**results) -> dict:
    return {"settings": settings(), "dataset": "toy", **results}


def row(claim: str, results: dict, dataset: str) -> dict:
    return b17.LEDGER.row(B + claim, results, dataset=dataset, profile="quick")


# ---- settings and kinds -------------------------------------------------------------------------


def test_every_claim_declares_its_setting() -> None:
    unknown = [c.id for c in b17.LEDGER if not c.setting_known]
    assert unknown == []


@pytest.mark.parametrize(
    "claim",
    [
        "eq1.bound",
        "eq2.bounds",
        "eq2.proof-step",
        "eq5.random-1r",
        "sec6.3.map-mrr",
        "sec6.3.grades",
        "fig5.random-alpha0",
        "fig9.bpref-1r",
    ],
)
def test_identities_and_constructions_are_derivations(claim: str) -> None:
    c = b17.LEDGER[B + claim]
    assert c.paper_dataset == DERIVED
    assert c.kind("ml-100k") is Kind.DERIVATION and c.kind("ml-1m") is Kind.DERIVATION


def test_ml1m_claims_replicate_on_ml1m_only() -> None:
    for claim in ("fig2.popularity-ar", "fig5.popularity-alpha0", "fig8.u1r", "fig5.below-random"):
        c = b17.LEDGER[B + claim]
        assert c.kind("ml-1m") is Kind.REPLICATION
        assert c.kind("ml-100k") is Kind.TRANSFER and c.kind("ratings.csv") is Kind.TRANSFER


def test_no_legacy_value_rule_left_in_the_package() -> None:
    for path in PACKAGE.glob("*.py"):
        assert "legacy_value_rule" not in path.read_text(), path.name
        assert "max_width" not in path.read_text(), path.name


def test_every_value_claim_has_a_numeric_paper_value_and_a_margin(study) -> None:
    frame = b17.LEDGER.evaluate(study.results, dataset="ml-1m", profile="quick")
    values = frame[frame["rule"] == "value"]
    assert len(values) >= 12
    for _, r in values.iterrows():
        assert isinstance(r["paper_value"], float) and r["margin"] > 0, r["claim"]
        if r["verdict"] == "agrees":
            assert r["paper_value"] - r["margin"] <= r["low"] <= r["high"]
            assert r["high"] <= r["paper_value"] + r["margin"]
    assert (frame["rule"] != "custom").all()


# ---- magnitudes of ML-1M: graded on ML-1M, shown elsewhere --------------------------------------


def ar_frame(pop: np.ndarray, design: str = "AR TI-AN") -> pd.DataFrame:
    users = np.arange(len(pop))
    rows = [
        pd.DataFrame(
            {
                "seed": 0,
                "system": name,
                "set": users,
                "user": users,
                "stratum": 0,
                "removed": 0.0,
                "P": v,
                "nDCG": v,
                "design": design,
            }
        )
        for name, v in (("popularity", pop), ("random", np.full(len(pop), 0.01)))
    ]
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        (np.tile([0.07, 0.08, 0.09], 400), Verdict.AGREES),  # 0.08, tight: inside 0.08 ± 0.015
        (np.tile([0.19, 0.2, 0.21], 400), Verdict.DIFFERS),  # wholly above
        (np.tile([0.0, 0.3], 10), Verdict.INCONCLUSIVE),  # 0.15, wide: across the edge
    ],
)
def test_popularity_ar_is_graded_on_ml1m_and_shown_elsewhere(values, verdict) -> None:
    r = fake(fig2=ar_frame(values))
    here = row("fig2.popularity-ar", {**r, "dataset": "ml-1m"}, "ml-1m")
    assert here["verdict"] == verdict.value and here["margin"] == pytest.approx(0.015)
    there = row("fig2.popularity-ar", r, "ml-100k")
    assert there["verdict"] == Verdict.NOT_GRADED.value and there["kind"] == "transfer"


def test_a_wider_interval_never_turns_popularity_ar_into_agrees() -> None:
    tight = b17.outcome(B + "fig2.popularity-ar", fake(fig2=ar_frame(np.full(400, 0.08))))
    wide = b17.outcome(B + "fig2.popularity-ar", fake(fig2=ar_frame(np.tile([0.0, 0.16], 10))))
    assert tight.verdict == Verdict.AGREES and wide.verdict == Verdict.INCONCLUSIVE


def sim_frame(pop: float, rnd: float, users: int = 300) -> pd.DataFrame:
    u = np.arange(users)
    rng = np.random.default_rng(0)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "seed": 0,
                    "system": name,
                    "set": u,
                    "user": u,
                    "stratum": 0,
                    "removed": 0.0,
                    "P": rng.binomial(1, p * 10, users) / 10,
                    "nDCG": 0.0,
                    "formula": 0.01,
                    "alpha": alpha,
                }
            )
            for alpha in (0.0, 2.0)
            for name, p in (("popularity", pop), ("random", rnd))
        ],
        ignore_index=True,
    )


def test_alpha0_claims_popularity_shown_random_derived() -> None:
    r = fake(simulation=sim_frame(0.03, 0.0100, users=4000))
    pop = row("fig5.popularity-alpha0", r, "ml-100k")
    assert pop["verdict"] == Verdict.NOT_GRADED.value
    assert row("fig5.popularity-alpha0", {**r, "dataset": "ml-1m"}, "ml-1m")["verdict"] == (
        Verdict.DIFFERS.value
    )
    rnd = row("fig5.random-alpha0", r, "ml-100k")
    assert rnd["kind"] == "derivation" and rnd["verdict"] in ("holds", "inconclusive")
    broken = fake(simulation=sim_frame(0.03, 0.03, users=4000))
    assert row("fig5.random-alpha0", broken, "ml-100k")["verdict"] == "fails"


# ---- derivations that can fail ------------------------------------------------------------------


def test_bpref_in_1r_is_a_derivation_on_sets_without_judged_nonrelevant_items() -> None:
    ident = pd.DataFrame(
        {"design": "1R TI-NN", "system": ["a", "b", "c"], "set": [0, 1, 2], "bpref": 1.0}
    )
    assert b17.outcome(B + "fig9.bpref-1r", fake(identities=ident)).verdict == Verdict.AGREES
    ident.loc[1, "bpref"] = 0.5
    out = b17.outcome(B + "fig9.bpref-1r", fake(identities=ident))
    assert out.verdict == Verdict.DIFFERS and out.ours.value == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no bpref column"):
        b17.outcome(B + "fig9.bpref-1r", fake(identities=ident.drop(columns="bpref")))


def test_bpref_is_one_on_the_studys_1r_sets(study) -> None:
    f = study.results["identities"]
    np.testing.assert_allclose(f.loc[f["design"] == "1R TI-NN", "bpref"], 1.0)


# ---- "every" and "most" -------------------------------------------------------------------------


def test_popularity_beats_random_is_every_design_under_holm(study) -> None:
    out = b17.outcome(B + "fig2.popularity-beats-random", study.results)
    assert out.rule == "every sign" and "Holm" in out.reason
    assert out.verdict == Verdict.AGREES


def test_most_means_more_than_half() -> None:
    from recmeta.ledger import Outcome

    def o(v: Verdict) -> Outcome:
        return Outcome(v, None, "x", rule="order")

    assert b17.claims.most({"a": o(Verdict.AGREES), "b": o(Verdict.AGREES)}).verdict == "agrees"
    two = {"a": o(Verdict.AGREES), "b": o(Verdict.DIFFERS)}
    assert b17.claims.most(two).verdict == Verdict.INCONCLUSIVE
    three = {**two, "c": o(Verdict.DIFFERS)}
    assert b17.claims.most(three).verdict == Verdict.DIFFERS
    assert b17.claims.most(three).rule == "most order"


# ---- orders as groups ---------------------------------------------------------------------------


def test_fig4_order_is_written_in_groups_the_intervals_separate() -> None:
    # two systems with the same values: no ">" may be printed between them
    same = np.tile([0.0, 0.1], 100)
    f = pd.concat(
        [
            ar_frame(same).assign(removed=0.0),
            ar_frame(same * 0.5).assign(removed=0.8),
        ],
        ignore_index=True,
    )
    f.loc[f["system"] == "random", "P"] = np.tile([0.0, 0.1], 200) * np.repeat([1, 0.5], 200)
    out = b17.outcome(B + "fig4.order", fake(ar_removal=f))
    assert ">" not in out.detail and "popularity ≈ random" in out.detail


def test_fig2_sentence_prints_the_orders_of_format_order(study) -> None:
    out = text.fig2_text(study)
    for design, order in text.fig2_orders(study).items():
        assert f"{order} under {design}" in out
    f = study.results["fig2"]
    g = f.loc[f["design"] == "AR TI-AN"]
    est = b17.evidence.order_in(study.results, g, ["popularity", "random"])
    assert text.fig2_orders(study)["AR TI-AN"] == format_order(est)


# ---- the sentence on AI-AN against TI-AN reads the numbers beside it ----------------------------


def test_ai_ti_sentence_names_its_splits_and_reads_its_table(study) -> None:
    # the quick profile runs AI-AN on fewer splits than TI-AN: the sentence must say on which
    split = trials.summarise(study.results["fig2"], by=["design"])
    ai_seeds = set(split.loc[split["design"] == "AR AI-AN", "seed"])
    ti_seeds = set(split.loc[split["design"] == "AR TI-AN", "seed"])
    assert ai_seeds < ti_seeds
    both = split.loc[split["seed"].isin(ai_seeds)]
    m = both.groupby(["design", "system"])["P"].mean().unstack("system")
    change = m.loc["AR TI-AN"] / m.loc["AR AI-AN"] - 1
    out = text.ai_ti_text(study)
    k = len(ai_seeds)
    assert f"On the {k} split{'s' if k != 1 else ''} both AR designs ran on" in out
    for system, v in change.items():
        assert f"{v:+.1%} for {system}" in out
    # the Fig. 2 table says how many splits each design averages
    f2 = b17.tables.fig2_table(study)
    assert f2.loc["AR AI-AN", "splits"] == k and f2.loc["AR TI-AN", "splits"] == len(ti_seeds)
    table = b17.tables.ai_ti_table(study)
    for system, v in change.items():
        assert table.loc[system, "change"] == pytest.approx(v)


# ---- prose that no longer presumes an outcome ---------------------------------------------------


def fig8_stub(head: int, tail: int) -> SimpleNamespace:
    strata = np.repeat([0, 1, 2], [head, 5, tail])
    f = pd.DataFrame({"design": "P1R", "system": "random", "stratum": strata})
    return SimpleNamespace(results={"fig8": f})


def test_p1r_sentence_follows_the_counts() -> None:
    assert "fewer sets in the tail" in text.p1r_text(fig8_stub(40, 4))
    out = text.p1r_text(fig8_stub(4, 40))
    assert "fewer sets in the tail" not in out and "at least as many" in out


def covariance_stub(rho: float, cov: float) -> SimpleNamespace:
    c = pd.DataFrame({"sigma": 0.2, "seed": [0, 1], "eq4": 0.01, "rho": rho, "cov": cov})
    return SimpleNamespace(results={"ar_checks": c}, s=settings(), dataset="toy")


def test_covariance_sentence_takes_its_direction_from_the_data() -> None:
    assert "exceeds eq. 4 by 5.0%" in text.covariance_text(covariance_stub(0.0105, 0.0004))
    out = text.covariance_text(covariance_stub(0.0097, -0.0002))
    assert "falls below eq. 4 by 3.0%" in out and "takes away 2.0%" in out


def test_popularity_gap_sentence_follows_the_verdict(study, monkeypatch) -> None:
    ours = b17.outcome(B + "fig2.popularity-ar", study.results).ours
    assert ours is not None and ours.low is not None
    # the paper's value far below ours: a gap the sentence names
    monkeypatch.setitem(b17.PAPER, "popularity_ar", round(ours.low / 4, 3))
    assert b17.outcome(B + "fig2.popularity-ar", study.results).verdict == Verdict.DIFFERS
    assert "higher than" in text.popularity_gap_text(study)
    # the paper's value at ours: our interval straddles the margin's edge, no gap to explain
    monkeypatch.setitem(b17.PAPER, "popularity_ar", round(ours.value, 2))
    assert b17.outcome(B + "fig2.popularity-ar", study.results).verdict == Verdict.INCONCLUSIVE
    out = text.popularity_gap_text(study)
    assert "neither inside nor outside" in out and "higher than" not in out and "Why" not in out


def test_dip_sentence_follows_the_sign_at_alpha_zero(study) -> None:
    assert "falls below random at α = 0" in text.fig5_text(study)
    sim = study.results["simulation"].copy()
    zero = np.isclose(sim["alpha"], 0.0)
    pop, rnd = zero & (sim["system"] == "popularity"), zero & (sim["system"] == "random")
    sim.loc[pop, "P"], sim.loc[rnd, "P"] = (
        sim.loc[rnd, "P"].to_numpy() + 0.05,
        sim.loc[pop, "P"].to_numpy(),
    )
    swapped = SimpleNamespace(
        results={**study.results, "simulation": sim}, s=study.s, dataset=study.dataset
    )
    out = text.fig5_text(swapped)
    assert "rises above random at α = 0" in out and "falls below random" not in out


def test_formula_note_reads_the_interval_widths() -> None:
    rows = pd.DataFrame(
        {
            "sigma": 0.2,
            "seed": range(6),
            "eq4": 0.01,
            "rho": 0.0105 + np.arange(6) * 1e-6,
            "cov": 0.0005,
            "split": 0.0,
            "random": [0.0095, 0.0142, 0.0101, 0.0140, 0.0098, 0.0143],
        }
    )
    eq5 = pd.DataFrame({"sigma": 0.2, "seed": range(3), "P": 0.05, "formula": 0.05})
    st = SimpleNamespace(results=fake(ar_checks=rows, eq5=eq5), s=settings(), dataset="toy")
    out = text.formula_text(st)
    mc = b17.outcome(B + "eq4.monte-carlo", st.results)
    half = (mc.ours.high - mc.ours.low) / 2
    assert "Monte-Carlo check of eq. 4 *inconclusive* while the exact $\\rho$ *agrees*" in out
    assert f"Monte-Carlo interval reaches ± {format_number(half)} of eq. 4" in out
    assert "not eq. 4's own error, decides the first" in out
