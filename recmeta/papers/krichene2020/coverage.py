"""Krichene & Rendle (2020): what of the paper the chapter's ledger covers.

- :data:`PAPER_FILE`: the paper's text (in the shared papers folder);
- :data:`ITEMS`: its numbered figures, tables and equations, kept here as data so that the table
  needs no copy of the paper (the coverage test checks the list against the text);
- :data:`NOT_HERE`: why an item, or a part of one, is not reproduced;
- :data:`HEADLINES`: the statements of the abstract, of §7 (suggestions) and of §8 (conclusion)
  with the claims that test them;
- :data:`COVERAGE` (:class:`recmeta.ledger.coverage.PaperCoverage`): ``table()``, the
  coverage frame, and ``markdown()``, the table the chapter shows.

Equations cited by no claim's source get a claim where they state something checkable; the
remaining ones are definitions whose use the claims test (eqs. 1 and 14) or the recommenders of
the appendix (eqs. 27–30), each with its reason.
"""

from __future__ import annotations

from ...ledger.coverage import Headline, PaperCoverage
from .claims import LEDGER, PREFIX

__all__ = ["COVERAGE", "HEADLINES", "ITEMS", "NOT_HERE", "PAPER_FILE", "markdown", "table"]

PAPER_FILE = "krichene2020-sampled-metrics.txt"

#: the paper's numbered figures, tables and equations
ITEMS: tuple[str, ...] = (
    *(f"Fig. {n}" for n in range(1, 7)),
    *(f"Table {n}" for n in range(1, 5)),
    *(f"Eq. {n}" for n in range(1, 31)),
)

_ML1M = (
    "the paper's binarised MovieLens 1M split and its trained X, Y, Z are not available here: "
    "the chapter re-runs the experiment on its own datasets (transfer claims)"
)
_APPENDIX = (
    "the definition of the paper's item-based recommenders Y and Z (appendix, §9), not a "
    "finding: the chapter's kr-y and kr-z implement eqs. 27–30 "
    "(recmeta.recommenders.components.itemcf), whose tests check them against hand computations"
)

#: why an item (or the part of it no claim tests) is not reproduced here
NOT_HERE: dict[str, str] = {
    "Eq. 1": "the mean over instances that every table of the chapter reports; a definition, "
    "used by `table1` and every real-data claim",
    "Eq. 14": "Definition 1 (consistency), the rule `s4.2.only-auc` applies to each metric",
    "Fig. 5": f"the histogram itself, on ML-1M: {_ML1M}; the chapter draws ours",
    "Fig. 6": f"the curves themselves, on ML-1M: {_ML1M}; the chapter draws ours",
    "Table 3": f"the printed values: {_ML1M}; shown beside ours, not graded",
    "Table 4": f"the printed counts: {_ML1M}; shown beside ours, not graded",
    **{f"Eq. {n}": _APPENDIX for n in range(27, 31)},
}


def _ids(*short: str) -> tuple[str, ...]:
    return tuple(PREFIX + s for s in short)


#: the statements of the abstract, of §7 and of §8, with the claims that test them
HEADLINES: tuple[Headline, ...] = (
    Headline(
        "Abstract",
        "sampled metrics are inconsistent with their exact version: they do not keep "
        "'A is better than B', not even in expectation",
        _ids("s4.2.only-auc", "s4.2.ap-reversed", "s6.2.sampled-recall", "s6.2.x-looks-best"),
    ),
    Headline(
        "Abstract",
        "the smaller the sampling size, the less difference between metrics; for very small "
        "sampling sizes all metrics collapse to AUC",
        _ids("abstract.metrics-alike", "s4.4.4.m1", "fig3.towards-linear"),
    ),
    Headline(
        "Abstract",
        "a correction minimising bias or mean squared error improves the sampled metrics",
        _ids("fig4.closer", "s6.3.all-closer", "s6.3.z-first", "table4.rank-estimate"),
    ),
    Headline(
        "§7",
        "for uncorrected metrics the poor indication is mostly due to the large bias "
        "introduced by sampling",
        _ids("s6.2.bias-not-variance", "fig3.m1000-biased", "s5.5.m-reduces-bias"),
    ),
    Headline(
        "§7",
        "corrections reduce the bias at the cost of higher variance",
        _ids(
            "s5.3.trade-off", "s6.3.variance-grows", "s6.3.low-bias", "s5.3.least-squares-variance"
        ),
    ),
    Headline(
        "§7",
        "rerun a sampled study with different seeds; a difference found under the added "
        "variance is a stronger indication, the more so the lower the bias",
        not_here="advice on study design, not a finding; the chapter's repetitions over "
        "negative samples (Table 4, `table4.bv`) show how often one sampled run orders a pair "
        "correctly",
    ),
    Headline(
        "§7",
        "the bias can only be eliminated by avoiding sampling altogether",
        _ids("s5.2.underdetermined", "s5.5.n-raises-bias"),
    ),
    Headline(
        "§8",
        "most metrics are inconsistent under sampling and can lead to false discoveries",
        _ids("s4.2.only-auc", "s6.2.x-looks-best", "s6.2.zy-kept"),
    ),
    Headline(
        "§8",
        "sampled metrics do not measure the intended quantities, not even in expectation",
        _ids("fig3.m1000-biased", "fig3.towards-linear", "s4.4.3.eq19"),
    ),
    Headline(
        "§8",
        "the proposed corrections give a better estimate of the true metric, at the cost of "
        "increased variance",
        _ids("fig4.closer", "s6.3.all-closer", "s6.3.variance-grows"),
    ),
    Headline(
        "§8",
        "several relevant items: with independent observed ranks, similar corrections apply",
        _ids("s8.several-items"),
    ),
    Headline(
        "§8",
        "deriving corrections without the independence assumption is future work",
        not_here="a direction for future research, not a finding",
    ),
)


#: the chapter's coverage: ``COVERAGE.table()`` the frame, ``COVERAGE.markdown()`` the table shown
COVERAGE = PaperCoverage(LEDGER, ITEMS, NOT_HERE, HEADLINES)
table = COVERAGE.table
markdown = COVERAGE.markdown
