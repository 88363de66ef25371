"""The statistical-biases chapter covers every numbered item and headline of Bellogín et al.
(2017): Table 3 and Fig. 1 as derivations, Fig. 6's two splits, the claims added on Figs. 2, 8
and 9 and §5.3, the Last.fm and TREC statements as "not reproduced here", and the coverage
table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recmeta import protocols
from recmeta.data import popularity as pop
from recmeta.ledger import Verdict
from recmeta.ledger.coverage import gaps, paper_items
from recmeta.papers import bellogin2017 as b17
from recmeta.papers.bellogin2017 import coverage as cov, designs, tables
from recmeta.papers.bellogin2017.claims_designs import count_rule, toy_rule
from recmeta.papers.bellogin2017.claims_elsewhere import proportion_above

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
A, D, INC, N = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED
B = "bellogin2017."
NEW = (
    "tab3.definitions",
    "fig1.toy",
    "fig6.uniform-split",
    "fig6.percentiles",
    "fig8.p1r-random",
    "fig8.u1r-random",
    "fig8.more-effective-1r",
    "fig8.ndcg-patterns",
    "fig9.bpref-drags-plsa",
    "fig9.infap-drags-plsa",
    "sec3.3.mf-knn",
    "sec5.3.fewer-single-than-trec",
    "sec5.3.top-above-trec",
    "sec5.3.trec-flat",
    "sec5.3.netflix-lastfm-top",
    "fig2.lastfm-popularity-ar",
    "fig2.lastfm-ar-1r",
    "fig8.lastfm-u1r-random",
    "fig9.lastfm-popularity-top",
)


def settings() -> b17.Settings:
    return b17.Settings.resolve("quick", resamples=199, roster_systems={})


def fake(**results) -> dict:
    return {"settings": settings(), "dataset": "ml-100k", **results}


def verdict(claim: str, results: dict) -> Verdict:
    return b17.outcome(B + claim, results).verdict


def test_the_new_claims_are_registered():
    ids = set(b17.LEDGER.ids)
    assert {B + c for c in NEW} <= ids and len(NEW) >= 14


# ---- Table 3 and Fig. 1 ----
def _toy(design: str) -> tuple[protocols.Protocol, pd.DataFrame]:
    p = designs._protocol(design)
    return p, protocols.target_sets(designs.TOY_TRAIN, designs.TOY_TEST, p, items=designs.TOY_ITEMS)


def _violations(sets: pd.DataFrame, p: protocols.Protocol) -> dict[str, int]:
    return designs.design_violations(
        designs.TOY_TRAIN, designs.TOY_TEST, sets, p, designs.TOY_ITEMS
    )


@pytest.mark.parametrize("design", designs.TOY_DESIGNS)
def test_the_builder_follows_table_3_on_the_toy(design):
    p, sets = _toy(design)
    got = _violations(sets, p)
    assert got["sets"] > 0 and got["candidates"] == got["relevant"] == got["nonrelevant"] == 0


def test_table_3_checks_catch_each_kind_of_violation():
    p, sets = _toy("TI-AN AR")
    # u's set {b, c, d, e}: dropping b leaves AN short of the pool
    assert _violations(sets.loc[~((sets.user == "u") & (sets.item == "b"))], p)["nonrelevant"] == 1
    # dropping a liked item breaks AR
    assert _violations(sets.loc[~((sets.user == "u") & (sets.item == "d"))], p)["relevant"] == 1
    # f, rated by u in training, may not be a non-relevant item of u's
    extra = sets.iloc[[0]].assign(item="f", relevant=False, rating=np.nan)
    first = int(sets.loc[sets.user == "u", "set"].iloc[0])
    assert _violations(pd.concat([sets, extra.assign(set=first, user="u")]), p)["nonrelevant"] >= 1
    # AI sets read as TI hold a, which has no test rating (u's and w's sets; v rated a)
    p_ai, ai = _toy("AI-AN AR")
    assert _violations(ai, p)["candidates"] == 2 and _violations(ai, p_ai)["candidates"] == 0
    # 1R: a set with both liked items
    p1, one = _toy("TI-NN 1R")
    two = one.copy()
    two.loc[(two.user == "u") & ~two.relevant, ["item", "relevant", "rating"]] = ["e", True, 4.0]
    assert _violations(two, p1)["relevant"] >= 1


def test_the_toy_sets_match_fig1_and_a_wrong_builder_shows():
    assert designs.toy_mismatches() == {}
    built = designs.toy_sets()
    assert built["TI-AN AR"] == ["bcde"] and built["AI-AN 1R"] == ["abcd", "abce"]

    def ai_always(train, test, p, items):
        q = protocols.Protocol("AI", p.relevant, p.nonrelevant, p.n_nonrelevant, threshold=4)
        return protocols.target_sets(train, test, q, items=items)

    wrong = designs.toy_mismatches(ai_always)
    assert {"TI-AN AR", "TI-AN 1R"} <= set(wrong) and not any(d.startswith("AI") for d in wrong)
    assert wrong["TI-AN AR"] == "{abcde}"
    table = tables.fig1_table()
    assert table.loc["TI-NN 1R", "Fig. 1 (by hand)"] == "{d + x ∈ {b, c}}; {e + x ∈ {b, c}}"


def test_count_and_toy_rules_hold_fail_and_are_inconclusive():
    ok = {"a": {"x": 0, "y": 0}}
    assert count_rule(ok, ("x", "y"), "design").verdict is A
    bad = count_rule({**ok, "b": {"x": 0, "y": 2}}, ("x", "y"), "design")
    assert bad.verdict is D and "b: 2 break the y definition" in bad.reason
    assert count_rule({}, ("x",), "design").verdict is INC
    assert toy_rule({}).verdict is A
    assert toy_rule({"TI-AN AR": "{b, d}"}).verdict is D
    assert toy_rule({}, designs=()).verdict is INC


def test_table3_claim_is_a_derivation_that_holds_or_fails():
    frame = pd.DataFrame(
        [{"design": "TI-AN AR", "sets": 10, "candidates": 0, "relevant": 0, "nonrelevant": 0}]
    )
    row = b17.LEDGER.row(
        B + "tab3.definitions", fake(table3_check=frame), dataset="ml-100k", profile="quick"
    )
    assert row["kind"] == "derivation" and row["verdict"] == "holds"
    frame.loc[0, "relevant"] = 3
    assert verdict("tab3.definitions", fake(table3_check=frame)) is D
    assert verdict("tab3.definitions", fake(table3_check=frame.assign(sets=0))) is INC
    assert verdict("fig1.toy", fake()) is A


# ---- Fig. 6 ----
PRIOR = {1.0: 0.1, 2.0: 0.15, 3.0: 0.3, 4.0: 0.25, 5.0: 0.2}


@pytest.fixture(scope="module")
def ratings() -> pd.DataFrame:
    return pop.simulate_ratings(150, 120, 4000, 1.0, PRIOR, c1=1.0, c2=10.0, seed=0)


def test_uniform_split_checks_hold_and_catch_a_tampered_split():
    # a steep popularity (α = 2) leaves the tail out of T
    ratings = pop.simulate_ratings(150, 120, 4000, 2.0, PRIOR, c1=1.0, c2=10.0, seed=0)
    sp = protocols.uniform_test_split(ratings, 0.2, 0.2, seed=0)
    assert 0 < len(sp.items) < ratings["item"].nunique()
    got = designs.uniform_violations(ratings, sp, 0.2, 0.2)
    assert all(v == 0 for k, v in got.items() if k not in ("T", "eta")), got
    # one test rating moved back to training: that item has η − 1
    moved = protocols.UniformSplit(
        pd.concat([sp.train, sp.test.iloc[:1]]), sp.test.iloc[1:], sp.items, sp.eta
    )
    assert designs.uniform_violations(ratings, moved, 0.2, 0.2)["not eta"] == 1
    # a test rating of an item outside T
    out = sp.train.loc[~sp.train["item"].isin(sp.items)].iloc[:1]
    bad = protocols.UniformSplit(
        sp.train.drop(out.index), pd.concat([sp.test, out]), sp.items, sp.eta
    )
    assert designs.uniform_violations(ratings, bad, 0.2, 0.2)["outside T"] == 1
    # T without its most popular item: not the top items, and that item's test ratings outside T
    top = ratings.groupby("item").size().idxmax()
    small = protocols.UniformSplit(sp.train, sp.test, sp.items[sp.items != top], sp.eta)
    got = designs.uniform_violations(ratings, small, 0.2, 0.2)
    assert got["not the top"] == 2 and got["outside T"] == 1
    # the test share below σ
    assert designs.uniform_violations(ratings, sp, 0.9, 0.2)["test share"] == 1


def test_percentile_checks_hold_and_catch_a_shuffled_partition(ratings, monkeypatch):
    assert designs.percentile_violations(ratings, 4) == {
        "items": ratings["item"].nunique(),
        "strata": 0,
        "sizes": 0,
        "order": 0,
    }
    real = designs.percentile_strata

    def reversed_strata(r, m, items=None):
        s = real(r, m, items)
        return (m - 1 - s).rename("stratum")

    monkeypatch.setattr(designs, "percentile_strata", reversed_strata)
    assert designs.percentile_violations(ratings, 4)["order"] == 3


def test_fig6_claims_on_a_study_and_on_broken_counts(ratings):
    st = b17.Study(
        ratings,
        b17.Settings.resolve("quick", threshold=4.0, percentiles=3, roster_systems={}),
        dataset="toy",
    )
    res = st.fig6()
    assert len(res["curve"]) == ratings["item"].nunique()
    assert (res["curve"]["uniform test"] > 0).sum() == res["uniform"]["T"]
    r = {"settings": st.s, "dataset": "toy", "fig6": res}
    assert verdict("fig6.uniform-split", r) is A and verdict("fig6.percentiles", r) is A
    broken = {
        **res,
        "uniform": {**res["uniform"], "training share": 2},
        "percentiles": {**res["percentiles"], "sizes": 1},
    }
    r["fig6"] = broken
    assert verdict("fig6.uniform-split", r) is D and verdict("fig6.percentiles", r) is D


# ---- Fig. 8: random level, 1R against AR, the nDCG panel ----
def per_set(
    levels: dict[tuple[str, ...], float],
    keys: tuple[str, ...],
    users: int,
    sd: float,
    seed: int,
    value: str = "P",
) -> pd.DataFrame:
    """One set per user for each key tuple (named by ``keys``: design, system, ...), its value
    the level plus normal noise of ``sd``: a per-set frame as the study's trials give."""
    rng = np.random.default_rng(seed)
    idx = np.arange(users)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "seed": 0,
                    "set": idx,
                    "user": idx,
                    "stratum": 0,
                    **dict(zip(keys, k, strict=True)),
                    value: level + rng.normal(0, sd, users),
                }
            )
            for k, level in levels.items()
        ],
        ignore_index=True,
    )


