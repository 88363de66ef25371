"""Metric names as strings, in the style of ir_measures: ``NAME[(key=value, ...)][@k]``.

Examples: ``P@10``, ``R@100``, ``nDCG@100``, ``nDCG(gain=exp)@10``, ``RR``, ``ERR(rmax=5)@20``,
``SRecall(gamma=inf)@10``, ``IPrec(recall=0.1)``, and ir_measures' ``P(rel=2)@5``, ``RBP(p=0.8)``,
``Judged@10``, ``IPrec@0.5``, ``SetF(beta=1)``. A name without ``@k`` evaluates the whole run.
The names, parameters, aliases and trec_eval names come from one table,
:data:`recmeta.metrics._registry.REGISTRY`.
An ``nDCG`` name without ``gain=`` takes the evaluation's ``gain=`` option (linear by default,
:mod:`recmeta.metrics._options`); one with it keeps its own.
Names are matched case-insensitively (``ndcg@10`` is ``nDCG@10``); a few aliases are accepted
(``Recall``, ``MAP``, ``MRR``, ``µAP``). The prefix ``gm_`` asks for the geometric mean over users
(``gm_AP@100``; trec_eval's ``gm_map`` and ``gm_bpref`` are ``gm_AP`` and ``gm_bpref``).

trec_eval's names for one value are read too: ``P_10`` (or ``P.10``), ``recall_100``,
``map_cut_100``, ``ndcg_cut_10``, ``success_1``, ``iprec_at_recall_0.10``, ``recip_rank``,
``Rprec``, ``11pt_avg``, ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ``gm_map``,
``gm_bpref``, and ``map``, ``ndcg``, ``bpref``, ``infAP``, which are ours under the same name. A
trec_eval name that stands for several values (``P.5,10``, bare ``P`` with its default cut-offs,
``official``, ``all_trec``) is expanded by :mod:`recmeta.metrics._trec_eval`, not here: bare
``P``, ``recall`` and ``map`` keep their meaning in this engine (the whole list). This module is
the only place that parses single names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._registry import GAIN_FROM_OPTION, REGISTRY, REQUIRED, lookup

__all__ = [
    "MetricSpec",
    "MetricNameError",
    "parse_metric",
    "known_metrics",
    "PARAMS",
    "SUMMED",
    "ELEVEN_POINTS",
    "GAIN_FROM_OPTION",
]


class MetricNameError(ValueError):
    """An unknown metric name, parameter or cut-off; the message lists what is known."""


# canonical name -> {parameter: (default, reader)}, from the registry (kept for callers)
PARAMS: dict[str, dict[str, tuple[object, Callable[[str], object]]]] = {
    name: {key: (p.default, p.read) for key, p in m.params.items()} for name, m in REGISTRY.items()
}


#: metrics whose average over users is a sum (trec_eval's summary of its count measures)
SUMMED = frozenset({"NumQ", "NumRet", "NumRel", "NumRelRet"})
#: the recall levels of ``IPrec11`` (trec_eval's ``11pt_avg``)
ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: trec_eval's measures with cut-offs, and ours: ``P_10`` / ``P.10`` is ``P@10``
TREC_CUTOFF_NAMES = {
    "p": "P",
    "recall": "R",
    "map_cut": "AP",
    "ndcg_cut": "nDCG",
    "success": "Success",
}
_TREC_CUT = re.compile(r"^(?P<base>[A-Za-z_]+?)[_.](?P<k>[0-9]+)$")
_TREC_LEVEL = re.compile(r"^iprec_at_recall[_.](?P<x>[0-9]*\.?[0-9]+)$", re.IGNORECASE)

_PATTERN = re.compile(
    r"^\s*(?P<name>[^\s(@]+)\s*(?:\((?P<params>[^)]*)\))?\s*(?:@\s*(?P<k>[^\s]+))?\s*$"
)


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric: canonical ``name``, cut-off ``k`` (``None`` = whole run), parameters.

    ``aggregate`` is ``"gmean"`` for a ``gm_`` name (the geometric mean over users, whatever
    :func:`recmeta.metrics.evaluate` is asked for), else ``None`` (the caller's choice).
    """

    name: str
    k: int | None = None
    params: tuple[tuple[str, object], ...] = field(default=())
    aggregate: str | None = None

    def param(self, key: str) -> Any:
        """The value of parameter ``key``; its type is the one the registry's reader gives
        (a number, a gain name, a gain table or None), hence ``Any``."""
        return dict(self.params)[key]

    def __str__(self) -> str:
        defaults = {key: d for key, (d, _) in PARAMS[self.name].items()}
        shown = [f"{key}={_fmt(v)}" for key, v in self.params if v != defaults[key]]
        text = self.name + (f"({','.join(shown)})" if shown else "")
        text = ("gm_" if self.aggregate == "gmean" else "") + text
        return text + (f"@{self.k}" if self.k is not None else "")


