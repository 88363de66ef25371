"""``recmeta evaluate`` as trec_eval: the whole output text against one built from pytrec_eval.

The expected text is assembled here, independently of recmeta, from pytrec_eval's per-topic
values and trec_eval 9.0.8's rules as its sources state them: topics in both files, sorted by qid
as byte strings; measures in the order of ``measures.c``; ``%-22s\\t%s\\t%6.4f`` lines (``%ld``
for counts); summaries that add the topics' values in order and divide by the number of topics
(``meas_avg.c``), by the number of qrels topics under ``-c`` (a missing topic adds log 1e-5 to
the geometric means); ``-M`` keeps the first N documents in trec_eval's order (score, then docno
descending) — pytrec_eval has no ``-M``, so the run is cut here before it sees it.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

pytrec_eval = pytest.importorskip("pytrec_eval")

from recmeta.metrics import (  # noqa: E402
    MetricNameError,
    MetricSpec,
    TrecEvalError,
    expand_trec_names,
    trec_eval,
)

DOCS = ["1", "10", "2", "20", "3", "a", "b", "B", "d7", "d70", "z", "9"]
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
LEVELS = tuple(i / 10 for i in range(11))
# trec_eval's order (measures.c) of the all_trec measures recmeta implements, with their
# default parameters, and how each prints
ALL_TREC = [
    ("num_ret", "count", None), ("num_rel", "count", None), ("num_rel_ret", "count", None),
    ("map", "float", None), ("gm_map", "gm", None), ("Rprec", "float", None),
    ("bpref", "float", None), ("recip_rank", "float", None),
    ("iprec_at_recall", "float", LEVELS), ("P", "float", CUTS), ("recall", "float", CUTS),
    ("infAP", "float", None), ("gm_bpref", "gm", None), ("11pt_avg", "float", None),
    ("ndcg", "float", None), ("ndcg_cut", "float", CUTS), ("map_cut", "float", CUTS),
    ("success", "float", (1, 5, 10)),
]


def _keys():
    """(printed name, pytrec_eval result key, kind) in trec_eval's order."""
    out = []
    for name, kind, params in ALL_TREC:
        if params is None:
            out.append((name, name, kind))
        elif name == "iprec_at_recall":
            out += [(f"{name}_{x:.2f}", f"{name}_{x:.2f}", kind) for x in params]
        else:
            out += [(f"{name}_{k}", f"{name}_{k}", kind) for k in params]
    return out


def _c_float(v: float) -> str:
    return "  -nan" if math.isnan(v) else "%6.4f" % v


def _order(docs: dict[str, float]) -> list[str]:
    return sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)


def expected_text(qrels, run, *, level=1, complete=False, max_ret=None, judged_only=False,
                  run_id="tag"):
    if max_ret is not None:
        run = {q: {d: docs[d] for d in _order(docs)[:max_ret]} for q, docs in run.items()}
    measures = {name for name, _, _ in ALL_TREC}
    per = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level,
                                         judged_docs_only_flag=judged_only).evaluate(run)
    topics = sorted((q for q in per), key=str.encode)
    keys = _keys()
    lines = []
    for q in topics:
        for name, key, kind in keys:
            if kind == "count":
                lines.append("%-22s\t%s\t%ld" % (name, q, int(per[q][key])))
            elif kind == "float":
                lines.append("%-22s\t%s\t%s" % (name, q, _c_float(per[q][key])))
    n = len(qrels) if complete else len(topics)
    lines.append("%-22s\t%s\t%s" % ("runid", "all", run_id))
    lines.append("%-22s\t%s\t%ld" % ("num_q", "all", n))
    for name, key, kind in keys:
        values = [per[q][key] for q in topics]
        total = 0.0
        for v in values:  # trec_eval's accumulation, in topic order
            total += v
        if kind == "count":
            if name == "num_rel" and complete:  # 9.0.8 m_num_rel.c under -c: grades > 0
                total = sum(1 for docs in qrels.values() for g in docs.values() if g > 0)
            lines.append("%-22s\t%s\t%ld" % (name, "all", int(total)))
        elif kind == "gm":  # pytrec_eval's per-topic gm value is log(max(x, 1e-5))
            total += (n - len(topics)) * math.log(1e-5)
            lines.append("%-22s\t%s\t%s" % (name, "all", _c_float(math.exp(total / n))))
        else:
            lines.append("%-22s\t%s\t%s" % (name, "all", _c_float(total / n)))
    return "".join(line + "\n" for line in lines)


