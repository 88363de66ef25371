"""`recmeta run` pages render as the book does: glue, roles and math resolved, the provenance
line and the profile under the title; checked in headless Chromium."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from recmeta.book import chapters

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("browser_check", ROOT / "scripts" / "browser_check.py")
browser_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser_check)

HEAD = ("---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A small chapter with the book's markup (glue under the title, {cite}, {doc}, math),
    executed by `recmeta run` in the quick profile in a copy of the project's configuration."""
    root = tmp_path_factory.mktemp("project")
    shutil.copy(ROOT / "_config.yml", root / "_config.yml")
    shutil.copy(ROOT / "_toc.yml", root / "_toc.yml")
    (root / "book").mkdir()
    shutil.copy(ROOT / "book" / "references.bib", root / "book" / "references.bib")
    (root / "notebooks").mkdir()
    (root / "notebooks" / "tiny.md").write_text(HEAD + (
        "# A tiny chapter\n\n```{glue:md} execution\n:format: myst\n```\n\n"
        "Sampled metrics mislead {cite}`krichene2020sampled`; see {doc}`robustness` and the "
        "expectation $E[X] = \\sum_i x_i p_i$.\n\n"
        "```{code-cell} ipython3\n:tags: [parameters]\n\nseed = 1  # a seed\n```\n\n"
        "```{code-cell} ipython3\nfrom recmeta.book import chapters\n"
        "execution = chapters.start('tiny', profile=chapters.profile(), seed=seed)\n```\n\n"
        "## Result\n\n```{code-cell} ipython3\nprint(2 + 2)\nexecution.finish()\n```\n"))
    out = root / "_build" / "runs"
    nb = chapters.run("tiny", quick=True, root=root, out=out)
    return out, nb


def _text(html: str) -> str:
    body = html.split('<main', 1)[-1]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


def test_page_is_the_books_rendering(page):
    out, _ = page
    html = (out / "tiny.html").read_text()
    text = _text(html)
    for raw in ("{glue", "{cite}", "{doc}", ":format:", "krichene2020sampled"):
        assert raw not in text, raw
    assert "Krichene and Rendle" in text  # the citation, resolved from book/references.bib
    # the provenance line sits under the title, before the chapter's first sentence
    after_title = text.split("A tiny chapter", 1)[1]
    assert after_title.index("How this page was run.") < after_title.index("Sampled metrics mislead")
    assert "profile: quick (smaller sizes, for a first look)" in after_title
    assert (out / "_static").is_dir() and (out / "tiny.ipynb").exists()


def test_nbconvert_pages_would_fail_the_same_check(page):
    """The check can fail: the old export (nbconvert) leaves the markup raw."""
    out, nb = page
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html",
                    "--output-dir", str(out / "old"), str(nb)], check=True, capture_output=True)
    text = _text((out / "old" / "tiny.html").read_text())
    assert re.search(r"\{glue:md\}|:format: myst", text) and "{cite}" in text


@pytest.mark.skipif(not (shutil.which("chromium") and shutil.which("chromedriver")),
                    reason="headless Chromium: scripts/install-browser.sh (make test runs it)")
def test_page_in_chromium(page, tmp_path, monkeypatch):
    out, nb = page
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    problems = browser_check.check(out, tmp_path / "shots", pages=["tiny.html"])
    assert not [p for p in problems if "broken link" not in p], problems
    assert not list(scratch.iterdir())  # the browser's profile (18 MB) is not left behind
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html",
                    "--output-dir", str(tmp_path / "old"), str(nb)], check=True,
                   capture_output=True)
    old = browser_check.check(tmp_path / "old", tmp_path / "shots", pages=["tiny.html"])
    assert any("MyST markup left raw: '{cite}'" in p for p in old), old
    assert any("{glue" in p or ":format:" in p for p in old), old
