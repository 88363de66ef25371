"""The multi-graded relevance chapter covers every numbered item and headline of Scheel et al.
(2011): the declared items against the paper's text, no item without a row, headlines naming
claims of the ledger."""

from __future__ import annotations

from pathlib import Path

from recmeta.ledger import Verdict
from recmeta.ledger.coverage import gaps, paper_items
from recmeta.papers import scheel2011 as sch
from recmeta.papers.scheel2011 import coverage as cov

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"


def _text() -> str:
    return (PAPERS / cov.PAPER_FILE).read_text(encoding="utf-8")


def test_declared_items_are_the_paper_s():
    found = set(paper_items(_text()))
    assert found <= set(cov.ITEMS), sorted(found - set(cov.ITEMS))
    # what the text lost its number for is declared as such, and nothing more
    assert set(cov.ITEMS) - found == set(cov.UNNUMBERED)


def test_every_item_of_the_paper_and_every_headline_has_a_row():
    frame = cov.table()
    assert gaps(frame) == []
    rows = set(frame["item"])
    assert [i for i in paper_items(_text()) if i not in rows] == []
    ids = set(sch.LEDGER.ids)
    for h in cov.HEADLINES:
        assert set(h.claims) <= ids, h.statement
    assert "| Fig. 6 |" in cov.markdown() and "`fig6.ohsumed-user-ratings`" in cov.markdown()


def test_fig6_is_not_reproduced_and_says_why():
    out = sch.LEDGER["scheel2011.fig6.ohsumed-user-ratings"].outcome({})
    assert out.verdict is Verdict.NOT_REPRODUCED and "OHSUMED" in out.reason
    assert "OHSUMED" in cov.NOT_HERE["Fig. 6"]
