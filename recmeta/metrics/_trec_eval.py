"""trec_eval's measures, options and output, computed by a compiled pass of its own.

This is what ``recmeta evaluate QRELS RUN`` runs. It follows trec_eval 10.0 by default and
9.0.8 (the release pytrec_eval, package pytrec-eval-terrier, is built on) with
``version="9.0.8"`` (``--trec-eval 9.0.8``), in everything their output shows:

* **Names.** ``-m`` takes trec_eval's measure names (``P``, ``P.5,10``, ``ndcg_cut.10``,
  ``rbp.p=0.8``, ``relative_P.5,10``, ``utility.1,-1,0,0``, ``official``, ``all_trec``,
  ``set``), the names of single values (``P_10``, ``success_1``, ``iprec_at_recall_0.10``; an
  extension: they add cut-offs) and this engine's names (``nDCG(gain=exp)@10``, printed as
  given). As in trec_eval, a measure's parameters come from the first ``-m NAME.params`` that
  names it (later ones are ignored, and reported), else from its defaults. The measures that
  need other judgment formats (:data:`OTHER_FORMATS`: preferences, ``qrels_jg``, ``yaap``,
  ``ndcg_p``) are refused by name.
* **Topics.** trec_eval 10.0 evaluates every topic of the qrels, in the order of their ids as
  byte strings: a topic without results stops it (exit 4) unless ``complete`` (``-c``) is set,
  which evaluates the topic on a one-document stand-in ranking and prints its lines (its
  ``num_ret``, ``utility``, ``unj``, ``rbp_resid`` and ``relstring`` emptied). 9.0.8 evaluates
  the topics in both files and, under ``-c``, divides the averages by the number of qrels
  topics without printing the missing ones (each adds log 1e-5 to the geometric means). Under
  ``-c`` the summary ``num_rel`` counts the judgment lines with a grade > 0 (``m_num_rel.c``
  ignores ``-l`` there).
* **Documents.** Results are ordered by score, ties by docno as text, descending
  (``form_res_rels.c``); ``max_ret`` (``-M``) keeps the first N; ``judged_only`` (``-J``) then
  drops the documents without a grade >= 0. Grades are read as ``atol`` reads them (truncated
  to integers); a negative grade is in the pool but not judged; a grade above 1,000 is refused
  (trec_eval keeps a count per grade value; such grades are mostly a ratings table's
  timestamps read as qrels).
* **Measures.** Each is computed as its ``m_*.c`` computes it (:mod:`._te_kernel`); 10.0
  turns a recall level x into ``lround(x·R)`` relevant documents where 9.0.8 used
  ``(long)(x·R + 0.9)`` (``iprec_at_recall``, ``11pt_avg``). ``rbp``, ``rbp_resid`` and ``unj``
  are 10.0's. ``utility`` reads ``num_docs`` (``-N``).
* **Layout.** ``%-22s\\t%s\\t%6.4f`` per line (``%ld`` for the counts, the run tag for
  ``runid``, the quoted string for ``relstring``), per topic when asked (``-q``), then the
  summary with ``all`` as the topic; measures in trec_eval's own order (``measures.c``),
  whatever the order of ``-m``. A 0/0 prints ``-nan`` as C prints it on x86-64.

A topic whose grades are all negative makes trec_eval read memory it did not set
(``num_rel_levels`` keeps the previous topic's value); here nothing in it is relevant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import _te_codes as K
from ._names import MetricSpec
from ._te_compiled import kernel
from ._trec_files import Ids, TrecColumns, frame_columns
from ._trec_names import (
    _BOGUS_DOCNO,
    _CLEARED,
    _MAX_GRADE,
    NICKNAMES,
    NOT_IMPLEMENTED,
    OTHER_FORMATS,
    TREC_EVAL_VERSION,
    TREC_EVAL_VERSIONS,
    TrecEvalError,
    _Block,
    _check_version,
    _plan,
    expand_trec_names,
    is_trec_name,
    trec_rows,
)
from ._trec_output import TrecEvaluation

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TREC_EVAL_VERSION",
    "TREC_EVAL_VERSIONS",
    "TrecEvalError",
    "TrecEvaluation",
    "trec_eval",
    "trec_rows",
    "expand_trec_names",
    "NICKNAMES",
    "NOT_IMPLEMENTED",
    "OTHER_FORMATS",
    "is_trec_name",
]


_RELCHARS = np.frombuffer(b"<.-0123456789>", np.uint8)  # grade + 3 -> character (relstring)


def _relstrings(rels: np.ndarray, ptr: np.ndarray, length: int) -> list[str]:
    """``m_relstring.c``: the grades of the first ``length`` documents, one character each."""
    chars = _RELCHARS[np.clip(rels, -3, 10) + 3].tobytes().decode("ascii")
    ends = np.minimum(ptr[1:], ptr[:-1] + max(length, 0)).tolist()
    return [chars[a:b] for a, b in zip(ptr[:-1].tolist(), ends, strict=True)]


@dataclass
class _Topics:
    """The topics to evaluate, in trec_eval's order, as ``form_res_rels.c`` lays them out."""

    names: np.ndarray  # topic ids
    rels: np.ndarray  # grade at each rank, topics one after another (-1 nonpool, -2 unjudged)
    ptr: np.ndarray  # topic t's ranks: rels[ptr[t]:ptr[t + 1]]
    levels: np.ndarray  # topics × grades: number of judgments at each grade >= 0
    n_levels: np.ndarray  # highest grade judged + 1
    nonpool: np.ndarray
    unjudged: np.ndarray
    stand_in: np.ndarray  # bool: a -c topic without results, on the stand-in ranking
    n_qrels_topics: int
    positive_lines: int  # qrels lines with a grade > 0 (num_rel's summary under -c)


