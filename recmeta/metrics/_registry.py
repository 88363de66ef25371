"""The measure registry: every metric name the engine reads, with its parameters and sources.

One entry per measure: its name (ir_measures' spelling where ir_measures has the measure), its
parameters with defaults and readers, its aliases (matched case-insensitively), trec_eval's
name for it (where trec_eval has it) and a citation. :mod:`recmeta.metrics._names` parses
``NAME[(key=value, ...)][@k]`` against this table, so ir_measures' names (``nDCG@10``,
``P(rel=2)@5``, ``RBP(p=0.8)``, ``Judged@10``, ``R@100``, ``SetF(beta=1)``, ``IPrec@0.5``)
and this engine's (``nDCG(gain=exp)@10``, ``SRecall(gamma=1)@10``) read the same way.

A parameter marked ``optional`` is left out of a parsed name when it is not given (``rel``:
the judgments' own relevance level); ``P(rel=2)@5`` is computed by trec_eval's pass
(:func:`recmeta.metrics.trec_eval`, ``recmeta evaluate``), as are the measures whose
``engine`` flag is off (``RBP``, ``Judged``, ``SetP``, ``SetR``, ``SetF``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ._options import OptionError, gain_name

__all__ = ["Param", "Measure", "REGISTRY", "REQUIRED", "GAIN_FROM_OPTION", "lookup"]


class _Required:
    """Default of a parameter that must be given (shown as ``LEVEL`` in the known names)."""

    def __repr__(self) -> str:
        return "LEVEL"


class _FromOption:
    """Default of nDCG's gain: the evaluation's ``gain=`` option (linear unless it says
    otherwise)."""

    def __repr__(self) -> str:
        return "linear"


REQUIRED = _Required()
#: the gain of an ``nDCG`` name that does not set one: the evaluation's ``gain=`` option
GAIN_FROM_OPTION = _FromOption()


def _gain(value: str) -> str:

    try:
        return gain_name(value)
    except OptionError:
        raise ValueError("gain must be one of linear, exponential (exp), binary") from None


def _positive_float_or_none(value: str) -> float | None:
    if value.lower() == "none":
        return None
    x = float(value)
    if not x > 0 or math.isnan(x):
        raise ValueError("must be a positive number")
    return x


def _gamma(value: str) -> float:
    x = float(value)  # accepts "inf"
    if not x >= 0:
        raise ValueError("gamma must be >= 0 (inf allowed)")
    return x


def _unit(value: str) -> float:
    x = float(value)
    if not 0 <= x <= 1:
        raise ValueError("must lie in [0, 1]")
    return x


def _persistence(value: str) -> float:
    x = float(value)
    if not 0 < x < 1:
        raise ValueError("the persistence p must lie in (0, 1)")
    return x


def _grade(value: str) -> int:
    x = float(value)
    if not x.is_integer():
        raise ValueError("rel is a grade: an integer")
    return int(x)


def _beta(value: str) -> float:
    x = float(value)
    if not x > 0:
        raise ValueError("beta must be > 0")
    return x


@dataclass(frozen=True)
class Param:
    """A parameter: its default, the reader of its text, and whether an unset value is left
    out of the parsed name (``optional``)."""

    default: object
    read: Callable[[str], object]
    optional: bool = False


_REL = Param(None, _grade, optional=True)


@dataclass(frozen=True)
class Measure:
    """A registry entry (see the module docstring). ``engine``: computed by the engine's passes
    (:func:`recmeta.metrics.evaluate`); else by trec_eval's pass only."""

    name: str
    params: dict[str, Param] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    trec: str | None = None
    cite: str = ""
    engine: bool = True


_TREC = "trec_eval (NIST), https://github.com/usnistgov/trec_eval"
REGISTRY: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("P", {"rel": _REL}, ("Precision",), "P", _TREC),
        Measure("R", {"rel": _REL}, ("recall", "Recall"), "recall", _TREC),
        Measure("F1", {}, (), None, "van Rijsbergen 1979"),
        Measure("AP", {"rel": _REL}, ("map", "MAP"), "map", "Buckley & Voorhees 2005; " + _TREC),
        Measure(
            "nDCG",
            {"gain": Param(GAIN_FROM_OPTION, _gain)},
            ("ndcg",),
            "ndcg",
            "Järvelin & Kekäläinen 2002",
        ),
        Measure("RR", {"rel": _REL}, ("MRR", "recip_rank"), "recip_rank", "Voorhees 1999"),
        Measure(
            "ERR", {"rmax": Param(None, _positive_float_or_none)}, (), None, "Chapelle et al. 2009"
        ),
        Measure("bpref", {"rel": _REL}, ("Bpref",), "bpref", "Buckley & Voorhees 2004"),
        Measure("infAP", {"rel": _REL}, (), "infAP", "Yilmaz & Aslam 2006"),
        Measure("AUC", {}, (), None, "Hanley & McNeil 1982"),
        Measure("muAP", {}, ("µAP", "uAP"), None, "Valcarce et al. 2020"),
        Measure("NDCNG", {}, (), None, "Valcarce et al. 2020"),
        Measure("SRecall", {"gamma": Param(1.0, _gamma)}, (), None, "Steck 2011"),
        Measure("Rprec", {"rel": _REL}, ("R-prec",), "Rprec", _TREC),
        Measure("Success", {"rel": _REL}, ("HR", "Hit"), "success", _TREC),
        Measure(
            "IPrec", {"recall": Param(REQUIRED, _unit), "rel": _REL}, (), "iprec_at_recall", _TREC
        ),
        Measure("IPrec11", {}, ("11pt_avg",), "11pt_avg", _TREC),
        Measure("NumQ", {}, ("num_q",), "num_q", _TREC),
        Measure("NumRet", {}, ("num_ret",), "num_ret", _TREC),
        Measure("NumRel", {"rel": _REL}, ("num_rel",), "num_rel", _TREC),
        Measure("NumRelRet", {"rel": _REL}, ("num_rel_ret",), "num_rel_ret", _TREC),
        Measure(
            "RBP",
            {"p": Param(0.8, _persistence), "rel": _REL},
            (),
            "rbp",
            "Moffat & Zobel 2008",
            engine=False,
        ),
        Measure(
            "Judged",
            {},
            (),
            None,
            "the share of judged documents in the top k (ir_measures)",
            engine=False,
        ),
        Measure("SetP", {"rel": _REL}, (), "set_P", _TREC, engine=False),
        Measure("SetR", {"rel": _REL}, (), "set_recall", _TREC, engine=False),
        Measure(
            "SetF",
            {"beta": Param(1.0, _beta), "rel": _REL},
            (),
            "set_F",
            "van Rijsbergen 1979; " + _TREC,
            engine=False,
        ),
    )
}

_LOOKUP = {name.lower(): name for name in REGISTRY} | {
    alias.lower(): m.name for m in REGISTRY.values() for alias in m.aliases
}


def lookup(name: str) -> Measure | None:
    """The registry entry of a name or alias (case-insensitive), or None."""
    key = _LOOKUP.get(name.lower())
    return None if key is None else REGISTRY[key]
