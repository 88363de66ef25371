"""Metric names as strings, in the style of ir_measures: ``NAME[(key=value, ...)][@k]``.

Examples: ``P@10``, ``R@100``, ``nDCG@100``, ``nDCG(gain=exp)@10``, ``RR``, ``ERR(rmax=5)@20``,
``SRecall(gamma=inf)@10``. A name without ``@k`` evaluates the whole run. Names are matched
case-insensitively (``ndcg@10`` is ``nDCG@10``); a few aliases are accepted (``Recall``, ``MAP``,
``MRR``, ``µAP``). This module is the only place that parses names.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

__all__ = ["MetricSpec", "MetricNameError", "parse_metric", "known_metrics", "PARAMS"]


class MetricNameError(ValueError):
    """An unknown metric name, parameter or cut-off; the message lists what is known."""


def _gain(value: str) -> str:
    if value not in ("linear", "exp", "binary"):
        raise ValueError("gain must be one of linear, exp, binary")
    return value


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


# canonical name -> {parameter: (default, converter)}
PARAMS: dict[str, dict[str, tuple[object, object]]] = {
    "P": {},
    "R": {},
    "F1": {},
    "AP": {},
    "nDCG": {"gain": ("linear", _gain)},
    "RR": {},
    "ERR": {"rmax": (None, _positive_float_or_none)},
    "bpref": {},
    "infAP": {},
    "AUC": {},
    "muAP": {},
    "NDCNG": {},
    "SRecall": {"gamma": (1.0, _gamma)},
}

_ALIASES = {"recall": "R", "map": "AP", "mrr": "RR", "µap": "muAP", "uap": "muAP"}
_LOOKUP = {name.lower(): name for name in PARAMS} | _ALIASES

_PATTERN = re.compile(
    r"^\s*(?P<name>[^\s(@]+)\s*(?:\((?P<params>[^)]*)\))?\s*(?:@\s*(?P<k>[^\s]+))?\s*$"
)


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric: canonical ``name``, cut-off ``k`` (``None`` = whole run), parameters."""

    name: str
    k: int | None = None
    params: tuple[tuple[str, object], ...] = field(default=())

    def param(self, key: str):
        return dict(self.params)[key]

    def __str__(self) -> str:
        defaults = {key: d for key, (d, _) in PARAMS[self.name].items()}
        shown = [f"{key}={_fmt(v)}" for key, v in self.params if v != defaults[key]]
        text = self.name + (f"({','.join(shown)})" if shown else "")
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
        "(write e.g. 'P@10', 'nDCG(gain=exp)@10', 'SRecall(gamma=1)@20')."
    )


def parse_metric(text: str | MetricSpec) -> MetricSpec:
    """Parse ``NAME[(key=value,...)][@k]`` into a :class:`MetricSpec`; raise on unknown names."""
    if isinstance(text, MetricSpec):
        return text
    if not isinstance(text, str):
        raise MetricNameError(f"metric names are strings, got {type(text).__name__}: {text!r}")
    m = _PATTERN.match(text)
    if m is None:
        raise _unknown(text, "cannot parse")
    name = _LOOKUP.get(m["name"].lower())
    if name is None:
        raise _unknown(text, f"unknown metric {m['name']!r}")
    k = None
    if m["k"] is not None:
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
    return MetricSpec(name, k, tuple(sorted(values.items())))
