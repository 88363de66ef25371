"""What of a paper the ledger covers: every numbered figure, table and equation, and the claims
of its abstract and conclusions, with the claims that test them or the reason none does.

The items are read from the paper's own text (:func:`paper_items`); a claim covers an item when
its ``source`` cites it (:func:`cited_items`: ``"§4, Figs. 6–7; eq. 4"`` cites Fig. 6, Fig. 7 and
Eq. 4). A paper's chapter declares the rest: why an item is not reproduced here, and which claims
test the headline statements (:class:`Headline`). :func:`coverage` joins the three into one
table, and :func:`gaps` names every item left without either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from .claims import Ledger
from .table import cell

__all__ = [
    "Headline",
    "PaperCoverage",
    "paper_items",
    "cited_items",
    "with_cited",
    "coverage",
    "gaps",
    "to_markdown",
]

_KINDS = {
    "fig": "Fig.",
    "figure": "Fig.",
    "figs": "Fig.",
    "figures": "Fig.",
    "table": "Table",
    "tables": "Table",
    "tab": "Table",
    "eq": "Eq.",
    "eqs": "Eq.",
    "equation": "Eq.",
    "equations": "Eq.",
}

# a mention in running text or a caption: "Figure 3", "Fig. 5a", "Table 2"
_MENTION = re.compile(r"\b(Figure|Fig\.|Table)\s*(\d{1,2})(?![\d.]\d)")
# a numbered display equation: "... \quad (19)$$", or "(4)" alone at the end of a line
_EQUATION = re.compile(
    r"\\quad\s*\((\d{1,2})\)\s*\$\$|(?:^|\s|>)\((\d{1,2})\)\s*(?:</p>)?\s*$", re.M
)
# a citation in a claim's source: "Figs. 2–3", "Fig. 5 centre", "Tables 3–4", "eqs. 1–2", "eq. 19"
_CITE = re.compile(
    r"\b(Figures?|Figs?\.?|Tables?|Tab\.|Eqs?\.|Equations?)\s*"
    r"(\(?\d{1,2}\)?[a-z]?(?:\s*(?:–|-|,|and)\s*\(?\d{1,2}\)?[a-z]?)*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Headline:
    """A statement of the paper's abstract or conclusions, in our words, with where it is
    (``"Abstract"``, ``"§7"``) and the claims that test it, or the reason nothing here can."""

    where: str
    statement: str
    claims: tuple[str, ...] = ()
    not_here: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "claims", tuple(self.claims))
        if bool(self.claims) == bool(self.not_here):
            raise ValueError(
                f"headline {self.statement!r}: give the claims that test it or the reason "
                "it is not reproduced here (exactly one)"
            )


def _key(kind: str, number: int) -> str:
    return f"{kind} {number}"


def _order(item: str) -> tuple[int, int]:
    kind, number = item.split(" ")
    return (["Fig.", "Table", "Eq."].index(kind), int(number))


def paper_items(text: str) -> list[str]:
    """The numbered figures, tables and display equations a paper's text holds, as ``"Fig. 3"``,
    ``"Table 2"``, ``"Eq. 18"``, sorted by kind and number."""
    found = {
        _key(_KINDS[m.group(1).lower().rstrip(".")], int(m.group(2)))
        for m in _MENTION.finditer(text)
    }
    found |= {_key("Eq.", int(m.group(1) or m.group(2))) for m in _EQUATION.finditer(text)}
    return sorted(found, key=_order)


def cited_items(source: str) -> set[str]:
    """The items a claim's ``source`` cites: ``"§4 (Figs. 6–7); eq. 4"`` → Fig. 6, Fig. 7, Eq. 4.

    Ranges (``2–4``) expand; letters of panels (``5a``) and words after the number (``centre``)
    are dropped."""
    items: set[str] = set()
    for m in _CITE.finditer(source):
        kind = _KINDS[m.group(1).lower().rstrip(".")]
        parts = re.split(r"\s*(?:,|and)\s*", m.group(2))
        for part in parts:
            nums = [int(n) for n in re.findall(r"\d{1,2}", part)]
            if len(nums) == 2 and re.search(r"–|-", part):
                items |= {_key(kind, n) for n in range(nums[0], nums[1] + 1)}
            else:
                items |= {_key(kind, n) for n in nums}
    return items


def with_cited(ledger: Ledger, items: Iterable[str]) -> list[str]:
    """``items`` and every item a claim of ``ledger`` cites, sorted by kind and number: the rows
    of a paper's coverage table when ``items`` are those its text numbers."""
    cited = set().union(*(cited_items(c.source) for c in ledger))
    return sorted(set(items) | cited, key=_order)


