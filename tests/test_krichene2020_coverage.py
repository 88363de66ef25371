"""The sampled-metrics chapter covers every numbered item and headline of Krichene & Rendle
(2020): the declared items against the paper's text, no item without a row, headlines naming
claims of the ledger; and each claim added for the coverage decided by its rule on hand cases
(holds and fails for the derivations, agrees, differs and inconclusive where it can)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from recmeta import sampled
from recmeta.ledger import DERIVED, Verdict
from recmeta.ledger.coverage import gaps, paper_items
from recmeta.papers import krichene2020 as kr
from recmeta.papers.krichene2020 import analysis as an, claims_analysis as ca, coverage as cov

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
TOY = {"toy": kr.ToyInputs(kr.TOY_RANKS, kr.TOY_N, kr.TOY_M, True)}

NEW = {
    "s3.eqs2-13.metrics": Verdict.AGREES,
    "fig1.rank-one-worth": Verdict.AGREES,
    "fig1.top-heavy": Verdict.AGREES,
    "s4.3.eqs15-16.law": Verdict.AGREES,
    "s4.4.2.eq18": Verdict.AGREES,
    "s5.1.eq20": Verdict.AGREES,
    "s5.2.eqs21-23": Verdict.AGREES,
    "s5.2.underdetermined": Verdict.AGREES,
    "s5.3.eq25": Verdict.AGREES,
    "s5.5.m-reduces-bias": Verdict.AGREES,
    "s5.5.n-raises-bias": Verdict.AGREES,
    "s5.5.n-raises-corrected-bias": Verdict.DIFFERS,
    "fig3.m1000-biased": Verdict.AGREES,
    "fig3.towards-linear": Verdict.AGREES,
    "abstract.metrics-alike": Verdict.AGREES,
    "s4.2.ndcg-order-changes": Verdict.AGREES,
}


def _out(claim: str, results: dict | None = None):
    return kr.LEDGER[kr.PREFIX + claim].outcome(TOY if results is None else results)


def _text() -> str:
    return (PAPERS / cov.PAPER_FILE).read_text(encoding="utf-8")


# ------------------------------------------------------------------------- the table
def test_declared_items_are_the_paper_s():
    assert set(paper_items(_text())) == set(cov.ITEMS)


def test_every_item_of_the_paper_and_every_headline_has_a_row():
    frame = cov.table()
    assert gaps(frame) == []
    rows = set(frame["item"])
    assert [i for i in paper_items(_text()) if i not in rows] == []
    ids = set(kr.LEDGER.ids)
    for h in cov.HEADLINES:
        assert set(h.claims) <= ids, h.statement
    wheres = {h.where for h in cov.HEADLINES}
    assert {"Abstract", "§7", "§8"} <= wheres
    md = cov.markdown()
    # the items: every one of them is now tested by a claim
    for item in ("Fig. 1", "Fig. 3", "Eq. 18", "Eq. 20", "Eq. 22", "Eq. 23", "Eq. 25"):
        row = frame.set_index("item").loc[item]
        assert row["claims"], item
    assert "| Eq. 27 |" in md and "itemcf" in md


def test_at_least_fourteen_claims_were_added_with_their_settings():
    # the ledger had 42 claims before the coverage work; 17 were added (NEW and s6.1.z-top10)
    assert len(kr.LEDGER) >= 42 + 17 and len(NEW) + 1 == 17
    for short in [*NEW, "s6.1.z-top10"]:
        c = kr.LEDGER[kr.PREFIX + short]
        assert c.setting_known, short
        if c.paper_dataset == DERIVED:
            assert c.kind("ml-100k") == "derivation"
        elif "real" not in c.needs:
            assert c.kind("ml-100k") == "replication" and c.data_free


# ------------------------------------------------------------------------- on the example
@pytest.mark.parametrize("claim, verdict", list(NEW.items()))
def test_new_claims_on_the_paper_s_settings(claim, verdict):
    out = _out(claim)
    assert out.verdict == verdict, out.reason
    assert out.rule != "custom"


def test_the_ledger_grades_the_derivations_as_holds():
    row = kr.LEDGER.row(kr.PREFIX + "s5.1.eq20", TOY, dataset="ml-100k", profile="quick")
    assert row["verdict"] == "holds" and row["kind"] == "derivation"


# ------------------------------------------------------------------------- they can fail
def _wrong_metric(metric, rank, n):
    v = np.asarray(sampled.rank_metrics.metric_value(metric, rank, n), dtype=float)
    return v * 1.01 if str(metric).startswith("AP") else v


def test_metric_transcriptions_fail_on_a_wrong_metric(monkeypatch):
    monkeypatch.setattr(an.sampled, "metric_value", _wrong_metric)
    assert _out("s3.eqs2-13.metrics").verdict == Verdict.DIFFERS


def test_fig1_ratio_fails_when_ndcg_discounts_otherwise(monkeypatch):
    def other(metric, rank, n):
        if metric == "NDCG":
            return 1.0 / np.log2(np.asarray(rank) + 2.0)
        return sampled.rank_metrics.metric_value(metric, rank, n)

    monkeypatch.setattr(ca.sampled, "metric_value", other)
    out = _out("fig1.rank-one-worth")
    assert out.verdict == Verdict.DIFFERS and out.rule == "value"


def test_top_heavy_fails_when_the_decay_is_spread(monkeypatch):
    monkeypatch.setattr(an, "decay_share", lambda metric, n, top: 0.5)
    assert _out("fig1.top-heavy").verdict == Verdict.DIFFERS


def test_law_fails_on_a_shifted_law(monkeypatch):
    real = sampled.rank_pmf

    def shifted(r, n, m, replace=True):
        p = real(r, n, m, replace)
        return np.roll(p, 1, axis=-1)

    monkeypatch.setattr(an.sampled, "rank_pmf", shifted)
    assert _out("s4.3.eqs15-16.law").verdict == Verdict.DIFFERS


def test_eq18_fails_on_a_biased_expectation(monkeypatch):
    real = sampled.expected_metric
    monkeypatch.setattr(an.sampled, "expected_metric", lambda *a, **k: real(*a, **k) + 1e-3)
    assert _out("s4.4.2.eq18").verdict == Verdict.DIFFERS


@pytest.mark.parametrize("claim", ["s5.1.eq20", "s5.2.eqs21-23", "s5.3.eq25"])
def test_corrections_fail_when_the_package_s_vector_is_off(monkeypatch, claim):
    real = sampled.correction
    monkeypatch.setattr(an.sampled, "correction", lambda *a, **k: real(*a, **k) * 1.001 + 1e-4)
    assert _out(claim).verdict == Verdict.DIFFERS


def test_underdetermined_fails_when_a_correction_is_unbiased(monkeypatch):
    monkeypatch.setattr(an, "least_squares_floor", lambda *a: {1: 0.1, 3: 0.0, 6: 0.0, 11: 0.0})
    assert _out("s5.2.underdetermined").verdict == Verdict.DIFFERS


def _bias_by(n_m_values):
    return lambda metric, n, m, est="sampled": n_m_values[(n, m)]


def test_m_and_n_bias_shapes_agree_and_differ(monkeypatch):
    falls = {(10_000, m): 1.0 / m for m in (10, 30, 100)}
    monkeypatch.setattr(an, "weighted_bias", _bias_by(falls))
    assert _out("s5.5.m-reduces-bias").verdict == Verdict.AGREES
    flat = {(10_000, m): 1.0 for m in (10, 30, 100)}
    monkeypatch.setattr(an, "weighted_bias", _bias_by(flat))
    assert _out("s5.5.m-reduces-bias").verdict == Verdict.DIFFERS
    rises = {(n, 100): n / 1e4 for n in (1_000, 3_706, 10_000)}
    monkeypatch.setattr(an, "weighted_bias", _bias_by(rises))
    assert _out("s5.5.n-raises-bias").verdict == Verdict.AGREES
    assert _out("s5.5.n-raises-corrected-bias").verdict == Verdict.AGREES
    monkeypatch.setattr(an, "weighted_bias", _bias_by({k: 1 / k[0] for k in rises}))
    assert _out("s5.5.n-raises-bias").verdict == Verdict.DIFFERS


def test_fig3_bias_fails_without_bias(monkeypatch):
    monkeypatch.setattr(
        ca.sampled, "expected_metric", lambda metric, r, n, m: sampled.metric_value(metric, r, n)
    )
    assert _out("fig3.m1000-biased").verdict == Verdict.DIFFERS


def test_towards_linear_and_alike_fail_on_other_shapes(monkeypatch):
    monkeypatch.setattr(an, "linearity", lambda metric, n, m: 0.5)
    assert _out("fig3.towards-linear").verdict == Verdict.DIFFERS
    spread = {1000: 0.9, 100: 0.5, 10: 0.7, 1: 0.0}
    monkeypatch.setattr(an, "metric_spread", lambda metrics, n, m: spread[m])
    assert _out("abstract.metrics-alike").verdict == Verdict.DIFFERS


def test_ndcg_order_fails_when_one_system_dominates():
    ranks = {"A": (1, 1, 1, 1, 1), "B": (50, 60, 70, 80, 90), "C": (500, 600, 700, 800, 900)}
    toy = kr.ToyInputs(ranks, kr.TOY_N, kr.TOY_M, True)
    out = _out("s4.2.ndcg-order-changes", {"toy": toy})
    assert out.verdict == Verdict.DIFFERS and out.detail == "1 orders"


def test_direct_transcriptions_on_hand_values():
    # eq. 2 on a set: R = {1, 3} of n = 4: pairs (1,2) (1,4) (3,4) of 4 → 3/4
    g = an.general_metrics([1, 3], 4, 2)
    assert g["AUC"] == pytest.approx(0.75) and g["Recall@2"] == 0.5 and g["Precision@2"] == 0.5
    assert g["AP@2"] == pytest.approx(1.0 / 2) and g["NDCG@2"] == pytest.approx(
        1 / (1 + 1 / np.log2(3))
    )
    # the enumerated law of n = 4, m = 2, r = 3: each draw above with probability 2/3
    law = an.enumerated_law(3, 4, 2, True)
    assert law == pytest.approx([1 / 9, 4 / 9, 4 / 9])
    assert an.enumerated_law(3, 4, 2, False) == pytest.approx([0, 2 / 3, 1 / 3])
    assert an.decay_share("AUC", 101, 11) == pytest.approx(0.1)


# ------------------------------------------------------------------------- §6.1 on hand studies
def _study(z: np.ndarray, y: np.ndarray, x: np.ndarray) -> dict:
    exact = {(s, "Recall@10"): v.astype(float) for s, v in (("Z", z), ("Y", y), ("X", x))}
    st = SimpleNamespace(
        systems=("X", "Y", "Z"), ties="expected", users=z.size, exact={"expected": exact}
    )
    return {"real": st, "settings": kr.Settings(n_resamples=999, level=0.95, seed=0)}


def _hits(users: int, share: float, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(users) < share).astype(float)


@pytest.mark.parametrize(
    "z, y, x, verdict",
    [
        ((4000, 0.30), (4000, 0.10), (4000, 0.08), Verdict.AGREES),
        ((4000, 0.10), (4000, 0.30), (4000, 0.08), Verdict.DIFFERS),
        ((60, 0.12), (60, 0.10), (60, 0.10), Verdict.INCONCLUSIVE),
    ],
)
def test_z_top10_on_hand_studies(z, y, x, verdict):
    res = _study(_hits(*z, 1), _hits(*y, 2), _hits(*x, 3))
    out = _out("s6.1.z-top10", res)
    assert out.verdict == verdict, out.reason
    no = _study(_hits(*z, 1), _hits(*y, 2), _hits(*x, 3))
    no["real"].systems = ("A", "B")
    assert _out("s6.1.z-top10", no).verdict == Verdict.NOT_REPRODUCED
