"""ir_measures' names, read through the measure registry, give ir_measures' numbers.

Random judgments (grades -1..3) and runs without tied scores (ir_measures' own judged-rate
provider orders ties by docid ascending, trec_eval by docno descending); ``recmeta``'s
:func:`trec_eval` under 9.0.8's rules (the release pytrec_eval, ir_measures' provider, is
built on) must give every topic the value ir_measures gives it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from recmeta.metrics import MetricNameError, evaluate, parse_metric, trec_eval
from recmeta.metrics._registry import REGISTRY, lookup

ir_measures = pytest.importorskip("ir_measures")

NAMES = ["nDCG@10", "P(rel=2)@5", "Judged@10", "R@100", "P@5", "AP", "AP@10", "RR", "Rprec",
         "Bpref", "infAP", "NumRet", "NumRelRet", "SetP", "SetR", "SetF", "SetF(beta=2.0)",
         "IPrec@0.5", "Success@5", "nDCG", "R(rel=2)@10", "AP(rel=2)", "RR(rel=3)", "Judged",
         "P(rel=3)@10", "SetP(rel=2)", "Rprec(rel=2)", "NumRel"]


def _case(seed: int, n_topics: int = 60):
    rng = np.random.default_rng(seed)
    q, r = [], []
    for t in range(n_topics):
        docs = [f"d{i}" for i in rng.choice(40, size=rng.integers(1, 15), replace=False)]
        grades = rng.integers(-1, 4, size=len(docs))
        grades[0] = max(grades[0], 0)
        q += [(f"q{t}", d, int(g)) for d, g in zip(docs, grades)]
        ranked = [f"d{i}" for i in rng.choice(40, size=rng.integers(1, 25), replace=False)]
        scores = rng.permutation(len(ranked)) + rng.random()  # distinct scores
        r += [(f"q{t}", d, float(s)) for d, s in zip(ranked, scores)]
    qrels = pd.DataFrame(q, columns=["user", "item", "rating"])
    run = pd.DataFrame(r, columns=["user", "item", "score"]).assign(system="s")
    return qrels, run


@pytest.mark.parametrize("seed", range(4))
def test_ir_measures_names_give_ir_measures_values(seed):
    qrels, run = _case(seed)
    ours = trec_eval(qrels, run, NAMES, version="9.0.8")
    im_qrels = [ir_measures.Qrel(u, i, int(g)) for u, i, g in qrels.itertuples(index=False)]
    im_run = [ir_measures.ScoredDoc(u, i, s) for u, i, s, _ in run.itertuples(index=False)]
    measures = [ir_measures.parse_measure(n) for n in NAMES]
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc(measures, im_qrels, im_run)}
    checked = 0
    for name, measure in zip(NAMES, measures):
        for t, qid in enumerate(ours.queries):
            expected = theirs[(qid, str(measure))]
            got = ours.values[name][t]
            assert math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12), (name, qid)
            checked += 1
    assert checked == len(NAMES) * len(ours.queries)


def test_registry_entries_and_aliases():
    for name, m in REGISTRY.items():
        assert lookup(name) is m and all(lookup(a) is m for a in m.aliases)
        assert m.cite, name
    assert lookup("bpref").trec == "bpref" and lookup("SetF").trec == "set_F"
    assert parse_metric("IPrec@0.5") == parse_metric("IPrec(recall=0.5)")
    assert parse_metric("P(rel=2)@5").params == (("rel", 2),)
    assert parse_metric("P@5") == parse_metric("P_5")  # rel left out when not given
    assert str(parse_metric("RBP(p=0.5)")) == "RBP(p=0.5)" and str(parse_metric("RBP")) == "RBP"
    with pytest.raises(MetricNameError, match="rel is a grade"):
        parse_metric("P(rel=1.5)@5")
    with pytest.raises(MetricNameError, match="persistence"):
        parse_metric("RBP(p=1.5)")


def test_rbp_and_judged_by_hand():
    """q: ranked a (grade 2), b (unjudged), c (grade 0). RBP(p=0.5, rel=2): (1-p)·1 = 0.5;
    RBP(p=0.5) is trec_eval's rbp.p=0.5 (gains 0..2 rescaled to [0, 1]: 1, 0, 0): 0.5;
    Judged@2: 1 of 2; Judged: 2 of 3."""
    qrels = pd.DataFrame({"user": ["q"] * 3, "item": ["a", "c", "d"], "rating": [2, 0, 1]})
    run = pd.DataFrame({"user": ["q"] * 3, "item": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    got = trec_eval(qrels, run, ["RBP(p=0.5,rel=2)", "RBP(p=0.5)", "rbp.p=0.5", "Judged@2",
                                 "Judged"])
    assert got.summary["RBP(p=0.5,rel=2)"] == 0.5
    assert got.summary["RBP(p=0.5)"] == got.summary["rbp_p=0.5"] == 0.5
    assert got.summary["Judged@2"] == 0.5 and got.summary["Judged"] == pytest.approx(2 / 3)


def test_engine_refuses_what_only_trec_eval_computes():
    from recmeta.metrics import Judgments, Runs

    qrels = pd.DataFrame({"user": ["q"], "item": ["a"], "rating": [2.0]})
    judgments = Judgments.from_frame(qrels, threshold=1)
    runs = Runs.from_frame(pd.DataFrame({"system": "s", "user": ["q"], "item": ["a"],
                                         "score": [1.0]}), judgments)
    for name in ("P(rel=2)@5", "RBP(p=0.8)", "Judged@10", "SetF"):
        with pytest.raises(ValueError, match="trec_eval's pass only"):
            evaluate(judgments, runs, [name])
