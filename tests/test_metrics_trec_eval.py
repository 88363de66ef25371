"""The trec_eval metrics equal pytrec_eval (pytrec-eval-terrier) to 1e-9 on random cases.

Hypothesis draws graded judgments (grade 0 = judged non-relevant), runs with unjudged items,
tied scores, short and empty lists, users without relevant items, and cut-offs past the end of
the lists. Metrics without a trec_eval cut-off form (RR@k, bpref@k, infAP@k) are compared with
trec_eval on the run truncated at k; the truncation is done here, independently of recmeta,
with trec_eval's order (score descending, then docno descending as text).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytrec_eval = pytest.importorskip("pytrec_eval")

from recmeta.metrics import Judgments, Runs, score_matrices  # noqa: E402

DOCS = ["1", "10", "2", "20", "3", "a", "b", "B", "d7", "d70", "z", "9"]
CUTS = [1, 2, 3, 5, 8, 20]


@st.composite
def cases(draw):
    n_users = draw(st.integers(1, 4))
    qrels, run = {}, {}
    for u in range(n_users):
        q = f"u{u}"
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        qrels[q] = {d: draw(st.integers(0, 3)) for d in judged}
        ranked = draw(st.lists(st.sampled_from(DOCS), min_size=0, max_size=10, unique=True))
        if ranked:
            run[q] = {d: float(draw(st.integers(0, 3))) for d in ranked}
    # a run user without judgments (ignored on both sides)
    if draw(st.booleans()):
        run["stranger"] = {"1": 1.0}
    threshold = draw(st.sampled_from([1, 2]))
    return qrels, run, threshold


def _trec_order(scores: dict[str, float]) -> list[str]:
    """trec_eval's order, written independently: score desc, then docno desc (strcmp)."""
    return sorted(scores, key=lambda d: (scores[d], d.encode()), reverse=True)


