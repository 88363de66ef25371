"""The robustness chapter covers every numbered item and headline of Valcarce et al. (2018):
eqs. 1–8 checked as derivations, Table 2, §7's nDCG under the popularity bias, the coverage
table."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from recmeta.ledger import Estimate, Verdict
from recmeta.ledger.coverage import gaps, paper_items
from recmeta.papers import valcarce2018 as v
from recmeta.papers.valcarce2018 import coverage as cov, equations as eq
from recmeta.papers.valcarce2018.claims_definitions import equation_rule
from recmeta.papers.valcarce2018.claims_metrics import upper_half_rule
from recmeta.papers.valcarce2018.study import gini

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
A, D, INC, N = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED
G = Verdict.NOT_GRADED
NAN = math.nan


# ---- eqs. 1–8 written out, against values worked by hand ---------------------------------------
# user 1 of system "a" in the hand-made case: grades [2, unrated, 5, 1, 4], threshold 4, so
# relevant at ranks 3 and 5; |R| = 2 (ratings 5, 4), |N| = 2 (ratings 2, 1)
LIST = np.array([2.0, NAN, 5.0, 1.0, 4.0])
JUDGED = np.array([5.0, 4.0, 2.0, 1.0])
_DCG = 2 + 5 / 2 + 1 / math.log2(5) + 4 / math.log2(6)
_IDCG = 5 + 4 / math.log2(3) + 2 / 2 + 1 / math.log2(5)
HAND = {
    "P": 2 / 5,
    "R": 1.0,
    "AP": (1 / 3 + 2 / 5) / 2,
    "nDCG": _DCG / _IDCG,
    "RR": 1 / 3,
    # rank 3: one non-relevant above, 1 − 1/2; rank 5: two above, 1 − 2/2
    "bpref": (0.5 + 0.0) / 2,
    # rank 3: 1/3 + 2/3 · ε/(1 + 2ε); rank 5: 1/5 + 4/5 · (1 + ε)/(3 + 2ε)
    "infAP": (1 / 3 + 2 / 3 * 1e-5 / (1 + 2e-5) + 1 / 5 + 4 / 5 * (1 + 1e-5) / (3 + 2e-5)) / 2,
}


@pytest.mark.parametrize("metric", list(eq.EQUATIONS))
def test_each_equation_written_out_gives_the_value_worked_by_hand(metric):
    assert eq.transcribe(metric, LIST, JUDGED, 4, 5) == pytest.approx(HAND[metric], abs=1e-12)


def test_cut_offs_and_users_without_non_relevant_items():
    # at n = 3 only the hit at rank 3 counts; P divides by n even past the list's end
    assert eq.transcribe("AP", LIST, JUDGED, 4, 3) == pytest.approx(1 / 3 / 2)
    assert eq.transcribe("P", LIST[:2], JUDGED, 4, 5) == 0.0
    # no judged non-relevant item: bpref's fraction is 0/0, read as 0 (trec_eval)
    assert eq.transcribe("bpref", np.array([NAN, 4.0]), np.array([4.0, 5.0]), 4, 2) == 0.5
    assert eq.transcribe("RR", np.array([1.0, NAN]), JUDGED, 4, 2) == 0.0
    with pytest.raises(ValueError, match="no equation"):
        eq.transcribe("ERR", LIST, JUDGED, 4, 5)


def test_the_engine_matches_the_equations_on_the_hand_made_case_and_a_wrong_formula_shows():
    hand = eq.hand_gaps(list(eq.EQUATIONS))
    assert max(hand.values()) < 1e-12
    # the check can fail: trec_eval's infAP (no unjudged pool) is not eq. 8 on this case
    j = eq.Judgments.from_frame(eq.HAND_TEST, threshold=4)
    runs = eq.Runs.from_frame(eq.HAND_RUNS, j)
    other = eq.score_matrices(j, runs, ["infAP@5"])  # infap="trec_eval"
    assert eq.engine_gaps(eq.HAND_TEST, runs, j, ["infAP"], [5], scores=other)["infAP@5"] > 0.01


def test_equation_rule_holds_fails_and_is_inconclusive():
    ok = {"P@5": 0.0, "P@100": 1e-12}
    assert equation_rule("eq. 1", ok, ok, users=50).verdict is A
    out = equation_rule("eq. 1", ok, {"P@5": 0.0, "P@100": 0.02}, users=50)
    assert out.verdict is D and "P@100" in out.reason
    assert equation_rule("eq. 1", {"P@3": 0.5}, ok, users=50).verdict is D  # the hand case fails
    assert equation_rule("eq. 1", ok, {"P@5": NAN}, users=0).verdict is INC


def _checked(gap: float, users: int = 50) -> dict:
    gaps = {f"{m}@{k}": gap for m in v.METRICS for k in (5, 100)}
    return {"metric_check": {"gaps": gaps, "users": users, "systems": 3, "cutoffs": [5, 100]}}


def test_equation_claims_are_derivations_shown_as_holds_or_fails():
    good = v.LEDGER.evaluate(_checked(0.0), dataset="ml-100k", profile="quick")
    bad = v.LEDGER.evaluate(_checked(0.1), dataset="ml-100k", profile="quick")
    ids = [c.id for c in v.LEDGER if c.id.startswith("valcarce2018.eq")]
    assert len(ids) == 7
    for frame, want in ((good, "holds"), (bad, "fails")):
        rows = frame.set_index("claim").loc[ids]
        assert (rows["kind"] == "derivation").all() and (rows["verdict"] == want).all()


# ---- Table 2 ----------------------------------------------------------------------------------
ML1M = {"users": 6040, "items": 3706, "ratings": 1_000_209, "density": 0.04468, "gini": 0.634}


def _table2(**change) -> dict:
    return {"data": {**ML1M, **change}, "dataset": "ml-1m"}


@pytest.mark.parametrize("column, off", [
    ("users", 1), ("items", 1), ("ratings", 1), ("density", 0.00002), ("gini", 0.002),
])
def test_table2_agrees_on_the_paper_s_numbers_and_differs_off_them(column, off):
    claim = v.LEDGER[f"valcarce2018.tab2.ml1m-{column}"]
    assert claim.outcome(_table2()).verdict is A
    assert claim.outcome(_table2(**{column: ML1M[column] + off})).verdict is D


def test_table2_is_a_replication_on_ml1m_and_shown_not_graded_elsewhere():
    r = _table2(users=943)
    same = v.LEDGER.evaluate(r, dataset="ml-1m", profile="quick").set_index("claim")
    other = v.LEDGER.evaluate(r, dataset="ml-100k", profile="quick").set_index("claim")
    cid = "valcarce2018.tab2.ml1m-users"
    assert same.at[cid, "kind"] == "replication" and same.at[cid, "verdict"] == "differs"
    assert other.at[cid, "kind"] == "transfer" and other.at[cid, "verdict"] == G.value
    for ds in ("librarything", "beeradvocate"):
        assert same.at[f"valcarce2018.tab2.{ds}", "verdict"] == N.value


def test_gini_of_counts():
    assert gini(np.array([5, 5, 5])) == 0.0
    # one item of n = 4 holds every rating: (n − 1)/n
    assert gini(np.array([0, 0, 0, 8])) == pytest.approx(0.75)
    # counts 1, 2, 3: Σ(2i − n − 1)x = −2 + 0 + 6 = 4, over n Σx = 18
    assert gini(np.array([3, 1, 2])) == pytest.approx(4 / 18)
    with pytest.raises(ValueError, match="non-negative"):
        gini(np.array([0, 0]))


# ---- §7: nDCG's robustness to the popularity bias ----------------------------------------------
def _ests(**values: float) -> dict[str, Estimate]:
    base = {"P": 0.9, "Recall": 0.7, "MAP": 0.6, "nDCG": 0.5, "MRR": 0.3, "bpref": 0.4,
            "infAP": 0.45}
    return {k: Estimate(x, x - 0.01, x + 0.01) for k, x in {**base, **values}.items()}


def test_ndcg_in_the_more_robust_half():
    assert upper_half_rule(_ests(nDCG=0.8), "nDCG").verdict is A  # rank 2 of 7
    assert upper_half_rule(_ests(nDCG=0.2), "nDCG").verdict is D  # rank 7
    # 0.445–0.455 overlaps infAP (0.44–0.46), rank 4 or 5: open
    assert upper_half_rule(_ests(nDCG=0.45), "nDCG").verdict is INC


# ---- the coverage table -----------------------------------------------------------------------
def _text() -> str:
    return (PAPERS / cov.PAPER_FILE).read_text(encoding="utf-8")


def test_declared_items_are_the_paper_s():
    found = paper_items(_text())
    assert set(found) <= set(cov.ITEMS), sorted(set(found) - set(cov.ITEMS))
    assert set(cov.ITEMS) == set(found)


def test_every_item_of_the_paper_and_every_headline_has_a_row():
    frame = cov.table()
    assert gaps(frame) == []
    rows = set(frame["item"])
    missing = [i for i in paper_items(_text()) if i not in rows]
    assert missing == []
    ids = set(v.LEDGER.ids)
    for h in cov.HEADLINES:
        assert h.claims and set(h.claims) <= ids, h.statement
    assert "| Eq. 8 | `eq7-8.infap` |" in cov.markdown()


def test_the_engine_matches_the_equations_on_implicit_feedback():
    # no rating column: every listed pair relevant with grade 1, none judged non-relevant, so
    # bpref's fraction is 0/0 for every user (read as 0) and nDCG's gains are all 1
    test = eq.HAND_TEST.drop(columns="rating")
    j = eq.Judgments.from_frame(test, threshold=None)
    runs = eq.Runs.from_frame(eq.HAND_RUNS, j)
    gaps = eq.engine_gaps(j.to_frame(), runs, j, list(eq.EQUATIONS), [1, 3, 5])
    assert max(gaps.values()) < 1e-12
