"""Valcarce et al. (2020): what of the paper the chapter's ledger covers.

- :data:`PAPER_FILE`: the paper's text (in the shared papers folder);
- :data:`ITEMS`: its numbered figures, tables and equations, kept here as data so that the table
  needs no copy of the paper (the coverage test checks the list against the text);
- :data:`NOT_HERE`: why an item, or a part of one, is not reproduced;
- :data:`HEADLINES`: the statements of §1's summary of the results and of the conclusions (§8)
  with the claims that test them (the text available to the book starts at §1: it has no
  abstract, and §1's closing summary stands in for it);
- :data:`COVERAGE` (:class:`recmeta.ledger.coverage.PaperCoverage`): ``table()``, the
  coverage frame, and ``markdown()``, the table the chapter shows.
"""

from __future__ import annotations

from ...ledger.coverage import Headline, PaperCoverage
from .claims import LEDGER

__all__ = ["COVERAGE", "HEADLINES", "ITEMS", "NOT_HERE", "PAPER_FILE", "markdown", "table"]

PAPER_FILE = "valcarce2020-assessing-ranking-metrics.txt"

#: the paper's numbered figures, tables and equations
ITEMS: tuple[str, ...] = (
    *(f"Fig. {n}" for n in range(1, 15)),
    "Table 1",
    "Table 2",
    "Table 3",
    *(f"Eq. {n}" for n in range(1, 12)),
)

_OTHER = (
    "the LibraryThing and BeerAdvocate parts: this book has no data of either (the chapter runs "
    "on MovieLens only)"
)

#: why an item (or the part of it no claim tests) is not reproduced here
NOT_HERE: dict[str, str] = {
    "Table 1": (
        "a comparison in words of the assumptions of the Cranfield paradigm and of recommender "
        "evaluation: it holds no measurement to test"
    ),
    "Table 2": (
        "the LibraryThing and BeerAdvocate rows (no such data here), and the user and item Gini "
        "of ML-1M: the text available to us carries the table's caption, not its cells, and the "
        "2018 paper prints no Gini over users"
    ),
    "Table 3": (
        "its cells are not legible in the text available to us, and DP compares systems on one "
        "dataset only (§4.1): the chapter grades how the metrics' DP compare, not DP values"
    ),
    **{f"Fig. {n}": _OTHER for n in range(1, 15)},
}

#: the statements of §1's summary and of the conclusions (§8), with the claims that test them
HEADLINES: tuple[Headline, ...] = (
    Headline(
        "§1",
        "precision offers the best robustness figures",
        ("valcarce2020.s1.precision-most-robust",),
    ),
    Headline(
        "§1",
        "NDCG provides the highest discriminative power",
        ("valcarce2020.s6-2.ndcg-most-discriminative",),
    ),
    Headline(
        "§1",
        "the geometric mean gives a more consistent robustness for some metrics",
        (
            "valcarce2020.s7-2.gp-beats-p-large-users",
            "valcarce2020.s7-2.gndcg-beats-ndcg-large-users",
        ),
    ),
    Headline(
        "§8",
        "precision is very robust to the sparsity and the popularity biases",
        (
            "valcarce2020.s6-3-1.p-f1-ndcg-most-robust",
            "valcarce2020.s6-3-2.p-most-robust-popular",
        ),
    ),
    Headline(
        "§8",
        "NDCG is highly robust to sparsity and moderately robust to popularity",
        (
            "valcarce2020.s6-3-1.p-f1-ndcg-most-robust",
            "valcarce2020.s6-3-2.f1-ndcg-good-popular",
        ),
    ),
    Headline(
        "§8",
        "NDCG returns the most consistent discriminative power across datasets",
        ("valcarce2020.s6-2.ndcg-most-discriminative",),
    ),
    Headline(
        "§8",
        "precision ranks as a mid-packer, reasonably stable, in discriminative power",
        ("valcarce2020.s8.p-mid-pack",),
    ),
    Headline(
        "§8",
        "MRR and ERR rank among the least robust metrics",
        ("valcarce2020.s8.mrr-err-least-robust", "valcarce2020.s6-3-2.mrr-err-worst-popular"),
    ),
    Headline(
        "§8",
        "bpref and infAP fail their purpose: they can be less consistent than MAP",
        ("valcarce2020.s6-3-1.map-beats-bpref-infap",),
    ),
    Headline(
        "§8",
        "geometric means identify systems effective with all users, not only the easy ones",
        (
            "valcarce2020.s7-2.gp-beats-p-large-users",
            "valcarce2020.s7-2.gndcg-beats-ndcg-large-users",
        ),
    ),
)


#: the chapter's coverage: ``COVERAGE.table()`` the frame, ``COVERAGE.markdown()`` the table shown
COVERAGE = PaperCoverage(LEDGER, ITEMS, NOT_HERE, HEADLINES)
table = COVERAGE.table
markdown = COVERAGE.markdown
