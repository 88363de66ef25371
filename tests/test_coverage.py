"""The coverage machinery: items read from a paper's text, items cited by claims' sources."""

from pathlib import Path

import pytest

from recmeta.ledger import Ledger, not_reproduced
from recmeta.ledger.coverage import (
    Headline,
    cited_items,
    coverage,
    gaps,
    paper_items,
    to_markdown,
    with_cited,
)

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"


def test_items_of_a_paper_text():
    text = (
        "As Figure 3 shows, and Fig. 10 too (see Table 2).\n"
        "$$AP = 1/r \\quad (4)$$\n"
        "an item list (1)\n"
        "      <p>(7)\n"
        "in 2019 (12 runs) and Fig. 1.5 is not a figure number\n"
    )
    assert paper_items(text) == ["Fig. 3", "Fig. 10", "Table 2", "Eq. 1", "Eq. 4", "Eq. 7"]


@pytest.mark.parametrize("source, items", [
    ("§4 (Figs. 6–7); eq. 4", {"Fig. 6", "Fig. 7", "Eq. 4"}),
    ("§3.1, Table 1; eqs. 1–2", {"Table 1", "Eq. 1", "Eq. 2"}),
    ("§6.3.2, Figs. 3 and 5", {"Fig. 3", "Fig. 5"}),
    ("§7, Fig. 5a", {"Fig. 5"}),
    ("§6.3, Tables 3–4", {"Table 3", "Table 4"}),
    ("§3.4, proof of eq. 2", {"Eq. 2"}),
    ("§6.2", set()),
])
def test_items_a_source_cites(source, items):
    assert cited_items(source) == items


def _ledger():
    led = Ledger("coverage-demo")
    for cid, source in [("a", "§2, Fig. 1"), ("b", "§3, Figs. 1–2; eq. 3"), ("c", "§5")]:
        led.claim(cid, statement=cid, source=source, rule="r", paper_dataset="ML-1M")(
            lambda r: not_reproduced("x"))
    return led


def test_items_with_those_the_claims_cite():
    # Fig. 2 and Eq. 3 are cited by claim "b" only; Table 1 is the paper's only
    assert with_cited(_ledger(), ["Table 1", "Fig. 1"]) == ["Fig. 1", "Fig. 2", "Table 1", "Eq. 3"]


def test_coverage_joins_citations_reasons_and_headlines():
    items = ["Fig. 1", "Fig. 2", "Fig. 3", "Table 1", "Eq. 3"]
    frame = coverage(_ledger(), items, {"Fig. 3": "needs Netflix"},
                     [Headline("Abstract", "biases exist", ("c",)),
                      Headline("§7", "on Netflix too", not_here="no Netflix data")])
    got = dict(zip(frame["item"], frame["claims"]))
    assert got["Fig. 1"] == ("a", "b") and got["Fig. 2"] == ("b",) and got["Eq. 3"] == ("b",)
    assert gaps(frame) == ["Table 1"]
    md = to_markdown(frame)
    assert "| Fig. 3 | — | needs Netflix |" in md and "| Abstract: biases exist | `c` |  |" in md
    with pytest.raises(ValueError, match="does not have"):
        coverage(_ledger(), items, {"Fig. 9": "typo"})
    with pytest.raises(ValueError, match="unknown claims"):
        coverage(_ledger(), items, {}, [Headline("§7", "x", ("zz",))])
    with pytest.raises(ValueError, match="exactly one"):
        Headline("§7", "x")


def test_every_paper_text_yields_its_figures_and_tables():
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(PAPERS.glob("*.*"))}
    assert len(texts) == 5
    found = {name: paper_items(t) for name, t in texts.items()}
    # counts read off the papers by hand
    figs = {name: sum(i.startswith("Fig.") for i in items) for name, items in found.items()}
    assert figs["bellogin2017-statistical-biases.txt"] == 9
    assert figs["krichene2020-sampled-metrics.txt"] == 6
    assert figs["valcarce2018-robustness-discriminative-power.txt"] == 8
    assert figs["valcarce2020-assessing-ranking-metrics.txt"] == 14
    eqs = found["valcarce2020-assessing-ranking-metrics.txt"]
    assert [i for i in eqs if i.startswith("Eq.")] == [f"Eq. {n}" for n in range(1, 12)]