def fig8_frame(
    lifts: dict[str, float], users: int = 300, sd: float = 0.002, seed: int = 0, metric: str = "P"
) -> pd.DataFrame:
    """Random at 0.01, popularity at lift × 0.01 in each design; P flat unless it is the metric."""
    levels = {
        (d, sy): 0.01 * (lift_ if sy == "popularity" else 1.0)
        for d, lift_ in lifts.items()
        for sy in ("popularity", "random")
    }
    out = per_set(levels, ("design", "system"), users, sd, seed, "nDCG")
    out["P"] = out["nDCG"] if metric == "P" else 0.01
    return out


def test_random_level_agrees_differs_and_is_inconclusive():
    at = fake(fig8=fig8_frame({"1R": 3.0, "P1R": 1.0, "U1R": 1.0}))
    assert verdict("fig8.p1r-random", at) is A and verdict("fig8.u1r-random", at) is A
    above = fake(fig8=fig8_frame({"1R": 3.0, "P1R": 2.0, "U1R": 2.0}))
    assert verdict("fig8.p1r-random", above) is D
    # a tenth of the advantage left: the interval straddles the margin's edge
    edge = fake(fig8=fig8_frame({"1R": 3.0, "P1R": 1.2, "U1R": 1.2}))
    out = b17.outcome(B + "fig8.p1r-random", edge)
    assert out.verdict is INC and out.rule == "equivalence" and out.margin == 0.1
    assert out.ours.value == pytest.approx(0.1, abs=0.03)
    row = b17.LEDGER.row(B + "fig8.p1r-random", at, dataset="ml-100k", profile="quick")
    assert row["kind"] == "transfer" and row["verdict"] == "agrees"  # a comparison, graded


