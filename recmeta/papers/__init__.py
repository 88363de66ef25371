"""The five papers, one package each, and the registry of their ledgers.

Each paper has one home, ``recmeta/papers/<paper>/``: its study (the experiments specific to the
paper), its settings (the chapter's parameters resolved for a profile), its claims (a
:class:`~recmeta.ledger.Ledger` registered with :func:`register` when the package is imported)
and ``text.py``, the sentences its chapter prints, built from computed values. The packages are
listed in :data:`PAPER_MODULES` and imported lazily, the first time :func:`ledgers` or
:func:`get` is called, so ``import recmeta.papers`` stays cheap.

A chapter's last cells evaluate its ledger on the results it computed, store the table (for
``recmeta claims`` and the book's ledger page) and show it, in one call::

    from recmeta import papers

    frame = papers.report("robustness", results, dataset=dataset, profile=profile)

The prose of a chapter takes every result number from computed values (myst-nb ``glue``), the
paper's printed values included: :mod:`recmeta.ledger.prose` finds numbers typed into the text.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..ledger import (
    COLUMNS,
    Claim,
    Estimate,
    Ledger,
    Margin,
    MissingResult,
    Outcome,
    Verdict,
    counts,
    format_estimate,
    format_number,
    format_paper,
    not_reproduced,
    order_rule,
    sign_rule,
    store,
    to_markdown,
    top_set,
    value_rule,
)

__all__ = [
    "PAPER_MODULES",
    "report",
    "register",
    "unregister",
    "ledgers",
    "get",
    "COLUMNS",
    "Claim",
    "Estimate",
    "Ledger",
    "MissingResult",
    "Outcome",
    "Verdict",
    "counts",
    "format_estimate",
    "format_number",
    "format_paper",
    "not_reproduced",
    "order_rule",
    "sign_rule",
    "to_markdown",
    "top_set",
    "value_rule",
    "Margin",
]

#: modules defining and registering a chapter's ledger, imported on first use
PAPER_MODULES: list[str] = [
    "recmeta.papers.valcarce2018",
    "recmeta.papers.valcarce2020",
    "recmeta.papers.scheel2011",
    "recmeta.papers.krichene2020",
    "recmeta.papers.bellogin2017",
]

_REGISTRY: dict[str, Ledger] = {}
_IMPORTED: set[str] = set()


def register(ledger: Ledger, *, replace: bool = False) -> Ledger:
    """Register ``ledger`` under its chapter; returns it (usable as
    ``LEDGER = register(Ledger(...))``).

    Registering the same object twice is harmless; another ledger for a chapter that already has
    one is an error unless ``replace``.
    """
    if not isinstance(ledger, Ledger):
        raise TypeError(f"register expects a Ledger, got {type(ledger).__name__}")
    current = _REGISTRY.get(ledger.chapter)
    if current is not None and current is not ledger and not replace:
        raise ValueError(
            f"chapter {ledger.chapter!r} already has a ledger; pass replace=True to swap it"
        )
    _REGISTRY[ledger.chapter] = ledger
    return ledger


def unregister(chapter: str) -> Ledger | None:
    """Remove the ledger of ``chapter`` from the registry; returns it, or ``None`` if there was
    none."""
    return _REGISTRY.pop(chapter, None)


def _import_papers() -> None:
    for name in PAPER_MODULES:
        if name not in _IMPORTED:
            importlib.import_module(name)
            _IMPORTED.add(name)


def ledgers() -> dict[str, Ledger]:
    """Every registered ledger by chapter, after importing :data:`PAPER_MODULES`."""
    _import_papers()
    return dict(_REGISTRY)


def get(chapter: str) -> Ledger:
    """The ledger of ``chapter``; an unknown chapter fails with the list of known ones."""
    known = ledgers()
    if chapter not in known:
        raise KeyError(
            f"no ledger for chapter {chapter!r}; ledgers: {', '.join(sorted(known)) or 'none yet'}"
        )
    return known[chapter]


def report(
    chapter: str,
    results: Mapping[str, Any],
    *,
    dataset: str,
    profile: str,
    show: bool = True,
    root: str | os.PathLike | None = None,
    tie_variants: Mapping[str, Mapping[str, Any]] | None = None,
    frame: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Evaluate ``chapter``'s ledger on ``results``, store it, and display its table.

    The stored copy (:func:`recmeta.ledger.store.save`, keyed by chapter, dataset and profile)
    is what ``recmeta claims`` prints and what the book's ledger page gathers. ``tie_variants``
    (results under other tie rules) fills each claim's ``tie_sensitive``
    (:meth:`recmeta.ledger.Ledger.evaluate`). ``frame``, when given, is the ledger already
    evaluated on ``results`` (e.g. its ``tie_sensitive`` filled from frames computed once): it is
    stored and shown as is. Returns the frame.
    """
    if frame is None:
        frame = get(chapter).evaluate(
            results, dataset=str(dataset), profile=profile, tie_variants=tie_variants
        )
    elif tie_variants:
        raise ValueError("give tie_variants or an evaluated frame, not both")
    store.save(frame, chapter=chapter, dataset=str(dataset), profile=profile, root=root)
    if show:
        from IPython.display import Markdown, display

        display(Markdown(to_markdown(frame)))
    return frame