def _frames(qrels, run):
    q = pd.DataFrame([(t, d, g) for t, docs in qrels.items() for d, g in docs.items()],
                     columns=["user", "item", "rating"])
    r = pd.DataFrame([(t, d, s, "tag") for t, docs in run.items() for d, s in docs.items()],
                     columns=["user", "item", "score", "system"])
    return q, r


@st.composite
def cases(draw):
    n_topics = draw(st.integers(1, 5))
    qrels, run = {}, {}
    for t in range(n_topics):
        q = draw(st.sampled_from(["q1", "q10", "q2", "Q3", "q20", "7", "q1x"]))
        if q in qrels:
            continue
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=9, unique=True))
        qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
        if max(qrels[q].values()) < 0:  # trec_eval 9.0.8's ndcg_cut then reads rel_levels[-1]
            qrels[q][judged[0]] = 0     # (pytrec_eval crashes); recmeta gives 0 (test below)
        ranked = draw(st.lists(st.sampled_from(DOCS), min_size=0, max_size=10, unique=True))
        if ranked:
            run[q] = {d: float(draw(st.integers(0, 4))) / 2 for d in ranked}
    if draw(st.booleans()):
        run["stranger"] = {"1": 1.0}
    return qrels, run


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([1, 2, 3]), st.booleans(), st.sampled_from([None, 1, 3, 5]),
       st.booleans())
def test_all_trec_text_equals_trec_eval(case, level, complete, max_ret, judged_only):
    qrels, run = case
    if not any(q in run for q in qrels):
        with pytest.raises(TrecEvalError, match="No queries"):
            trec_eval(*_frames(qrels, run), ["all_trec"], version="9.0.8")
        return
    shared = ["runid", "num_q"] + [name for name, _, _ in ALL_TREC]  # those pytrec_eval has
    got = trec_eval(*_frames(qrels, run), shared, level=level, complete=complete,
                    max_ret=max_ret, judged_only=judged_only, version="9.0.8")
    assert got.text(query=True) == expected_text(qrels, run, level=level, complete=complete,
                                                 max_ret=max_ret, judged_only=judged_only)


# ------------------------------------------------------------------ layout, worked by hand
QRELS = {"q1": {"d1": 1, "d2": 0}, "q10": {"d9": 1, "d5": 2}, "q2": {"d3": 2}}
RUN = {"q1": {"d1": 0.9, "d2": 0.5}, "q10": {"d8": 1.0, "d9": 1.0}}


