"""The sampled-metrics ledger's verdicts mean what they say: each claim's setting and kind, value
claims as equivalence tests with declared margins, conjunctions under Holm, Fig. 6 tested away
from its crossover, the tie rule chosen on a principle with each claim's tie sensitivity, and
orders in the text as the groups the intervals separate. Hand cases where the answer is known.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recmeta.ledger import DERIVED, Estimate, SignPart, Verdict, every_sign
from recmeta.papers import krichene2020 as kr
from recmeta.papers.krichene2020 import claims, claims_movielens, text
from tests.test_krichene2020 import (  # noqa: F401  (fixtures)
    real_results,
    tie_frames,
    tie_table,
    toy_results,
)

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "recmeta" / "papers" / "krichene2020"


def test_every_claim_declares_its_setting_and_gets_its_kind():
    assert all(c.setting_known for c in kr.LEDGER), [c.id for c in kr.LEDGER if not c.setting_known]
    derived = {c.id.removeprefix(kr.PREFIX) for c in kr.LEDGER if c.paper_dataset == DERIVED}
    assert {
        "s4.4.1.auc-unbiased",
        "s4.4.3.eq19",
        "s5.3.gamma-one",
        "s6.3.rank-estimate-recall-ndcg",
    } <= derived
    for c in kr.LEDGER:
        if c.paper_dataset == DERIVED:
            assert c.kind("ml-100k") == "derivation"
        elif "real" in c.needs or "real_multi" in c.needs:
            # the paper's MovieLens claims are on ML-1M: transfer elsewhere, replication there
            assert c.paper_dataset == "ML-1M", c.id
            assert (c.kind("ml-100k"), c.kind("ml-1m")) == ("transfer", "replication"), c.id
        else:
            # the running example and the analysis need no data: replication on any run
            assert c.data_free, c.id
            assert c.kind("ml-100k") == c.kind("/tmp/own.csv") == "replication", c.id


def test_no_legacy_value_rule_and_orders_written_by_format_order():
    for path in PKG.glob("*.py"):
        code = path.read_text()
        assert "legacy_value_rule" not in code, path.name
        # no order joined by hand: every order is written by recmeta.ledger.format_order
        assert not re.search(r"""["'](>|<|=| > | < )["']\.join""", code), path.name
    assert "return format_order(" in (PKG / "paper.py").read_text()


def test_the_tie_rule_is_chosen_on_a_principle_not_on_a_figure():
    assert kr.Settings().ties == kr.DEFAULT_TIES == "expected"
    assert kr.Settings.resolve("quick", dataset="d").ties == "expected"
    assert "random order" in kr.TIES_PRINCIPLE and "Figure 5" not in kr.TIES_PRINCIPLE
    nb = (ROOT / "notebooks" / "sampled-metrics.md").read_text()
    assert 'ties = "expected"' in nb
    for typed in ("the paper's reading", "the only reading under which", "piles its misses"):
        assert typed not in nb, typed
    said = text.tie_rule_text(kr.Settings(ties="pessimistic"))
    assert "*pessimistic*" in said and "the default is *expected*" in said


# ------------------------------------------------------------------------- Fig. 5 counts
def _fake_x(ranks: np.ndarray, n: float = 3706.0) -> dict:
    study = SimpleNamespace(
        systems=("X", "Y", "Z"),
        ranks=lambda: {"X": ranks, "Z": ranks},
        standing=SimpleNamespace(n=np.full(ranks.size, n)),
    )
    return {"real": study, "settings": kr.Settings(n_resamples=999, level=0.95, seed=0)}


def _top100(users: int, share: float) -> np.ndarray:
    hits = round(users * share)
    return np.r_[np.full(hits, 5.0), np.full(users - hits, 900.0)]


@pytest.mark.parametrize(
    "users, share, verdict",
    [
        # the paper's share on twice its users: [2,261, 2,363], inside 2,310 ± 75.5 (scipy's BCa
        # jackknife grows with the square of the users: 60,400 took 22 s, 12,080 take 1 s)
        (12_080, 2310 / 6040, Verdict.AGREES),
        (6_040, 0.30, Verdict.DIFFERS),  # far below: 1,812 of 6,040
        (300, 2310 / 6040, Verdict.INCONCLUSIVE),  # the paper's share, too few users to tell
    ],
)
def test_x_top100_is_an_equivalence_decided_by_the_data(users, share, verdict):
    claim = kr.LEDGER["krichene2020.fig5.x-top100"]
    out = claim.outcome(_fake_x(_top100(users, share)))
    assert out.verdict == verdict, out.reason
    assert out.rule == "value" and out.margin == pytest.approx(75.5)
    if users > 6_040:  # the rows below bootstrap the same users again: checked on fewer
        return
    # on the paper's data it is graded; on other data the magnitude is shown, not graded
    graded = kr.LEDGER.row(
        claim.id, _fake_x(_top100(users, share)), dataset="ml-1m", profile="quick"
    )
    shown = kr.LEDGER.row(
        claim.id, _fake_x(_top100(users, share)), dataset="ml-100k", profile="quick"
    )
    assert graded["verdict"] == verdict.value and shown["verdict"] == "shown, not graded"


@pytest.mark.parametrize(
    "low, high, side, verdict",
    [
        (1700, 1800, "over", Verdict.AGREES),
        (1400, 1500, "over", Verdict.DIFFERS),
        (1550, 1650, "over", Verdict.INCONCLUSIVE),
        (200, 280, "under", Verdict.AGREES),
        (320, 400, "under", Verdict.DIFFERS),
        (250, 350, "under", Verdict.INCONCLUSIVE),
    ],
)
def test_bound_rule_on_hand_cases(low, high, side, verdict):
    paper = 1600 if side == "over" else 300
    out = claims_movielens.bound_rule(paper, Estimate((low + high) / 2, low, high), side)
    assert out.verdict == verdict and out.rule == "value" and out.margin == 0.5
    # a wider interval never turns a verdict into agrees or differs
    wide = claims_movielens.bound_rule(
        paper, Estimate((low + high) / 2, low - 500, high + 500), side
    )
    assert wide.verdict == Verdict.INCONCLUSIVE


# ------------------------------------------------------------------------- Fig. 6
def _order_study(means: dict[int, float], est: str = "sampled", se: float = 0.004) -> dict:
    rows = [
        {"m": m, "pair": "X vs Y", "metric": "Recall@10", "estimator": est, "mean": v, "se": se}
        for m, v in means.items()
    ]
    study = SimpleNamespace(
        systems=("X", "Y", "Z"), standing=SimpleNamespace(n=np.full(10, 3706.0))
    )
    return {"real": study, "real_order": pd.DataFrame(rows), "settings": kr.Settings(level=0.95)}


def test_fig6_uncorrected_is_tested_below_the_threshold_not_at_the_crossover():
    claim = kr.LEDGER["krichene2020.fig6.uncorrected"]
    # the paper's shape: clearly wrong below its threshold, about 0 at m = 1,000, right beyond;
    # reading at the crossover (as before) could only be inconclusive
    paper_like = _order_study({10: -0.05, 100: -0.04, 300: -0.03, 1000: 0.0, 2000: 0.02})
    out = claim.outcome(paper_like)
    assert out.verdict == Verdict.AGREES and out.rule == "every sign", out.reason
    # the m it reads are those up to half the paper's rate (500 of 3,706)
    assert "m = 1000" not in out.reason and "3 parts" in out.reason
    # a right order well below the threshold contradicts the statement
    early = _order_study({10: -0.05, 100: 0.04, 300: -0.03, 1000: 0.0})
    assert claim.outcome(early).verdict == Verdict.DIFFERS
    # no m of the grid below the threshold: not reproduced, with the reason
    late = _order_study({1000: 0.0, 2000: 0.02})
    assert claim.outcome(late).verdict == Verdict.NOT_REPRODUCED


def test_fig6_bv_reads_every_m_from_the_papers_rate_on():
    claim = kr.LEDGER["krichene2020.fig6.bv"]
    ok = _order_study({10: -0.01, 60: 0.02, 100: 0.03, 300: 0.03}, est="BV 0.1")
    assert claim.outcome(ok).verdict == Verdict.AGREES
    bad = _order_study({60: 0.02, 100: -0.03, 300: 0.03}, est="BV 0.1")
    assert claim.outcome(bad).verdict == Verdict.DIFFERS


# ------------------------------------------------------------------------- conjunctions
def test_a_conjunction_of_36_signs_needs_holm_not_36_intervals():
    # each part alone is significant at 5 % (interval above 0, p = 0.01), but not after Holm
    parts = {f"part {i}": SignPart(Estimate(0.1, 0.01, 0.2), 0.01, 0.99) for i in range(36)}
    out = every_sign(parts, "positive", alpha=0.05)
    assert out.verdict == Verdict.INCONCLUSIVE and "36" in out.reason
    # each part's own interval shows the sign, and the detail says so part by part
    assert all(f"part {i}:" in out.detail for i in range(36))
    strong = {k: SignPart(p.estimate, 1e-5, 1.0) for k, p in parts.items()}
    assert every_sign(strong, "positive", alpha=0.05).verdict == Verdict.AGREES
    wrong = dict(strong, bad=SignPart(Estimate(-0.1, -0.2, -0.05), 1.0, 1e-6))
    out = every_sign(wrong, "positive", alpha=0.05)
    assert out.verdict == Verdict.DIFFERS and out.ours == Estimate(-0.1, -0.2, -0.05)


def test_t_pvalues_against_scipy():
    x = np.array([0.3, -0.1, 0.5, 0.2, 0.4, 0.1])
    p_pos, p_neg = claims.t_pvalues(x)
    assert p_pos == pytest.approx(stats.ttest_1samp(x, 0, alternative="greater").pvalue)
    assert p_neg == pytest.approx(stats.ttest_1samp(x, 0, alternative="less").pvalue)
    assert claims.t_pvalues(np.full(4, 0.2)) == (0.0, 1.0)
    assert claims.t_pvalues(np.array([0.2])) == (1.0, 1.0)


def test_exact_part_pvalues_from_the_bootstrap(real_results):  # noqa: F811
    st, s = real_results["real"], real_results["settings"]
    part = kr.claims.exact_part(st, "AUC", "X", "Z", s)
    d = kr.claims.exact_user(st, "AUC", "X") - kr.claims.exact_user(st, "AUC", "Z")
    # an independent check: the share of bootstrap means at or below 0, from resampled users
    rng = np.random.default_rng(1)
    means = np.array([d[rng.integers(0, d.size, d.size)].mean() for _ in range(2000)])
    side = "positive" if d.mean() > 0 else "negative"
    p_same = part.p_positive if side == "positive" else part.p_negative
    share = (means <= 0).mean() if side == "positive" else (means >= 0).mean()
    assert abs(p_same - share) < 0.02 + 2 / s.n_resamples
    assert part.estimate.value == pytest.approx(d.mean())


# ------------------------------------------------------------------------- the whole ledger
def test_every_outcome_names_its_rule_and_tie_sensitivity_is_stored(
    real_results,  # noqa: F811
    tie_frames,  # noqa: F811
    tie_table,  # noqa: F811
):
    frame = kr.evaluate(real_results, dataset="synthetic", profile="quick", frames=tie_frames)
    assert not (frame["rule"] == "custom").any(), frame.loc[frame["rule"] == "custom", "claim"]
    assert frame["tie_sensitive"].notna().all()
    # the ledger's tie_sensitive says what the table of verdicts under every rule says
    assert set(kr.claims.TIE_RULES) <= set(tie_table.columns)
    table = tie_table
    by = frame.set_index("claim")["tie_sensitive"]
    for cid, moves in table["depends on ties"].items():
        assert bool(by[cid]) == bool(moves), cid
    said = text.tie_sensitive_text(frame)
    moved = frame[frame["tie_sensitive"].astype(bool)]
    assert f"{len(moved)} of the {len(frame)} claims change" in said
    for cid in moved["claim"]:
        assert cid.removeprefix(kr.PREFIX) in said
    tally = text.tally_text(frame, "synthetic")
    assert "By kind: derivation 13 (13 holds)" in tally and "replication" in tally


def test_value_claims_declare_their_margins(toy_results):  # noqa: F811
    out = kr.LEDGER["krichene2020.fig2.recall-5000"].outcome(toy_results)
    assert out.rule == "value" and out.margin == pytest.approx(500)
    # the equivalence: our exact threshold inside 5,000 ± 500 agrees, outside differs
    m = kr.recall_consistent_from(toy_results["toy"])
    want = Verdict.AGREES if abs(m - 5000) <= 500 else Verdict.DIFFERS
    assert out.verdict == want


def test_orders_in_the_text_are_interval_groups():
    assert kr.order_text({"A": 1.0, "B": 1.0003, "C": 2.0}, 0.0005) == "C > B ≈ A"
    assert kr.order_text({"A": 3.0, "B": 2.0, "C": 1.0}) == "A > B > C"
    # a gap just over the tolerance separates, one at it does not
    assert kr.order_text({"A": 1.0, "B": 1.0006}, 0.0005) == "B > A"
    assert kr.order_key(kr.order_text({"A": 1.0, "B": 1.0005}, 0.0006)) == (frozenset("AB"),)


@pytest.mark.parametrize(
    "scales, verdict",
    [
        ((1, 2, 4, 8), Verdict.AGREES),  # the sd doubles at every step
        ((1, 2, 0.5, 8), Verdict.DIFFERS),  # one step clearly falls
        ((1, 1, 1, 1), Verdict.INCONCLUSIVE),  # no change to establish
    ],
)
def test_variance_grows_is_a_holm_conjunction_of_sd_ratios(monkeypatch, scales, verdict):
    from recmeta.papers.krichene2020 import claims_corrections

    steps = ["BV 1", "BV 0.1", "BV 0.01", "BV 0.001"]
    rng = np.random.default_rng(3)
    base = rng.normal(size=(200, 3))
    # the same draws scaled: each step multiplies the sd exactly (or keeps it)
    frames = {
        (m, e): pd.DataFrame(base * sc, columns=["X", "Y", "Z"])
        for m in kr.TOP_HEAVY
        for e, sc in zip(steps, scales, strict=True)
    }
    monkeypatch.setattr(claims_corrections, "repetitions_wide", lambda st, m, e: frames[(m, e)])
    study = SimpleNamespace(systems=("X", "Y", "Z"), estimators=steps, repetitions=200)
    out = kr.LEDGER["krichene2020.s6.3.variance-grows"].outcome(
        {"real": study, "settings": kr.Settings(n_resamples=1999, level=0.95, seed=1)}
    )
    assert out.verdict == verdict, out.reason
    assert out.rule == "every sign" and len(out.detail.split("; ")) == 27  # 3 systems × 3 steps × 3 metrics


def _shares(re_share: list[float], raw_share: list[float]) -> pd.DataFrame:
    rows = []
    for k, (a, b) in enumerate(zip(re_share, raw_share, strict=True)):
        for est, v in (("rank-estimate", a), ("sampled", b)):
            rows.append(
                {"pair": f"pair {k}", "metric": "Recall@10", "estimator": est, "agreement": v}
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "re_share, raw_share, verdict",
    [
        ([0.9] * 12, [0.5] * 12, Verdict.AGREES),
        # one comparison worse by z ≈ 2.2: alone "clearly worse", not after Holm over 12
        ([0.9] * 11 + [0.79], [0.5] * 11 + [0.9], Verdict.AGREES),
        ([0.9] * 11 + [0.4], [0.5] * 11 + [0.95], Verdict.DIFFERS),
        ([0.7] * 12, [0.7] * 12, Verdict.INCONCLUSIVE),
    ],
)
def test_table4_rank_estimate_under_holm(monkeypatch, re_share, raw_share, verdict):
    from recmeta.papers.krichene2020 import claims_corrections

    monkeypatch.setattr(claims_corrections, "shares", lambda st: _shares(re_share, raw_share))
    study = SimpleNamespace(repetitions=100)
    out = kr.LEDGER["krichene2020.table4.rank-estimate"].outcome(
        {"real": study, "settings": kr.Settings(level=0.95)}
    )
    assert out.verdict == verdict, out.reason
