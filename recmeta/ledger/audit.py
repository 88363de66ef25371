"""The acceptance checks of a stored ledger: the rules every record must keep.

:func:`problems` reads a frame of evaluated or stored ledger rows (:meth:`Ledger.evaluate`,
:func:`recmeta.ledger.store.load`, or the records of ``recmeta claims --json``) and lists, one
sentence each, every record that breaks one of them:

- every record names its ``kind`` (derivation, replication, transfer) and its ``rule``, and
  that rule is not the placeholder ``custom`` (an :class:`~recmeta.ledger.rules.Outcome` built by
  hand names its rule: ``set``, ``shape``, ``count``...), so that no comparison of values
  escapes the rules below under another name;
- a value rule has a positive, finite ``margin``, and its ``paper_value`` is a number;
- a transfer record with a value rule is graded (agrees/differs) only when ``data_free``: a
  magnitude measured on other data is shown, not graded;
- an ``agrees`` on a value rule has an interval ``[low, high]`` inside ``paper_value ± margin``
  (the equivalence test of :func:`recmeta.ledger.rules.value_rule`), and neither end of it is
  ``unresolved`` (beyond every bootstrap replicate: the interval reaches further than written).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .kinds import Kind
from .rules import Verdict

__all__ = ["numeric", "problems", "REQUIRED"]

#: columns :func:`problems` reads
REQUIRED = (
    "chapter",
    "claim",
    "dataset",
    "kind",
    "rule",
    "margin",
    "data_free",
    "paper_value",
    "low",
    "high",
    "verdict",
)

#: slack for the floating-point rounding of ``paper ± margin`` in the interval check
_EPS = 1e-12


def numeric(x: Any) -> float | None:
    """``x`` as a finite float if it is a number (not a bool, not text), else ``None``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or str(x).strip() == ""


def _true(x: Any) -> bool:
    return isinstance(x, (bool, np.bool_)) and bool(x)


def _where(r: dict[str, Any]) -> str:
    return f"{r['chapter']} {r['claim']} ({r['dataset']})"


def _record(r: dict[str, Any]) -> list[str]:
    out: list[str] = []
    where = _where(r)
    kinds = {k.value for k in Kind}
    if _missing(r["kind"]):
        out.append(f"{where}: no kind (derivation, replication or transfer)")
    elif r["kind"] not in kinds:
        out.append(f"{where}: kind {r['kind']!r} is not one of {sorted(kinds)}")
    if _missing(r["rule"]):
        out.append(f"{where}: no rule (value, sign, order, rank, set, ...)")
    elif r["rule"] == "custom":
        out.append(
            f"{where}: rule 'custom' names no rule; give the Outcome its rule= (value, set, "
            "shape, count, ...)"
        )
    if r["rule"] != "value":
        return out
    paper = numeric(r["paper_value"])
    if paper is None:
        out.append(f"{where}: a value rule whose paper_value {r['paper_value']!r} is not a number")
    margin = numeric(r["margin"])
    if margin is None or margin <= 0:
        out.append(f"{where}: a value rule without a positive margin (margin {r['margin']!r})")
        margin = None
    graded = r["verdict"] in (Verdict.AGREES.value, Verdict.DIFFERS.value)
    if r["kind"] == Kind.TRANSFER.value and graded and not _true(r["data_free"]):
        out.append(
            f"{where}: a transfer's value graded {r['verdict']!r} without data_free "
            "(a magnitude on other data is shown, not graded)"
        )
    if r["verdict"] == Verdict.AGREES.value and paper is not None and margin is not None:
        low, high = numeric(r["low"]), numeric(r["high"])
        if low is None or high is None:
            out.append(f"{where}: 'agrees' on a value rule without an interval")
        elif not (paper - margin - _EPS <= low and high <= paper + margin + _EPS):
            out.append(
                f"{where}: 'agrees' but [{low:g}, {high:g}] is not inside {paper:g} ± {margin:g}"
            )
        if isinstance(r.get("unresolved"), str) and r["unresolved"]:
            out.append(
                f"{where}: 'agrees' on a value rule whose {r['unresolved']} end lies beyond "
                "every bootstrap replicate"
            )
    return out


def problems(frame: pd.DataFrame) -> list[str]:
    """Every breach of the ledger's acceptance rules in ``frame``, one sentence each (empty when
    every record keeps them). A frame lacking a column the rules read is an error."""
    lacking = [c for c in REQUIRED if c not in frame.columns]
    if lacking:
        raise ValueError(
            f"the ledger frame lacks column(s) {lacking}; it must hold the columns of "
            "Ledger.evaluate (recmeta.ledger.COLUMNS)"
        )
    cols = [*REQUIRED, *(["unresolved"] if "unresolved" in frame.columns else [])]
    records = frame[cols].astype(object).where(frame[cols].notna(), None)
    return [p for r in records.to_dict("records") for p in _record(r)]