def test_layout_by_hand():
    """q1: d1 (relevant), d2: AP 1, P_1 1, P_2 1/2. q10: d8 and d9 tie, d9 first (docno
    descending): AP (1/1)/2 = 0.5, P_1 1, P_2 1/2. q2 has no results: skipped, or a 0 in the
    averages with -c. Topics print as byte strings sort: q1 before q10."""
    got = trec_eval(*_frames(QRELS, RUN), ["P.2,1", "map", "num_ret", "num_q"], version="9.0.8")
    assert got.text(query=True) == (
        "num_ret               \tq1\t2\n"
        "map                   \tq1\t1.0000\n"
        "P_1                   \tq1\t1.0000\n"
        "P_2                   \tq1\t0.5000\n"
        "num_ret               \tq10\t2\n"
        "map                   \tq10\t0.5000\n"
        "P_1                   \tq10\t1.0000\n"
        "P_2                   \tq10\t0.5000\n"
        "num_q                 \tall\t2\n"
        "num_ret               \tall\t4\n"
        "map                   \tall\t0.7500\n"
        "P_1                   \tall\t1.0000\n"
        "P_2                   \tall\t0.5000\n"
    )
    c = trec_eval(*_frames(QRELS, RUN), ["P.2,1", "map", "num_ret", "num_q", "num_rel",
                                          "gm_map"], complete=True)
    # -c: three topics; num_rel counts the qrels lines with a grade > 0 (d1, d9, d5, d3);
    # gm_map = exp((log 1 + log 0.5 + log 1e-5) / 3)
    gm = math.exp((math.log(1.0) + math.log(0.5) + math.log(1e-5)) / 3)
    assert c.text() == (
        "num_q                 \tall\t3\n"
        "num_ret               \tall\t4\n"
        "num_rel               \tall\t4\n"
        "map                   \tall\t0.5000\n"
        f"gm_map                \tall\t{gm:.4f}\n"
        "P_1                   \tall\t0.6667\n"
        "P_2                   \tall\t0.3333\n"
    )
    assert f"{gm:.4f}" == "0.0171"


def test_names_longer_than_the_column_and_recmeta_names():
    got = trec_eval(*_frames(QRELS, RUN), ["iprec_at_recall_0.5", "nDCG(gain=exp)@2",
                                          "num_rel_ret", "runid"], run_id="run-7",
                    version="9.0.8")
    lines = got.text().splitlines()
    assert lines[0] == "runid                 \tall\trun-7"
    assert lines[1] == "num_rel_ret           \tall\t2"
    assert lines[2] == "iprec_at_recall_0.50  \tall\t1.0000"
    assert lines[3].startswith("nDCG(gain=exp)@2      \tall\t")
    long = trec_eval(*_frames(QRELS, RUN), ["SRecall(gamma=inf)@2"], version="9.0.8").text()
    assert long.startswith("SRecall(gamma=inf)@2  \tall\t")
    longer = trec_eval(*_frames(QRELS, RUN), ["nDCG(gain=binary)@1000"], version="9.0.8").text()
    assert longer.startswith("nDCG(gain=binary)@1000\tall\t")  # %-22s pads, never cuts


def test_first_parameters_win_and_values_add_cutoffs():
    got = trec_eval(*_frames(QRELS, RUN), ["P.1", "P.2", "P_5", "success"], version="9.0.8")
    names = [line.split("\t")[0].strip() for line in got.lines()]
    assert names == ["P_1", "P_5", "success_1", "success_5", "success_10"]
    assert got.ignored == ["P.2"]


def test_judged_only_empty_list_prints_nan_as_c():
    """-J empties q1's list (no judged document retrieved): interpolated precision at level 0
    is 0/0 in trec_eval (pytrec_eval returns nan), printed -nan; 11pt_avg adds it."""
    qrels = {"q1": {"d1": 1, "d2": 0}}
    run = {"q1": {"x": 1.0, "y": 0.5}}
    per = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}, judged_docs_only_flag=True
                                         ).evaluate(run)["q1"]
    assert math.isnan(per["iprec_at_recall_0.00"]) and per["iprec_at_recall_0.10"] == 0
    got = trec_eval(*_frames(qrels, run), ["iprec_at_recall.0,0.1", "11pt_avg", "num_ret"],
                    judged_only=True, version="9.0.8").text(query=True)
    assert got.splitlines()[:4] == [
        "num_ret               \tq1\t0",
        "iprec_at_recall_0.00  \tq1\t  -nan",
        "iprec_at_recall_0.10  \tq1\t0.0000",
        "11pt_avg              \tq1\t  -nan",
    ]
    # 10.0 rounds the level: lround(0.1 * 1) = 0 relevant documents, so 0/0 there too
    ten = trec_eval(*_frames(qrels, run), ["iprec_at_recall.0,0.1"], judged_only=True)
    assert ten.text(query=True).splitlines()[1] == "iprec_at_recall_0.10  \tq1\t  -nan"


