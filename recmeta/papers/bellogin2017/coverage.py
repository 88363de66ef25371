"""Bellogín, Castells & Cantador (2017): what of the paper the chapter's ledger covers.

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

PAPER_FILE = "bellogin2017-statistical-biases.txt"

#: the paper's numbered figures, tables and equations
ITEMS: tuple[str, ...] = (
    *(f"Fig. {n}" for n in range(1, 10)),
    "Table 1",
    "Table 2",
    "Table 3",
    *(f"Eq. {n}" for n in range(1, 6)),
)

_LASTFM = (
    "the Last.fm panels: Last.fm is not available here (the book holds MovieLens only), and no "
    "analogue runs, since the chapter needs graded ratings; the ledger lists their statements "
    "as not reproduced"
)

#: why an item (or the part of it no claim tests) is not reproduced here
NOT_HERE: dict[str, str] = {
    "Fig. 2": _LASTFM,
    "Fig. 5": (
        "the Netflix, Last.fm and TREC curves of the right panel: none of those data is here "
        "(the MovieLens side of the contrast is tested)"
    ),
    "Fig. 8": _LASTFM,
    "Fig. 9": _LASTFM,
    "Table 1": (
        "a comparison in words of IR and recommender evaluation (queries and users, documents "
        "and items, judgments and ratings): it holds no measurement to test"
    ),
    "Table 2": (
        "the paper's notation, which the chapter uses throughout: it holds no measurement to test"
    ),
}

#: the statements of the abstract and the conclusions (§8), with the claims that test them
HEADLINES: tuple[Headline, ...] = (
    Headline(
        "Abstract",
        "a systematic characterisation of the experimental design alternatives",
        ("bellogin2017.tab3.definitions", "bellogin2017.fig1.toy"),
    ),
    Headline(
        "Abstract",
        "sparsity and popularity biases considerably distort the measurements, hindering the "
        "comparison of results across experiments",
        (
            "bellogin2017.fig2.popularity-beats-random",
            "bellogin2017.fig4.ar-linear",
            "bellogin2017.fig4.1r-size",
            "bellogin2017.fig5.rises",
        ),
    ),
    Headline(
        "Abstract",
        "a formal characterisation of the biases' causes and factors, illustrated with "
        "empirical evidence",
        (
            "bellogin2017.eq3.popularity",
            "bellogin2017.eq4.exact",
            "bellogin2017.eq5.random-1r",
            "bellogin2017.fig5.below-random",
        ),
    ),
    Headline(
        "Abstract",
        "two experimental designs that neutralise the biases to a large extent",
        (
            "bellogin2017.fig8.u1r",
            "bellogin2017.fig8.p1r",
            "bellogin2017.fig8.uar",
            "bellogin2017.fig8.p1r-random",
            "bellogin2017.fig8.u1r-random",
        ),
    ),
    Headline(
        "Abstract",
        "compared with alternative approaches and metrics from the literature",
        (
            "bellogin2017.fig8.head",
            "bellogin2017.fig9.bpref",
            "bellogin2017.fig9.infap",
            "bellogin2017.fig9.srecall",
        ),
    ),
    Headline(
        "§8",
        "sparsity and popularity biases arise in recommendation experiments and not in common "
        "IR test collections",
        (
            "bellogin2017.sec5.3.fewer-single-than-trec",
            "bellogin2017.sec5.3.top-above-trec",
            "bellogin2017.fig7.ratio-grows",
        ),
    ),
    Headline(
        "§8",
        "AR and 1R differ in how the metrics are averaged, and 1R precision is bound linearly "
        "by AR precision",
        ("bellogin2017.eq1.bound", "bellogin2017.eq2.bounds", "bellogin2017.eq2.proof-step"),
    ),
    Headline(
        "§8",
        "a percentile-based evaluation considerably reduces the margin for the popularity bias, "
        "at the cost of a limit on the target-set size",
        (
            "bellogin2017.fig8.p1r",
            "bellogin2017.fig8.p1r-random",
            "bellogin2017.fig6.percentiles",
        ),
    ),
    Headline(
        "§8",
        "a uniform-test approach removes the statistical advantage of having more positive test "
        "ratings",
        (
            "bellogin2017.fig6.uniform-split",
            "bellogin2017.fig8.u1r",
            "bellogin2017.fig8.u1r-random",
            "bellogin2017.fig8.uar",
        ),
    ),
    Headline(
        "§8",
        "both approaches discriminate between pure popularity and an algorithm like pLSA",
        ("bellogin2017.fig8.plsa-best",),
    ),
)


#: the chapter's coverage: ``COVERAGE.table()`` the frame, ``COVERAGE.markdown()`` the table shown
COVERAGE = PaperCoverage(LEDGER, ITEMS, NOT_HERE, HEADLINES)
table = COVERAGE.table
markdown = COVERAGE.markdown