def _fmt(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def known_metrics() -> list[str]:
    """The metric names this engine knows, with their parameters and defaults."""
    out = []
    for name, params in PARAMS.items():
        shown = ",".join(f"{key}={_fmt(d)}" for key, (d, _) in params.items())
        out.append(name + (f"({shown})" if shown else "") + "[@k]")
    return out


def _unknown(text: str, why: str) -> MetricNameError:
    return MetricNameError(
        f"{why} in metric {text!r}. Known metrics: {', '.join(known_metrics())} "
        "(write e.g. 'P@10', 'P(rel=2)@5', 'nDCG(gain=exp)@10', 'RBP(p=0.8)', 'Judged@10', "
        "'SRecall(gamma=1)@20'; trec_eval's names such as 'P_10', 'ndcg_cut_10', 'recip_rank' "
        "are read too)."
    )


def _trec_single(text: str) -> MetricSpec | None:
    """trec_eval's name of one value (``P_10``, ``P.10``, ``iprec_at_recall_0.10``), or None."""
    t = text.strip()
    m = _TREC_LEVEL.match(t)
    if m is not None:
        try:
            x = REGISTRY["IPrec"].params["recall"].read(m["x"])
        except ValueError as err:
            raise MetricNameError(f"bad recall level in {text!r}: {err}") from None
        return MetricSpec("IPrec", None, (("recall", x),))
    m = _TREC_CUT.match(t)
    if m is not None and m["base"].lower() in TREC_CUTOFF_NAMES:
        k = int(m["k"])
        if k < 1:
            raise _unknown(text, f"cut-off must be >= 1, got {k}")
        return parse_metric(f"{TREC_CUTOFF_NAMES[m['base'].lower()]}@{k}")
    base, dot, rest = t.partition(".")
    if dot and (base.lower() in TREC_CUTOFF_NAMES or base.lower() == "iprec_at_recall"):
        raise MetricNameError(
            f"{text!r} names several trec_eval measures; expand it with "
            "recmeta.metrics.expand_trec_names (or use `recmeta evaluate -m`)"
        )
    return None


def parse_metric(text: str | MetricSpec) -> MetricSpec:
    """Parse ``NAME[(key=value,...)][@k]`` into a :class:`MetricSpec`; raise on unknown names.

    A ``gm_`` prefix sets ``aggregate="gmean"``; trec_eval's names of one value are read too
    (see the module docstring).
    """
    if isinstance(text, MetricSpec):
        return text
    if not isinstance(text, str):
        raise MetricNameError(f"metric names are strings, got {type(text).__name__}: {text!r}")
    trec = _trec_single(text)
    if trec is not None:
        return trec
    m = _PATTERN.match(text)
    if m is None:
        raise _unknown(text, "cannot parse")
    entry = lookup(m["name"])
    name = None if entry is None else entry.name
    if name is None and m["name"].lower().startswith("gm_") and len(m["name"]) > 3:
        inner = parse_metric(text.strip()[3:])
        if inner.aggregate is not None or inner.name in SUMMED:
            raise _unknown(text, "a geometric mean of a count or of a gm_ metric")
        return MetricSpec(inner.name, inner.k, inner.params, "gmean")
    if name is None:
        raise _unknown(text, f"unknown metric {m['name']!r}")
    k = None
    level = None
    if name == "IPrec" and m["k"] is not None and not m["k"].isdigit():
        # ir_measures' IPrec@0.5: the recall level (an integer after @ is a cut-off)
        try:
            level = REGISTRY["IPrec"].params["recall"].read(m["k"])
        except ValueError as err:
            raise MetricNameError(f"bad recall level in {text!r}: {err}") from None
    elif m["k"] is not None:
        try:
            k = int(m["k"])
        except ValueError:
            raise _unknown(text, f"cut-off {m['k']!r} is not an integer") from None
        if k < 1:
            raise _unknown(text, f"cut-off must be >= 1, got {k}")
    allowed = PARAMS[name]
    values = {key: default for key, (default, _) in allowed.items()}
    if m["params"] is not None and m["params"].strip():
        for part in m["params"].split(","):
            key, eq, raw = part.partition("=")
            key, raw = key.strip(), raw.strip()
            if not eq or key not in allowed:
                known = ", ".join(allowed) or "none"
                raise MetricNameError(
                    f"unknown parameter {part.strip()!r} in metric {text!r}; "
                    f"{name} takes: {known} (write key=value)"
                )
            try:
                values[key] = allowed[key][1](raw)
            except ValueError as err:
                raise MetricNameError(f"bad value {raw!r} for {key} in {text!r}: {err}") from None
    if level is not None:
        if values["recall"] is not REQUIRED:
            raise MetricNameError(f"{text!r} gives the recall level twice (recall= and @)")
        values["recall"] = level
    missing = [key for key, v in values.items() if v is REQUIRED]
    if missing:
        raise MetricNameError(
            f"metric {text!r} needs {', '.join(missing)}=..., e.g. '{name}({missing[0]}=0.5)'"
        )
    spec = REGISTRY[name].params
    kept = [(key, v) for key, v in values.items() if not (spec[key].optional and v is None)]
    return MetricSpec(name, k, tuple(sorted(kept)))