def coverage(
    ledger: Ledger,
    items: Iterable[str],
    not_here: Mapping[str, str],
    headlines: Sequence[Headline] = (),
) -> pd.DataFrame:
    """One row per paper item and headline: ``item``, ``claims`` (ids, in ledger order) and
    ``not_here`` (the declared reason, possibly beside claims that cover part of the item).

    Every id a headline names must be a claim of ``ledger``; a reason for an item the paper does
    not have is an error (a typo would otherwise hide a gap)."""
    items = list(items)
    stray = sorted(set(not_here) - set(items))
    if stray:
        raise ValueError(f"reasons given for items the paper does not have: {stray}")
    cites = {c.id: cited_items(c.source) for c in ledger}
    rows = []
    for item in items:
        ids = tuple(cid for cid, got in cites.items() if item in got)
        rows.append({"item": item, "claims": ids, "not_here": not_here.get(item)})
    for h in headlines:
        unknown = [cid for cid in h.claims if cid not in cites]
        if unknown:
            raise ValueError(f"headline {h.statement!r} names unknown claims {unknown}")
        rows.append(
            {"item": f"{h.where}: {h.statement}", "claims": h.claims, "not_here": h.not_here}
        )
    return pd.DataFrame(rows, columns=["item", "claims", "not_here"])


def gaps(frame: pd.DataFrame) -> list[str]:
    """Items of a :func:`coverage` table with neither a claim nor a reason."""
    return [r["item"] for r in frame.to_dict("records") if not r["claims"] and not _reason(r)]


def _reason(row: Mapping[str, object]) -> str:
    text = row.get("not_here")
    return text if isinstance(text, str) else ""


def to_markdown(frame: pd.DataFrame, short: Mapping[str, str] | None = None) -> str:
    """The coverage table of a chapter: item, claims (ids, shortened by ``short`` when given),
    and "not reproduced here: reason" where declared."""
    lines = ["| Paper | Claims | Not reproduced here |", "|---|---|---|"]
    for r in frame.to_dict("records"):
        ids = ", ".join(f"`{(short or {}).get(c, c)}`" for c in r["claims"]) or "—"
        lines.append(f"| {cell(r['item'])} | {ids} | {cell(_reason(r))} |")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PaperCoverage:
    """What of one paper its chapter's ledger covers: the paper's numbered ``items`` (kept as
    data, so the table needs no copy of the paper), the reasons an item is ``not_here``, and
    the ``headlines`` of its abstract and conclusions."""

    ledger: Ledger
    items: tuple[str, ...]
    not_here: Mapping[str, str]
    headlines: tuple[Headline, ...]

    def table(self) -> pd.DataFrame:
        """The coverage frame (:func:`coverage`): one row per item (``items`` and those the
        claims cite, :func:`with_cited`) and per headline."""
        items = with_cited(self.ledger, self.items)
        return coverage(self.ledger, items, self.not_here, self.headlines)

    def markdown(self) -> str:
        """:meth:`table` as the chapter shows it, claim ids without the paper's prefix."""
        short = {c.id: c.id.partition(".")[2] or c.id for c in self.ledger}
        return to_markdown(self.table(), short)