def _text(ids: Ids) -> Ids:
    return Ids(ids.codes, np.asarray(ids.names, dtype=str))


def _q(name: np.str_) -> str:
    """An id quoted as Python quotes a str (numpy's strings print as ``np.str_('...')``)."""
    return repr(str(name))


def _distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values: ``np.unique`` without its test for a masked array, which
    imports ``numpy.ma`` (a tenth of numpy's import time)."""
    ordered = np.sort(values)
    keep = np.ones(len(ordered), dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]
    return ordered[keep]


def _lookup(cats: np.ndarray, universe: np.ndarray) -> np.ndarray:
    """Index of each category in the sorted ``universe`` (-1 where absent)."""
    at = np.minimum(np.searchsorted(universe, cats), max(len(universe) - 1, 0))
    found = np.where(universe[at] == cats, at, -1) if len(universe) else np.full(len(cats), -1)
    return found.astype(np.int32)


def _topics(
    qrels: TrecColumns,
    run: TrecColumns,
    *,
    complete: bool,
    max_ret: int | None,
    judged_only: bool,
    version: str,
) -> _Topics:
    # ids as numpy's strings (compared in C; code point order = the byte order of UTF-8)
    (qt_codes, qt_cats), (qd_codes, qd_cats) = _text(qrels.topics), _text(qrels.docs)
    q_rel = np.trunc(qrels.values).astype(np.int64)  # atol
    (rt_codes, rt_cats), (rd_codes, rd_cats) = _text(run.topics), _text(run.docs)
    sim = np.ascontiguousarray(run.values, dtype=np.float64)

    names = _distinct(qt_cats[np.bincount(qt_codes, minlength=len(qt_cats)) > 0])
    n_t = len(names)
    q_t = _lookup(qt_cats, names)[qt_codes]
    r_t = _lookup(rt_cats, names)[rt_codes]
    has_run = np.bincount(r_t[r_t >= 0], minlength=n_t) > 0
    missing = np.flatnonzero(~has_run)
    stand_in = version == "10.0" and complete and len(missing)
    extra = np.array([_BOGUS_DOCNO] if stand_in else [], dtype=str)
    docs = _distinct(np.concatenate([qd_cats, rd_cats, extra]))
    q_d = _lookup(qd_cats, docs)[qd_codes]
    r_d = _lookup(rd_cats, docs)[rd_codes]
    if stand_in:  # trec_eval.c's stand-in ranking: one document, score 1
        r_t = np.concatenate([r_t, missing.astype(np.int32)])
        r_d = np.concatenate(
            [r_d, np.full(len(missing), np.searchsorted(docs, _BOGUS_DOCNO), dtype=np.int32)]
        )
        sim = np.concatenate([sim, np.ones(len(missing))])
    if len(q_rel) and q_rel.max() > _MAX_GRADE:
        i = int(np.argmax(q_rel))
        raise TrecEvalError(
            f"grade {q_rel[i]} for topic {_q(names[q_t[i]])}, docno {_q(docs[q_d[i]])}: trec_eval "
            f"grades are small integers (here at most {_MAX_GRADE:,}; it keeps a count per grade "
            "value). Is this a ratings table (user item rating timestamp)? qrels lines are "
            "qid iter docno rel: write them with recmeta.metrics.write_qrels"
        )
    rels, ptr, levels, n_levels, nonpool, unjudged, error = kernel().res_rels(
        q_t,
        q_d,
        q_rel,
        r_t,
        r_d,
        sim,
        n_t,
        len(docs),
        -1 if max_ret is None else max_ret,
        judged_only,
    )
    if error > 0:
        i = error - 1
        raise TrecEvalError(
            f"duplicate judgment for topic {_q(names[q_t[i]])}, docno {_q(docs[q_d[i]])} "
            "(trec_eval: duplicate docs); keep one line per pair (a ratings table, user item "
            "rating timestamp, is not a qrels file: write it with recmeta.metrics.write_qrels)"
        )
    if error < -1:
        j = -error - 2
        raise TrecEvalError(
            f"docno {_q(docs[r_d[j]])} appears twice for topic "
            f"{_q(names[r_t[j]])} (trec_eval: duplicate docs)"
        )
    if version == "10.0":
        if not complete and len(missing):
            raise TrecEvalError(
                f"topic {_q(names[missing[0]])} of the qrels has no results in the run "
                f"({len(missing)} such topic(s)); trec_eval 10.0 stops there (exit 4). "
                "Add -c to score such topics 0, or --trec-eval 9.0.8 to skip them"
            )
        chosen = np.arange(n_t)
    else:
        chosen = np.flatnonzero(has_run)
    if not len(chosen) or not has_run.any():
        raise TrecEvalError("trec_eval: No queries with both results and relevance info")
    if len(chosen) < n_t:
        sizes = np.diff(ptr)[chosen]
        keep = (
            np.repeat(ptr[chosen], sizes)
            + np.arange(sizes.sum())
            - np.repeat(np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
        )
        rels = rels[keep]
        ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return _Topics(
        names[chosen],
        rels,
        ptr,
        levels[chosen],
        n_levels[chosen],
        nonpool[chosen],
        unjudged[chosen],
        ~has_run[chosen],
        n_t,
        int((q_rel > 0).sum()),
    )


class _KernelArrays(NamedTuple):
    """The blocks of output columns as :func:`recmeta.metrics._te_kernel.topic_values` reads
    them: measure code, first column and relevance level of each block; its parameters
    (``params[pptr[b]:pptr[b + 1]]``) and its ``grade=gain`` pairs (``gptr``)."""

    codes: np.ndarray
    col0: np.ndarray
    blevel: np.ndarray
    pptr: np.ndarray
    params: np.ndarray
    gptr: np.ndarray
    gkey: np.ndarray
    gval: np.ndarray


def _kernel_arrays(blocks: list[_Block]) -> _KernelArrays:
    codes: list[int] = []
    col0: list[int] = []
    blevel: list[int] = []
    pptr = [0]
    params: list[float] = []
    gptr = [0]
    gkey: list[int] = []
    gval: list[float] = []
    for b in blocks:
        m = b.measure
        codes.append(m.code)
        col0.append(b.column)
        blevel.append(b.level)
        if m.kind == "p_pair":
            if m.name in ("rbp", "rbp_resid"):  # m_rbp.c keeps the last p given
                params.append(([v for k, v in b.params if k == "p"] or [0.9])[-1])
            for key, value in b.params:
                if m.name != "rbp_resid" and _valid_int(key):
                    gkey.append(int(key))
                    gval.append(value)
        elif m.kind in ("cut_long", "cut_double", "p_double", "relstring"):
            params.extend(float(v) for v in b.params)
        pptr.append(len(params))
        gptr.append(len(gkey))
    return _KernelArrays(
        np.asarray(codes, dtype=np.int64),
        np.asarray(col0, dtype=np.int64),
        np.asarray(blevel, dtype=np.int64),
        np.asarray(pptr, dtype=np.int64),
        np.asarray(params, dtype=np.float64),
        np.asarray(gptr, dtype=np.int64),
        np.asarray(gkey, dtype=np.int64),
        np.asarray(gval, dtype=np.float64),
    )


def _valid_int(text: str) -> bool:
    """gain_init.c's ``valid_int``: an optional sign, then digits."""
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isdigit() and digits.isascii()


def trec_eval(
    qrels: pd.DataFrame | TrecColumns,
    run: pd.DataFrame | TrecColumns,
    measures: Sequence[str] = ("official",),
    *,
    level: float = 1,
    complete: bool = False,
    max_ret: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
    run_id: str | None = None,
    version: str = TREC_EVAL_VERSION,
) -> TrecEvaluation:
    """Evaluate one run as trec_eval ``version`` (10.0 or 9.0.8) does (see the module
    docstring).

    ``qrels``: frame user, item, rating (a qrels file as :func:`recmeta.metrics.read_qrels` reads
    it); ``run``: frame user, item, score (and system: the tag of its last row is the run id,
    as trec_eval keeps the tag of the last line). Either may also be the columns
    :func:`recmeta.metrics.qrels_columns` and :func:`recmeta.metrics.run_columns` read, which
    spares pandas (``recmeta evaluate`` passes those). Options: ``level`` (``-l``; read as an
    integer, as ``atol`` reads it), ``complete`` (``-c``), ``max_ret`` (``-M``),
    ``judged_only`` (``-J``), ``num_docs`` (``-N``, the collection size ``utility`` reads).
    """
    version = _check_version(version)
    rows, blocks, ignored = _plan(measures, version)
    if not rows:
        raise TrecEvalError("no measure to compute")
    if not level >= 0:
        raise TrecEvalError(f"the relevance level (-l) must be >= 0, got {level}")
    if max_ret is not None and max_ret < 1:
        raise TrecEvalError(f"-M must be >= 1, got {max_ret}")
    if isinstance(run, TrecColumns):
        run_id = (run.tag or "run") if run_id is None else run_id
    elif run_id is None:
        run_id = str(run["system"].iloc[-1]) if "system" in run.columns and len(run) else "run"
    qrels, run = frame_columns(qrels, "rating"), frame_columns(run, "score")
    topics = _topics(
        qrels, run, complete=complete, max_ret=max_ret, judged_only=judged_only, version=version
    )
    n_cols = sum(b.width for b in blocks)
    arrays = _kernel_arrays(blocks)
    values = kernel().topic_values(
        topics.rels,
        topics.ptr,
        topics.levels,
        topics.n_levels,
        topics.nonpool,
        topics.unjudged,
        int(level),
        arrays.codes,
        arrays.col0,
        arrays.blevel,
        n_cols,
        arrays.pptr,
        arrays.params,
        arrays.gptr,
        arrays.gkey,
        arrays.gval,
        version == "10.0",
        int(num_docs),
    )
    stand_in = np.flatnonzero(topics.stand_in)
    for row in rows:  # trec_eval.c's clean-up of a stand-in ranking goes by printed name
        if row.column >= 0 and (row.name in _CLEARED or row.name.startswith("unj")):
            values[stand_in, row.column] = 0.0
    evaluated = len(topics.names)
    n_q = topics.n_qrels_topics if complete else evaluated
    sums = _sequential_sums(values)
    queries = [str(q) for q in topics.names]

    per: dict[str, np.ndarray | list[str]] = {}
    summary: dict[str, float | str] = {}
    own = [row for row in rows if row.specs and row.column < 0]
    if own:
        own_values = _own_values(
            qrels,
            run,
            [row.specs[0] for row in own],
            queries,
            level=level,
            max_ret=max_ret,
            judged_only=judged_only,
        )
    for row in rows:
        if row.kind == "runid":
            summary[row.name] = run_id
        elif row.kind == "relstring":
            block = next(b for b in blocks if b.measure.name == "relstring")
            strings = _relstrings(topics.rels, topics.ptr, int(block.params[0]))
            if row.name == "relstring":
                for t in stand_in:
                    strings[t] = ""
            per[row.name] = strings
        elif row.specs and row.column < 0:
            v = own_values[str(row.specs[0])]
            per[row.name] = v
            summary[row.name] = _summary(
                row.kind, _sequential_sums(v[:, None])[0], v, n_q, evaluated, own=True
            )
        else:
            v = values[:, row.column]
            per[row.name] = np.exp(v) if row.kind == "gm" else v
            if row.kind == "count" and row.measure == "num_rel" and complete and not row.specs:
                summary[row.name] = float(topics.positive_lines)  # m_num_rel.c under -c
            else:
                summary[row.name] = _summary(row.kind, sums[row.column], v, n_q, evaluated)
    return TrecEvaluation(rows, queries, per, summary, run_id, [], ignored, version)


def _sequential_sums(values: np.ndarray) -> np.ndarray:
    """Column sums added top to bottom, as trec_eval accumulates (``sum`` pairs terms and may
    differ in the last bit; ``cumsum`` adds in order but holds a copy of ``values``)."""
    total = np.zeros(values.shape[1])
    for row in values:
        total += row
    return total


def _summary(
    kind: str, total: float, v: np.ndarray, n_q: int, evaluated: int, own: bool = False
) -> float:
    """``meas_avg.c``: counts summed, gm the exp of the mean log, the rest the mean."""
    if kind == "num_q":
        return float(n_q)
    if kind == "count":
        return total
    if kind == "gm":
        if own:  # the engine's values, not their logs
            total = 0.0
            for x in v:
                total += math.log(max(float(x), K.MIN_GEO_MEAN))
        total += (n_q - evaluated) * math.log(K.MIN_GEO_MEAN)
        return math.exp(total / n_q)
    return total / n_q


def _own_values(
    qrels: TrecColumns,
    run: TrecColumns,
    specs: list[MetricSpec],
    queries: list[str],
    *,
    level: float,
    max_ret: int | None,
    judged_only: bool,
) -> dict[str, np.ndarray]:
    """This engine's metrics named in ``-m``, per evaluated topic (0 for an empty list)."""
    import pandas as pd

    from ._evaluate import score_matrices
    from ._judgments import Judgments
    from ._runs import Runs

    def text(ids: Ids) -> np.ndarray:
        return ids.names.astype(str)[ids.codes]

    q = pd.DataFrame(
        {"user": text(qrels.topics), "item": text(qrels.docs), "rating": np.trunc(qrels.values)}
    )
    judgments = Judgments.from_frame(q, threshold=level, negative="pooled")
    r = pd.DataFrame(
        {"system": "run", "user": text(run.topics), "item": text(run.docs), "score": run.values}
    )
    runs = Runs.from_frame(r[r["user"].isin(judgments.users)], judgments, depth=max_ret)
    if judged_only:
        runs = runs.only_judged(judgments)
    mats = score_matrices(judgments, runs, specs, users="all")
    index = pd.Index(judgments.users.astype(str)).get_indexer(queries)
    return {str(s): mats[str(s)][0][index] for s in specs}
