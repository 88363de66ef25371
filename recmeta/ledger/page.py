"""The book's "Replication ledger" page: every claim of the five papers, generated at build time.

The chapters store their evaluated ledgers (:mod:`recmeta.ledger.store`) while the book executes
them; :func:`ledger_page` turns what is stored for one profile into the page's Markdown: verdict
counts per chapter and dataset, then one table per chapter with the paper's value beside ours on
each dataset. A chapter whose claims are not yet in the ledger, or that stored nothing in this
build, is listed as such rather than left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from .rules import Verdict
from .table import cell as _cell, ours_text, paper_text

__all__ = ["DATASETS", "ledger_page"]

#: the datasets the book's build evaluates every ledger on
DATASETS: tuple[str, ...] = ("ml-100k", "ml-latest-small")


def _counts_table(frame: pd.DataFrame, chapters: Sequence[str], datasets: Sequence[str]) -> str:
    verdicts = [v.value for v in Verdict]
    head = ["Chapter", "Dataset", "Claims", *verdicts]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for chapter in chapters:
        for ds in datasets:
            part = frame[(frame["chapter"] == chapter) & (frame["dataset"] == ds)]
            if part.empty:
                continue
            n = part["verdict"].value_counts().reindex(verdicts, fill_value=0)
            lines.append("| " + " | ".join([chapter, ds, str(len(part)), *map(str, n)]) + " |")
    total = frame.groupby("dataset")["verdict"].value_counts().unstack(fill_value=0)
    for ds in datasets:
        if ds in total.index:
            n = total.loc[ds].reindex(verdicts, fill_value=0)
            lines.append(
                "| " + " | ".join(["**all chapters**", ds, str(int(n.sum())), *map(str, n)]) + " |"
            )
    return "\n".join(lines) + "\n"


def _chapter_table(part: pd.DataFrame, datasets: Sequence[str]) -> str:
    present = [ds for ds in datasets if (part["dataset"] == ds).any()]
    head = ["Claim", "Source", "Paper", *(f"Ours, {ds}" for ds in present)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _claim, rows in part.groupby("claim", sort=False):
        first = rows.iloc[0].to_dict()
        cells = [first["statement"], first["source"], paper_text(first)]
        for ds in present:
            hit = rows[rows["dataset"] == ds]
            if hit.empty:
                cells.append("—")
            else:
                r = hit.iloc[0].to_dict()
                cells.append(f"{ours_text(r)}: **{r['verdict']}**")
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def ledger_page(
    frame: pd.DataFrame,
    *,
    profile: str,
    chapters: Mapping[str, str],
    with_ledger: Sequence[str],
    datasets: Sequence[str] = DATASETS,
) -> str:
    """Markdown of the ledger page from the stored rows of one ``profile``.

    ``chapters`` maps each paper chapter's name to its title, in book order; ``with_ledger``
    names the chapters whose claims are in the ledger. Rows of other datasets (a reader's own
    runs) are left out: the page speaks of the book's build.
    """
    frame = frame[(frame["profile"] == profile) & frame["dataset"].isin(list(datasets))]
    out = []
    pending = [c for c in chapters if c not in with_ledger]
    missing = [c for c in chapters if c in with_ledger and not (frame["chapter"] == c).any()]
    if frame.empty:
        out.append(f"No chapter stored its ledger in this build (profile {profile}).\n")
    else:
        out.append(f"Verdicts of this build (profile {profile}):\n")
        out.append(_counts_table(frame, list(chapters), datasets))
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
        out.append(_chapter_table(part, datasets))
    return "\n".join(out)
