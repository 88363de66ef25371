"""The assessing-ranking-metrics chapter covers every numbered item and headline of Valcarce et
al. (2020): eqs. 1–11 checked as derivations, Table 2 and §6.2's share of top grades, §6.2's
graded metrics among hard users and average discrimination of bpref and infAP, Fig. 12's quick
drop, and the coverage table."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recmeta.ledger import Verdict
from recmeta.ledger.coverage import gaps, paper_items
from recmeta.papers import valcarce2020 as v20
from recmeta.papers.valcarce2018 import equations as v18
from recmeta.papers.valcarce2020 import coverage as cov, datasets, equations as eq
from recmeta.papers.valcarce2020.hard_users import graded_contrast, halves, hard_user_dp

from .test_valcarce2020 import METRICS, dp_inputs, full_inputs, hard_users, verdict

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
A, D, I, N = Verdict.AGREES, Verdict.DIFFERS, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED
G = Verdict.NOT_GRADED
NAN = math.nan


# ---- eqs. 3 and 7–8 written out, against values worked by hand ------------------------------
# user 1 of system "a" in the robustness chapter's hand-made case: grades [2, unrated, 5, 1, 4],
# threshold 4 (relevant at ranks 3 and 5), |R| = 2; ratings up to 5
LIST = np.array([2.0, NAN, 5.0, 1.0, 4.0])
JUDGED = np.array([5.0, 4.0, 2.0, 1.0])
# ERR's gains (2^r − 1)/2^5: 3/32, 0, 31/32, 1/32, 15/32
_G = [3 / 32, 0.0, 31 / 32, 1 / 32, 15 / 32]
_ERR = sum(
    _G[k] / (k + 1) * math.prod(1 - g for g in _G[:k]) for k in range(5)
)


def test_f1_and_err_written_out_give_the_values_worked_by_hand():
    # P@5 = 2/5, Recall@5 = 1: F1 = 2 · 0.4 / 1.4 = 4/7
    assert eq.f1(LIST, JUDGED, 4, 5) == pytest.approx(4 / 7, abs=1e-12)
    assert eq.err(LIST, JUDGED, 4, 5, rmax=5) == pytest.approx(_ERR, abs=1e-12)
    # at n = 1 only the first item (grade 2, not relevant, gain 3/32) counts in ERR; F1 is 0
    assert eq.err(LIST, JUDGED, 4, 1, rmax=5) == pytest.approx(3 / 32)
    assert eq.f1(LIST, JUDGED, 4, 1) == 0.0
    with pytest.raises(ValueError, match="no equation"):
        eq.transcribe("NDCNG", LIST, JUDGED, 4, 5, rmax=5)


def test_the_seven_equations_both_papers_define_alike_reuse_one_transcription():
    same = {"P": "precision", "R": "recall", "AP": "average_precision", "nDCG": "ndcg",
            "RR": "reciprocal_rank", "bpref": "bpref", "infAP": "inferred_ap"}
    for metric, name in same.items():
        assert eq.EQUATIONS[metric][1] is getattr(v18, name)
    assert tuple(eq.EQUATIONS) == v20.METRICS


def test_the_scorer_matches_the_equations_on_the_hand_made_case_and_wrong_formulas_show():
    hand = eq.hand_gaps()
    assert len(hand) == 9 * 3 and max(hand.values()) < 1e-12
    # trec_eval's infAP on plain qrels is not eq. 11
    assert eq.hand_gaps(["infAP"], [5], infap="trec_eval")["infAP@5"] > 0.01
    # ERR with another top of the scale is not eqs. 7–8 with the data's
    study = eq.hand_study()
    j = study.judgments
    scores = v20.scorer(study, 5, ["ERR"]).score()
    off = eq.gaps(j.to_frame(), study.runs, scores, threshold=4, rmax=4, cutoff=5,
                  topics=np.arange(3))
    assert off["ERR@5"] > 0.01


def test_study_check_reads_the_chapter_s_scores_and_a_corrupted_score_shows():
    study = eq.hand_study()
    scores = v20.scorer(study, 5).score()
    check = eq.study_check(study, scores, 5, seed=0)
    assert check["users"] == 2 and check["systems"] == 2 and check["cutoffs"] == [5]
    assert max(check["gaps"].values()) < 1e-12
    bad = {k: v.copy() for k, v in scores.items()}
    bad["nDCG@5"][0, 0] += 0.05
    assert eq.study_check(study, bad, 5, seed=0)["gaps"]["nDCG@5"] == pytest.approx(0.05)


def _checked(gap: float, users: int = 50) -> dict:
    return {"metric_check": {"gaps": {f"{m}@100": gap for m in METRICS}, "users": users,
                             "systems": 6, "cutoffs": [100]}}


def test_equation_claims_are_derivations_that_hold_fail_or_stay_open():
    ids = [c.id for c in v20.LEDGER if c.id.startswith("valcarce2020.eq")]
    assert len(ids) == 9
    good = v20.LEDGER.evaluate(_checked(0.0), dataset="ml-100k", profile="quick")
    bad = v20.LEDGER.evaluate(_checked(0.1), dataset="ml-100k", profile="quick")
    for frame, want in ((good, "holds"), (bad, "fails")):
        rows = frame.set_index("claim").loc[ids]
        assert (rows["kind"] == "derivation").all() and (rows["verdict"] == want).all()
    # no topic of the runs to check: the hand-made case alone does not settle it
    empty = {"metric_check": {"gaps": {f"{m}@100": NAN for m in METRICS}, "users": 0,
                              "systems": 6, "cutoffs": [100]}}
    assert v20.LEDGER["valcarce2020.eq7-8.err"].outcome(empty).verdict is I


# ---- Table 2 and §6.2's top grades -------------------------------------------------------------
ML1M = {"users": 6040, "items": 3706, "ratings": 1_000_209, "density": 0.04468,
        "user_gini": 0.5, "item_gini": 0.6, "top_grades": 22.63}


def _data(**change) -> dict:
    return {"data": {**ML1M, **change}}


@pytest.mark.parametrize("column, off", [
    ("users", 1), ("items", 1), ("ratings", 1), ("density", 0.00002),
])
def test_table2_agrees_on_the_release_s_counts_and_differs_off_them(column, off):
    claim = v20.LEDGER[f"valcarce2020.tab2.ml1m-{column}"]
    assert claim.outcome(_data()).verdict is A
    assert claim.outcome(_data(**{column: ML1M[column] + off})).verdict is D


def test_top_grades_agree_differ_and_are_not_graded_on_other_data():
    claim = v20.LEDGER["valcarce2020.s6-2.ml1m-top-grades"]
    assert claim.outcome(_data()).verdict is A
    assert claim.outcome(_data(top_grades=22.64)).verdict is D
    same = v20.LEDGER.evaluate(full_inputs(), dataset="ml-1m", profile="quick").set_index("claim")
    other = v20.LEDGER.evaluate(full_inputs(), dataset="ml-100k", profile="quick")
    other = other.set_index("claim")
    for cid in ("valcarce2020.s6-2.ml1m-top-grades", "valcarce2020.tab2.ml1m-users"):
        assert same.at[cid, "kind"] == "replication" and same.at[cid, "verdict"] == A.value
        assert other.at[cid, "kind"] == "transfer" and other.at[cid, "verdict"] == G.value
    for cid in ("tab2.librarything", "tab2.beeradvocate", "s6-2.librarything-top-grades"):
        assert same.at[f"valcarce2020.{cid}", "verdict"] == N.value


def test_summary_and_table2_of_a_hand_made_frame():
    ratings = pd.DataFrame({"user": [1, 1, 2, 3], "item": [10, 11, 10, 12],
                            "rating": [5.0, 4.0, 4.5, 2.0]})
    s = datasets.summary(ratings)
    # 3 users × 3 items, 4 ratings; two of the four are above 4 (4.5 and 5)
    assert (s["users"], s["items"], s["ratings"]) == (3, 3, 4)
    assert s["density"] == pytest.approx(4 / 9) and s["top_grades"] == pytest.approx(50.0)
    t = datasets.table2({"mine": s})
    assert t.at["users", "ML-1M (paper)"] == 6040 and t.at["density (%)", "mine"] == pytest.approx(
        400 / 9)
    with pytest.raises(ValueError, match="rating column"):
        datasets.summary(ratings.drop(columns="rating"))


# ---- §6.2: graded metrics among hard users -----------------------------------------------------
def test_hard_users_claim_agrees_differs_and_is_inconclusive():
    claim = "s6-2.graded-hard-users"
    assert verdict(claim, full_inputs(hard_users=hard_users(-0.5))) is A
    assert verdict(claim, full_inputs(hard_users=hard_users(0.5))) is D
    assert verdict(claim, full_inputs(hard_users=hard_users(-0.05, sd=0.5))) is I


def test_halves_and_the_graded_contrast_on_hand_cases():
    sizes = pd.Series([5, 1, 9, 3, 7, 2])
    hard, easy = halves(sizes, seed=0)
    assert list(hard) == [1, 3, 5] and list(easy) == [0, 2, 4]
    # graded DP mean 1, binary mean 2: log(1/2)
    dp = {"nDCG": np.array([1.0]), "ERR": np.array([1.0]), "P": np.array([2.0]),
          "R": np.array([2.0])}
    assert graded_contrast(dp)[0] == pytest.approx(math.log(0.5))
    assert np.isnan(graded_contrast({**dp, "nDCG": np.array([0.0]), "ERR": np.array([0.0])})[0])
    with pytest.raises(ValueError, match="graded"):
        graded_contrast({"P": np.array([1.0])})
    with pytest.raises(ValueError, match="at least 4"):
        halves(pd.Series([1, 2]), seed=0)


def test_hard_user_dp_finds_graded_metrics_that_separate_only_the_hard_users():
    """Four systems; on the hard half (small profiles) only nDCG and ERR tell them apart, on the
    easy half every metric does: the graded contrast must fall from easy to hard."""
    rng = np.random.default_rng(0)
    n = 400
    sizes = pd.Series(np.r_[rng.integers(1, 4, n // 2), rng.integers(20, 60, n // 2)])
    step = np.arange(4)[:, None] * 0.05
    mats = {}
    for m in METRICS:
        noise = rng.normal(0, 0.2, (4, n))
        graded = m in ("nDCG", "ERR")
        shift = np.where(np.arange(n) < n // 2, step if graded else 0.0, step)
        mats[m] = 0.5 + shift + noise
    h = hard_user_dp(mats, sizes, n_boot=300, seed=1, n_permutations=1000)
    assert h.users == n // 2 and h.sizes["hard"] < h.sizes["easy"]
    assert h.point < 0 and np.quantile(h.reps, 0.975) < 0
    assert set(h.dp.columns) == {"hard", "easy"}


# ---- §6.2: bpref and infAP of average discrimination -------------------------------------------
@pytest.mark.parametrize("metric", ["bpref", "infAP"])
def test_average_discrimination_of_each_metric(metric):
    claim = f"s6-2.{metric.lower()}-average"
    mid = {m: 1.0 + 0.1 * i for i, m in enumerate(METRICS)} | {metric: 1.45}
    assert verdict(claim, full_inputs(**dp_inputs(mid))) is A
    assert verdict(claim, full_inputs(**dp_inputs(mid | {metric: 0.5}))) is D  # the best
    assert verdict(claim, full_inputs(**dp_inputs(mid, sd=1.0))) is I
    for cid in ("bpref-beeradvocate-loss", "map-recall-mrr-erratic"):
        assert v20.LEDGER[f"valcarce2020.s6-2.{cid}"].outcome({}).verdict is N


# ---- Fig. 12: the correlations drop quickly ----------------------------------------------------
def test_popular_quick_drop_agrees_differs_and_is_inconclusive():
    claim = "s7-2.popular-quick-drop"
    high, low = dict.fromkeys(METRICS, 0.95), dict.fromkeys(METRICS, 0.7)
    fast = {("items", "gmean"): high, ("popular", "gmean"): low}
    assert verdict(claim, full_inputs(areas=fast)) is A
    slow = {("items", "gmean"): low, ("popular", "gmean"): high}
    assert verdict(claim, full_inputs(areas=slow)) is D
    same = {("items", "gmean"): high, ("popular", "gmean"): high}
    assert verdict(claim, full_inputs(areas=same, noise={"sd": 0.05})) is I


# ---- the coverage table ------------------------------------------------------------------------
def _text() -> str:
    return (PAPERS / cov.PAPER_FILE).read_text(encoding="utf-8")


def test_declared_items_are_the_paper_s():
    assert set(cov.ITEMS) == set(paper_items(_text()))


def test_every_item_of_the_paper_and_every_headline_has_a_row():
    frame = cov.table()
    assert gaps(frame) == []
    rows = set(frame["item"])
    assert [i for i in paper_items(_text()) if i not in rows] == []
    ids = set(v20.LEDGER.ids)
    for h in cov.HEADLINES:
        assert h.claims and set(h.claims) <= ids, h.statement
    assert {h.where for h in cov.HEADLINES} == {"§1", "§8"}
    # every equation is covered by a claim, not by a reason
    eqs = frame[frame["item"].str.startswith("Eq.")]
    assert len(eqs) == 11 and eqs["claims"].map(len).gt(0).all() and eqs["not_here"].isna().all()
    assert "| Eq. 8 | `eq7-8.err` |" in cov.markdown()


def test_hard_user_dp_reads_no_contrast_where_every_pair_is_decisive():
    """Every metric separates four systems far beyond noise on both halves: every p-value sits
    at the permutation test's floor 1/(B + 1), so the contrast is 0, not a ratio of 1e-30s."""
    rng = np.random.default_rng(2)
    n = 200
    sizes = pd.Series(rng.integers(1, 60, n))
    mats = {m: np.arange(4)[:, None] * 1.0 + rng.normal(0, 0.01, (4, n)) for m in METRICS}
    h = hard_user_dp(mats, sizes, n_boot=50, seed=0, n_permutations=999)
    assert h.point == 0.0 and np.all(h.reps == 0.0)
    assert (h.dp == 6 / 1000).all().all()
    with pytest.raises(ValueError, match="n_permutations"):
        hard_user_dp(mats, sizes, n_boot=50, seed=0, n_permutations=0)


def test_transcribed_values_are_the_papers_digits():
    # §6.2 prints LibraryThing's share with a decimal comma: "31,48%"
    text = _text()
    for printed in datasets.PAPER_TOP_GRADES.values():
        assert f"{printed}%" in text or f"{printed.replace('.', ',')}%" in text, printed
    # Table 2's cells are not in the 2020 text; the ML-1M counts are the 2018 paper's row
    assert "Table 2 Datasets statistics\n\nFor evaluation" in text
    row = "MovieLens 1M\t6,040\t3,706\t1,000,209\t4.468%"
    assert row in (PAPERS / "valcarce2018-robustness-discriminative-power.txt").read_text(
        encoding="utf-8")
    t = datasets.table2({})
    assert list(t["ML-1M (paper)"]) == [6040, 3706, 1_000_209, 4.468, 22.63]
