"""trec_eval's catalogue of measures: names, nicknames, parameters, output rows and the plan
of compiled blocks that computes them (read by :mod:`._trec_eval`).

See :mod:`._trec_eval` for the rules the catalogue follows (trec_eval 10.0 by default, 9.0.8 on
request); this module turns ``-m`` names into the rows trec_eval prints, in its own order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import SupportsInt

from . import _te_codes as K
from ._names import GAIN_FROM_OPTION, SUMMED, MetricNameError, MetricSpec, parse_metric
from ._registry import REGISTRY

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
    _Measure(
        "Rprec_mult", "cut_double", K.RPREC_MULT, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
    ),
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
_OFFICIAL = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
_SET = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
)
_ALL_TREC_9 = _OFFICIAL + (
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "ndcg",
    "relative_P",
    "success",
    "map_cut",
    "ndcg_cut",
    "ndcg_rel",
    "Rndcg",
    "binG",
    "G",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
)
#: trec_eval's nicknames for sets of measures (measures.c), per version
NICKNAMES_BY_VERSION: dict[str, dict[str, tuple[str, ...]]] = {
    "10.0": {
        "official": _OFFICIAL,
        "set": _SET,
        "all_trec": _ALL_TREC_9[:13] + ("unj", "rbp", "rbp_resid") + _ALL_TREC_9[13:],
    },
    "9.0.8": {"official": _OFFICIAL, "set": _SET, "all_trec": _ALL_TREC_9},
}
NICKNAMES = NICKNAMES_BY_VERSION[TREC_EVAL_VERSION]
#: trec_eval's measures of other judgment or result formats, refused by name
OTHER_FORMATS: tuple[str, ...] = (
    "all_prefs",
    "prefs",
    "qrels_jg",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "yaap",
    "ndcg_p",
)
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
        raise TrecEvalError(
            f"unknown trec_eval version {version!r}; choose one of {', '.join(TREC_EVAL_VERSIONS)}"
        )
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
            raise TrecEvalError(
                f"trec_eval: malformed pair parameters in {measure}.{text} "
                "(write key=value[,key=value...], e.g. rbp.p=0.8 or ndcg.1=0.5)"
            )
        try:
            out.append((key, float(value)))
        except ValueError:
            raise TrecEvalError(
                f"the value of {key!r} in {measure}.{text} must be a number"
            ) from None
    return tuple(out)


def _params(m: _Measure, text: str | None) -> tuple:
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
        raise TrecEvalError(
            "trec_eval: utility takes four coefficients (relevant retrieved, "
            f"nonrelevant retrieved, relevant missed, nonrelevant missed), got "
            f"{text!r}"
        )
    return values


def _split_value(name: str) -> tuple[str, str] | None:
    """``P_10`` -> ("P", "10"), ``iprec_at_recall_0.10`` -> ("iprec_at_recall", "0.10")."""
    for m in _MEASURES:
        if m.kind in ("cut_long", "cut_double") and name.startswith(m.name + "_"):
            value = name[len(m.name) + 1 :]
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
            raise TrecEvalError(
                f"trec_eval measure {name!r} needs another judgment or result "
                "format (-R prefs or qrels_jg, -T, -Z); recmeta reads qrels "
                "and trec_results only"
            )
        if dot and base in _BY_NAME and _split_value(name) is None:
            measure = _BY_NAME[base]
            if not _in_version(measure, version):
                raise _refuse(base, version)
            if not params:
                raise TrecEvalError(f"trec_eval: improper measure in parameter {base!r}")
            if measure.kind not in ("cut_long", "cut_double", "p_double", "p_pair", "relstring"):
                raise TrecEvalError(
                    f"trec_eval measure {base!r} takes no parameters (got {name!r})"
                )
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
    rel = params.get("rel")
    if rel is None:
        level = -1
    elif isinstance(rel, str | SupportsInt):
        level = int(rel)
    else:
        raise TrecEvalError(f"{spec}: rel must be an integer grade, got {rel!r}")
    k = spec.k
    gm = spec.aggregate == "gmean"
    name = spec.name
    found: tuple[str, tuple] | None = None
    if gm:
        if k is None:
            found = {"AP": ("gm_map", ()), "bpref": ("gm_bpref", ())}.get(name)
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
        single = {
            "R": "set_recall",
            "AP": "map",
            "RR": "recip_rank",
            "bpref": "bpref",
            "infAP": "infAP",
            "Rprec": "Rprec",
            "IPrec11": "11pt_avg",
            "NumQ": "num_q",
            "NumRet": "num_ret",
            "NumRel": "num_rel",
            "NumRelRet": "num_rel_ret",
            "SetP": "set_P",
            "SetR": "set_recall",
        }.get(name)
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
            shown = [f"{name}_{v}" if m.kind == "cut_long" else f"{name}_{v:3.2f}" for v in values]
            kinds = ["float"] * len(values)
        else:
            values = _params(m, given)
            shown = [name if given is None else f"{name}_{given}"]
            kinds = [
                {"long": "count", "num_q": "num_q", "gm": "gm", "relstring": "relstring"}.get(
                    m.kind, "float"
                )
            ]
        blocks.append(_Block(m, values, col, len(shown)))
        for i, (text, kind) in enumerate(zip(shown, kinds, strict=True)):
            rows.append(Row(text, kind, column=col + i, measure=name))
        col += len(shown)
    for text, spec in req.own:
        kind = "count" if spec.name in SUMMED else "gm" if spec.aggregate == "gmean" else "float"
        if spec.name == "NumQ":
            kind = "num_q"
        found = _trec_block(spec)
        if found is None:
            if dict(spec.params).get("rel") is not None or not REGISTRY[spec.name].engine:
                raise TrecEvalError(
                    f"{text!r}: this form has no computation here (rel= and "
                    f"{spec.name} are computed without a cut-off or with the "
                    "cut-offs trec_eval has)"
                )
            rows.append(Row(text, kind, (spec,)))
            continue
        measure, params, level = found
        blocks.append(_Block(measure, params, col, 1, level))
        rows.append(Row(text, kind, (spec,), column=col, measure=measure.name))
        col += 1
    return rows, blocks, req.ignored


def trec_rows(
    names: Sequence[str], version: str = TREC_EVAL_VERSION
) -> tuple[list[Row], list[str], list[str]]:
    """The output rows of ``-m`` arguments, in trec_eval's order, then this engine's names.

    Returns (rows, measures a nickname named that are not computed (none), ``-m`` arguments
    ignored because an earlier one gave the measure's parameters).
    """
    rows, _, ignored = _plan(names, _check_version(version))
    return rows, [], ignored


def expand_trec_names(
    names: Sequence[str], version: str = TREC_EVAL_VERSION
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
            raise TrecEvalError(
                f"trec_eval measure {row.name!r} has no metric of the engine "
                "with the same value; recmeta.metrics.trec_eval computes it"
            )
        if m.kind == "cut_long":
            spec = parse_metric(f"{m.engine}@{block.params[row.column - block.column]}")
        elif m.kind == "cut_double":
            spec = MetricSpec("IPrec", None, (("recall", block.params[row.column - block.column]),))
        else:
            spec = parse_metric(m.engine)
        if m.kind == "gm":
            spec = MetricSpec(spec.name, spec.k, spec.params, "gmean")
        out.append((row.name, spec))
    return out