def _ours(qrels, run, threshold, metrics):
    jf = pd.DataFrame(
        [(q, d, float(r)) for q, docs in qrels.items() for d, r in docs.items()],
        columns=["user", "item", "rating"],
    )
    j = Judgments.from_frame(jf, threshold=threshold)
    rf = pd.DataFrame(
        [("s", q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["system", "user", "item", "score"],
    )
    if rf.empty:
        rf = pd.DataFrame({"system": ["s"], "user": ["stranger"], "item": ["1"], "score": [1.0]})
    runs = Runs.from_frame(rf, j)
    mats = score_matrices(j, runs, metrics)
    return j, {m: dict(zip(j.users, v[0])) for m, v in mats.items()}


def _pytrec(qrels, run, threshold, measures):
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold)
    return ev.evaluate(run)


def _evaluated(qrels, run, threshold):
    """Users both sides score: in the run, with at least one relevant judgment."""
    return [q for q in qrels if q in run and any(r >= threshold for r in qrels[q].values())]


SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(cases())
def test_cutoff_metrics_equal_trec_eval(case):
    qrels, run, threshold = case
    ours_names = {}
    measures = set()
    for k in CUTS:
        for ours, theirs in (("P", "P"), ("R", "recall"), ("AP", "map_cut"), ("nDCG", "ndcg_cut")):
            ours_names[f"{ours}@{k}"] = f"{theirs}_{k}"
            measures.add(f"{theirs}.{k}")
    ours_names.update({"RR": "recip_rank", "bpref": "bpref", "infAP": "infAP", "AP": "map"})
    measures |= {"recip_rank", "bpref", "infAP", "map"}
    _, ours = _ours(qrels, run, threshold, list(ours_names))
    theirs = _pytrec(qrels, run, threshold, measures)
    users = _evaluated(qrels, run, threshold)
    for name, trec_name in ours_names.items():
        for q in users:
            assert ours[name][q] == pytest.approx(theirs[q][trec_name], abs=1e-9), (name, q)


@SETTINGS
@given(cases(), st.sampled_from([1, 2, 3, 5]))
def test_truncated_metrics_equal_trec_eval_on_truncated_run(case, k):
    qrels, run, threshold = case
    truncated = {q: {d: docs[d] for d in _trec_order(docs)[:k]} for q, docs in run.items()}
    _, ours = _ours(qrels, run, threshold, [f"RR@{k}", f"bpref@{k}", f"infAP@{k}"])
    theirs = _pytrec(qrels, truncated, threshold, {"recip_rank", "bpref", "infAP"})
    for q in _evaluated(qrels, run, threshold):
        assert ours[f"RR@{k}"][q] == pytest.approx(theirs[q]["recip_rank"], abs=1e-9)
        assert ours[f"bpref@{k}"][q] == pytest.approx(theirs[q]["bpref"], abs=1e-9)
        assert ours[f"infAP@{k}"][q] == pytest.approx(theirs[q]["infAP"], abs=1e-9)


@SETTINGS
@given(cases())
def test_users_without_relevant_items_are_nan_and_empty_lists_score_zero(case):
    qrels, run, threshold = case
    j, ours = _ours(qrels, run, threshold, ["P@5", "nDCG@5", "bpref"])
    for q in qrels:
        has_rel = any(r >= threshold for r in qrels[q].values())
        for m in ours:
            if not has_rel:
                assert math.isnan(ours[m][q])
            elif q not in run:
                assert ours[m][q] == 0.0


def test_geometric_mean_equals_trec_eval_gm_map():
    rng = np.random.default_rng(7)
    qrels = {f"q{u}": {f"d{i}": int(rng.integers(0, 3)) for i in range(12)} for u in range(30)}
    for q in qrels:
        qrels[q]["d0"] = 2  # every user has a relevant item
    run = {
        q: {f"d{i}": float(rng.random()) for i in rng.choice(12, size=6, replace=False)}
        for q in qrels
    }
    run["q0"] = {"d5": 1.0} if qrels["q0"]["d5"] == 0 else {"zz": 1.0}  # AP = 0 for q0
    from recmeta.metrics import aggregate

    _, ours = _ours(qrels, run, 1, ["AP"])
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"gm_map"})
    per_query = ev.evaluate(run)
    expected = pytrec_eval.compute_aggregated_measure(
        "gm_map", [v["gm_map"] for v in per_query.values()]
    )
    values = np.array([ours["AP"][q] for q in qrels])
    assert values.min() == 0.0
    assert aggregate(values[None, :], "gmean")[0] == pytest.approx(expected, abs=1e-9)


def test_parallel_blocks_equal_trec_eval(monkeypatch):
    """Enough users for several parallel blocks, with the threaded pass forced on."""
    from recmeta.metrics import _kernel, _plan

    monkeypatch.setattr(_plan, "PARALLEL_MIN_POSITIONS", 0)
    rng = np.random.default_rng(5)
    n_users = 3 * _kernel.USERS_PER_BLOCK + 7
    qrels, run = {}, {}
    for u in range(n_users):
        judged = rng.choice(40, size=int(rng.integers(1, 15)), replace=False)
        qrels[f"u{u}"] = {f"d{i}": int(rng.integers(0, 4)) for i in judged}
        if u % 11:  # every eleventh user has no list
            ranked = rng.choice(50, size=int(rng.integers(1, 25)), replace=False)
            run[f"u{u}"] = {f"d{i}": float(rng.integers(0, 6)) for i in ranked}
    names = {"P@5": "P_5", "R@20": "recall_20", "AP@10": "map_cut_10", "nDCG@20": "ndcg_cut_20",
             "RR": "recip_rank", "bpref": "bpref", "infAP": "infAP"}
    _, ours = _ours(qrels, run, 2, list(names))
    theirs = _pytrec(qrels, run, 2, {"P.5", "recall.20", "map_cut.10", "ndcg_cut.20",
                                     "recip_rank", "bpref", "infAP"})
    users = _evaluated(qrels, run, 2)
    assert len(users) > 2 * _kernel.USERS_PER_BLOCK
    for name, trec_name in names.items():
        for q in users:
            assert ours[name][q] == pytest.approx(theirs[q][trec_name], abs=1e-9), (name, q)
