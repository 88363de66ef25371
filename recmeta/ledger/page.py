"""The book's "Replication ledger" page: every claim of the five papers, generated at build time.

The chapters store their evaluated ledgers (:mod:`recmeta.ledger.store`) while the book executes
them; :func:`ledger_page` turns what is stored for one profile into the page's Markdown:

1. the opening figures (:mod:`recmeta.ledger.figures`), when their files are given;
2. what each verdict and each kind of claim means (:data:`recmeta.ledger.rules.MEANING`, the one
   wording of the verdicts);
3. the tallies per chapter, kind and dataset;
4. per chapter, the derivations in a table of their own, then the replications and transfers
   with the paper's value and margin beside ours on each dataset.

A chapter whose claims are not yet in the ledger, or that stored nothing in this build, is listed
as such rather than left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .estimate import INTERVALS
from .figures import CAPTIONS
from .kinds import KIND_MEANING, Kind
from .rules import MEANING, Verdict
from .table import COLUMNS, cell as _cell, ours_text, paper_text

__all__ = ["DATASETS", "book_rows", "legend", "tallies", "ledger_page"]

#: the datasets the book's build evaluates every ledger on
DATASETS: tuple[str, ...] = ("ml-100k", "ml-latest-small")


_ALT = {
    "verdicts": "Stacked bars of the verdicts per chapter, kind of claim and dataset",
    "values": "Forest plot of the value claims against their equivalence margins",
}


def book_rows(
    frame: pd.DataFrame, profile: str, datasets: Sequence[str] = DATASETS
) -> pd.DataFrame:
    """The stored rows the page speaks of: the build's ``profile`` on the book's ``datasets``
    (a reader's own runs left out). A ledger stored before a column existed (``kind``,
    ``margin``...) gets it empty, so its claims show as of kind "unknown"."""
    lacking = {c: None for c in COLUMNS if c not in frame.columns}
    frame = frame.assign(**lacking) if lacking else frame
    return frame[(frame["profile"] == profile) & frame["dataset"].isin(list(datasets))]


def legend() -> str:
    """The meaning of every verdict (from :data:`MEANING`), of every kind, and how the intervals
    are read (:data:`~recmeta.ledger.estimate.INTERVALS`), as Markdown."""
    lines = ["A verdict says one of these, and only this:\n"]
    lines += [f"- **{v.value}**: {MEANING[v]}." for v in Verdict]
    lines += ["", "Each claim is of one kind, computed from the paper's data and ours:\n"]
    lines += [f"- **{k.value}**: {KIND_MEANING[k]}." for k in Kind]
    lines += ["", f"Intervals: {INTERVALS}."]
    return "\n".join(lines) + "\n"


def _verdicts(frame: pd.DataFrame) -> list[str]:
    present = set(frame["verdict"].astype(str))
    return [v.value for v in Verdict if v.value in present]


def _tally(frame: pd.DataFrame, chapters: Sequence[str], present: Sequence[str]) -> str:
    verdicts = _verdicts(frame)
    head = ["Chapter", "Claims", *verdicts]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, part in [*((c, frame[frame["chapter"] == c]) for c in chapters), ("**all**", frame)]:
        if part.empty:
            continue
        per = [part[part["dataset"] == ds] for ds in present]
        counts = [p["verdict"].astype(str).value_counts() for p in per]
        total = " / ".join(str(len(p)) if len(p) else "—" for p in per)
        cells = [
            " / ".join(
                str(c.get(v, 0)) if len(p) else "—" for c, p in zip(counts, per, strict=True)
            )
            for v in verdicts
        ]
        lines.append("| " + " | ".join([name, total, *cells]) + " |")
    return "\n".join(lines) + "\n"


def tallies(frame: pd.DataFrame, chapters: Sequence[str], datasets: Sequence[str]) -> str:
    """Markdown tables of the claims per kind (one table each, derivations first), chapter (rows)
    and verdict (columns: the verdicts present for that kind); each cell gives the counts on the
    ``datasets`` present, joined by " / ", and a last row the totals over all chapters."""
    present = [ds for ds in datasets if (frame["dataset"] == ds).any()]
    kinds = frame["kind"].fillna("unknown").astype(str)
    order = [k.value for k in Kind] + sorted(set(kinds) - {k.value for k in Kind})
    out = [f"Claims per kind, chapter and verdict; each cell counts them on {' / '.join(present)}."]
    for kind in order:
        part = frame[kinds == kind]
        if len(part):
            known = kind in {k.value for k in Kind}
            label = f"{kind.capitalize()}s" if known else f"Claims of kind {kind}"
            out.append(f"**{label}**\n\n" + _tally(part, chapters, present))
    return "\n\n".join(out)


def _first(rows: pd.DataFrame) -> dict[str, Any]:
    """The claim's own fields from its rows; the margin from any row that has one."""
    first = rows.iloc[0].to_dict()
    margins = rows["margin"].dropna() if "margin" in rows else pd.Series(dtype=float)
    first["margin"] = margins.iloc[0] if len(margins) else None
    return first


