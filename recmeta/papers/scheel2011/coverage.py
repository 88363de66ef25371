"""Scheel, Lommatzsch & Albayrak (2011): what of the paper the chapter's ledger covers.

- :data:`PAPER_FILE`: the paper's text (in the shared papers folder);
- :data:`ITEMS`: its numbered figures, tables and equations, kept here as data so that the table
  needs no copy of the paper (the coverage test checks the list against the text);
- :data:`NOT_HERE`: why an item, or a part of one, is not reproduced;
- :data:`HEADLINES`: the statements of the abstract and of the conclusion with the claims that
  test them;
- :data:`COVERAGE` (:class:`recmeta.ledger.coverage.PaperCoverage`): ``table()``, the
  coverage frame, and ``markdown()``, the table the chapter shows.
"""

from __future__ import annotations

from ...ledger.coverage import Headline, PaperCoverage
from .claims import LEDGER

__all__ = [
    "COVERAGE",
    "HEADLINES",
    "ITEMS",
    "NOT_HERE",
    "PAPER_FILE",
    "UNNUMBERED",
    "markdown",
    "table",
]

PAPER_FILE = "scheel-multigraded-relevance.xml"

#: items of the paper whose number our copy of its text lost (Fig. 5's caption and the numbers
#: of eqs. 2–3 went with the layout); the chapter reads them off the paper's page order
UNNUMBERED: tuple[str, ...] = ("Fig. 5", "Eq. 2", "Eq. 3")

#: the paper's numbered figures, tables and equations
ITEMS: tuple[str, ...] = (
    *(f"Fig. {n}" for n in range(1, 9)),
    "Table 1",
    "Table 2",
    *(f"Eq. {n}" for n in range(1, 6)),
)

_OHSUMED = (
    "OHSUMED's expert judgments and its LETOR strategies are not available here (the book runs "
    "on MovieLens)"
)

#: why an item (or the part of it no claim tests) is not reproduced here
NOT_HERE: dict[str, str] = {
    "Fig. 6": f"{_OHSUMED}; the paper says nothing of Fig. 6 beyond how µMAP is computed on "
    "three levels, which the derivation on eq. 4 checks",
    "Fig. 7": f"the figure itself, on OHSUMED: {_OHSUMED}; its statements are tested on "
    "MovieLens with a rating predictor as the virtual user",
    "Fig. 8": f"the figure itself, on OHSUMED: {_OHSUMED}; its statements are tested on "
    "MovieLens with the predictor's raw scores as the virtual user",
}

#: the statements of the abstract and the conclusion, with the claims that test them
HEADLINES: tuple[Headline, ...] = (
    Headline(
        "Abstract",
        "binary measures need a threshold on multi-graded labels, and the threshold matters",
        ("scheel2011.tab1.threshold-changes-ap",),
    ),
    Headline(
        "Abstract",
        "µAP extends AP to graded relevance without a threshold, weighing the levels by their "
        "distances",
        (
            "scheel2011.eq4.example-weights",
            "scheel2011.sec4.mu-map-mean-of-thresholds",
            "scheel2011.sec2.1.cost-depends-on-distance",
        ),
    ),
    Headline(
        "Abstract",
        "NDCNG, an improved NDCG, avoids the problems of different scales in different datasets",
        (
            "scheel2011.tab2.ndcng-scale-free",
            "scheel2011.fig4.ndcng-stable-across-levels",
            "scheel2011.fig5.ndcng-stable-across-levels",
        ),
    ),
    Headline(
        "Conclusion",
        "µAP is compatible with AP: with two relevance levels it gives the same values",
        ("scheel2011.sec5.two-levels-equal-ap",),
    ),
    Headline(
        "Conclusion",
        "the proposed measures satisfy the defined requirements (an ideal ranking scores 1, "
        "swaps lower the score, by the distance of the levels swapped)",
        (
            "scheel2011.sec2.ideal-scores-one",
            "scheel2011.sec2.1.performance-falls-with-swaps",
            "scheel2011.sec2.1.cost-depends-on-distance",
        ),
    ),
    Headline(
        "Conclusion",
        "the measures make strategies comparable on multi-graded data",
        ("scheel2011.fig7.reference-scores-one", "scheel2011.fig7.closest-strategy"),
    ),
    Headline(
        "Conclusion",
        "NDCG depends on the number of relevance levels, so its values cannot be compared "
        "across datasets",
        (
            "scheel2011.fig4.ndcg-falls-with-levels",
            "scheel2011.fig5.ndcg-falls-with-levels",
            "scheel2011.tab2.doubling-lowers-ndcg",
            "scheel2011.fig8.real-valued.ndcg-lower",
        ),
    ),
    Headline(
        "Conclusion",
        "NDCNG gives similar values to strategies that differ only in the number of levels",
        ("scheel2011.fig8.real-valued.ndcng-stable", "scheel2011.fig8.ordinal.ndcng-stable"),
    ),
    Headline(
        "Conclusion",
        "high gains (many levels) make NDCG incommensurately low; limiting them by a further "
        "normalisation solves it",
        ("scheel2011.fig4.gain-size-not-level-count", "scheel2011.tab2.ndcng-scale-free"),
    ),
    Headline(
        "Conclusion",
        "future work: µAP and NDCNG on EachMovie (0–5) and IMDb (1–10) ratings",
        not_here="a plan, not a finding; the chapter's second dataset (half stars) is the "
        "nearest analogue to another scale",
    ),
)


#: the chapter's coverage: ``COVERAGE.table()`` the frame, ``COVERAGE.markdown()`` the table shown
COVERAGE = PaperCoverage(LEDGER, ITEMS, NOT_HERE, HEADLINES)
table = COVERAGE.table
markdown = COVERAGE.markdown
