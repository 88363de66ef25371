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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _te_kernel as K
from ._names import GAIN_FROM_OPTION, SUMMED, MetricNameError, MetricSpec, parse_metric
from ._registry import REGISTRY

__all__ = ["TREC_EVAL_VERSION", "TREC_EVAL_VERSIONS", "TrecEvalError", "TrecEvaluation",
           "trec_eval", "trec_rows", "expand_trec_names", "NICKNAMES", "NOT_IMPLEMENTED",
           "OTHER_FORMATS", "is_trec_name"]

TREC_EVAL_VERSION = "10.0"
TREC_EVAL_VERSIONS = ("10.0", "9.0.8")
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_BOGUS_DOCNO = "ceci_nest_pas_un_docno"  # trec_eval.c's stand-in ranking of a missing topic
_MAX_GRADE = 1_000  # trec_eval counts judgments per grade value, 0 .. the largest
_CLEARED = ("num_ret", "utility", "relstring", "rbp_resid")  # zeroed on it, and unj*


class TrecEvalError(ValueError):
    """A request or input trec_eval would refuse, or a measure this engine lacks."""


@dataclass(frozen=True)
class _Measure:
    """One of trec_eval's measures: how its parameters read and print, and its kernel code.

    ``kind``: runid, num_q, long (a count, summed), double, gm (geometric mean), cut_long
    (``name_k`` per integer cut-off), cut_double (``name_%3.2f`` per level), p_double (one
    value, numeric parameters as given), p_pair (one value, ``key=value`` parameters),
    relstring.
    """

    name: str
    kind: str
    code: int
    defaults: tuple = ()
    engine: str | None = None  # the engine metric of the same value, if any
    since: str = "9.0.8"