def test_refusals_name_the_measure():
    with pytest.raises(TrecEvalError, match="trec_eval 9.0.8 has no measure 'rbp'"):
        trec_eval(*_frames(QRELS, RUN), ["rbp.p=0.5"], version="9.0.8")
    with pytest.raises(TrecEvalError, match="unknown trec_eval version"):
        trec_eval(*_frames(QRELS, RUN), ["map"], version="9.1")
    with pytest.raises(TrecEvalError, match="malformed pair"):
        trec_eval(*_frames(QRELS, RUN), ["rbp.p"])
    with pytest.raises(TrecEvalError, match="four coefficients"):
        trec_eval(*_frames(QRELS, RUN), ["utility.1,2"])
    with pytest.raises(TrecEvalError, match="needs another judgment or result format"):
        trec_eval(*_frames(QRELS, RUN), ["prefs_simp"])
    with pytest.raises(TrecEvalError, match="duplicate cutoffs"):
        trec_eval(*_frames(QRELS, RUN), ["P.5,5"])
    with pytest.raises(TrecEvalError, match="Negative cutoff"):
        trec_eval(*_frames(QRELS, RUN), ["ndcg_cut.0,3"])
    with pytest.raises(TrecEvalError, match="takes no parameters"):
        trec_eval(*_frames(QRELS, RUN), ["map.5"])
    with pytest.raises(MetricNameError, match="Prec_10"):
        trec_eval(*_frames(QRELS, RUN), ["Prec_10"])


def test_expand_trec_names():
    got = dict(expand_trec_names(["P.10,5", "gm_map", "11pt_avg", "recip_rank"]))
    assert list(got) == ["gm_map", "recip_rank", "P_5", "P_10", "11pt_avg"]
    assert got["P_5"] == MetricSpec("P", 5)
    assert str(got["gm_map"]) == "gm_AP" and got["gm_map"].aggregate == "gmean"
    assert got["11pt_avg"] == MetricSpec("IPrec11")
    # official without runid: num_q, 3 counts, map, gm_map, Rprec, bpref, recip_rank, 11 + 9
    assert len(expand_trec_names(["official"])) == 1 + 3 + 5 + 11 + 9
    with pytest.raises(TrecEvalError, match="'relstring' has no metric of the engine"):
        expand_trec_names(["all_trec"])


def test_grades_are_truncated_as_atol_reads_them():
    qrels = pd.DataFrame({"user": ["q", "q"], "item": ["a", "b"], "rating": [1.7, 0.9]})
    run = pd.DataFrame({"user": ["q", "q"], "item": ["b", "a"], "score": [2.0, 1.0]})
    got = trec_eval(qrels, run, ["num_rel", "recip_rank"])
    assert got.summary["num_rel"] == 1 and got.summary["recip_rank"] == 0.5


def test_topic_with_only_pooled_documents():
    """trec_eval 9.0.8 reads outside its arrays on a topic whose grades are all negative
    (m_ndcg_cut.c starts at rel_levels[num_rel_levels - 1] = rel_levels[-1]; pytrec_eval can
    crash). recmeta evaluates the topic: nothing is relevant, every measure is 0."""
    qrels = {"q": {"a": -1, "b": -1}}
    run = {"q": {"a": 1.0, "c": 0.5}}
    got = trec_eval(*_frames(qrels, run), ["all_trec"], version="9.0.8")
    for row in got.rows:
        if row.kind not in ("runid", "num_q", "relstring") and row.name not in ("num_ret",
                                                                                "utility"):
            assert got.summary[row.name] == pytest.approx(1e-5 if row.kind == "gm" else 0), row.name
    assert got.summary["num_ret"] == 2