def test_more_effective_on_1r_than_ar():
    base = {"1R": 3.0, "AR TI-NN": 3.0}

    def check(u1r: float, p1r: float, uar: float) -> Verdict:
        lifts = {**base, "U1R": u1r, "P1R": p1r, "UAR": uar}
        return verdict("fig8.more-effective-1r", fake(fig8=fig8_frame(lifts)))

    assert check(1.0, 1.0, 2.0) is A
    out = b17.outcome(
        B + "fig8.more-effective-1r",
        fake(fig8=fig8_frame({**base, "U1R": 1.0, "P1R": 1.0, "UAR": 2.0})),
    )
    assert out.rule == "every sign" and "2 parts" in out.reason
    assert check(1.0, 2.5, 2.0) is D  # P1R leaves more than UAR
    assert check(1.0, 2.0, 2.0) is INC  # P1R ties with UAR
    gone = fake(fig8=fig8_frame({"1R": 3.0, "U1R": 1.0}))
    assert verdict("fig8.more-effective-1r", gone) is N
    # P1R absent: U1R alone decides
    one = fake(fig8=fig8_frame({**base, "U1R": 1.0, "UAR": 2.0}))
    assert verdict("fig8.more-effective-1r", one) is A


def test_ndcg_patterns_every_part_under_holm():
    good = {
        "1R": 5.0,
        "U1R": 2.0,
        "P1R": 1.5,
        "1R −10% head": 4.0,
        "AR TI-NN": 6.0,
        "UAR": 3.0,
        "AI-UAR": 4.5,
    }
    out = b17.outcome(B + "fig8.ndcg-patterns", fake(fig8=fig8_frame(good, metric="nDCG")))
    assert out.verdict is A and out.rule == "every sign"
    # under P nothing moves (P is flat): the nDCG claim reads nDCG, not P
    assert "5 parts" in out.reason
    wrong = {**good, "P1R": 3.0}  # P1R above U1R
    assert verdict("fig8.ndcg-patterns", fake(fig8=fig8_frame(wrong, metric="nDCG"))) is D
    tie = {**good, "P1R": 2.0}
    assert verdict("fig8.ndcg-patterns", fake(fig8=fig8_frame(tie, metric="nDCG"))) is INC
    # AI-UAR absent (the second dataset's quick profile): four parts
    fewer = {k: v for k, v in good.items() if k != "AI-UAR"}
    out = b17.outcome(B + "fig8.ndcg-patterns", fake(fig8=fig8_frame(fewer, metric="nDCG")))
    assert out.verdict is A and "4 parts" in out.reason


