"""A ledger as a table: its columns, our result and the paper's as text, the Markdown table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from .estimate import Estimate, format_estimate, format_number, format_paper
from .kinds import DERIVED
from .rules import Verdict

__all__ = [
    "COLUMNS",
    "ours_text",
    "paper_text",
    "cell",
    "to_markdown",
    "counts",
    "row_of",
    "tally_by_kind",
    "sentence",
    "PARTS",
]

#: columns of :meth:`recmeta.ledger.Ledger.evaluate`'s frame, in order
COLUMNS = (
    "chapter",
    "claim",
    "statement",
    "source",
    "paper_value",
    "paper_dataset",
    "kind",
    "rule",
    "rule_text",
    "margin",
    "data_free",
    "tie_sensitive",
    "ours",
    "low",
    "high",
    "unresolved",
    "ours_text",
    "method",
    "verdict",
    "reason",
    "dataset",
    "profile",
)


def _row_estimate(row: Mapping[str, Any]) -> Estimate | None:
    value, low, high = (row.get(k) for k in ("ours", "low", "high"))
    if value is None or pd.isna(value):
        return None
    both = low is not None and high is not None and not pd.isna(low) and not pd.isna(high)
    end = row.get("unresolved")
    end = end if isinstance(end, str) else ""
    return Estimate(
        value,
        low if both else None,
        high if both else None,
        str(row.get("method") or ""),
        low_open=both and end in ("low", "both"),
        high_open=both and end in ("high", "both"),
    )


def ours_text(row: Mapping[str, Any], digits: int = 3) -> str:
    """Our result of one ledger row as text: ``ours_text`` if given, else ``value [low, high]``."""
    text = row.get("ours_text")
    if isinstance(text, str) and text:
        return text
    return format_estimate(_row_estimate(row), digits)


def paper_text(row: Mapping[str, Any]) -> str:
    """The paper's value of one ledger row with its margin and dataset: ``0.0077 ± 0.00055
    (ML-1M)``."""
    value = format_paper(row.get("paper_value"))
    margin = row.get("margin")
    if isinstance(margin, (int, float)) and not pd.isna(margin):
        value += f" ± {format_number(float(margin), 2)}"
    ds = row.get("paper_dataset")
    # a derivation has no dataset to name: the kind column says what it is
    return f"{value} ({ds})" if isinstance(ds, str) and ds and ds != DERIVED else value


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(frame: pd.DataFrame, digits: int = 3) -> str:
    """The ledger table a chapter ends with: claim (source), paper (value, dataset), ours
    (``value [low, high]`` or text), verdict, reason.

    A chapter column is added when the frame spans several chapters, a dataset/profile column
    when it spans several runs.
    """
    records = frame.to_dict("records")
    multi_chapter = frame["chapter"].nunique() > 1 if len(frame) else False
    multi_run = (
        frame[["dataset", "profile"]].drop_duplicates().shape[0] > 1 if len(frame) else False
    )
    head = [
        *(["Chapter"] if multi_chapter else []),
        "Claim",
        "Paper",
        "Ours",
        "Verdict",
        "Why",
        *(["Run"] if multi_run else []),
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        cells = [
            *([r["chapter"]] if multi_chapter else []),
            f"{r['statement']} ({r['source']})",
            paper_text(r),
            ours_text(r, digits),
            r["verdict"],
            r["reason"],
            *([f"{r['dataset']}, {r['profile']}"] if multi_run else []),
        ]
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def counts(frame: pd.DataFrame) -> pd.Series:
    """Number of claims per verdict, every verdict listed (zeros included), in :class:`Verdict`
    order."""
    order = [v.value for v in Verdict]
    return frame["verdict"].astype(str).value_counts().reindex(order, fill_value=0).rename("claims")


def tally_by_kind(frame: pd.DataFrame) -> pd.DataFrame:
    """Claims per kind (rows: derivation, replication, transfer, those present) and verdict
    (columns, in :class:`Verdict` order, zeros included)."""
    from .kinds import Kind

    order = [v.value for v in Verdict]
    kinds = frame["kind"].fillna("unknown").astype(str) if "kind" in frame else "unknown"
    table = pd.crosstab(kinds, frame["verdict"].astype(str)).reindex(columns=order, fill_value=0)
    present = [k.value for k in Kind if k.value in table.index]
    return table.reindex([*present, *(k for k in table.index if k not in present)])


def row_of(frame: pd.DataFrame, claim: str) -> dict[str, Any]:
    """The row of ``claim`` in an evaluated ledger frame, as a dict; an unknown id is an error."""
    rows = frame[frame["claim"] == claim]
    if rows.empty:
        raise KeyError(f"no claim {claim!r} in the frame; it holds {len(frame)} claim(s)")
    return rows.iloc[0].to_dict()


#: the parts a sentence can hold, in the order they are written
PARTS = ("statement", "paper", "ours", "method", "verdict", "reason")


def sentence(row: Mapping[str, Any], parts: tuple[str, ...] = PARTS, digits: int = 3) -> str:
    """One claim of a ledger as a Markdown sentence, from its row: the one way prose cites a claim.

    The full form reads ``*statement* (source): the paper's 0.9 (ML-1M); ours (ml-100k):
    0.91 [0.87, 0.96] (method); **agrees**: reason.`` ``parts`` picks and keeps in this order any
    of :data:`PARTS`. A claim not reproduced here always says so with its reason.
    """
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise ValueError(f"unknown sentence part(s) {unknown}; choose from {PARTS}")
    not_here = row["verdict"] == Verdict.NOT_REPRODUCED.value
    bits: list[str] = []
    if "statement" in parts:
        bits.append(f"*{row['statement']}* ({row['source']})")
    if "paper" in parts:
        bits.append(f"the paper's {paper_text(row)}")
    if "ours" in parts and not not_here:
        ours = f"ours ({row['dataset']}): {ours_text(row, digits)}"
        method = row.get("method")
        if "method" in parts and isinstance(method, str) and method:
            ours += f" ({method})"
        bits.append(ours)
    text = "; ".join(bits)
    verdict = f"**{row['verdict']}**"
    if "reason" in parts or not_here:
        verdict += f": {row['reason']}"
    if "verdict" in parts or not_here:
        text = f"{text}: {verdict}" if text else verdict
    return text.rstrip(".") + "." if text else ""
