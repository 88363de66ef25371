"""The sampled-metrics chapter's package (recmeta.papers.krichene2020): the paper's numbers, the
claims and their verdict logic, checked on the running example and on synthetic runs whose answers are known.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recmeta import papers, sampled
from recmeta.papers import krichene2020 as kr
from recmeta.ledger import prose

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
        assert kr.paper_order(m) == "Z>Y>X"
    assert kr.paper_order("Recall@10", 1) == "X>Y>Z"
    # Table 4 has 12 rows of 7 estimators, counts out of 100
    rows = [v for pair in kr.TABLE4.values() for v in pair.values()]
    assert len(rows) == 12 and all(len(r) == 7 and all(0 <= x <= 100 for x in r) for r in rows)
    # the example's Table 1 holds what its text says: A best on AUC, C on the rest
    assert max(kr.TABLE1, key=lambda s: kr.TABLE1[s][0]) == "A"
    assert all(max(kr.TABLE1, key=lambda s: kr.TABLE1[s][i]) == "C" for i in (1, 2, 3))


def test_order_text_groups_ties_alphabetically():
    assert kr.order_text({"B": 0.01009, "A": 0.01, "C": 0.1}, tol=0.0005) == "C>A=B"
    assert kr.order_text({"X": 3, "Y": 2, "Z": 1}) == "X>Y>Z"


@pytest.fixture(scope="module")
def toy_results():
    toy = kr.ToyInputs(kr.TOY_RANKS, kr.TOY_N, kr.TOY_M, True)
    sim = sampled.sampled_evaluation({k: np.array(v) for k, v in kr.TOY_RANKS.items()}, kr.TOY_N, kr.TOY_M,
                                     list(kr.TOY_METRICS), ["sampled"], repetitions=300, seed=5, progress=False)
    return {"toy": toy, "toy_sampled": sim, "settings": kr.Settings(499, 0.95, 0)}


@pytest.mark.parametrize("claim", ["table1", "example.best", "table2.means", "table2.sd", "s4.2.ap-reversed",
                                   "s4.2.only-auc", "fig2.ap-small-m", "fig2.ap-200", "fig2.ap-500",
                                   "fig2.ap-large", "s4.4.4.m1"])
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
    scores = {k: pd.DataFrame({"user": u.ravel(), "item": i.ravel(), "score": v.ravel()}) for k, v in frames.items()}
    held = pd.DataFrame({"user": np.arange(users), "item": target})
    return sampled.standing(scores, held)


@pytest.fixture(scope="module")
def real_results(toy_results):
    st = _synthetic_standing()
    study = kr.study_from_standing("synthetic", st, m=20, repetitions=30, seed=1, ms=[5, 40],
                                     estimators=["sampled", "rank-estimate", "BV 1", "BV 0.1", "BV 0.01"])
    return {**toy_results, "real": study, "real_order": study.order, "real_multi": None}


def test_real_claims_evaluate_with_intervals(real_results):
    frame = kr.LEDGER.evaluate(real_results, dataset="synthetic", profile="quick")
    assert len(frame) == len(kr.LEDGER)
    by = frame.set_index("claim")
    # the several-items study is absent: not reproduced, with the reason
    assert by.loc["krichene2020.s8.several-items", "verdict"] == "not reproduced here"
    # rank estimate, one n: Recall@10 and NDCG@10 coincide exactly (n = 400, m = 20: (n − 1)/m ≥ 10)
    assert by.loc["krichene2020.s6.3.rank-estimate-recall-ndcg", "verdict"] == "agrees"
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


def test_tie_rule_changes_z_and_is_reported(real_results):
    study = real_results["real"]
    auc = {rule: study.exact_means(rule).loc["AUC", "Z"] for rule in sampled.TIE_RULES}
    assert auc["pessimistic"] < auc["expected"] < auc["optimistic"]
    # ties are last under the pessimistic rule: a tied held-out item sits in the worst bucket
    z = study.standing.systems.index("Z")
    tied_users = study.standing.tied[z] > 0
    worst = kr.worst_bucket(study.ranks("pessimistic")["Z"], study.standing.n)
    assert worst[tied_users & (study.standing.above[z] == 0)].all()
    table = kr.tie_dependence(real_results, list(sampled.TIE_RULES), dataset="synthetic", profile="quick")
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
    assert 'papers.report("sampled-metrics"' in text and "execution.finish()" in text
    assert "second_dataset" in text and "ties =" in text
