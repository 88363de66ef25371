"""The book builds, executing every chapter (quick profile), and every page opens in headless
Chromium (scripts/browser_check.py).

Every test that reads the one build is in this file: ``make test`` distributes the tests by file
(pytest-xdist, ``--dist loadfile``), so the book is built once, on one worker.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from recmeta.book import chapters
from recmeta.ledger import store
from recmeta.ledger.audit import problems

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("browser_check", ROOT / "scripts" / "browser_check.py")
browser_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser_check)


def test_book_builds_every_page(built_book):
    assert (built_book / "index.html").exists()
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for p in toc["parts"] for c in p["chapters"]]
    for f in files:
        assert (built_book / f"{f}.html").exists(), f"{f} was not built"


def test_every_chapter_page_says_how_it_ran(built_book):
    for c in chapters.discover(ROOT):
        page = built_book / "notebooks" / f"{c.name}.html"
        if not page.exists():
            continue
        text = re.sub(r"<[^>]+>", "", page.read_text())
        assert "How this page was run." in text, c.name
        assert "profile: quick" in text, c.name  # the tests build the quick profile
        assert re.search(r"LensKit \d{4}\.\d+", text), c.name
        if c.name != "datasets":  # every chapter with expensive steps estimates them first
            assert "What this page will cost." in text, c.name
            assert "ML-20M shape" in text, c.name
            assert re.search(r"estimated beforehand: [\d.]+ (s|min|h) for the whole page", text), (
                c.name
            )


def test_ledger_page_covers_the_paper_chapters_only(built_book):
    html = (built_book / "replication" / "ledger.html").read_text()
    article = html[html.index('<article class="bd-article"'):html.index("</article>")]
    text = re.sub(r"<[^>]+>", "", article)  # the page's own text, not the navigation
    for title in ("Statistical biases", "Sampled metrics", "Robustness", "Multi-graded"):
        assert title in text, title
    assert "Your own experiment" not in text  # no paper behind it, so no ledger to miss
    assert "not yet in the ledger" not in text  # every paper chapter has its ledger now


def test_datasets_chapter_has_table_and_figures(built_book):
    html = (built_book / "notebooks" / "datasets.html").read_text()
    assert "943" in html and "1,682" in html and "9,724" in html
    assert len(re.findall(r'<img[^>]+src="[^"]+\.png"', html)) >= 2
    assert "Traceback" not in html and 'class="output stderr"' not in html


def test_each_chapter_offers_its_notebook(built_book):
    for c in chapters.discover(ROOT):
        page = built_book / "notebooks" / f"{c.name}.html"
        if not page.exists():
            continue  # not in the table of contents (yet); test_book_builds_every_page covers the toc
        assert f'href="{c.name}.ipynb"' in page.read_text()
        nb = json.loads((built_book / "notebooks" / f"{c.name}.ipynb").read_text())
        assert any("parameters" in cell.get("metadata", {}).get("tags", []) for cell in nb["cells"])


def test_every_page_renders_cleanly(built_book):
    shots = ROOT / "_build" / "screenshots"
    problems = browser_check.check(built_book, shots)
    assert problems == []
    pages = [p for p in built_book.rglob("*.html") if "_static" not in p.parts]
    assert len(list(shots.glob("*.png"))) >= len(pages) - 3  # genindex/search are skipped


PAPER_CHAPTERS = ("statistical-biases", "sampled-metrics", "robustness",
                  "assessing-ranking-metrics", "multigraded-relevance")


def test_stored_ledgers_of_the_build_keep_the_acceptance_rules(built_book):
    """Issue 25's acceptance on the build's own ledgers: every record has a kind and a rule,
    every value rule a margin and a number for the paper's value, no transfer's magnitude is
    graded unless data-free, and every 'agrees' on a value lies inside paper ± margin."""
    frame = store.load(root=built_book.parent / "results", profile="quick")
    assert set(PAPER_CHAPTERS) <= set(frame["chapter"]), sorted(set(frame["chapter"]))
    assert set(frame["dataset"]) >= {"ml-100k", "ml-latest-small"}
    assert problems(frame) == []


def test_ledger_page_opens_with_its_figures(built_book):
    html = (built_book / "replication" / "ledger.html").read_text()
    shown = re.findall(r'<img[^>]+src="([^"]+)"', html)
    assert shown[:2] == ["../_images/ledger-verdicts.png", "../_images/ledger-values.png"]
    for src in shown[:2]:
        assert (built_book / "replication" / src).resolve().stat().st_size > 10_000, src
    text = re.sub(r"<[^>]+>", "", html)
    assert "Derivations" in text and "Replications and transfers" in text
    assert "(ours − paper) / margin" in text
