"""The engine's options (``infap=``, ``gain=``, ``ties=``) against hand-worked values and pytrec_eval.

Hand-worked example used throughout: one user, τ = 4, judged a = 5, c = 4 (relevant), e = 2
(judged non-relevant); b and z unjudged. The run scores z 0.9, then a, b, c, e all 0.5 (one tie
block at ranks 2–5). |R| = 2, and the ideal DCG@3 with linear gain is
5/1 + 4/log2(3) + 2/log2(4) = 5 + 2.523719 + 1 = 8.523719.

The orders of the block under each rule:

* trec_eval (id text descending): e, c, b, a  → z e c b a (relevant at ranks 3, 5)
* item_id (ascending):            a, b, c, e  → z a b c e (relevant at 2, 4)
* pessimistic (grade ascending):  b, e, c, a  → z b e c a (relevant at 4, 5)
* optimistic (grade descending):  a, c, e, b  → z a c e b (relevant at 2, 3)
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from recmeta.metrics import Judgments, Runs, evaluate, score_matrices, score_matrix  # noqa: E402
from recmeta.metrics._options import OptionError, options  # noqa: E402

METRICS = ["P@3", "R@3", "AP@5", "nDCG@3", "RR"]


@pytest.fixture
def example():
    test = pd.DataFrame({"user": 1, "item": ["a", "c", "e"], "rating": [5.0, 4.0, 2.0]})
    j = Judgments.from_frame(test, threshold=4)
    recs = pd.DataFrame({"system": "s", "user": 1, "item": ["z", "a", "b", "c", "e"],
                         "score": [0.9, 0.5, 0.5, 0.5, 0.5]})
    return j, Runs.from_frame(recs, j)


def _values(j, runs, **opts):
    mats = score_matrices(j, runs, METRICS, **opts)
    return {m: float(v[0, 0]) for m, v in mats.items()}


# the expected values, worked by hand (see the module docstring for the orders)
HAND = {
    "trec_eval": {
        "P@3": 1 / 3,                      # c at rank 3
        "R@3": 1 / 2,
        "AP@5": (1 / 3 + 2 / 5) / 2,       # = 0.366667
        "nDCG@3": 0.382680,                # (2/log2(3) + 4/2) / 8.523719 = 3.261860 / 8.523719
        "RR": 1 / 3,
    },
    "item_id": {
        "P@3": 1 / 3,                      # a at rank 2
        "R@3": 1 / 2,
        "AP@5": (1 / 2 + 2 / 4) / 2,       # = 0.5
        "nDCG@3": 0.370102,                # (5/log2(3)) / 8.523719 = 3.154649 / 8.523719
        "RR": 1 / 2,
    },
    "pessimistic": {
        "P@3": 0.0,                        # relevant at ranks 4 and 5
        "R@3": 0.0,
        "AP@5": (1 / 4 + 2 / 5) / 2,       # = 0.325
        "nDCG@3": 0.117320,                # (2/log2(4)) / 8.523719 = 1 / 8.523719
        "RR": 1 / 4,
    },
    "optimistic": {
        "P@3": 2 / 3,                      # relevant at ranks 2 and 3
        "R@3": 1.0,
        "AP@5": (1 / 2 + 2 / 3) / 2,       # = 0.583333
        "nDCG@3": 0.604742,                # (5/log2(3) + 4/2) / 8.523719 = 5.154649 / 8.523719
        "RR": 1 / 2,
    },
    "expected": {
        # the block holds n = 4 items, m = 2 relevant, at ranks 2..5 (s = 1), none above (H = 0)
        "P@3": 1 / 3,        # ranks 2, 3 each relevant with probability 2/4: 1 expected hit / 3
        "R@3": 1 / 2,        # the same expected hit / |R| = 2
        # sum over t = 0..3 of (2/4)(1 + t(2-1)/(4-1)) / (2 + t), divided by |R| = 2:
        # (0.5·1/2 + 0.5·(4/3)/3 + 0.5·(5/3)/4 + 0.5·2/5) / 2 = (0.25 + 0.222222 + 0.208333
        # + 0.2) / 2; the mean of AP over the six placements of the two relevant items
        # (0.583333, 0.5, 0.45, 0.416667, 0.366667, 0.325) is the same 0.440278
        "AP@5": 0.440278,
        # mean gain of the block (5 + 0 + 4 + 2)/4 = 2.75 at ranks 2 and 3:
        # (2.75/log2(3) + 2.75/2) / 8.523719 = 3.110057 / 8.523719
        "nDCG@3": 0.364871,
        # first relevant item at rank 2 w.p. 2/4, rank 3 w.p. (2/4)(2/3), rank 4 w.p. (2/4)(1/3):
        # 0.5/2 + (1/3)/3 + (1/6)/4 = 0.25 + 0.111111 + 0.041667
        "RR": 0.402778,
    },
}


@pytest.mark.parametrize("rule", list(HAND))
def test_each_tie_rule_on_a_hand_worked_block(example, rule):
    j, runs = example
    got = _values(j, runs, ties=rule)
    for metric, want in HAND[rule].items():
        assert got[metric] == pytest.approx(want, abs=1e-6), (rule, metric)


def test_default_is_trec_eval_and_runs_store_its_order(example):
    j, runs = example
    assert [str(i) for i in runs.items[runs.ranks[0, 0]]] == ["z", "e", "c", "b", "a"]
    assert runs.tied[0, 0].tolist() == [False, False, True, True, True]
    assert _values(j, runs) == _values(j, runs, ties="trec_eval")


def test_item_id_order_compares_ids_as_numbers():
    j = Judgments.from_frame(pd.DataFrame({"user": [1], "item": [100], "rating": [1.0]}), 1)

    def rr(items, build="trec_eval", read=None):
        recs = pd.DataFrame({"user": 1, "item": items, "score": 0.5})
        return score_matrix(j, Runs.from_frame(recs, j, system="s", ties=build), "RR", ties=read)[0, 0]

    # 100 and 200 tie: trec_eval puts "200" first (text descending), item_id puts 100 first
    assert rr([100, 200]) == 1 / 2
    assert rr([100, 200], build="item_id") == 1.0
    # an evaluation that names a rule re-sorts the stored blocks, whatever the runs hold
    assert rr([100, 200], read="item_id") == 1.0
    assert rr([100, 200], build="item_id", read="trec_eval") == 1 / 2
    assert rr([100, 200], build="pessimistic") == 1 / 2  # the runs' rule, applied by default
    # 9 and 100 tie: as numbers 9 < 100 comes first (as text "100" < "9" would not)
    assert rr([100, 9], build="item_id") == 1 / 2
    with pytest.raises(ValueError, match="cannot be compared"):
        Runs.from_frame(pd.DataFrame({"user": 1, "item": [100, "x"], "score": 0.5}), j,
                        system="s", ties="item_id")


def test_expected_refuses_metrics_without_a_closed_form(example):
    j, runs = example
    with pytest.raises(OptionError, match="bpref.*ERR|ERR.*bpref"):
        score_matrices(j, runs, ["P@3", "bpref", "ERR@3"], ties="expected")


def test_tie_rules_need_tie_blocks(example):
    j, _ = example
    orders = Runs.from_orders(np.array([[0, 1, 2]]), j)
    assert score_matrix(j, orders, "P@2")[0, 0] == 1.0  # a c e, read as given
    with pytest.raises(OptionError, match="tie blocks"):
        score_matrix(j, orders, "P@2", ties="pessimistic")
    tied = np.array([[False, True, True]])
    runs = Runs.from_orders(np.array([[0, 1, 2]]), j, tied=tied)  # a(5) c(4) e(2), one block
    assert score_matrix(j, runs, "P@1", ties="pessimistic")[0, 0] == 0.0  # e first
    assert score_matrix(j, runs, "P@1", ties="optimistic")[0, 0] == 1.0


def test_unknown_options_are_named():
    with pytest.raises(OptionError, match="ties must be one of"):
        options(ties="random")
    with pytest.raises(OptionError, match="infap must be one of"):
        options(infap="paper")
    with pytest.raises(OptionError, match="gain must be one of"):
        options(gain="cubic")


def test_tie_blocks_follow_select_and_only_judged(example):
    j, runs = example
    kept = runs.only_judged(j)  # z and b go: e c a remain, all in the one block
    assert [str(i) for i in kept.items[kept.ranks[0, 0, :3]]] == ["e", "c", "a"]
    assert kept.tied[0, 0].tolist() == [False, True, True, False, False]
    assert score_matrix(j, kept, "RR", ties="pessimistic")[0, 0] == 1 / 2  # e c a → e first
    assert runs.select(["s"]).tied is not None


# ------------------------------------------------------------------------ gains
def test_gains_by_hand(example):
    j, runs = example  # trec_eval order z e c b a: gains of e (2) at rank 2, c (4) at rank 3
    l3 = math.log2(3)
    exp = score_matrix(j, runs, "nDCG@3", gain="exponential")[0, 0]
    # DCG = (2^2-1)/log2(3) + (2^4-1)/2 = 1.892789 + 7.5; ideal 31 + 15/log2(3) + 3/2 = 41.963946
    assert exp == pytest.approx(0.223830, abs=1e-6)
    assert score_matrix(j, runs, "nDCG@3", gain="exp")[0, 0] == exp
    # binary: only c (relevant) gains 1 at rank 3 → 1/2; ideal 1 + 1/log2(3) = 1.630930
    binary = score_matrix(j, runs, "nDCG@3", gain="binary")[0, 0]
    assert binary == pytest.approx(0.5 / (1 + 1 / l3), abs=1e-12)
    # a mapping: grade 2 → 0, 4 → 1, 5 → 3: DCG = 1/2; ideal 3 + 1/log2(3) = 3.630930
    mapped = score_matrix(j, runs, "nDCG@3", gain={2: 0, 4: 1, 5: 3})[0, 0]
    assert mapped == pytest.approx(0.137706, abs=1e-6)
    # a mapping that does not grow with the grade: the ideal ranks by gain (5, 1, 0), not grade:
    # DCG = 5/log2(3) + 1/2 = 3.654649; ideal 5 + 1/log2(3) = 5.630930
    odd = score_matrix(j, runs, "nDCG@3", gain={2: 5, 4: 1, 5: 0})[0, 0]
    assert odd == pytest.approx(0.649031, abs=1e-6)


def test_a_name_with_its_own_gain_ignores_the_option(example):
    j, runs = example
    lin = score_matrix(j, runs, "nDCG@3")[0, 0]
    assert score_matrix(j, runs, "nDCG(gain=linear)@3", gain="exponential")[0, 0] == lin
    assert score_matrix(j, runs, "nDCG(gain=exp)@3")[0, 0] == pytest.approx(0.223830, abs=1e-6)


def test_gain_mapping_must_cover_every_grade(example):
    j, runs = example
    with pytest.raises(OptionError, match="no gain for grade"):
        score_matrix(j, runs, "nDCG@3", gain={4: 1, 5: 3})
    with pytest.raises(OptionError, match="empty"):
        options(gain={})


# ------------------------------------------------------------------------ tie rules vs pytrec_eval
def _random_case(rng):
    """Three users, a few items with integer scores 0–2 (many ties), grades 0–3 (τ = 2)."""
    docs = [f"d{i}" for i in range(7)]
    qrels, run = {}, {}
    for u in range(3):
        judged = rng.choice(docs, size=rng.integers(1, 6), replace=False)
        qrels[f"u{u}"] = {d: int(rng.integers(0, 4)) for d in judged}
        ranked = rng.choice(docs, size=rng.integers(2, 7), replace=False)
        run[f"u{u}"] = {d: float(rng.integers(0, 3)) for d in ranked}
    return qrels, run


def _orderings(scores: dict[str, float]):
    """Every ordering of every tie block, as runs with distinct scores (written independently)."""
    blocks = {}
    for d, s in scores.items():
        blocks.setdefault(s, []).append(d)
    keys = sorted(blocks)
    for perms in itertools.product(*(itertools.permutations(blocks[k]) for k in keys)):
        out = {}
        for k, perm in zip(keys, perms):
            for i, d in enumerate(perm):
                out[d] = k + 0.01 * (len(perm) - i)  # the first of the block scores highest
        yield out


TREC = {"P@3": "P_3", "R@3": "recall_3", "AP@4": "map_cut_4", "nDCG@3": "ndcg_cut_3",
        "RR": "recip_rank"}


@pytest.mark.parametrize("seed", range(12))
def test_tie_rules_against_every_ordering_scored_by_pytrec_eval(seed):
    rng = np.random.default_rng(seed)
    qrels, run = _random_case(rng)
    threshold = 2
    ev = pytrec_eval.RelevanceEvaluator(
        qrels, {"P.3", "recall.3", "map_cut.4", "ndcg_cut.3", "recip_rank"},
        relevance_level=threshold)
    per_user = {q: [] for q in run}
    for q in run:
        for ordering in _orderings(run[q]):
            res = ev.evaluate({q: ordering})[q]
            per_user[q].append({m: res[t] for m, t in TREC.items()})
    jf = pd.DataFrame([(q, d, float(r)) for q, docs in qrels.items() for d, r in docs.items()],
                      columns=["user", "item", "rating"])
    j = Judgments.from_frame(jf, threshold=threshold)
    rf = pd.DataFrame([("s", q, d, s) for q, docs in run.items() for d, s in docs.items()],
                      columns=["system", "user", "item", "score"])
    runs = Runs.from_frame(rf, j)
    got = {rule: score_matrices(j, runs, list(TREC), ties=rule)
           for rule in ("expected", "pessimistic", "optimistic")}
    for u, q in enumerate(j.users):
        if q not in run or not any(r >= threshold for r in qrels[q].values()):
            continue
        for m in TREC:
            values = np.array([v[m] for v in per_user[q]])
            assert got["expected"][m][0, u] == pytest.approx(values.mean(), abs=1e-9), (q, m)
            assert got["pessimistic"][m][0, u] == pytest.approx(values.min(), abs=1e-9), (q, m)
            assert got["optimistic"][m][0, u] == pytest.approx(values.max(), abs=1e-9), (q, m)


# ------------------------------------------------------------------------ infAP's pool
@pytest.mark.parametrize("seed", range(15))
def test_pooled_infap_is_trec_eval_with_unrated_ranked_items_at_minus_one(seed):
    rng = np.random.default_rng(100 + seed)
    docs = [f"d{i}" for i in range(30)]
    qrels, run = {}, {}
    for u in range(5):
        judged = rng.choice(docs, size=rng.integers(1, 12), replace=False)
        qrels[f"u{u}"] = {d: int(rng.integers(0, 5)) for d in judged}
        ranked = rng.choice(docs, size=rng.integers(1, 20), replace=False)
        run[f"u{u}"] = {d: float(rng.integers(0, 50)) for d in ranked}
    k = int(rng.integers(1, 15))
    # the definition: every ranked item unrated by the user enters the qrels at grade -1
    pooled = {q: {**{d: -1 for d in run.get(q, {})}, **docs_} for q, docs_ in qrels.items()}
    order = {q: sorted(s, key=lambda d: (s[d], d.encode()), reverse=True) for q, s in run.items()}
    truncated = {q: {d: run[q][d] for d in order[q][:k]} for q in run}
    ev = pytrec_eval.RelevanceEvaluator(pooled, {"infAP"}, relevance_level=3)
    whole, cut = ev.evaluate(run), ev.evaluate(truncated)
    jf = pd.DataFrame([(q, d, float(r)) for q, d_ in qrels.items() for d, r in d_.items()],
                      columns=["user", "item", "rating"])
    j = Judgments.from_frame(jf, threshold=3)
    rf = pd.DataFrame([("s", q, d, s) for q, d_ in run.items() for d, s in d_.items()],
                      columns=["system", "user", "item", "score"])
    runs = Runs.from_frame(rf, j)
    ours = score_matrices(j, runs, ["infAP", f"infAP@{k}"], infap="pooled")
    for u, q in enumerate(j.users):
        if q not in run or not any(r >= 3 for r in qrels[q].values()):
            continue
        assert ours["infAP"][0, u] == pytest.approx(whole[q]["infAP"], abs=1e-9)
        assert ours[f"infAP@{k}"][0, u] == pytest.approx(cut[q]["infAP"], abs=1e-9)


def test_trec_eval_infap_without_negative_grades_is_ap_and_pooled_is_not(example):
    j, runs = example
    trec = score_matrix(j, runs, "infAP")[0, 0]
    ap = score_matrix(j, runs, "AP")[0, 0]
    assert trec == pytest.approx(ap, abs=1e-4)  # equal up to ε = 1e-5
    # pooled, by hand (z e c b a; relevant c at rank 3, a at rank 5; eps = 1e-5):
    # c: 1/3 + (2/3)(r + eps)/(judged + 2 eps) with 0 relevant, 1 judged (e) above → 1/3 + (2/3)(eps/(1+2eps))
    # a: 1/5 + (4/5)(1 + eps)/(2 + 2 eps) = 0.2 + 0.4 → infAP = (0.333340 + 0.6) / 2
    eps = 1e-5
    hand = (1 / 3 + (2 / 3) * eps / (1 + 2 * eps) + 1 / 5 + (4 / 5) * (1 + eps) / (2 + 2 * eps)) / 2
    assert score_matrix(j, runs, "infAP", infap="pooled")[0, 0] == pytest.approx(hand, abs=1e-12)


def test_options_pass_through_evaluate(example):
    j, runs = example
    frame = evaluate(j, runs, ["P@3"], ties="optimistic")
    assert frame["value"].iloc[0] == pytest.approx(2 / 3)