# ---- Fig. 9 and §3.3 ----
def fig9_frame(p_lift: float, m_lift: float, metric: str, users: int = 300) -> pd.DataFrame:
    levels = {
        ("AR TI-AN", m, sy): 0.05 * (lift_ if sy == "pLSA" else 1.0)
        for m, lift_ in (("P", p_lift), (metric, m_lift))
        for sy in ("pLSA", "random", "popularity")
    }
    return per_set(levels, ("design", "metric", "system"), users, 0.005, 1, "value")


@pytest.mark.parametrize("metric", ["bpref", "infAP"])
def test_drag_claims_agree_differ_and_are_inconclusive(metric):
    cid = f"fig9.{metric.lower()}-drags-plsa"
    assert verdict(cid, fake(fig9=fig9_frame(4.0, 2.0, metric))) is A
    assert verdict(cid, fake(fig9=fig9_frame(2.0, 4.0, metric))) is D
    assert verdict(cid, fake(fig9=fig9_frame(3.0, 3.0, metric))) is INC
    no_plsa = fig9_frame(4.0, 2.0, metric)
    out = b17.outcome(B + cid, fake(fig9=no_plsa.loc[no_plsa.system != "pLSA"]))
    assert out.verdict is N and "pLSA did not run" in out.reason


def fig2_frame(gaps_: dict[str, float], users: int = 300) -> pd.DataFrame:
    base = {"MF": 0.05, "user-kNN": 0.05, "popularity": 0.04, "random": 0.01}
    levels = {
        (d, sy): level + (gap if sy == "MF" else 0.0)
        for d, gap in gaps_.items()
        for sy, level in base.items()
    }
    return per_set(levels, ("design", "system"), users, 0.005, 2)


