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
from hypothesis import HealthCheck, given, settings, strategies as st

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


# ------------------------------------------------------------------ trec_eval's other measures
# Every measure of trec_eval that the engine has, on every topic trec_eval evaluates (topics in
# both the judgments and the run, with or without a relevant document), with grades below 0
# (trec_eval: "in the pool, not judged"), judged-only runs (-J) and relevance levels (-l).

ALL_CUTS = [1, 2, 3, 5, 8, 20]
LEVELS = [0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 1.0]


@st.composite
def pooled_cases(draw):
    n_users = draw(st.integers(1, 4))
    qrels, run = {}, {}
    for u in range(n_users):
        q = f"u{u}"
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=9, unique=True))
        qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
        if max(qrels[q].values()) < 0:  # trec_eval misreads a topic with only negative grades
            qrels[q][judged[0]] = 0     # (see test_trec_eval_dropin.py)
        ranked = draw(st.lists(st.sampled_from(DOCS), min_size=0, max_size=10, unique=True))
        if ranked:
            run[q] = {d: float(draw(st.integers(0, 3))) for d in ranked}
    if draw(st.booleans()):
        run["stranger"] = {"1": 1.0}
    return qrels, run, draw(st.sampled_from([1, 2, 3]))


def _pooled_engine(qrels, run, level, metrics, judged_only=False):
    """Per-topic values of engine metrics, for every topic of both qrels and run."""
    jf = pd.DataFrame(
        [(q, d, float(r)) for q, docs in qrels.items() for d, r in docs.items()],
        columns=["user", "item", "rating"],
    )
    j = Judgments.from_frame(jf, threshold=level, negative="pooled")
    rf = pd.DataFrame(
        [("s", q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["system", "user", "item", "score"],
    )
    if rf.empty:
        rf = pd.DataFrame({"system": ["s"], "user": ["stranger"], "item": ["1"], "score": [1.0]})
    runs = Runs.from_frame(rf, j)
    if judged_only:
        runs = runs.only_judged(j)
    mats = score_matrices(j, runs, metrics, users="all")
    return {m: dict(zip(j.users, v[0])) for m, v in mats.items()}


def _shared_names():
    """(engine name, pytrec_eval measure, pytrec_eval result key) for every shared measure."""
    out = []
    for k in ALL_CUTS:
        out += [(f"P_{k}", f"P.{k}", f"P_{k}"), (f"recall_{k}", f"recall.{k}", f"recall_{k}"),
                (f"map_cut_{k}", f"map_cut.{k}", f"map_cut_{k}"),
                (f"ndcg_cut_{k}", f"ndcg_cut.{k}", f"ndcg_cut_{k}"),
                (f"success_{k}", f"success.{k}", f"success_{k}")]
    for x in LEVELS:
        out.append((f"IPrec(recall={x})", f"iprec_at_recall.{x}",
                    f"iprec_at_recall_{x:3.2f}"))
    out += [("map", "map", "map"), ("ndcg", "ndcg", "ndcg"), ("recip_rank", "recip_rank",
            "recip_rank"), ("bpref", "bpref", "bpref"), ("infAP", "infAP", "infAP"),
            ("Rprec", "Rprec", "Rprec"), ("11pt_avg", "11pt_avg", "11pt_avg"),
            ("num_ret", "num_ret", "num_ret"), ("num_rel", "num_rel", "num_rel"),
            ("num_rel_ret", "num_rel_ret", "num_rel_ret")]
    return out


def _pytrec_all(qrels, run, level, measures, judged_only=False):
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level,
                                        judged_docs_only_flag=judged_only)
    return ev.evaluate(run)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pooled_cases(), st.booleans())
