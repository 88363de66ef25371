"""Valcarce et al. (2018): what of the paper the chapter's ledger covers.

- :data:`PAPER_FILE`: the paper's text (in the shared papers folder);
- :data:`ITEMS`: its numbered figures, tables and equations, kept here as data so that the table
  needs no copy of the paper (the coverage test checks the list against the text);
- :data:`NOT_HERE`: why an item, or a part of one, is not reproduced;
- :data:`HEADLINES`: the statements of the abstract and of §8 with the claims that test them;
- :data:`COVERAGE` (:class:`recmeta.ledger.coverage.PaperCoverage`): ``table()``, the
  coverage frame, and ``markdown()``, the table the chapter shows.
"""

from __future__ import annotations

from ...ledger.coverage import Headline, PaperCoverage
from .claims import LEDGER

__all__ = ["COVERAGE", "HEADLINES", "ITEMS", "NOT_HERE", "PAPER_FILE", "markdown", "table"]

PAPER_FILE = "valcarce2018-robustness-discriminative-power.txt"

#: the paper's numbered figures, tables and equations
ITEMS: tuple[str, ...] = (
    *(f"Fig. {n}" for n in range(1, 9)),
    "Table 1",
    "Table 2",
    "Table 3",
    *(f"Eq. {n}" for n in range(1, 9)),
)

_OTHER_ROWS = (
    "the LibraryThing and BeerAdvocate rows: this book has no data of either (the chapter runs "
    "on MovieLens only)"
)

#: why an item (or the part of it no claim tests) is not reproduced here
NOT_HERE: dict[str, str] = {
    "Table 1": (
        "a comparison in words of the assumptions of IR and of recommender evaluation "
        "(relevance per user, incomplete judgments): it holds no measurement to test"
    ),
    "Table 2": _OTHER_ROWS,
    "Table 3": _OTHER_ROWS,
}

#: the statements of the abstract and the conclusions (§8), with the claims that test them
HEADLINES: tuple[Headline, ...] = (
    Headline(
        "Abstract",
        "deeper cut-offs offer greater robustness and discriminative power",
        (
            "valcarce2018.fig2.all-deeper-robust",
            "valcarce2018.fig3.all-deeper-robust",
            "valcarce2018.fig4.all-deeper-dp",
        ),
    ),
    Headline(
        "Abstract",
        "precision offers high robustness",
        ("valcarce2018.s7.p-most-robust", "valcarce2018.fig7.p-most-robust"),
    ),
    Headline(
        "Abstract",
        "nDCG provides the best discriminative power",
        ("valcarce2018.tab3.ndcg-best",),
    ),
    Headline(
        "§8",
        "deeper cut-offs (about 100) are more robust to sparsity and popularity biases than "
        "shallow ones (5–10)",
        (
            "valcarce2018.fig2.ndcg-deeper-robust",
            "valcarce2018.fig2.all-deeper-robust",
            "valcarce2018.fig3.ndcg-deeper-robust",
            "valcarce2018.fig3.all-deeper-robust",
        ),
    ),
    Headline(
        "§8",
        "deeper cut-offs are more reliable in discriminative power too, so they should be used",
        ("valcarce2018.fig4.ndcg-deeper-dp", "valcarce2018.fig4.all-deeper-dp"),
    ),
    Headline(
        "§8",
        "precision is very robust to the sparsity and the popularity bias",
        ("valcarce2018.s7.p-most-robust", "valcarce2018.fig7.p-most-robust"),
    ),
    Headline(
        "§8",
        "nDCG is highly robust to sparsity and moderately robust to popularity",
        ("valcarce2018.fig6.p-ndcg-lead", "valcarce2018.s7.ndcg-popularity-good"),
    ),
    Headline(
        "§8",
        "nDCG, and to a lesser degree precision, discriminate best",
        ("valcarce2018.tab3.ndcg-best", "valcarce2018.tab3.ndcg-p-lead"),
    ),
    Headline(
        "§8",
        "bpref, infAP and MRR perform poorly in recommender evaluation",
        (
            "valcarce2018.fig6.bpref-least",
            "valcarce2018.fig7.mrr-least",
            "valcarce2018.tab3.bpref-poor",
            "valcarce2018.tab3.infap-poor",
            "valcarce2018.tab3.mrr-worst",
        ),
    ),
)


#: the chapter's coverage: ``COVERAGE.table()`` the frame, ``COVERAGE.markdown()`` the table shown
COVERAGE = PaperCoverage(LEDGER, ITEMS, NOT_HERE, HEADLINES)
table = COVERAGE.table
markdown = COVERAGE.markdown
