"""Valcarce et al. (2018): the chapter's ledger and what its claims share.

:data:`LEDGER` holds every figure, Table 3 and the conclusions of §§5–8 of the paper; the claims
are declared in :mod:`.claims_cutoffs` (§§4 and 6: choosing a cut-off, Figs. 1–4) and
:mod:`.claims_metrics` (§7: choosing a metric, Figs. 5–8 and Table 3). Each claim carries the
paper's printed value (:mod:`.values`, with its source) and a verdict rule. Values of plots
(Figs. 2–4 and 6–8) are not printed in the paper; their claims rest on its words. The claims
read the results of :func:`recmeta.papers.valcarce2018.study.study`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...ledger import (
    Kind,
    Ledger,
    Outcome,
    Verdict,
    kind_of,
    not_reproduced,
)
from .. import register
from .values import (
    CHAPTER,
    LABELS,
    PAPER,
)

__all__ = [
    "DP_NEEDS",
    "LEDGER",
    "NO_DATA",
    "cut_pair",
    "degenerate_outcome",
    "level_on",
    "usable",
]

LEDGER = register(
    Ledger(CHAPTER, paper=PAPER, title="Robustness and discriminative power of ranking metrics")
)

#: why the claims on the paper's other datasets are not reproduced
NO_DATA = {
    "LibraryThing": "this book has no LibraryThing data (its licence and size keep it out; the "
    "chapter runs on MovieLens only)",
    "BeerAdvocate": "this book has no BeerAdvocate data (the chapter runs on MovieLens only)",
}


def usable(results: Mapping[str, Any], metrics: Sequence[str]) -> tuple[list[str], str]:
    """The metrics that are not degenerate on these data, and a note naming the dropped ones."""
    deg = results.get("degenerate") or {}
    keep = [m for m in metrics if m not in deg]
    dropped = [m for m in metrics if m in deg]
    note = (
        f"{' and '.join(LABELS[m] for m in dropped)} left out: they need judged non-relevant "
        f"items, and these data have none"
        if dropped
        else ""
    )
    return keep, note


def degenerate_outcome(results: Mapping[str, Any], *metrics: str) -> Outcome | None:
    """ "Not reproduced" with the reason when one of ``metrics`` is degenerate on these data."""
    deg = results.get("degenerate") or {}
    hit = [m for m in metrics if m in deg]
    return not_reproduced(deg[hit[0]]) if hit else None


def cut_pair(deep: int, cutoffs: Sequence[int]) -> tuple[int, int]:
    """The shallowest and the deepest cut-off (the paper's @5 and @100)."""
    return min(cutoffs), deep


#: the results every DP claim reads
DP_NEEDS = ("dp", "dp_t", "dp_t_boot")


def level_on(paper_dataset: str, r: Mapping[str, Any], out: Outcome) -> Outcome:
    """A threshold on a level of τ that the paper reads on ``paper_dataset`` ("at least 0.9",
    "some below 0.8"): graded on those data, shown and not graded on others.

    Such a level is a magnitude of the data: the paper's own Fig. 5 puts the smallest τ between
    two metrics at 0.71 on ML-1M and at 0.90 on LibraryThing. ``r`` must hold ``"dataset"``.
    """
    if kind_of(paper_dataset, None, r["dataset"]) is Kind.REPLICATION:
        return out
    return replace(
        out,
        verdict=Verdict.NOT_GRADED,
        reason=(
            f"a level of τ the paper reads on {paper_dataset}, shown on {r['dataset']} and not "
            f"graded (the paper's own datasets differ in such levels); on its own: {out.reason}"
        ),
    )