def test_mf_above_knn_in_most_designs():
    d3 = ("AR AI-AN", "AR TI-AN", "1R TI-NN")
    assert (
        verdict(
            "sec3.3.mf-knn", fake(fig2=fig2_frame(dict(zip(d3, (0.02, 0.02, -0.02), strict=True))))
        )
        is A
    )
    assert (
        verdict(
            "sec3.3.mf-knn", fake(fig2=fig2_frame(dict(zip(d3, (-0.02, -0.02, 0.02), strict=True))))
        )
        is D
    )
    assert (
        verdict(
            "sec3.3.mf-knn", fake(fig2=fig2_frame(dict(zip(d3, (0.02, -0.02, 0.0), strict=True))))
        )
        is INC
    )
    f = fig2_frame(dict.fromkeys(d3, 0.02))
    out = b17.outcome(B + "sec3.3.mf-knn", fake(fig2=f.loc[f.system != "user-kNN"]))
    assert out.verdict is N and "user-kNN did not run" in out.reason


# ---- §5.3 and the data this book does not have ----
def test_proportions_against_trec():
    assert proportion_above(10, 1000, 0.872, "negative", "x").verdict is A
    assert proportion_above(990, 1000, 0.872, "negative", "x").verdict is D
    assert proportion_above(87, 100, 0.872, "negative", "x").verdict is INC
    with pytest.raises(ValueError, match="0 <= k <= n"):
        proportion_above(5, 3, 0.5, "positive", "x")
    shares = {"liked items": 1000, "liked once": 100, "top count": 300, "users": 943}
    r = fake(positive_shares=shares)
    assert verdict("sec5.3.fewer-single-than-trec", r) is A
    assert verdict("sec5.3.top-above-trec", r) is A
    flat = fake(positive_shares={**shares, "liked once": 990, "top count": 5})
    assert verdict("sec5.3.fewer-single-than-trec", flat) is D
    assert verdict("sec5.3.top-above-trec", flat) is D


@pytest.mark.parametrize("cid", [c for c in NEW if "lastfm" in c or "trec-flat" in c])
def test_statements_on_other_data_are_not_reproduced_with_the_reason(cid):
    out = b17.outcome(B + cid, fake())
    assert out.verdict is N
    assert "not available here" in out.reason or "not here" in out.reason
    row = b17.LEDGER.row(B + cid, fake(), dataset="ml-100k", profile="quick")
    assert row["verdict"] == N.value and row["kind"] == "transfer"


# ---- the coverage table ----
def _text() -> str:
    return (PAPERS / cov.PAPER_FILE).read_text(encoding="utf-8")


def test_declared_items_are_the_paper_s():
    assert set(cov.ITEMS) == set(paper_items(_text()))


def test_every_item_of_the_paper_and_every_headline_has_a_row():
    frame = cov.table()
    assert gaps(frame) == []
    rows = set(frame["item"])
    assert [i for i in paper_items(_text()) if i not in rows] == []
    ids = set(b17.LEDGER.ids)
    for h in cov.HEADLINES:
        assert h.claims and set(h.claims) <= ids, h.statement
    assert {h.where for h in cov.HEADLINES} == {"Abstract", "§8"}
    md = cov.markdown()
    assert "| Table 3 | `tab3.definitions` |" in md and "| Fig. 1 | `fig1.toy` |" in md
    for item in ("Fig. 2", "Fig. 8", "Fig. 9"):
        row = frame.set_index("item").loc[item]
        assert "Last.fm" in row["not_here"] and any("lastfm" in c for c in row["claims"])
    for item in ("Table 1", "Table 2"):
        assert frame.set_index("item").loc[item, "not_here"]
