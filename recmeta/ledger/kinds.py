"""What kind of evidence a claim's verdict is: a derivation, a replication or a transfer.

- *derivation*: a mathematical statement the book verifies (an identity, a bound, a closed form
  against simulation). Its verdict reads "holds" or "fails" and it is never counted as a
  replication. A claim declares it with ``paper_dataset=DERIVED``.
- *replication*: the run's data is the paper's data (``ml-1m`` for a claim made on ML-1M), or the
  setting does not depend on data at all (the paper's toy example, a simulation with the paper's
  own parameters): the claim then declares ``data_free`` with the reason.
- *transfer*: the paper's statement tested on other data. A magnitude is shown beside the paper's
  and not graded; directions, orders, signs and shapes are graded.

The kind is computed from the claim's declared paper dataset and the run's dataset
(:func:`dataset_identity`), never typed per claim.
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from pathlib import Path

from ..data.registry import REGISTRY

__all__ = [
    "Kind",
    "KIND_MEANING",
    "DERIVED",
    "ELSEWHERE",
    "dataset_identity",
    "paper_datasets",
    "kind_of",
]


class Kind(StrEnum):
    """The kind of evidence a verdict is (``str()`` of a member is its value)."""

    DERIVATION = "derivation"
    REPLICATION = "replication"
    TRANSFER = "transfer"


#: what each kind of claim means, for the page's legend and ``recmeta claims``
KIND_MEANING: dict[Kind, str] = {
    Kind.DERIVATION: (
        "a mathematical statement the book verifies (identity, bound, closed form against "
        "simulation); it holds or fails and is never counted as a replication"
    ),
    Kind.REPLICATION: (
        "our data is the paper's data, or the setting does not depend on data (the paper's toy "
        "example, a simulation with its own parameters); values, orders and signs are graded"
    ),
    Kind.TRANSFER: (
        "the paper's statement tested on other data; directions, orders, signs and shapes are "
        "graded, magnitudes are shown beside the paper's and not graded, unless the claim says "
        "why its quantity does not depend on the data"
    ),
}

#: the ``paper_dataset`` of a mathematical statement (no data involved)
DERIVED = "derivation"

#: datasets the papers use that the book does not hold (their claims can only transfer)
ELSEWHERE: tuple[str, ...] = (
    "LibraryThing",
    "BeerAdvocate",
    "OHSUMED",
    "Netflix",
    "Last.fm",
    "Pinterest",
    "TREC",
)


def _display(name: str) -> str:
    """A registry name as the papers write it: ``ml-1m`` → ``ML-1M``."""
    return "ML-" + name[3:].upper() if name.startswith("ml-") and "latest" not in name else name


#: every dataset identity a paper may name, registry releases first
KNOWN: tuple[str, ...] = (*(_display(n) for n in REGISTRY), *ELSEWHERE)

_TOKEN = re.compile(
    r"(?<![A-Za-z0-9.-])(" + "|".join(re.escape(k) for k in KNOWN) + r")(?![A-Za-z0-9-])",
    re.IGNORECASE,
)


def dataset_identity(dataset: str | os.PathLike) -> str:
    """The identity of a run's dataset: a registry release as the papers write it (``ML-100K``);
    any other file as ``own data (<file name>)``, which matches no paper's dataset."""
    text = os.fspath(dataset)
    if text in REGISTRY:
        return _display(text)
    return f"own data ({Path(text).name or text})"


def paper_datasets(paper_dataset: str | None) -> frozenset[str]:
    """The known datasets named in a claim's ``paper_dataset`` (``"ML-1M, LibraryThing"``), as
    identities; a simulation *shaped like* ML-1M (``"ML-1M-shaped simulation"``) names none."""
    if not paper_dataset:
        return frozenset()
    canon = {k.lower(): k for k in KNOWN}
    return frozenset(canon[m.group(1).lower()] for m in _TOKEN.finditer(paper_dataset))


def kind_of(paper_dataset: str | None, data_free: str | None, dataset: str | os.PathLike) -> Kind:
    """The kind of a claim evaluated on ``dataset``.

    ``paper_dataset == DERIVED`` → derivation; else the run's identity among the paper's datasets,
    or a data-free setting (``data_free`` given and no dataset named) → replication; else
    transfer.
    """
    if paper_dataset == DERIVED:
        return Kind.DERIVATION
    named = paper_datasets(paper_dataset)
    if dataset_identity(dataset) in named:
        return Kind.REPLICATION
    if data_free and not named:
        return Kind.REPLICATION
    return Kind.TRANSFER