def test_every_shared_measure_equals_trec_eval_on_every_topic(case, judged_only):
    qrels, run, level = case
    names = _shared_names()
    ours = _pooled_engine(qrels, run, level, [n for n, _, _ in names], judged_only)
    theirs = _pytrec_all(qrels, run, level, {m for _, m, _ in names}, judged_only)
    topics = [q for q in qrels if q in run]
    assert sorted(theirs) == sorted(topics)
    for q in topics:
        for name, _, key in names:
            expected = theirs[q][key]
            if judged_only and math.isnan(expected):
                continue  # 0/0 of an emptied list: the drop-in layer prints it (test_trec.py)
            assert ours[name][q] == pytest.approx(expected, abs=1e-12), (name, q)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pooled_cases())
def test_geometric_means_equal_trec_eval(case):
    qrels, run, level = case
    topics = [q for q in qrels if q in run]
    if not topics:
        return
    theirs = _pytrec_all(qrels, run, level, {"gm_map", "gm_bpref"})
    jf = pd.DataFrame([(q, d, float(r)) for q, docs in qrels.items() for d, r in docs.items()],
                      columns=["user", "item", "rating"])
    j = Judgments.from_frame(jf, threshold=level, negative="pooled")
    rf = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                      columns=["user", "item", "score"])
    runs = Runs.from_frame(rf, j, system="s")
    mats = score_matrices(j, runs, ["gm_map", "gm_bpref"], users="all")
    keep = [j.users.get_loc(q) for q in topics]
    from recmeta.metrics import aggregate

    for ours, trec in (("gm_map", "gm_map"), ("gm_bpref", "gm_bpref")):
        expected = pytrec_eval.compute_aggregated_measure(trec, [theirs[q][trec] for q in topics])
        got = aggregate(mats[ours][:, keep], "gmean")[0]
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_negative_grades_hand_worked():
    """Ranked: a (1), z (not in the pool), d (0), e (-1: pooled, not judged), c (1); b (1) missed.

    bpref: a has no judged non-relevant item above (1), c has d above: 1 - 1/min(1, 3) = 0;
    (1 + 0) / 3. infAP at c (j = 4 items above): 1/5 + 4/5 · (3/4) · (1 + ε)/(2 + 2ε): the
    pooled e counts in the share of pooled items above, not among the judged ones."""
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 0, "e": -1}}
    run = {"q": {"a": 3.0, "z": 2.0, "d": 1.5, "e": 1.0, "c": 0.5}}
    ours = _pooled_engine(qrels, run, 1, ["bpref", "infAP", "num_rel", "ndcg", "P_5"])
    eps = 1e-5
    assert ours["bpref"]["q"] == pytest.approx(1 / 3)
    infap = (1 + (1 / 5 + 4 / 5 * (3 / 4) * (1 + eps) / (2 + 2 * eps))) / 3
    assert ours["infAP"]["q"] == pytest.approx(infap, abs=1e-15)
    assert ours["num_rel"]["q"] == 3
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ours["ndcg"]["q"] == pytest.approx((1 + 1 / math.log2(6)) / ideal)
    assert ours["P_5"]["q"] == pytest.approx(2 / 5)
    theirs = _pytrec_all(qrels, run, 1, {"bpref", "infAP"})["q"]
    assert theirs["infAP"] == pytest.approx(infap, abs=1e-15)


def test_iprec_levels_follow_trec_eval_9_0_8_rounding():
    """|R| = 3, two found at ranks 1 and 5: precisions 1 and 2/5. Level x needs
    ⌊3x + 0.9⌋ relevant items: 0.3 -> 1 (value 1), 0.4 -> 2 (2/5); 0.7 -> ⌊2.9999...⌋ = 2 in
    doubles (2/5), 0.8 -> 3 (not reached: 0)."""
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 5.0, "x": 4.0, "y": 3.0, "z": 2.0, "c": 1.0}}
    names = [f"IPrec(recall={x})" for x in (0.3, 0.4, 0.7, 0.8)]
    ours = _pooled_engine(qrels, run, 1, names)
    assert [ours[n]["q"] for n in names] == pytest.approx([1.0, 0.4, 0.4, 0.0])
    theirs = _pytrec_all(qrels, run, 1, {"iprec_at_recall.0.3,0.4,0.7,0.8"})["q"]
    assert theirs["iprec_at_recall_0.70"] == pytest.approx(0.4)