def _ours(rows: pd.DataFrame, ds: str) -> str:
    hit = rows[rows["dataset"] == ds]
    if hit.empty:
        return "—"
    r = hit.iloc[0].to_dict()
    text = f"{ours_text(r)}: **{r['verdict']}**"
    flag = r.get("tie_sensitive")
    if isinstance(flag, (bool, np.bool_)) and flag:
        text += " (changes with the tie rule)"
    return text


def _table(part: pd.DataFrame, datasets: Sequence[str], *, derivations: bool) -> str:
    present = [ds for ds in datasets if (part["dataset"] == ds).any()]
    head = [
        "Claim",
        "Source",
        *([] if derivations else ["Kind"]),
        "Paper",
        *(f"Ours, {ds}" for ds in present),
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _claim, rows in part.groupby("claim", sort=False):
        first = _first(rows)
        kinds = " / ".join(dict.fromkeys(rows["kind"].fillna("—").astype(str)))
        paper = paper_text({**first, "paper_dataset": None} if derivations else first)
        cells = [
            first["statement"],
            first["source"],
            *([] if derivations else [kinds]),
            paper,
            *(_ours(rows, ds) for ds in present),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _figure(name: str, uri: str) -> str:
    return (
        f":::{{figure}} {uri}\n:name: ledger-{name}\n:alt: {_ALT[name]}\n:width: 100%\n\n"
        f"{CAPTIONS[name]}\n:::\n"
    )


def ledger_page(
    frame: pd.DataFrame,
    *,
    profile: str,
    chapters: Mapping[str, str],
    with_ledger: Sequence[str],
    datasets: Sequence[str] = DATASETS,
    figures: Mapping[str, str] | None = None,
) -> str:
    """Markdown of the ledger page from the stored rows of one ``profile``.

    ``chapters`` maps each paper chapter's name to its title, in book order; ``with_ledger``
    names the chapters whose claims are in the ledger; ``figures`` maps a figure's name
    (``verdicts``, ``values``: :data:`recmeta.ledger.figures.CAPTIONS`) to the address the page
    shows it from. Rows of other datasets (a reader's own runs) are left out: the page speaks of
    the book's build.
    """
    unknown = sorted(set(figures or {}) - set(CAPTIONS))
    if unknown:
        raise ValueError(f"unknown figure(s) {unknown}; the page shows {sorted(CAPTIONS)}")
    frame = book_rows(frame, profile, datasets)
    out = [_figure(name, uri) for name, uri in (figures or {}).items()]
    out.append("## What the verdicts mean\n")
    out.append(legend())
    pending = [c for c in chapters if c not in with_ledger]
    missing = [c for c in chapters if c in with_ledger and not (frame["chapter"] == c).any()]
    if frame.empty:
        out.append(f"No chapter stored its ledger in this build (profile {profile}).\n")
    else:
        out.append(f"## Tallies\n\nThis build ran the {profile} profile.\n")
        out.append(tallies(frame, list(chapters), datasets))
    if pending:
        out.append(
            "Chapters whose claims are not yet in the ledger (their conclusions are still "
            "stated in their text): "
            + ", ".join(f"{{doc}}`{chapters[c]} <../notebooks/{c}>`" for c in pending)
            + ".\n"
        )
    if missing:
        out.append(
            "Chapters with a ledger that stored nothing in this build: "
            + ", ".join(missing)
            + ".\n"
        )
    for chapter, title in chapters.items():
        part = frame[frame["chapter"] == chapter]
        if part.empty:
            continue
        out.append(f"## {title}\n")
        out.append(f"From {{doc}}`../notebooks/{chapter}`.\n")
        derived = part["kind"] == Kind.DERIVATION.value
        if derived.any():
            out.append("### Derivations\n")
            out.append(_table(part[derived], datasets, derivations=True))
        if (~derived).any():
            out.append("### Replications and transfers\n")
            out.append(_table(part[~derived], datasets, derivations=False))
    return "\n".join(out)