# te_trec_measures[] of trec_eval 10.0 (measures.c), less the other formats: the output order
_MEASURES = (
    _Measure("runid", "runid", -1),
    _Measure("num_q", "num_q", K.NUM_Q, engine="NumQ"),
    _Measure("num_ret", "long", K.NUM_RET, engine="NumRet"),
    _Measure("num_rel", "long", K.NUM_REL, engine="NumRel"),
    _Measure("num_rel_ret", "long", K.NUM_REL_RET, engine="NumRelRet"),
    _Measure("map", "double", K.MAP, engine="AP"),
    _Measure("gm_map", "gm", K.GM_MAP, engine="AP"),
    _Measure("Rprec", "double", K.RPREC, engine="Rprec"),
    _Measure("bpref", "double", K.BPREF, engine="bpref"),
    _Measure("recip_rank", "double", K.RECIP_RANK, engine="RR"),
    _Measure("iprec_at_recall", "cut_double", K.IPREC, _LEVELS, engine="IPrec"),
    _Measure("P", "cut_long", K.P, _CUTS, engine="P"),
    _Measure("relstring", "relstring", -1, (10.0,)),
    _Measure("recall", "cut_long", K.RECALL, _CUTS, engine="R"),
    _Measure("infAP", "double", K.INFAP, engine="infAP"),
    _Measure("gm_bpref", "gm", K.GM_BPREF, engine="bpref"),
    _Measure("Rprec_mult", "cut_double", K.RPREC_MULT,
             (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    _Measure("utility", "p_double", K.UTILITY, (1.0, -1.0, 0.0, 0.0)),
    _Measure("11pt_avg", "p_double", K.PT11, _LEVELS, engine="IPrec11"),
    _Measure("binG", "double", K.BING),
    _Measure("G", "p_pair", K.G),
    _Measure("dcg", "p_pair", K.DCG),
    _Measure("ideal_dcg", "p_pair", K.IDEAL_DCG),
    _Measure("ndcg", "p_pair", K.NDCG, engine="nDCG"),
    _Measure("ndcg_rel", "p_pair", K.NDCG_REL),
    _Measure("Rndcg", "p_pair", K.RNDCG),
    _Measure("ndcg_cut", "cut_long", K.NDCG_CUT, _CUTS, engine="nDCG"),
    _Measure("map_cut", "cut_long", K.MAP_CUT, _CUTS, engine="AP"),
    _Measure("relative_P", "cut_long", K.REL_P, _CUTS),
    _Measure("success", "cut_long", K.SUCCESS, (1, 5, 10), engine="Success"),
    _Measure("set_P", "double", K.SET_P),
    _Measure("set_relative_P", "double", K.SET_REL_P),
    _Measure("set_recall", "double", K.SET_RECALL),
    _Measure("set_map", "double", K.SET_MAP),
    _Measure("set_F", "p_double", K.SET_F, (1.0,)),
    _Measure("num_nonrel_judged_ret", "long", K.NONREL_JUDGED_RET),
    _Measure("rbp", "p_pair", K.RBP, since="10.0"),
    _Measure("rbp_resid", "p_pair", K.RBP_RESID, since="10.0"),
    _Measure("unj", "cut_long", K.UNJ, (5, 10, 20), since="10.0"),
)
_BY_NAME = {m.name: m for m in _MEASURES}
_ORDER = {m.name: i for i, m in enumerate(_MEASURES)}
_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
             "bpref", "recip_rank", "iprec_at_recall", "P")
_SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F")
_ALL_TREC_9 = _OFFICIAL + (
    "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "ndcg",
    "relative_P", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P",
    "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret")
#: trec_eval's nicknames for sets of measures (measures.c), per version
NICKNAMES_BY_VERSION: dict[str, dict[str, tuple[str, ...]]] = {
    "10.0": {"official": _OFFICIAL, "set": _SET,
             "all_trec": _ALL_TREC_9[:13] + ("unj", "rbp", "rbp_resid") + _ALL_TREC_9[13:]},
    "9.0.8": {"official": _OFFICIAL, "set": _SET, "all_trec": _ALL_TREC_9},
}
NICKNAMES = NICKNAMES_BY_VERSION[TREC_EVAL_VERSION]
#: trec_eval's measures of other judgment or result formats, refused by name
OTHER_FORMATS: tuple[str, ...] = (
    "all_prefs", "prefs", "qrels_jg", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
    "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg",
    "Rprec_mult_avgjg", "yaap", "ndcg_p")
#: trec_eval's qrels measures this engine does not compute (none left)
NOT_IMPLEMENTED: tuple[str, ...] = ()


@dataclass(frozen=True)
class Row:
    """One output name: ``kind`` says how it prints and averages (float, count, gm, num_q,
    runid, relstring); ``specs`` the engine metric of one of this engine's names;
    ``column`` the kernel's output column of a trec_eval value."""

    name: str
    kind: str
    specs: tuple[MetricSpec, ...] = ()
    column: int = -1
    measure: str = ""


@dataclass
class _Request:
    marked: set[str] = field(default_factory=set)
    params: dict[str, str] = field(default_factory=dict)  # measure -> first parameter text
    extra: dict[str, list] = field(default_factory=dict)
    own: list[tuple[str, MetricSpec]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def _check_version(version: str) -> str:
    if version not in TREC_EVAL_VERSIONS:
        raise TrecEvalError(f"unknown trec_eval version {version!r}; choose one of "
                            f"{', '.join(TREC_EVAL_VERSIONS)}")
    return version


def _refuse(name: str, version: str) -> TrecEvalError:
    have = ", ".join(m.name for m in _MEASURES if _in_version(m, version))
    return TrecEvalError(
        f"trec_eval {version} has no measure {name!r} (its measures: {have}; nicknames: "
        f"{', '.join(NICKNAMES_BY_VERSION[version])}; and this engine's names such as "
        "'nDCG(gain=exp)@10')"
    )


def _in_version(m: _Measure, version: str) -> bool:
    return m.since == "9.0.8" or version == "10.0"


def _long_cutoffs(measure: str, text: str) -> tuple[int, ...]:
    """trec_eval's ``get_long_cutoffs``: sorted, positive, no duplicates."""
    try:
        values = sorted(int(v) for v in text.split(","))
    except ValueError:
        raise TrecEvalError(f"cut-offs of {measure!r} must be integers, got {text!r}") from None
    if values[0] <= 0:
        raise TrecEvalError(f"trec_eval: Negative cutoff detected in {measure}.{text}")
    if len(set(values)) != len(values):
        raise TrecEvalError(f"trec_eval: duplicate cutoffs detected in {measure}.{text}")
    return tuple(values)


def _numbers(measure: str, text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise TrecEvalError(f"parameters of {measure!r} must be numbers, got {text!r}") from None


def _double_cutoffs(measure: str, text: str) -> tuple[float, ...]:
    """trec_eval's ``get_double_cutoffs``: sorted, no duplicates."""
    values = sorted(_numbers(measure, text))
    if len(set(values)) != len(values):
        raise TrecEvalError(f"trec_eval: duplicate cutoffs detected in {measure}.{text}")
    if measure == "iprec_at_recall" and any(not 0 <= v <= 1 for v in values):
        raise TrecEvalError(f"recall levels of {measure!r} must lie in [0, 1], got {text!r}")
    return tuple(values)


def _pairs(measure: str, text: str) -> tuple[tuple[str, float], ...]:
    """trec_eval's ``get_param_pairs``: ``key=value`` separated by commas."""
    out = []
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or not key or "=" in value:
            raise TrecEvalError(f"trec_eval: malformed pair parameters in {measure}.{text} "
                                "(write key=value[,key=value...], e.g. rbp.p=0.8 or ndcg.1=0.5)")
        try:
            out.append((key, float(value)))
        except ValueError:
            raise TrecEvalError(f"the value of {key!r} in {measure}.{text} must be a number"
                                ) from None
    return tuple(out)


def _params(m: _Measure, text: str | None):
    """The parameters of measure ``m`` from its ``-m`` text (None: its defaults)."""
    if text is None:
        return m.defaults
    if m.kind == "cut_long":
        return _long_cutoffs(m.name, text)
    if m.kind == "cut_double":
        return _double_cutoffs(m.name, text)
    if m.kind == "p_pair":
        return _pairs(m.name, text)
    values = tuple(_numbers(m.name, text))
    if m.name == "utility" and len(values) != 4:
        raise TrecEvalError("trec_eval: utility takes four coefficients (relevant retrieved, "
                            f"nonrelevant retrieved, relevant missed, nonrelevant missed), got "
                            f"{text!r}")
    return values


def _split_value(name: str) -> tuple[str, str] | None:
    """``P_10`` -> ("P", "10"), ``iprec_at_recall_0.10`` -> ("iprec_at_recall", "0.10")."""
    for m in _MEASURES:
        if m.kind in ("cut_long", "cut_double") and name.startswith(m.name + "_"):
            value = name[len(m.name) + 1:]
            if value and (value.replace(".", "", 1).isdigit()):
                return m.name, value
    return None


def is_trec_name(name: str) -> bool:
    """Whether ``name`` is trec_eval's (a measure, nickname, ``P.5,10`` or ``P_10`` form) and
    not only one of this engine's names."""
    base = name.split(".", 1)[0]
    ours_too = {"P", "recall", "map", "bpref", "infAP", "ndcg"}  # ours under the same name
    known = base in _BY_NAME or base in NICKNAMES or base in OTHER_FORMATS
    return (name not in ours_too and known) or _split_value(name) is not None


def _parse(names: Sequence[str], version: str) -> _Request:
    """trec_eval's ``mark_measure``, plus value names and this engine's names."""
    req = _Request()
    nicknames = NICKNAMES_BY_VERSION[version]
    for text in names:
        name = text.strip()
        base, dot, params = name.partition(".")
        if name in nicknames:
            req.marked.update(nicknames[name])
            continue
        if name in OTHER_FORMATS or base in OTHER_FORMATS:
            raise TrecEvalError(f"trec_eval measure {name!r} needs another judgment or result "
                                "format (-R prefs or qrels_jg, -T, -Z); recmeta reads qrels "
                                "and trec_results only")
        if dot and base in _BY_NAME and _split_value(name) is None:
            measure = _BY_NAME[base]
            if not _in_version(measure, version):
                raise _refuse(base, version)
            if not params:
                raise TrecEvalError(f"trec_eval: improper measure in parameter {base!r}")
            if measure.kind not in ("cut_long", "cut_double", "p_double", "p_pair",
                                    "relstring"):
                raise TrecEvalError(f"trec_eval measure {base!r} takes no parameters "
                                    f"(got {name!r})")
            req.marked.add(base)
            if base in req.params:  # trec_eval reads the first parameters given only
                req.ignored.append(name)
            else:
                _params(measure, params)  # refuse bad parameters now
                req.params[base] = params
            continue
        split = _split_value(name)
        if split is not None:
            base, value = split
            if not _in_version(_BY_NAME[base], version):
                raise _refuse(base, version)
            if _BY_NAME[base].kind == "cut_long":
                req.extra.setdefault(base, []).extend(_long_cutoffs(base, value))
            else:
                req.extra.setdefault(base, []).extend(_double_cutoffs(base, value))
            continue
        if name in _BY_NAME:
            if not _in_version(_BY_NAME[name], version):
                raise _refuse(name, version)
            req.marked.add(name)
            continue
        try:
            spec = parse_metric(name)
        except MetricNameError as err:
            raise MetricNameError(
                f"{err} trec_eval {version}'s measures: "
                f"{', '.join(m.name for m in _MEASURES if _in_version(m, version))}; "
                f"nicknames: {', '.join(nicknames)}."
            ) from None
        if name not in [n for n, _ in req.own]:
            req.own.append((name, spec))
    return req


@dataclass(frozen=True)
class _Block:
    """One requested trec_eval measure with its parameters and first output column."""

    measure: _Measure
    params: tuple
    column: int
    width: int
    level: int = -1  # its own relevance level (ir_measures' rel=), -1: the run's


_JUDGED = _Measure("Judged", "cut_long", K.JUDGED)  # ir_measures' Judged@k (no trec_eval name)
_ALL_RANKS = 10**9  # a cut-off no list reaches (Judged without @k: the whole list)


def _trec_block(spec: MetricSpec) -> tuple[_Measure, tuple, int] | None:
    """The trec_eval pass's measure, parameters and relevance level computing ``spec`` (an
    engine or ir_measures name), or None when only the engine's passes have it."""
    params = dict(spec.params)
    level = params.get("rel")
    level = -1 if level is None else int(level)
    k = spec.k
    gm = spec.aggregate == "gmean"
    name = spec.name
    found: tuple[str, tuple] | None = None
    if gm:
        found = {("AP", None): ("gm_map", ()), ("bpref", None): ("gm_bpref", ())}.get((name, k))
    elif name == "nDCG":
        if params.get("gain") in (GAIN_FROM_OPTION, "linear"):
            found = ("ndcg", ()) if k is None else ("ndcg_cut", (k,))
    elif k is not None:
        cut = {"P": "P", "R": "recall", "AP": "map_cut", "Success": "success"}.get(name)
        if cut is not None:
            found = (cut, (k,))
        elif name == "Judged":
            return _JUDGED, (k,), level
    elif name == "Judged":
        return _JUDGED, (_ALL_RANKS,), level
    elif name == "IPrec":
        found = ("iprec_at_recall", (params["recall"],))
    elif name == "SetF":
        found = ("set_F", (params["beta"],))
    elif name == "RBP":
        found = ("rbp", (("p", params["p"]),))
    else:
        single = {"R": "set_recall", "AP": "map", "RR": "recip_rank", "bpref": "bpref",
                  "infAP": "infAP", "Rprec": "Rprec", "IPrec11": "11pt_avg", "NumQ": "num_q",
                  "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret",
                  "SetP": "set_P", "SetR": "set_recall"}.get(name)
        if single is not None:
            found = (single, _BY_NAME[single].defaults)
    if found is None:
        return None
    return _BY_NAME[found[0]], found[1], level


def _plan(names: Sequence[str], version: str) -> tuple[list[Row], list[_Block], list[str]]:
    req = _parse(names, version)
    rows: list[Row] = []
    blocks: list[_Block] = []
    col = 0
    for name in sorted(set(req.marked) | set(req.extra), key=_ORDER.__getitem__):
        m = _BY_NAME[name]
        given = req.params.get(name)
        if m.kind == "runid":
            rows.append(Row("runid", "runid", measure=name))
            continue
        if m.kind in ("cut_long", "cut_double"):
            values = _params(m, given) if name in req.marked else ()
            values = tuple(sorted(set(values) | set(req.extra.get(name, []))))
            shown = [f"{name}_{v}" if m.kind == "cut_long" else f"{name}_{v:3.2f}"
                     for v in values]
            kinds = ["float"] * len(values)
        else:
            values = _params(m, given)
            shown = [name if given is None else f"{name}_{given}"]
            kinds = [{"long": "count", "num_q": "num_q", "gm": "gm",
                      "relstring": "relstring"}.get(m.kind, "float")]
        blocks.append(_Block(m, values, col, len(shown)))
        for i, (text, kind) in enumerate(zip(shown, kinds)):
            rows.append(Row(text, kind, column=col + i, measure=name))
        col += len(shown)
    for text, spec in req.own:
        kind = "count" if spec.name in SUMMED else "gm" if spec.aggregate == "gmean" else "float"
        if spec.name == "NumQ":
            kind = "num_q"
        found = _trec_block(spec)
        if found is None:
            if dict(spec.params).get("rel") is not None or not REGISTRY[spec.name].engine:
                raise TrecEvalError(f"{text!r}: this form has no computation here (rel= and "
                                    f"{spec.name} are computed without a cut-off or with the "
                                    "cut-offs trec_eval has)")
            rows.append(Row(text, kind, (spec,)))
            continue
        measure, params, level = found
        blocks.append(_Block(measure, params, col, 1, level))
        rows.append(Row(text, kind, (spec,), column=col, measure=measure.name))
        col += 1
    return rows, blocks, req.ignored


def trec_rows(names: Sequence[str], version: str = TREC_EVAL_VERSION
              ) -> tuple[list[Row], list[str], list[str]]:
    """The output rows of ``-m`` arguments, in trec_eval's order, then this engine's names.

    Returns (rows, measures a nickname named that are not computed (none), ``-m`` arguments
    ignored because an earlier one gave the measure's parameters).
    """
    rows, _, ignored = _plan(names, _check_version(version))
    return rows, [], ignored


def expand_trec_names(names: Sequence[str], version: str = TREC_EVAL_VERSION
                      ) -> list[tuple[str, MetricSpec]]:
    """trec_eval's ``-m`` arguments as (output name, engine metric) pairs, in trec_eval's order.

    ``P.5,10`` gives ``[("P_5", P@5), ("P_10", P@10)]``; ``official`` its eleven measures
    without ``runid``; ``gm_map`` the spec ``gm_AP``; ``11pt_avg`` ``IPrec11``. A measure with
    no engine metric of the same value (``rbp``, ``set_P``, ``relstring`` ..., or parameters
    other than the defaults of ``ndcg`` and ``11pt_avg``) is refused: use :func:`trec_eval`.
    The engine's ``IPrec`` reaches a recall level by 9.0.8's rule.
    """
    rows, blocks, _ = _plan(names, _check_version(version))
    by_measure = {b.measure.name: b for b in blocks}
    out = []
    for row in rows:
        if row.kind == "runid":
            continue
        if row.specs:
            out.append((row.name, row.specs[0]))
            continue
        block = by_measure[row.measure]
        m = block.measure
        if m.engine is None or (m.kind in ("p_double", "p_pair") and block.params != m.defaults):
            raise TrecEvalError(f"trec_eval measure {row.name!r} has no metric of the engine "
                                "with the same value; recmeta.metrics.trec_eval computes it")
        if m.kind == "cut_long":
            spec = parse_metric(f"{m.engine}@{block.params[row.column - block.column]}")
        elif m.kind == "cut_double":
            spec = MetricSpec("IPrec", None,
                              (("recall", block.params[row.column - block.column]),))
        else:
            spec = parse_metric(m.engine)
        if m.kind == "gm":
            spec = MetricSpec(spec.name, spec.k, spec.params, "gmean")
        out.append((row.name, spec))
    return out


# ------------------------------------------------------------------------------- evaluation
@dataclass
class TrecEvaluation:
    """Per-topic values and summary of one run, as trec_eval computes and prints them."""

    rows: list[Row]
    queries: list[str]  # evaluated topics, in trec_eval's order
    values: dict[str, np.ndarray]  # row name -> value per evaluated topic (relstring: strings)
    summary: dict[str, float | str]  # row name -> summary value (relstring has none)
    run_id: str
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    version: str = TREC_EVAL_VERSION

    def _per_topic(self) -> list[Row]:
        return [row for row in self.rows if row.kind not in ("runid", "num_q", "gm")]

    def lines(self, query: bool = False, summary: bool = True) -> list[str]:
        """trec_eval's output lines (without newlines): per topic if ``query``, then summary."""
        out = []
        if query:
            rows = self._per_topic()
            heads = [f"{row.name:<22}\t" for row in rows]
            cells = [_cells(row, self.values[row.name]) for row in rows]
            for q, qid in enumerate(self.queries):
                tail = f"{qid}\t"
                out.extend(head + tail + col[q] for head, col in zip(heads, cells))
        if summary:
            for row in self.rows:
                if row.kind != "relstring":
                    out.append(_line(row, "all", self.summary[row.name]))
        return out

    def text(self, query: bool = False, summary: bool = True) -> str:
        return "".join(line + "\n" for line in self.lines(query, summary))

    def records(self, query: bool = False, summary: bool = True) -> list[dict]:
        """The same values as :meth:`lines`, as records (measure, query, value)."""
        out = []
        if query:
            rows = self._per_topic()
            for q, qid in enumerate(self.queries):
                for row in rows:
                    out.append({"measure": row.name, "query": qid,
                                "value": _plain(row, self.values[row.name][q])})
        if summary:
            for row in self.rows:
                if row.kind != "relstring":
                    out.append({"measure": row.name, "query": "all",
                                "value": _plain(row, self.summary[row.name])})
        return out


def _plain(row: Row, value):
    if row.kind in ("runid", "relstring"):
        return value
    if row.kind in ("count", "num_q"):
        return int(value)
    return None if math.isnan(value) else float(value)


def _float(value: float) -> str:
    """C's ``%6.4f``; a NaN from 0.0/0.0 carries the sign bit on x86-64, so glibc prints -nan."""
    if math.isnan(value):
        return f"{'-nan':>6}"
    return f"{value:6.4f}"


def _cells(row: Row, values) -> list[str]:
    """The printed values of one row for every topic (as :func:`_line` prints them)."""
    if row.kind == "relstring":
        return [f"'{v}'" for v in values]
    if row.kind in ("count", "num_q"):
        return [str(int(v)) for v in np.asarray(values).tolist()]
    return ["  -nan" if math.isnan(v) else f"{v:6.4f}" for v in np.asarray(values).tolist()]


def _line(row: Row, qid: str, value) -> str:
    if row.kind == "runid":
        return f"{'runid':<22}\t{qid}\t{value}"
    if row.kind == "relstring":
        return f"{row.name:<22}\t{qid}\t'{value}'"
    if row.kind in ("count", "num_q"):
        return f"{row.name:<22}\t{qid}\t{int(value)}"
    return f"{row.name:<22}\t{qid}\t{_float(value)}"


_RELCHARS = np.array(list("<.-0123456789>"))  # grade + 3 -> character (relstring)


def _relstrings(rels: np.ndarray, ptr: np.ndarray, length: int) -> list[str]:
    """``m_relstring.c``: the grades of the first ``length`` documents, one character each."""
    chars = _RELCHARS[np.clip(rels, -3, 10) + 3]
    return ["".join(chars[ptr[t]:min(ptr[t + 1], ptr[t] + max(length, 0))])
            for t in range(len(ptr) - 1)]


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


def _codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, categories as str) of an id column, categorical or not (hash-factorised)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = np.asarray(col.cat.categories.astype(str), dtype=object)
        return col.cat.codes.to_numpy().astype(np.int32, copy=False), cats
    codes, cats = pd.factorize(col.astype(str), use_na_sentinel=False)
    return codes.astype(np.int32), np.asarray(cats, dtype=object)


def _lookup(cats: np.ndarray, universe: np.ndarray) -> np.ndarray:
    """Index of each category in the sorted ``universe`` (-1 where absent)."""
    at = np.minimum(np.searchsorted(universe, cats), max(len(universe) - 1, 0))
    found = np.where(universe[at] == cats, at, -1) if len(universe) else np.full(len(cats), -1)
    return found.astype(np.int32)


def _topics(qrels: pd.DataFrame, run: pd.DataFrame, *, complete: bool, max_ret: int | None,
            judged_only: bool, version: str) -> _Topics:
    qt_codes, qt_cats = _codes(qrels["user"])
    qd_codes, qd_cats = _codes(qrels["item"])
    grades = np.trunc(pd.to_numeric(qrels["rating"]).to_numpy(dtype=np.float64))  # atol
    q_rel = grades.astype(np.int64)
    rt_codes, rt_cats = _codes(run["user"])
    rd_codes, rd_cats = _codes(run["item"])
    sim = pd.to_numeric(run["score"]).to_numpy(dtype=np.float64)

    names = np.unique(qt_cats[np.unique(qt_codes)])  # byte order of UTF-8 = code point order
    n_t = len(names)
    q_t = _lookup(qt_cats, names)[qt_codes]
    r_t = _lookup(rt_cats, names)[rt_codes]
    has_run = np.bincount(r_t[r_t >= 0], minlength=n_t) > 0
    missing = np.flatnonzero(~has_run)
    stand_in = version == "10.0" and complete and len(missing)
    docs = np.unique(np.concatenate([qd_cats, rd_cats, [_BOGUS_DOCNO] if stand_in else []]))
    q_d = _lookup(qd_cats, docs)[qd_codes]
    r_d = _lookup(rd_cats, docs)[rd_codes]
    if stand_in:  # trec_eval.c's stand-in ranking: one document, score 1
        r_t = np.concatenate([r_t, missing.astype(np.int32)])
        r_d = np.concatenate([r_d, np.full(len(missing), np.searchsorted(docs, _BOGUS_DOCNO),
                                           dtype=np.int32)])
        sim = np.concatenate([sim, np.ones(len(missing))])
    if len(q_rel) and q_rel.max() > _MAX_GRADE:
        i = int(np.argmax(q_rel))
        raise TrecEvalError(
            f"grade {q_rel[i]} for topic {names[q_t[i]]!r}, docno {docs[q_d[i]]!r}: trec_eval "
            f"grades are small integers (here at most {_MAX_GRADE:,}; it keeps a count per grade "
            "value). Is this a ratings table (user item rating timestamp)? qrels lines are "
            "qid iter docno rel: write them with recmeta.metrics.write_qrels")
    rels, ptr, levels, n_levels, nonpool, unjudged, error = K.res_rels(
        q_t, q_d, q_rel, r_t, r_d, sim, n_t, len(docs), -1 if max_ret is None else max_ret,
        judged_only)
    if error > 0:
        i = error - 1
        raise TrecEvalError(
            f"duplicate judgment for topic {names[q_t[i]]!r}, docno {docs[q_d[i]]!r} (trec_eval: "
            "duplicate docs); keep one line per pair (a ratings table, user item rating "
            "timestamp, is not a qrels file: write it with recmeta.metrics.write_qrels)")
    if error < -1:
        j = -error - 2
        raise TrecEvalError(f"docno {docs[r_d[j]]!r} appears twice for topic "
                            f"{names[r_t[j]]!r} (trec_eval: duplicate docs)")
    if version == "10.0":
        if not complete and len(missing):
            raise TrecEvalError(
                f"topic {names[missing[0]]!r} of the qrels has no results in the run "
                f"({len(missing)} such topic(s)); trec_eval 10.0 stops there (exit 4). "
                "Add -c to score such topics 0, or --trec-eval 9.0.8 to skip them")
        chosen = np.arange(n_t)
    else:
        chosen = np.flatnonzero(has_run)
    if not len(chosen) or not has_run.any():
        raise TrecEvalError("trec_eval: No queries with both results and relevance info")
    if len(chosen) < n_t:
        sizes = np.diff(ptr)[chosen]
        keep = np.repeat(ptr[chosen], sizes) + np.arange(sizes.sum()) - np.repeat(
            np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
        rels = rels[keep]
        ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return _Topics(names[chosen], rels, ptr, levels[chosen], n_levels[chosen], nonpool[chosen],
                   unjudged[chosen], ~has_run[chosen], n_t, int((q_rel > 0).sum()))


def _kernel_arrays(blocks: list[_Block]):
    codes, col0, blevel, pptr, params, gptr, gkey, gval = [], [], [], [0], [], [0], [], []
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
    return (np.asarray(codes, dtype=np.int64), np.asarray(col0, dtype=np.int64),
            np.asarray(blevel, dtype=np.int64), np.asarray(pptr, dtype=np.int64),
            np.asarray(params, dtype=np.float64),
            np.asarray(gptr, dtype=np.int64), np.asarray(gkey, dtype=np.int64),
            np.asarray(gval, dtype=np.float64))


def _valid_int(text: str) -> bool:
    """gain_init.c's ``valid_int``: an optional sign, then digits."""
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isdigit() and digits.isascii()


def trec_eval(
    qrels: pd.DataFrame,
    run: pd.DataFrame,
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
    as trec_eval keeps the tag of the last line). Options: ``level`` (``-l``; read as an
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
    if run_id is None:
        run_id = str(run["system"].iloc[-1]) if "system" in run.columns and len(run) else "run"
    topics = _topics(qrels, run, complete=complete, max_ret=max_ret, judged_only=judged_only,
                     version=version)
    n_cols = sum(b.width for b in blocks)
    arrays = _kernel_arrays(blocks)
    values = K.topic_values(topics.rels, topics.ptr, topics.levels, topics.n_levels,
                            topics.nonpool, topics.unjudged, int(level), arrays[0], arrays[1],
                            arrays[2], n_cols, *arrays[3:], version == "10.0", int(num_docs))
    stand_in = np.flatnonzero(topics.stand_in)
    for row in rows:  # trec_eval.c's clean-up of a stand-in ranking goes by printed name
        if row.column >= 0 and (row.name in _CLEARED or row.name.startswith("unj")):
            values[stand_in, row.column] = 0.0
    evaluated = len(topics.names)
    n_q = topics.n_qrels_topics if complete else evaluated
    sums = _sequential_sums(values)
    queries = [str(q) for q in topics.names]

    per: dict[str, np.ndarray] = {}
    summary: dict[str, float | str] = {}
    own = [row for row in rows if row.specs and row.column < 0]
    if own:
        own_values = _own_values(qrels, run, [row.specs[0] for row in own], queries,
                                 level=level, max_ret=max_ret, judged_only=judged_only)
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
            summary[row.name] = _summary(row.kind, _sequential_sums(v[:, None])[0], v, n_q,
                                         evaluated, own=True)
        else:
            v = values[:, row.column]
            per[row.name] = np.exp(v) if row.kind == "gm" else v
            if row.kind == "count" and row.measure == "num_rel" and complete and not row.specs:
                summary[row.name] = float(topics.positive_lines)  # m_num_rel.c under -c
            else:
                summary[row.name] = _summary(row.kind, sums[row.column], v, n_q, evaluated)
    return TrecEvaluation(rows, queries, per, summary, run_id, [], ignored, version)


def _sequential_sums(values: np.ndarray) -> np.ndarray:
    """Column sums added top to bottom, as trec_eval accumulates (``cumsum`` adds in order;
    ``sum`` pairs terms and may differ in the last bit)."""
    if not len(values):
        return np.zeros(values.shape[1])
    return np.cumsum(values, axis=0)[-1]


def _summary(kind: str, total: float, v: np.ndarray, n_q: int, evaluated: int,
             own: bool = False) -> float:
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


def _own_values(qrels, run, specs, queries, *, level, max_ret, judged_only) -> dict:
    """This engine's metrics named in ``-m``, per evaluated topic (0 for an empty list)."""
    from ._evaluate import score_matrices
    from ._judgments import Judgments
    from ._runs import Runs

    grades = np.trunc(pd.to_numeric(qrels["rating"]).to_numpy(dtype=np.float64))
    q = pd.DataFrame({"user": qrels["user"].astype(str).to_numpy(),
                      "item": qrels["item"].astype(str).to_numpy(), "rating": grades})
    judgments = Judgments.from_frame(q, threshold=level, negative="pooled")
    r = pd.DataFrame({"system": "run", "user": run["user"].astype(str).to_numpy(),
                      "item": run["item"].astype(str).to_numpy(),
                      "score": pd.to_numeric(run["score"]).to_numpy(dtype=np.float64)})
    runs = Runs.from_frame(r[r["user"].isin(judgments.users)], judgments, depth=max_ret)
    if judged_only:
        runs = runs.only_judged(judgments)
    mats = score_matrices(judgments, runs, specs, users="all")
    index = pd.Index(judgments.users.astype(str)).get_indexer(queries)
    return {str(s): mats[str(s)][0][index] for s in specs}
